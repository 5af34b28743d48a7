"""Agent and tenant identity: UUIDs for the system, keys for people."""

from actorscope.agents._logs import agent_label
from actorscope.agents._models import Agent, Tenant
from actorscope.agents._registry import AgentRegistry
from actorscope.agents._types import (
    NIL_UUID,
    AgentKey,
    AgentUUID,
    is_uuid,
    parse_agent_key,
    parse_tenant_slug,
    parse_uuid,
    parse_uuid_or_nil,
)

__all__ = [
    "NIL_UUID",
    "Agent",
    "AgentKey",
    "AgentRegistry",
    "AgentUUID",
    "Tenant",
    "agent_label",
    "is_uuid",
    "parse_agent_key",
    "parse_tenant_slug",
    "parse_uuid",
    "parse_uuid_or_nil",
]

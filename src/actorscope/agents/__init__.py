"""Agent and tenant identity: UUIDs for the system, keys for people."""

from actorscope.agents.registry import Agent, AgentRegistry, Tenant
from actorscope.agents.types import (
    NIL_UUID,
    AgentKey,
    AgentUUID,
    TeamUUID,
    TenantUUID,
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
    "TeamUUID",
    "Tenant",
    "TenantUUID",
    "is_uuid",
    "parse_agent_key",
    "parse_tenant_slug",
    "parse_uuid",
    "parse_uuid_or_nil",
]

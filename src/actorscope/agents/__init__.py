"""Agent and tenant identity: UUIDs for the system, keys for people."""

from actorscope.agents._events import (
    DomainEvent,
    EventBus,
    EventConsumer,
    EventHandler,
    check_event,
)
from actorscope.agents._logs import AgentLogger, agent_label, agent_logger
from actorscope.agents._models import Agent, AgentListener, Tenant
from actorscope.agents._prompt import SystemPromptConfig
from actorscope.agents._registry import AgentRegistry
from actorscope.agents._router import AgentRouter
from actorscope.agents._types import (
    NIL_UUID,
    AgentKey,
    AgentUUID,
    TenantUUID,
    is_uuid,
    looks_like_uuid,
    parse_agent_key,
    parse_tenant_slug,
    parse_uuid,
    parse_uuid_or_nil,
)

__all__ = [
    "NIL_UUID",
    "Agent",
    "AgentKey",
    "AgentListener",
    "AgentLogger",
    "AgentRegistry",
    "AgentRouter",
    "AgentUUID",
    "DomainEvent",
    "EventBus",
    "EventConsumer",
    "EventHandler",
    "SystemPromptConfig",
    "Tenant",
    "TenantUUID",
    "agent_label",
    "agent_logger",
    "check_event",
    "is_uuid",
    "looks_like_uuid",
    "parse_agent_key",
    "parse_tenant_slug",
    "parse_uuid",
    "parse_uuid_or_nil",
]

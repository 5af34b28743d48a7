"""Agent and tenant identity: UUIDs for the system, keys for people."""

from actorscope.agents._events import (
    NON_UUID_AGENT_ID,
    NON_UUID_TENANT_ID,
    DomainEvent,
    EventBus,
    EventConsumer,
    EventHandler,
    check_event,
)
from actorscope.agents._logs import AgentLogger, agent_label, agent_logger
from actorscope.agents._models import Agent, AgentListener, Team, TeamMember, Tenant
from actorscope.agents._paths import AGENTS_DIR, sanitise_key, workspace_path
from actorscope.agents._prompt import SystemPromptConfig
from actorscope.agents._registry import AgentRegistry
from actorscope.agents._router import AgentRouter, RouterEntry, cache_key
from actorscope.agents._types import (
    NIL_UUID,
    AgentKey,
    AgentUUID,
    TeamUUID,
    TenantUUID,
    is_uuid,
    looks_like_uuid,
    parse_agent_key,
    parse_tenant_slug,
    parse_uuid,
    parse_uuid_or_nil,
    uuid_or_null,
    validate_uuids,
)

__all__ = [
    "AGENTS_DIR",
    "NIL_UUID",
    "NON_UUID_AGENT_ID",
    "NON_UUID_TENANT_ID",
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
    "RouterEntry",
    "SystemPromptConfig",
    "Team",
    "TeamMember",
    "TeamUUID",
    "Tenant",
    "TenantUUID",
    "agent_label",
    "agent_logger",
    "cache_key",
    "check_event",
    "is_uuid",
    "looks_like_uuid",
    "parse_agent_key",
    "parse_tenant_slug",
    "parse_uuid",
    "parse_uuid_or_nil",
    "sanitise_key",
    "uuid_or_null",
    "validate_uuids",
    "workspace_path",
]

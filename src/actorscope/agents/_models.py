"""The agent-identity records: tenants, agents, teams and memberships as read from the database."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from actorscope.agents._types import AgentKey, AgentUUID, TeamUUID, TenantUUID
from actorscope.store import Row

__all__ = ["Agent", "AgentListener", "Team", "TeamMember", "Tenant", "agent_from_row"]


@dataclass(frozen=True, slots=True)
class Tenant:
    """A tenant: its UUID and its human slug."""

    id: TenantUUID
    slug: str
    name: str = ""


@dataclass(frozen=True, slots=True)
class Agent:
    """An agent row: UUID for the system, key for people, always within one tenant."""

    id: AgentUUID
    key: AgentKey
    tenant_id: TenantUUID
    display_name: str = ""
    created_at: str = ""
    updated_at: str = ""
    deleted_at: str | None = None


@dataclass(frozen=True, slots=True)
class Team:
    """A team: known by UUID only, owned by one tenant."""

    id: TeamUUID
    tenant_id: TenantUUID
    name: str = ""
    created_at: str = ""


@dataclass(frozen=True, slots=True)
class TeamMember:
    """One agent's membership of a team."""

    agent: Agent
    role: str
    added_at: str


#: Called after a rename or remove commits: the agent before, and after (``None`` if removed).
AgentListener = Callable[[Agent, "Agent | None"], None]


def agent_from_row(row: Row) -> Agent:
    """The :class:`Agent` of an ``agents`` row (columns named as in the table)."""
    return Agent(
        id=AgentUUID(row["id"]),
        key=AgentKey(row["agent_key"]),
        tenant_id=TenantUUID(row["tenant_id"]),
        display_name=row["display_name"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        deleted_at=row["deleted_at"],
    )

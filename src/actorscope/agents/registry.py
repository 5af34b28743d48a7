"""Tenants and agents in the database, and the one resolver that accepts a UUID or a key."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from actorscope.agents.types import (
    AgentKey,
    AgentUUID,
    TenantUUID,
    is_uuid,
    parse_agent_key,
    parse_tenant_slug,
    parse_uuid,
)
from actorscope.errors import AgentNotFoundError, ConflictError, TenantNotFoundError
from actorscope.store import DEFAULT_TENANT_SLUG, Database, Row, utc_now

__all__ = ["Agent", "AgentRegistry", "Tenant"]

_AGENT_COLUMNS = "id, tenant_id, agent_key, display_name, created_at, updated_at, deleted_at"


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


def _agent(row: Row) -> Agent:
    return Agent(
        id=AgentUUID(row["id"]),
        key=AgentKey(row["agent_key"]),
        tenant_id=TenantUUID(row["tenant_id"]),
        display_name=row["display_name"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        deleted_at=row["deleted_at"],
    )


class AgentRegistry:
    """Agents of every tenant, addressed by UUID or by (tenant, key)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def tenant(self, slug_or_uuid: str = DEFAULT_TENANT_SLUG) -> Tenant:
        """The tenant with this slug or UUID; :class:`TenantNotFoundError` otherwise."""
        if is_uuid(slug_or_uuid):
            row = await self._db.fetchone(
                "SELECT id, slug, name FROM tenants WHERE id = ?",
                (parse_uuid(slug_or_uuid, "tenant"),),
            )
        else:
            row = await self._db.fetchone(
                "SELECT id, slug, name FROM tenants WHERE slug = ?",
                (parse_tenant_slug(slug_or_uuid),),
            )
        if row is None:
            raise TenantNotFoundError(f"no tenant {slug_or_uuid!r}")
        return Tenant(id=TenantUUID(row["id"]), slug=row["slug"], name=row["name"])

    async def create_tenant(self, slug: str, name: str = "") -> Tenant:
        """Create a tenant; :class:`ConflictError` if the slug is taken."""
        tenant = Tenant(id=TenantUUID(str(uuid.uuid4())), slug=parse_tenant_slug(slug), name=name)
        async with self._db.transaction() as tx:
            if await tx.fetchone("SELECT 1 FROM tenants WHERE slug = ?", (tenant.slug,)):
                raise ConflictError(f"tenant {slug!r} already exists")
            await tx.execute(
                "INSERT INTO tenants (id, slug, name, created_at) VALUES (?, ?, ?, ?)",
                (tenant.id, tenant.slug, tenant.name, utc_now()),
            )
        return tenant

    async def create(
        self, key: str, tenant: str = DEFAULT_TENANT_SLUG, *, display_name: str = ""
    ) -> Agent:
        """Create an agent; :class:`ConflictError` if a live agent of the tenant has the key."""
        agent_key = parse_agent_key(key)
        owner = await self.tenant(tenant)
        now = utc_now()
        agent = Agent(
            id=AgentUUID(str(uuid.uuid4())),
            key=agent_key,
            tenant_id=owner.id,
            display_name=display_name,
            created_at=now,
            updated_at=now,
        )
        async with self._db.transaction() as tx:
            taken = await tx.fetchone(
                "SELECT 1 FROM agents WHERE tenant_id = ? AND agent_key = ? AND deleted_at IS NULL",
                (owner.id, agent_key),
            )
            if taken is not None:
                raise ConflictError(f"agent {agent_key!r} already exists in tenant {owner.slug!r}")
            await tx.execute(
                f"INSERT INTO agents ({_AGENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, NULL)",
                (agent.id, agent.tenant_id, agent.key, display_name, now, now),
            )
        return agent

    async def get(self, agent_id: str) -> Agent:
        """The live agent with this UUID, in any tenant."""
        row = await self._db.fetchone(
            f"SELECT {_AGENT_COLUMNS} FROM agents WHERE id = ? AND deleted_at IS NULL",
            (parse_uuid(agent_id, "agent id"),),
        )
        if row is None:
            raise AgentNotFoundError(f"no agent with id {agent_id}")
        return _agent(row)

    async def resolve(self, key_or_uuid: str, tenant: str = DEFAULT_TENANT_SLUG) -> Agent:
        """The live agent named by UUID or key within ``tenant`` (slug or UUID).

        A UUID that belongs to another tenant is not found: a tenant never sees another's agents.
        """
        owner = await self.tenant(tenant)
        if is_uuid(key_or_uuid):
            row = await self._db.fetchone(
                f"SELECT {_AGENT_COLUMNS} FROM agents "
                "WHERE id = ? AND tenant_id = ? AND deleted_at IS NULL",
                (parse_uuid(key_or_uuid, "agent id"), owner.id),
            )
        else:
            row = await self._db.fetchone(
                f"SELECT {_AGENT_COLUMNS} FROM agents "
                "WHERE agent_key = ? AND tenant_id = ? AND deleted_at IS NULL",
                (parse_agent_key(key_or_uuid), owner.id),
            )
        if row is None:
            raise AgentNotFoundError(f"no agent {key_or_uuid!r} in tenant {owner.slug!r}")
        return _agent(row)

    async def list(self, tenant: str | None = None) -> list[Agent]:
        """Live agents, of one tenant or of all, ordered by tenant and key."""
        if tenant is None:
            rows = await self._db.fetchall(
                f"SELECT {_AGENT_COLUMNS} FROM agents WHERE deleted_at IS NULL "
                "ORDER BY tenant_id, agent_key"
            )
        else:
            owner = await self.tenant(tenant)
            rows = await self._db.fetchall(
                f"SELECT {_AGENT_COLUMNS} FROM agents WHERE tenant_id = ? AND deleted_at IS NULL "
                "ORDER BY agent_key",
                (owner.id,),
            )
        return [_agent(row) for row in rows]

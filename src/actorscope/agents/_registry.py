"""Tenants and agents in the database, and the one resolver that accepts a UUID or a key.

Every method that names an agent takes a UUID or a key (within a tenant given by slug or
UUID) and goes through one resolver. Reads have a cache in front of the database, shared by
every registry on the same ``Database``; a rename or remove through any of them invalidates
it at once, another process's after at most ``cache_ttl`` seconds. Writes always re-read
the row inside their own transaction, so a stale cache can never steer a write.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Protocol

from actorscope._input import is_uuid, parse_uuid
from actorscope.agents._cache import cache_for
from actorscope.agents._logs import agent_label
from actorscope.agents._models import (
    Agent,
    AgentListener,
    Team,
    TeamMember,
    Tenant,
    agent_from_row,
)
from actorscope.agents._types import (
    AgentKey,
    AgentUUID,
    TeamUUID,
    TenantUUID,
    parse_agent_key,
    parse_tenant_slug,
    validate_uuids,
)
from actorscope.errors import (
    ConflictError,
    IdentityError,
    NotFoundError,
)
from actorscope.store import Database, Row

__all__ = [
    "DEFAULT_CACHE_TTL",
    "Agent",
    "AgentListener",
    "AgentNotFoundError",
    "AgentRegistry",
    "Team",
    "TeamMember",
    "Tenant",
]


class AgentNotFoundError(NotFoundError):
    """No live agent has that key or UUID (in the tenant): a
    :class:`~actorscope.errors.NotFoundError` that :meth:`AgentRegistry.ensure` tells apart
    from a missing tenant, which it must not create an agent for."""


#: Seconds a cached read may be served (see :class:`AgentRegistry`).
DEFAULT_CACHE_TTL = 5.0

_AGENT_COLUMNS = "id, tenant_id, agent_key, display_name, created_at, updated_at, deleted_at"
_LIVE_BY_ID = f"SELECT {_AGENT_COLUMNS} FROM agents WHERE id = ? AND deleted_at IS NULL"
_LIVE_IN_TENANT_BY_ID = _LIVE_BY_ID + " AND tenant_id = ?"
_LIVE_IN_TENANT_BY_KEY = (
    f"SELECT {_AGENT_COLUMNS} FROM agents WHERE agent_key = ? AND tenant_id = ? "
    "AND deleted_at IS NULL"
)


class _Reader(Protocol):
    async def fetchone(self, sql: str, params: Sequence[object] = ()) -> Row | None: ...


async def _find(reader: _Reader, owner: Tenant, key_or_uuid: str) -> Agent:
    if is_uuid(key_or_uuid, canonical=False):
        row = await reader.fetchone(
            _LIVE_IN_TENANT_BY_ID, (parse_uuid(key_or_uuid, "agent id"), owner.id)
        )
    else:
        key = parse_agent_key(key_or_uuid)
        row = await reader.fetchone(_LIVE_IN_TENANT_BY_KEY, (key, owner.id))
    if row is None:
        raise AgentNotFoundError(f"no agent {key_or_uuid!r} in tenant {owner.slug!r}")
    return agent_from_row(row)


def _text(row: Mapping[str, object], field: str, index: int, default: str) -> str:
    value = row.get(field, default)
    if not isinstance(value, str):
        raise IdentityError(f"agent #{index}: {field} must be a string, got {value!r}")
    return value


def _key(row: Mapping[str, object], index: int) -> AgentKey:
    try:
        return parse_agent_key(row.get("key"))
    except IdentityError as exc:
        raise IdentityError(f"agent #{index}: {exc}") from exc


class AgentRegistry:
    """Agents of every tenant, addressed by UUID or by (tenant, key)."""

    def __init__(self, db: Database, *, cache_ttl: float = DEFAULT_CACHE_TTL) -> None:
        """``cache_ttl``: the oldest cached read (seconds) this registry serves; 0 turns it off.

        It bounds how long a rename or remove made by *another process* can go unseen;
        those made in this process through any registry on ``db`` are seen at once.
        """
        self._db = db
        self._cache = cache_for(db)
        self._ttl = cache_ttl

    @staticmethod
    def parse_key(value: object) -> AgentKey:
        """``value`` as an agent key: 1-64 of ``A-Z a-z 0-9 _ -``, starting with a letter or
        digit, and not a UUID; :class:`~actorscope.errors.IdentityError` otherwise."""
        return parse_agent_key(value)

    @staticmethod
    def parse_tenant_slug(value: object) -> str:
        """``value`` as a tenant slug: 1-63 of ``a-z 0-9 -``, starting with a letter or digit;
        :class:`~actorscope.errors.IdentityError` otherwise."""
        return parse_tenant_slug(value)

    @staticmethod
    def label(key: str, tenant_slug: str) -> str:
        """How logs and the CLI name an agent: ``key@tenant-slug``, both checked (a key alone
        is ambiguous across tenants)."""
        return agent_label(key, tenant_slug)

    def subscribe(self, listener: AgentListener) -> None:
        """Call ``listener(before, after)`` after each rename or remove on this database.

        A bound method is held weakly, so subscribing does not keep its object alive.
        """
        self._cache.subscribe(listener)

    def clear_cache(self) -> None:
        """Forget every cached tenant and agent of this database; the next reads go to it."""
        self._cache.clear()

    def _remember(self, agent: Agent) -> Agent:
        return self._cache.put(agent, time.monotonic())

    async def tenant(self, slug_or_uuid: str = Database.DEFAULT_TENANT_SLUG) -> Tenant:
        """The tenant with this slug or UUID; :class:`~actorscope.errors.NotFoundError` else."""
        if is_uuid(slug_or_uuid, canonical=False):
            lookup, sql = parse_uuid(slug_or_uuid, "tenant"), "id"
        else:
            lookup, sql = parse_tenant_slug(slug_or_uuid), "slug"
        cached = self._cache.tenant(lookup, time.monotonic(), self._ttl)
        if cached is not None:
            return cached
        row = await self._db.fetchone(
            f"SELECT id, slug, name FROM tenants WHERE {sql} = ?", (lookup,)
        )
        if row is None:
            raise NotFoundError(f"no tenant {slug_or_uuid!r}")
        found = Tenant(id=TenantUUID(row["id"]), slug=row["slug"], name=row["name"])
        self._cache.put_tenant(found, time.monotonic())
        return found

    async def tenants(self) -> list[Tenant]:
        """Every tenant, ordered by slug."""
        rows = await self._db.fetchall("SELECT id, slug, name FROM tenants ORDER BY slug")
        return [Tenant(id=TenantUUID(r["id"]), slug=r["slug"], name=r["name"]) for r in rows]

    async def create_tenant(self, slug: str, name: str = "") -> Tenant:
        """Create a tenant; :class:`ConflictError` if the slug is taken."""
        tenant = Tenant(id=TenantUUID(str(uuid.uuid4())), slug=parse_tenant_slug(slug), name=name)
        async with self._db.transaction() as tx:
            if await tx.fetchone("SELECT 1 FROM tenants WHERE slug = ?", (tenant.slug,)):
                raise ConflictError(f"tenant {slug!r} already exists")
            await tx.execute(
                "INSERT INTO tenants (id, slug, name, created_at) VALUES (?, ?, ?, ?)",
                (tenant.id, tenant.slug, tenant.name, Database.utc_now()),
            )
        return tenant

    async def create(
        self, key: str, tenant: str = Database.DEFAULT_TENANT_SLUG, *, display_name: str = ""
    ) -> Agent:
        """Create an agent; :class:`ConflictError` if a live agent of the tenant has the key."""
        agent_key = parse_agent_key(key)
        owner = await self.tenant(tenant)
        now = Database.utc_now()
        agent = Agent(
            id=AgentUUID(str(uuid.uuid4())),
            key=agent_key,
            tenant_id=owner.id,
            display_name=display_name,
            created_at=now,
            updated_at=now,
        )
        async with self._db.transaction() as tx:
            if await tx.fetchone(_LIVE_IN_TENANT_BY_KEY, (agent_key, owner.id)) is not None:
                raise ConflictError(f"agent {agent_key!r} already exists in tenant {owner.slug!r}")
            await tx.execute(
                f"INSERT INTO agents ({_AGENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, NULL)",
                (agent.id, agent.tenant_id, agent.key, display_name, now, now),
            )
        return self._remember(agent)

    async def ensure(self, key_or_uuid: str, tenant: str = Database.DEFAULT_TENANT_SLUG) -> Agent:
        """The live agent named by UUID or key within ``tenant``, created (by key) if missing.

        What a bot does at start: ``actorscope run`` and the PTB integration both call it. A
        UUID names an agent that exists: a missing one is :class:`AgentNotFoundError` (it was
        removed, or belongs to another tenant), never an attempt to create an agent keyed by it.
        """
        try:
            return await self.resolve(key_or_uuid, tenant)
        except AgentNotFoundError:
            if is_uuid(key_or_uuid, canonical=False):
                raise
            return await self.create(key_or_uuid, tenant)

    async def get(self, agent_id: str) -> Agent:
        """The live agent with this UUID, in any tenant."""
        canonical = parse_uuid(agent_id, "agent id")
        cached = self._cache.by_id(canonical, time.monotonic(), self._ttl)
        if cached is not None:
            return cached
        row = await self._db.fetchone(_LIVE_BY_ID, (canonical,))
        if row is None:
            raise AgentNotFoundError(f"no agent with id {agent_id}")
        return self._remember(agent_from_row(row))

    async def resolve(self, key_or_uuid: str, tenant: str = Database.DEFAULT_TENANT_SLUG) -> Agent:
        """The live agent named by UUID or key within ``tenant`` (slug or UUID).

        A UUID that belongs to another tenant is not found: a tenant never sees another's agents.
        """
        owner = await self.tenant(tenant)
        now = time.monotonic()
        if is_uuid(key_or_uuid, canonical=False):
            cached = self._cache.by_id(parse_uuid(key_or_uuid, "agent id"), now, self._ttl)
        else:
            key = parse_agent_key(key_or_uuid)
            cached = self._cache.by_key(owner.id, key, now, self._ttl)
        if cached is not None and cached.tenant_id == owner.id:
            return cached
        return self._remember(await _find(self._db, owner, key_or_uuid))

    async def rename(
        self, key_or_uuid: str, new_key: str, tenant: str = Database.DEFAULT_TENANT_SLUG
    ) -> Agent:
        """Give an agent a new key; its UUID, and so every row that points at it, is unchanged."""
        target = parse_agent_key(new_key)
        owner = await self.tenant(tenant)
        async with self._db.transaction() as tx:
            before = await _find(tx, owner, key_or_uuid)
            if before.key == target:
                return before
            if await tx.fetchone(_LIVE_IN_TENANT_BY_KEY, (target, owner.id)) is not None:
                raise ConflictError(f"agent {target!r} already exists in tenant {owner.slug!r}")
            now = Database.utc_now()
            await tx.execute(
                "UPDATE agents SET agent_key = ?, updated_at = ? WHERE id = ?",
                (target, now, before.id),
            )
        after = replace(before, key=target, updated_at=now)
        self._cache.changed(before, after, time.monotonic())
        return after

    async def remove(
        self, key_or_uuid: str, tenant: str = Database.DEFAULT_TENANT_SLUG, *, purge: bool = False
    ) -> Agent:
        """Soft-delete an agent (its key becomes free); with ``purge``, delete the row.

        A purge cascades through the foreign keys to every row that references the agent;
        a soft delete keeps those rows for audit, and the agent resolves no more.
        """
        owner = await self.tenant(tenant)
        async with self._db.transaction() as tx:
            before = await _find(tx, owner, key_or_uuid)
            if purge:
                await tx.execute("DELETE FROM agents WHERE id = ?", (before.id,))
            else:
                now = Database.utc_now()
                await tx.execute(
                    "UPDATE agents SET deleted_at = ?, updated_at = ? WHERE id = ?",
                    (now, now, before.id),
                )
        self._cache.changed(before, None, time.monotonic())
        return before

    async def import_agents(self, rows: Sequence[Mapping[str, object]]) -> list[Agent]:
        """Create agents with given UUIDs (``id``, ``key``, optional ``tenant``, ``display_name``).

        Every UUID is checked before anything else and before any write; then keys, tenants
        and duplicates; then all rows are written in one transaction. Any failure leaves the
        database as it was.
        """
        ids = validate_uuids([row.get("id") for row in rows], "agent id")
        now = Database.utc_now()
        agents: list[Agent] = []
        for index, (row, agent_id) in enumerate(zip(rows, ids, strict=True)):
            owner = await self.tenant(_text(row, "tenant", index, Database.DEFAULT_TENANT_SLUG))
            agent = Agent(
                id=AgentUUID(agent_id),
                key=_key(row, index),
                tenant_id=owner.id,
                display_name=_text(row, "display_name", index, ""),
                created_at=now,
                updated_at=now,
            )
            agents.append(agent)
        if len({a.id for a in agents}) != len(agents):
            raise ConflictError("agent import lists the same agent id twice")
        if len({(a.tenant_id, a.key) for a in agents}) != len(agents):
            raise ConflictError("agent import lists the same key twice in one tenant")
        async with self._db.transaction() as tx:
            for agent in agents:
                if await tx.fetchone("SELECT 1 FROM agents WHERE id = ?", (agent.id,)):
                    raise ConflictError(f"agent id {agent.id} already exists")
                if await tx.fetchone(_LIVE_IN_TENANT_BY_KEY, (agent.key, agent.tenant_id)):
                    raise ConflictError(f"agent {agent.key!r} already exists in its tenant")
            await tx.executemany(
                f"INSERT INTO agents ({_AGENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, NULL)",
                [(a.id, a.tenant_id, a.key, a.display_name, now, now) for a in agents],
            )
        return [self._remember(agent) for agent in agents]

    async def create_team(self, name: str = "", tenant: str = Database.DEFAULT_TENANT_SLUG) -> Team:
        """Create a team in ``tenant``; teams have no key, only a UUID."""
        owner = await self.tenant(tenant)
        team = Team(TeamUUID(str(uuid.uuid4())), owner.id, name, Database.utc_now())
        await self._db.execute(
            "INSERT INTO teams (id, tenant_id, name, created_at) VALUES (?, ?, ?, ?)",
            (team.id, team.tenant_id, team.name, team.created_at),
        )
        return team

    async def team(self, team_id: str) -> Team:
        """The team with this UUID; :class:`NotFoundError` otherwise."""
        row = await self._db.fetchone(
            "SELECT id, tenant_id, name, created_at FROM teams WHERE id = ?",
            (parse_uuid(team_id, "team id"),),
        )
        if row is None:
            raise NotFoundError(f"no team with id {team_id}")
        return Team(
            TeamUUID(row["id"]), TenantUUID(row["tenant_id"]), row["name"], row["created_at"]
        )

    async def add_member(self, team_id: str, agent_id: str, role: str = "member") -> None:
        """Add (or re-role) a live agent, by UUID, to a team of the same tenant."""
        team = await self.team(team_id)
        member = parse_uuid(agent_id, "agent id")
        async with self._db.transaction() as tx:
            row = await tx.fetchone(_LIVE_BY_ID, (member,))
            if row is None:
                raise AgentNotFoundError(f"no agent with id {agent_id}")
            if row["tenant_id"] != team.tenant_id:
                raise ConflictError(f"agent {agent_id} and team {team.id} are in different tenants")
            await tx.execute(
                "INSERT INTO team_members (team_id, agent_id, role, added_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (team_id, agent_id) DO UPDATE SET role = excluded.role",
                (team.id, member, role, Database.utc_now()),
            )

    async def members(self, team_id: str) -> list[TeamMember]:
        """The team's live members, ordered by key."""
        team = await self.team(team_id)
        columns = ", ".join(f"a.{c.strip()}" for c in _AGENT_COLUMNS.split(","))
        rows = await self._db.fetchall(
            f"SELECT {columns}, m.role, m.added_at FROM team_members m "
            "JOIN agents a ON a.id = m.agent_id "
            "WHERE m.team_id = ? AND a.deleted_at IS NULL ORDER BY a.agent_key",
            (team.id,),
        )
        return [TeamMember(agent_from_row(r), r["role"], r["added_at"]) for r in rows]

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
        return [agent_from_row(row) for row in rows]

"""Grants in ``config_permissions``: upsert, revoke, list, import, and the one-query lookup.

Every change commits together with its audit row and then invalidates the agent's cached
decisions in every store on the same database object, so the very next check sees it. Changes
made by another process reach this cache over the database's change feed, which the first
cached check starts (:meth:`GrantStore.cache_generation`): on PostgreSQL LISTEN/NOTIFY drops
that agent's decisions when the notification arrives; on SQLite an epoch poll drops every
decision when the epoch moves. Either way within a second; while the feed is down nothing is
cached.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Hashable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from actorscope._input import is_uuid, parse_uuid
from actorscope.agents import Agent, AgentRegistry
from actorscope.errors import GrantError, StoreError
from actorscope.identity import Scope
from actorscope.permissions._audit import AuditAction, AuditEntry, AuditLog
from actorscope.permissions._cache import DEFAULT_MAX_ENTRIES, DecisionCache
from actorscope.permissions._records import (
    Grant,
    GrantKey,
    GrantLookup,
    grant_from_row,
    grant_key,
    metadata_json,
    precedence,
)
from actorscope.permissions._scopes import (
    ANY,
    Permission,
    parse_config_type,
    parse_grant,
    parse_grant_scope,
    parse_grantee,
    parse_permission,
)
from actorscope.permissions._watch import DEFAULT_WATCH_INTERVAL, GrantChangeWatcher
from actorscope.store import Database, Transaction

__all__ = ["GrantStore"]

_COLUMNS = (
    "tenant_id, agent_id, scope, config_type, sender_id, permission, granted_by, metadata,"
    " created_at, updated_at"
)
_KEY_WHERE = "agent_id = ? AND scope = ? AND config_type = ? AND sender_id = ?"
_UPSERT = (
    f"INSERT INTO config_permissions ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (tenant_id, agent_id, scope, config_type, sender_id) DO UPDATE SET "
    "permission = excluded.permission, granted_by = excluded.granted_by, "
    "metadata = excluded.metadata, updated_at = excluded.updated_at"
)


#: Check shapes whose SQL text each store builds up front: candidate scopes (a scope's colons
#: plus two) and accepted types (``*`` included) up to these counts, with and without a tenant.
_SHAPE_SCOPES = 8
_SHAPE_TYPES = 4


def _check_sql(dialect: str, scopes: int, types: int, tenant: bool) -> str:
    """The check's query for ``scopes`` candidate scopes and ``types`` types, every value bound.

    Parameters, in order: the agent, each type, the sender, each scope, the tenant (when one
    is given), the agent again (the deleted-agent test).
    """
    if dialect == "sqlite" and scopes <= _SHAPE_SCOPES:
        # Only for the common shapes: a scope of hundreds of colons would exceed SQLite's
        # compound-select limit (500), and a failing check must not be how it is answered.
        return _sqlite_check_sql(scopes, types, tenant)
    scope_marks = ", ".join("?" * scopes)
    type_marks = ", ".join("?" * types)
    return (
        "SELECT sender_id, permission FROM config_permissions "
        f"WHERE agent_id = ? AND config_type IN ({type_marks}) AND sender_id IN (?, '*') "
        # No tenant given: no tenant condition at all (each condition costs the point read).
        f"AND scope IN ({scope_marks}){' AND tenant_id = ?' if tenant else ''} "
        # A soft-deleted agent keeps its grant rows for the record; they grant nothing.
        # The agent is one row, read once per lookup (not once per grant row).
        "AND EXISTS (SELECT 1 FROM agents WHERE id = ? AND deleted_at IS NULL)"
    )


def _sqlite_check_sql(scopes: int, types: int, tenant: bool) -> str:
    """SQLite's form of :func:`_check_sql`: one point search per candidate scope, UNION ALL.

    Measured on SQLite, ``scope IN (...)`` builds a temporary table of the candidates and
    costs ~1.7 us more than these searches. Numbered parameters bind each value once; the
    unary ``+`` keeps the type and sender lists filters on the rows of one (agent, scope)
    (used as index terms they would multiply the searches). Same rows as the IN form.
    """
    sender = 2 + types
    first_scope = sender + 1
    tenant_mark = first_scope + scopes
    last = tenant_mark + 1 if tenant else tenant_mark
    type_marks = ", ".join(f"?{2 + i}" for i in range(types))
    tenant_term = f" AND +tenant_id = ?{tenant_mark}" if tenant else ""
    return " UNION ALL ".join(
        "SELECT sender_id, permission FROM config_permissions "
        f"WHERE agent_id = ?1 AND scope = ?{first_scope + i} AND +config_type IN ({type_marks}) "
        f"AND +sender_id IN (?{sender}, '*'){tenant_term} "
        # A soft-deleted agent keeps its grant rows for the record; they grant nothing.
        f"AND EXISTS (SELECT 1 FROM agents WHERE id = ?{last} AND deleted_at IS NULL)"
        for i in range(scopes)
    )


@dataclass(frozen=True, slots=True)
class _Write:
    key: GrantKey
    permission: str
    granted_by: str
    metadata: str


class GrantStore:
    """Grants of every tenant and agent, with a decision cache shared by the policies over it."""

    @staticmethod
    def validate(
        scope: object,
        config_type: object,
        sender_id: object,
        permission: object = Permission.ALLOW,
    ) -> str:
        """What a grant names, checked as :meth:`grant` checks it, in this order: the scope
        (exact, ``*`` or a ``<prefix>:*``), the config type, the grantee (``*`` or a person a
        check in that scope can match) and ``allow`` / ``deny``. Returns the canonical grantee;
        one :class:`~actorscope.errors.GrantError` says what is wrong."""
        return parse_grant(scope, config_type, sender_id, permission)

    def __init__(self, db: Database, *, max_cached: int = DEFAULT_MAX_ENTRIES) -> None:
        self.db = db
        self.audit = AuditLog(db)
        self.cache: DecisionCache[Any] = DecisionCache(max_cached)
        # The check's SQL text per shape, built once: a check only picks its text and binds.
        self._check_sqls: dict[tuple[int, int, bool], str] = {
            (scopes, types, tenant): _check_sql(db.dialect, scopes, types, tenant)
            for scopes in range(1, _SHAPE_SCOPES + 1)
            for types in range(1, _SHAPE_TYPES + 1)
            for tenant in (False, True)
        }
        self._agents = AgentRegistry(db)
        self._watching = False  # True once db.watch_changes() has returned (cache_generation)
        # A renamed or removed agent (through any registry on this database) must not keep
        # answering from cached decisions.
        self._agents.subscribe(self._agent_changed)
        db.subscribe_changes(self)

    def on_remote_change(self, key: str) -> None:
        """Another worker changed agent ``key``'s grants (or the agent): forget its decisions.

        ``*`` (a link changed: any agent's decisions may name its person) forgets every one.
        """
        if key == ANY:
            self.cache.clear()
        else:
            self.cache.invalidate(key)

    def on_feed_lost(self) -> None:
        """The change feed is down: forget every decision; read the database until it is back."""
        self.cache.suspend()

    def on_feed_restored(self) -> None:
        """The change feed is (back) up: forget every decision (some changes were missed)."""
        self.cache.resume()

    def watch(self, *, interval: float = DEFAULT_WATCH_INTERVAL) -> GrantChangeWatcher:
        """The explicit way to run the change feed: ``async with store.watch():`` starts it now
        (not at the first cached check) and on SQLite also polls every ``interval`` seconds;
        ``await watcher.apoll()`` checks for changes at once (True if cached decisions were
        dropped). A non-positive interval is a :class:`~actorscope.errors.ConfigError`."""
        return GrantChangeWatcher(self.db, interval=interval)

    async def cache_generation(self, agent_id: str) -> int:
        """Call before a read whose answer may be cached: the token :meth:`cache.put` needs.

        Starts the database's change feed with the first such read (a no-op afterwards), so
        any process that caches decisions hears other processes' grant changes.
        """
        if not self._watching:  # db.watch_changes() is a no-op once it has returned
            await self.db.watch_changes()
            self._watching = True
        return self.cache.generation(agent_id)

    async def _agent_ref(self, agent: str, tenant: str) -> str:
        """A UUID as given (validated later), or the UUID of the live agent with key ``agent``."""
        if not isinstance(agent, str) or is_uuid(agent, canonical=False):
            return agent
        return (await self._agents.resolve(agent, tenant)).id

    def _agent_changed(self, before: Agent, after: Agent | None) -> None:
        self.cache.invalidate(before.id)

    def invalidate(self, agent_id: str | None = None) -> None:
        """Forget cached decisions of one agent (or all): after changes made elsewhere."""
        if agent_id is None:
            self.cache.clear()
        else:
            self.cache.invalidate(agent_id)

    async def grant(
        self,
        *,
        agent_id: str,
        scope: str,
        config_type: str,
        sender_id: str,
        permission: str = "allow",
        granted_by: str = "",
        metadata: Mapping[str, Any] | None = None,
        tenant: str = Database.DEFAULT_TENANT_SLUG,
    ) -> Grant:
        """Create or replace the grant with this key; the change is audited as ``granted_by``.

        ``agent_id`` is the agent's UUID or its key (looked up in ``tenant``).
        """
        write = _Write(
            key=grant_key(await self._agent_ref(agent_id, tenant), scope, config_type, sender_id),
            permission=parse_permission(permission),
            granted_by=str(granted_by),
            metadata=metadata_json(metadata),
        )
        tenants = await self._tenants([write.key.agent_id])
        (stored,) = await self._upsert([write], tenants, via="grant")
        return stored

    async def import_grants(self, rows: Iterable[Mapping[str, Any]]) -> int:
        """Upsert many grants in one transaction; nothing is written if any row is bad.

        Every agent UUID is validated before anything else, then every other field, then
        that each agent exists. A row names its grantee ``sender_id``; a row with the old
        ``user_id`` key is refused, not guessed at: ``user_id`` means a scope everywhere else.
        """
        batch = list(rows)
        for index, row in enumerate(batch):
            if not isinstance(row, Mapping):
                raise GrantError(f"grant row {index} must be a mapping")
            if "user_id" in row:
                raise GrantError(
                    f"grant row {index} has a 'user_id' key; name the grantee 'sender_id' "
                    "(user_id means the scope)"
                )
            parse_uuid(row.get("agent_id"), f"agent id of grant row {index}")
        writes = [
            _Write(
                key=grant_key(
                    row["agent_id"], row.get("scope"), row.get("config_type"), row.get("sender_id")
                ),
                permission=parse_permission(row.get("permission", Permission.ALLOW)),
                granted_by=str(row.get("granted_by", "")),
                metadata=metadata_json(row.get("metadata")),
            )
            for row in batch
        ]
        tenants = await self._tenants([w.key.agent_id for w in writes])
        return len(await self._upsert(writes, tenants, via="import"))

    async def revoke(
        self,
        *,
        agent_id: str,
        scope: str,
        config_type: str,
        sender_id: str,
        revoked_by: str = "",
        tenant: str = Database.DEFAULT_TENANT_SLUG,
    ) -> bool:
        """Delete the grant with this key; False if there was none (nothing is audited then).

        ``agent_id`` is the agent's UUID or its key (looked up in ``tenant``).
        """
        agent = await self._agent_ref(agent_id, tenant)
        removed = await self.revoke_many(
            [grant_key(agent, scope, config_type, sender_id)], revoked_by=revoked_by
        )
        return removed == 1

    @asynccontextmanager
    async def changing(self, agent_ids: Iterable[str]) -> AsyncIterator[Transaction]:
        """One write transaction that changes grants of ``agent_ids`` (serialised across workers).

        Their cached decisions are forgotten when it starts and again when it ends. Decide a rule
        that depends on other grants (the last writer) by reading inside it, with ``tx=``.
        """
        agents = set(agent_ids)
        try:
            async with self.db.transaction() as tx:
                for agent in agents:
                    self.cache.invalidate(agent)
                yield tx
        finally:
            # Again after the commit: a cold read that started during the write must not stick.
            for agent in agents:
                self.db.announce_change(agent)  # this store and every other one on self.db

    async def revoke_many(
        self,
        keys: Sequence[GrantKey | Grant],
        *,
        revoked_by: str = "",
        tx: Transaction | None = None,
    ) -> int:
        """Delete every existing grant among ``keys`` (grant keys, or grants, whose agent,
        scope, config type and sender are their key) in one transaction; return how many.

        With ``tx`` (from :meth:`changing`) the deletes are part of that transaction.
        """
        if tx is None:
            async with self.changing(key.agent_id for key in keys) as own:
                return await self._revoke(own, keys, revoked_by)
        return await self._revoke(tx, keys, revoked_by)

    async def _revoke(
        self, tx: Transaction, keys: Sequence[GrantKey | Grant], revoked_by: str
    ) -> int:
        removed = 0
        for key in keys:
            row = await tx.fetchone(
                f"SELECT {_COLUMNS} FROM config_permissions WHERE {_KEY_WHERE}",
                (key.agent_id, key.scope, key.config_type, key.sender_id),
            )
            if row is None:
                continue
            await tx.execute(
                f"DELETE FROM config_permissions WHERE {_KEY_WHERE}",
                (key.agent_id, key.scope, key.config_type, key.sender_id),
            )
            removed += 1
            old = grant_from_row(row)
            await self.audit.write(
                AuditEntry(
                    action=AuditAction.GRANT_REMOVE,
                    sender_id=key.sender_id,
                    actor=revoked_by,
                    scope=key.scope,
                    agent_id=key.agent_id,
                    tenant_id=old.tenant_id,
                    config_type=key.config_type,
                    permission=old.permission,
                ),
                tx,
            )
        return removed

    async def list(
        self,
        *,
        agent_id: str | None = None,
        scope: str | None = None,
        config_type: str | None = None,
        sender_id: str | None = None,
        tenant_id: str | None = None,
    ) -> list[Grant]:
        """Grants matching every filter given (each compared exactly), in a stable order."""
        where: list[str] = []
        params: list[str] = []
        filters = (
            ("tenant_id", None if tenant_id is None else parse_uuid(tenant_id, "tenant id")),
            ("agent_id", None if agent_id is None else parse_uuid(agent_id, "agent id")),
            ("scope", None if scope is None else parse_grant_scope(scope)),
            ("config_type", None if config_type is None else parse_config_type(config_type)),
            ("sender_id", None if sender_id is None else parse_grantee(sender_id)),
        )
        for column, value in filters:
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        rows = await self.db.fetchall(
            f"SELECT {_COLUMNS} FROM config_permissions{clause} "
            "ORDER BY tenant_id, agent_id, scope, config_type, sender_id",
            params,
        )
        return [grant_from_row(row) for row in rows]

    async def check(
        self,
        *,
        agent_id: str,
        scopes: Sequence[str],
        config_types: Sequence[str],
        sender_id: str,
        tenant_id: str | None = None,
        tx: Transaction | None = None,
        person: str = "",
    ) -> GrantLookup:
        """One query over the candidate scopes and types (index searches only), then the precedence.

        Precedence: sender deny, sender allow, ``*`` deny, ``*`` allow, none. Grants of a
        soft-deleted agent match nothing. Uncached; raises
        :class:`~actorscope.errors.StoreError` when the store fails. With ``tx`` it reads
        inside that write transaction. With ``person`` (``person:<id>``, the sender's linked
        person) the person's grants count as the sender's: a deny of either wins.
        """
        shape = (len(scopes), len(config_types), tenant_id is not None)
        sql = self._check_sqls.get(shape)
        if sql is None:  # a scope with more colons than any prebuilt shape
            sql = _check_sql(self.db.dialect, *shape)
        tenant_params = () if tenant_id is None else (tenant_id,)
        lookup = self.db.lookup if tx is None else tx.fetchall
        rows = await lookup(
            sql, (agent_id, *config_types, sender_id, *scopes, *tenant_params, agent_id)
        )
        if person:
            rows = rows + await lookup(
                sql, (agent_id, *config_types, person, *scopes, *tenant_params, agent_id)
            )
        return precedence(rows)

    async def holders(
        self,
        *,
        agent_id: str,
        scope: str,
        config_type: str,
        member_prefix: str | None = None,
        tx: Transaction | None = None,
    ) -> tuple[str, ...]:
        """Who holds an allow grant of ``config_type`` at ``scope``, sorted (``*`` names no one).

        With ``member_prefix`` (``guild:<gid>:user:``) a member also holds one through an allow
        grant at their own member scope that names them or ``*``. With ``tx`` it reads inside
        that write transaction (a rule decided on it holds until the commit).
        """
        low, high = ("", "") if member_prefix is None else (member_prefix, member_prefix[:-1] + ";")
        sql = (
            "SELECT scope, sender_id FROM config_permissions "
            "WHERE agent_id = ? AND config_type = ? AND permission = ? "
            "AND (scope = ? OR (scope >= ? AND scope < ?))"
        )
        params = (agent_id, config_type, Permission.ALLOW, scope, low, high)
        rows = await (self.db.fetchall if tx is None else tx.fetchall)(sql, params)
        found: set[str] = set()
        for row in rows:
            if row["scope"] == scope:
                if row["sender_id"] != ANY:
                    found.add(row["sender_id"])
            else:
                # A member-scoped grant belongs to the member its scope names.
                member = Scope.parse(row["scope"]).member_id
                if row["sender_id"] in (member, ANY):
                    found.add(member)
        return tuple(sorted(found))

    async def _tenants(self, agent_ids: Iterable[str]) -> dict[str, str]:
        tenants: dict[str, str] = {}
        for agent_id in dict.fromkeys(agent_ids):
            agent = await self._agents.get(agent_id)
            tenants[agent_id] = agent.tenant_id
        return tenants

    async def _upsert(
        self, writes: Sequence[_Write], tenants: Mapping[str, str], via: str
    ) -> tuple[Grant, ...]:
        stored: tuple[Grant, ...] = ()
        async with self.changing(tenants) as tx:
            for write in writes:
                if via == "grant":
                    await _known_person(tx, write.key.sender_id, tenants[write.key.agent_id])
                grant = await self._upsert_one(tx, write, tenants[write.key.agent_id], via)
                stored += (grant,)
        return stored

    async def _upsert_one(self, tx: Transaction, write: _Write, tenant_id: str, via: str) -> Grant:
        key = write.key
        previous = await tx.fetchone(
            f"SELECT permission FROM config_permissions WHERE {_KEY_WHERE} AND tenant_id = ?",
            (key.agent_id, key.scope, key.config_type, key.sender_id, tenant_id),
        )
        now = Database.utc_now()
        await tx.execute(
            _UPSERT,
            (
                tenant_id,
                key.agent_id,
                key.scope,
                key.config_type,
                key.sender_id,
                write.permission,
                write.granted_by,
                write.metadata,
                now,
                now,
            ),
        )
        detail: dict[str, Hashable] = {}
        if via != "grant":
            detail["via"] = via
        if previous is not None:
            detail["previous"] = previous["permission"]
        await self.audit.write(
            AuditEntry(
                action=AuditAction.GRANT_ADD if previous is None else AuditAction.GRANT_UPDATE,
                sender_id=key.sender_id,
                actor=write.granted_by,
                scope=key.scope,
                agent_id=key.agent_id,
                tenant_id=tenant_id,
                config_type=key.config_type,
                permission=write.permission,
                detail=detail,
            ),
            tx,
        )
        # Read back inside the transaction: the row as stored, whatever the reader's snapshot.
        row = await tx.fetchone(
            f"SELECT {_COLUMNS} FROM config_permissions WHERE {_KEY_WHERE}",
            (key.agent_id, key.scope, key.config_type, key.sender_id),
        )
        if row is None:
            raise StoreError(f"grant for agent {key.agent_id} vanished inside its transaction")
        return grant_from_row(row)


async def _known_person(tx: Transaction, grantee: str, tenant_id: str) -> None:
    """A grant to ``person:<uuid>`` names a person of the agent's tenant (a GrantError if not:
    a person is made by a link, and its id changes when it is unlinked and linked again)."""
    if not grantee.startswith(Scope.PERSON_PREFIX):
        return
    row = await tx.fetchone(
        "SELECT 1 FROM persons WHERE id = ? AND tenant_id = ?",
        (grantee.removeprefix(Scope.PERSON_PREFIX), tenant_id),
    )
    if row is None:
        raise GrantError(
            f"no person {grantee} in the agent's tenant: link its accounts first "
            "(actorscope links list shows the persons)"
        )

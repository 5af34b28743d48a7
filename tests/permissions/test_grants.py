"""GrantStore: upsert, revoke, list, import, cascade, and that changes commit with their audit."""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from actorscope.agents import Agent, AgentRegistry
from actorscope.agents._registry import AgentNotFoundError
from actorscope.errors import ConflictError, GrantError, IdentityError, StoreError
from actorscope.identity import Identity, PeerKind
from actorscope.permissions import GrantStore, PermissionPolicy, Reason
from actorscope.permissions._audit import AuditLog
from actorscope.permissions._grants import _check_sql
from actorscope.permissions._records import GrantKey, GrantLookup
from actorscope.store import Database, Row

GROUP = "group:telegram:-100200"


def row(agent: Agent, **kw: Any) -> dict[str, Any]:
    """An import row for ``agent`` (file_writer allow for 42 in GROUP unless told otherwise)."""
    base: dict[str, Any] = {
        "agent_id": agent.id,
        "scope": GROUP,
        "config_type": "file_writer",
        "sender_id": "42",
    }
    base.update(kw)
    return base


async def count(db: Database, table: str) -> int:
    """Rows in one table."""
    found = await db.fetchone(f"SELECT COUNT(*) FROM {table}")
    assert found is not None
    return int(found[0])


async def test_grant_records_granted_by_and_audits(store: GrantStore, agent: Agent) -> None:
    """grant() stores the row with granted_by and tenant, and audits a grant.add."""
    grant = await store.grant(
        agent_id=agent.id,
        scope=GROUP,
        config_type="cron",
        sender_id="42",
        granted_by="7",
        metadata={"note": "ops"},
    )
    assert (grant.tenant_id, grant.agent_id, grant.permission, grant.granted_by) == (
        agent.tenant_id,
        agent.id,
        "allow",
        "7",
    )
    assert grant.metadata == {"note": "ops"}
    assert grant.created_at == grant.updated_at
    (entry,) = await store.audit.list()
    assert (
        entry.action,
        entry.sender_id,
        entry.permission,
        entry.actor,
        entry.scope,
        entry.config_type,
        entry.reason,
    ) == ("grant.add", "42", "allow", "7", GROUP, "cron", "")
    assert (entry.agent_id, entry.tenant_id) == (agent.id, agent.tenant_id)
    assert entry.detail == {}


async def test_grant_is_an_upsert(store: GrantStore, agent: Agent) -> None:
    """Granting the same key again replaces permission and granted_by; one row remains."""
    first = await store.grant(
        agent_id=agent.id, scope=GROUP, config_type="cron", sender_id="42", granted_by="7"
    )
    second = await store.grant(
        agent_id=agent.id,
        scope=GROUP,
        config_type="cron",
        sender_id="42",
        permission="deny",
        granted_by="8",
    )
    assert (second.permission, second.granted_by) == ("deny", "8")
    assert second.created_at == first.created_at <= second.updated_at
    assert len(await store.list(agent_id=agent.id)) == 1
    latest = (await store.audit.list())[0]
    assert (latest.action, latest.detail["previous"]) == ("grant.update", "allow")


async def test_legacy_grantee_is_split(store: GrantStore, agent: Agent) -> None:
    """A legacy "42|bob" grantee is stored as 42."""
    grant = await store.grant(
        agent_id=agent.id, scope=GROUP, config_type="cron", sender_id="42|bob"
    )
    assert grant.sender_id == "42"


async def test_revoke_deletes_and_audits(store: GrantStore, agent: Agent) -> None:
    """revoke() deletes the grant and audits grant.remove by the revoker; again it is False."""
    await store.grant(agent_id=agent.id, scope=GROUP, config_type="cron", sender_id="42")
    keys = {"agent_id": agent.id, "scope": GROUP, "config_type": "cron", "sender_id": "42"}
    assert await store.revoke(**keys, revoked_by="9") is True
    assert await store.list() == []
    assert await store.revoke(**keys) is False
    entries = await store.audit.list()
    assert [e.action for e in entries] == ["grant.remove", "grant.add"]
    assert (entries[0].actor, entries[0].sender_id, entries[0].permission) == ("9", "42", "allow")


async def test_list_filters(store: GrantStore, agent: Agent, db: Database) -> None:
    """list() filters by agent, scope, config type, sender and tenant, each exactly."""
    other = await AgentRegistry(db).create("other")
    await store.grant(agent_id=agent.id, scope=GROUP, config_type="cron", sender_id="42")
    await store.grant(agent_id=agent.id, scope="*", config_type="file_writer", sender_id="*")
    await store.grant(agent_id=other.id, scope=GROUP, config_type="cron", sender_id="43")
    assert len(await store.list()) == 3
    assert len(await store.list(agent_id=agent.id)) == 2
    assert sorted(g.sender_id for g in await store.list(scope=GROUP)) == ["42", "43"]
    assert [g.scope for g in await store.list(config_type="file_writer")] == ["*"]
    assert [g.agent_id for g in await store.list(sender_id="43")] == [other.id]
    assert len(await store.list(tenant_id=agent.tenant_id)) == 3
    assert await store.list(tenant_id=str(uuid.uuid4())) == []


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("agent_id", "not/a-key", "agent key must be"),
        ("agent_id", "ghost", "no agent 'ghost'"),
        ("scope", "", "scope must be"),
        ("scope", "group:telegram", "bad group scope"),
        ("scope", "group:Telegram:-1", "bad group scope"),
        ("scope", "group:telegram:abc", "bad group scope"),
        ("scope", "group:telegram:-0100", "bad group scope"),
        ("scope", "guild:1:member:2", "bad group scope"),
        ("scope", "guild:1:user:*:*", "bad scope prefix"),
        ("scope", "group:telegram:-1:*", "bad scope prefix"),
        ("scope", "team:*", "bad scope prefix"),
        ("scope", "42 43", "bad scope"),
        ("scope", "a*b", "bad scope"),
        ("config_type", "writer", "config type must be one of"),
        ("config_type", "", "config type must be one of"),
        ("sender_id", "", "grant sender must be"),
        ("sender_id", "a b", "grant sender must be"),
        ("sender_id", "subagent:x", "not a person"),
        ("sender_id", "1087968824", "not a person"),
        ("permission", "maybe", "permission must be"),
    ],
)
async def test_bad_grant_input_is_one_clear_error(
    store: GrantStore, agent: Agent, field: str, value: str, message: str
) -> None:
    """Each malformed part of a grant raises one error naming it; nothing is written."""
    args: dict[str, Any] = {
        "agent_id": agent.id,
        "scope": GROUP,
        "config_type": "cron",
        "sender_id": "42",
        "permission": "allow",
    }
    args[field] = value
    with pytest.raises((GrantError, IdentityError, AgentNotFoundError), match=message):
        await store.grant(**args)
    assert await store.list() == []


@pytest.mark.parametrize(
    "scope",
    [
        "*",
        "42",
        "api-user-17",
        "group:*",
        "group:telegram:*",
        "group:telegram:-100200",
        "group:my-bridge.v2:7",
        "guild:*",
        "guild:81234567890123456:*",
        "guild:81234567890123456:user:*",
        "guild:81234567890123456:user:42",
    ],
)
async def test_accepted_scope_forms(store: GrantStore, agent: Agent, scope: str) -> None:
    """Exact ids, '*', canonical group scopes and their ':*' prefixes are accepted."""
    grant = await store.grant(agent_id=agent.id, scope=scope, config_type="cron", sender_id="42")
    assert grant.scope == scope


async def test_bad_metadata_is_refused(store: GrantStore, agent: Agent) -> None:
    """Metadata that is not a JSON-serialisable mapping is a GrantError."""
    with pytest.raises(GrantError, match="JSON"):
        await store.grant(
            agent_id=agent.id,
            scope=GROUP,
            config_type="cron",
            sender_id="42",
            metadata={"x": {1, 2}},
        )


async def test_unknown_agent_is_not_found(store: GrantStore) -> None:
    """A grant for an agent UUID that does not exist raises AgentNotFoundError."""
    with pytest.raises(AgentNotFoundError):
        await store.grant(
            agent_id=str(uuid.uuid4()), scope=GROUP, config_type="cron", sender_id="42"
        )


async def test_grant_and_audit_commit_together(
    db: Database, store: GrantStore, agent: Agent, monkeypatch: pytest.MonkeyPatch
) -> None:
    """If the audit row cannot be written the grant is rolled back with it."""

    async def broken(self: AuditLog, *args: object, **kwargs: object) -> None:
        raise StoreError("database write failed: audit")

    monkeypatch.setattr(AuditLog, "write", broken)
    with pytest.raises(StoreError):
        await store.grant(agent_id=agent.id, scope=GROUP, config_type="cron", sender_id="42")
    monkeypatch.undo()
    assert await store.list() == []
    assert await count(db, "audit_log") == 0


async def test_revoke_rolls_back_with_its_audit(
    db: Database, store: GrantStore, agent: Agent, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A revoke whose audit row fails leaves the grant in place."""
    await store.grant(agent_id=agent.id, scope=GROUP, config_type="cron", sender_id="42")

    async def broken(self: AuditLog, *args: object, **kwargs: object) -> None:
        raise StoreError("database write failed: audit")

    monkeypatch.setattr(AuditLog, "write", broken)
    with pytest.raises(StoreError):
        await store.revoke(agent_id=agent.id, scope=GROUP, config_type="cron", sender_id="42")
    monkeypatch.undo()
    assert len(await store.list()) == 1


async def test_import_writes_all_rows_in_one_go(
    db: Database, store: GrantStore, agent: Agent
) -> None:
    """import_grants() upserts every row and audits each one as an import."""
    written = await store.import_grants(
        [row(agent), row(agent, sender_id="*", permission="deny", granted_by="ops")]
    )
    assert written == 2
    assert {(g.sender_id, g.permission) for g in await store.list()} == {
        ("42", "allow"),
        ("*", "deny"),
    }
    assert {e.detail.get("via") for e in await store.audit.list()} == {"import"}


@pytest.mark.parametrize(
    "bad",
    [
        {"agent_id": "not-a-uuid"},
        {"agent_id": None},
        {"agent_id": str(uuid.uuid4())},
        {"scope": "group:nope"},
        {"config_type": "writer"},
        {"permission": "maybe"},
    ],
)
async def test_import_with_one_bad_row_writes_nothing(
    db: Database, store: GrantStore, agent: Agent, bad: dict[str, Any]
) -> None:
    """One bad row (bad or unknown agent UUID, bad scope, type or permission) writes nothing."""
    rows = [row(agent), row(agent, sender_id="43"), row(agent, sender_id="44", **bad)]
    with pytest.raises((GrantError, IdentityError, AgentNotFoundError)):
        await store.import_grants(rows)
    assert await store.list() == []
    assert await count(db, "audit_log") == 0


async def test_import_validates_every_uuid_before_anything_else(
    store: GrantStore, agent: Agent
) -> None:
    """A bad UUID in a late row is reported even when an earlier row has another problem."""
    rows = [row(agent, scope="group:nope"), row(agent, agent_id="xyz")]
    with pytest.raises(IdentityError, match="grant row 1"):
        await store.import_grants(rows)


async def test_import_refuses_the_old_user_id_key(
    db: Database, store: GrantStore, agent: Agent
) -> None:
    """A row naming its grantee ``user_id`` is one clear error; none is written."""
    old = {k: v for k, v in row(agent).items() if k != "sender_id"} | {"user_id": "42"}
    with pytest.raises(GrantError, match="grant row 1 has a 'user_id' key; name the grantee"):
        await store.import_grants([row(agent), old])
    assert await store.list() == []
    assert await count(db, "audit_log") == 0


async def test_deleting_an_agent_cascades_to_its_grants(
    db: Database, store: GrantStore, agent: Agent
) -> None:
    """Hard-deleting the agent row deletes its grants; the audit trail stays."""
    other = await AgentRegistry(db).create("other")
    await store.grant(agent_id=agent.id, scope=GROUP, config_type="cron", sender_id="42")
    await store.grant(agent_id=other.id, scope=GROUP, config_type="cron", sender_id="42")
    async with db.transaction() as tx:
        await tx.execute("DELETE FROM agents WHERE id = ?", (agent.id,))
    assert [g.agent_id for g in await store.list()] == [other.id]
    assert await count(db, "audit_log") == 2


async def test_grant_rows_need_an_existing_agent(db: Database, agent: Agent) -> None:
    """The foreign key refuses a grant row for an agent that does not exist."""
    with pytest.raises(ConflictError):
        await db.execute(
            "INSERT INTO config_permissions (tenant_id, agent_id, scope, config_type, sender_id,"
            " permission, created_at, updated_at)"
            " VALUES (?, ?, '*', 'cron', '42', 'allow', '', '')",
            (agent.tenant_id, str(uuid.uuid4())),
        )


async def test_schema_constraints_refuse_bad_rows(db: Database, agent: Agent) -> None:
    """The table itself refuses an unknown permission or config type and a duplicate key."""
    insert = (
        "INSERT INTO config_permissions (tenant_id, agent_id, scope, config_type, sender_id,"
        " permission, created_at, updated_at) VALUES (?, ?, '*', ?, '42', ?, '', '')"
    )
    for config_type, permission in (("cron", "maybe"), ("writer", "allow")):
        with pytest.raises(ConflictError):
            await db.execute(insert, (agent.tenant_id, agent.id, config_type, permission))
    await db.execute(insert, (agent.tenant_id, agent.id, "cron", "allow"))
    with pytest.raises(ConflictError):
        await db.execute(insert, (agent.tenant_id, agent.id, "cron", "deny"))


@pytest.mark.parametrize("with_tenant", [False, True], ids=["no-tenant", "tenant"])
async def test_check_is_one_indexed_query(
    db: Database,
    store: GrantStore,
    agent: Agent,
    monkeypatch: pytest.MonkeyPatch,
    with_tenant: bool,
) -> None:
    """A cold check runs one query: it reads only the covering index and the agent once."""
    await store.grant(agent_id=agent.id, scope="group:*", config_type="file_writer", sender_id="42")
    seen: list[tuple[str, tuple[object, ...]]] = []
    real_fetchall, real_fetchone, real_lookup = db.fetchall, db.fetchone, db.lookup

    in_lookup: list[bool] = []  # a backend's lookup may read through fetchall: one query

    async def fetchall(sql: str, params: Sequence[object] = ()) -> list[Row]:
        if not in_lookup:
            seen.append((sql, tuple(params)))
        return await real_fetchall(sql, params)

    async def lookup(sql: str, params: Sequence[object] = ()) -> list[Row]:
        seen.append((sql, tuple(params)))
        in_lookup.append(True)
        try:
            return await real_lookup(sql, params)
        finally:
            in_lookup.pop()

    async def fetchone(sql: str, params: Sequence[object] = ()) -> Row | None:
        seen.append((sql, tuple(params)))
        return await real_fetchone(sql, params)

    await db.watch_changes()  # the first cached check starts the change feed: not measured here
    monkeypatch.setattr(db, "fetchall", fetchall)
    monkeypatch.setattr(db, "fetchone", fetchone)
    monkeypatch.setattr(db, "lookup", lookup)
    tenant = agent.tenant_id if with_tenant else None
    identity = Identity(user_id=GROUP, sender_id="42", agent_id=agent.id, tenant_id=tenant)
    assert (await PermissionPolicy(store).check_cron(identity)).reason is Reason.GRANTED
    monkeypatch.undo()
    assert len(seen) == 1
    sql, params = seen[0]
    if db.dialect == "postgresql":
        # A tiny table is cheapest to scan: ask whether the index can serve the query at all.
        async with db.transaction() as tx:
            await tx.execute("SET LOCAL enable_seqscan = off")
            plan = await tx.fetchall(f"EXPLAIN {sql}", params)
        text = " ".join(str(r[0]) for r in plan)
        assert "config_permissions_check" in text
        assert "Seq Scan on config_permissions" not in text
        (index,) = await db.fetchall(
            "SELECT indexdef FROM pg_indexes WHERE indexname = 'config_permissions_check'"
            " AND schemaname = current_schema()"
        )
        assert "INCLUDE (permission, tenant_id)" in index["indexdef"]  # index-only scans
        return
    plan = await db.fetchall(f"EXPLAIN QUERY PLAN {sql}", params)
    detail = " ".join(str(r["detail"]) for r in plan)
    # COVERING: the index holds every column the check reads, no table row is read; one
    # point search per candidate scope (4 for GROUP), with type and sender as filters.
    search = (
        "SEARCH config_permissions USING COVERING INDEX config_permissions_check "
        "(agent_id=? AND scope=?)"
    )
    assert detail.count(search) == 4
    assert "SCAN" not in detail
    assert "CORRELATED" not in detail  # the deleted-agent test runs once, not once per row


async def test_check_sql_is_built_once_per_shape(
    db: Database, store: GrantStore, agent: Agent, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Checks of one shape send the very same SQL text (built at init), with every value bound."""
    seen: list[tuple[str, tuple[object, ...]]] = []
    real_lookup = db.lookup

    async def lookup(sql: str, params: Sequence[object] = ()) -> list[Row]:
        seen.append((sql, tuple(params)))
        return await real_lookup(sql, params)

    monkeypatch.setattr(db, "lookup", lookup)
    for sender in ("42", "43"):
        await store.check(
            agent_id=agent.id, scopes=(GROUP, "*"), config_types=("cron", "*"), sender_id=sender
        )
    (first, first_params), (second, second_params) = seen
    assert first is second
    # The agent, the two types, then the sender: bound, never in the text.
    assert (first_params[3], second_params[3]) == ("42", "43")
    assert "42" not in first


async def test_sqlite_check_finds_the_rows_the_portable_form_finds(
    tmp_path: Path,
) -> None:
    """SQLite's per-scope UNION ALL check returns exactly the rows of the IN form."""
    async with Database.open(tmp_path / "forms.db") as db:
        agent = await AgentRegistry(db).create("main")
        store = GrantStore(db)
        scopes = ("group:telegram:1", "group:telegram:*", "group:*", "*")
        for n, (scope, config_type, sender) in enumerate(
            itertools.product(scopes, ("cron", "file_writer", "*"), ("42", "43", "*"))
        ):
            permission = "deny" if n % 3 == 0 else "allow"
            await store.grant(
                agent_id=agent.id,
                scope=scope,
                config_type=config_type,
                sender_id=sender,
                permission=permission,
            )
        for count, types, tenant in itertools.product(
            range(1, 5), (("cron",), ("cron", "file_writer", "*")), (None, agent.tenant_id)
        ):
            picked = scopes[:count]
            tenant_params = () if tenant is None else (tenant,)
            params = (agent.id, *types, "42", *picked, *tenant_params, agent.id)
            shape = (count, len(types), tenant is not None)
            ours = await db.fetchall(_check_sql("sqlite", *shape), params)
            portable = await db.fetchall(_check_sql("postgresql", *shape), params)
            assert sorted(map(tuple, ours)) == sorted(map(tuple, portable))
            assert ours  # every shape here matches some grant


async def test_check_of_a_shape_beyond_the_prebuilt_ones_still_answers(
    store: GrantStore, agent: Agent
) -> None:
    """A scope with more candidate scopes than any prebuilt shape builds its SQL on the spot."""
    await store.grant(agent_id=agent.id, scope=GROUP, config_type="cron", sender_id="42")
    scopes = (*(f"group:x{i}:*" for i in range(12)), GROUP)
    keys: dict[str, Any] = {"agent_id": agent.id, "config_types": ("cron",), "scopes": scopes}
    assert await store.check(**keys, sender_id="42") is GrantLookup.ALLOW
    assert await store.check(**keys, sender_id="43") is GrantLookup.NONE
    tenant = agent.tenant_id
    assert await store.check(**keys, sender_id="42", tenant_id=tenant) is GrantLookup.ALLOW


async def test_a_scope_of_hundreds_of_colons_is_still_judged_by_its_grants(
    store: GrantStore, agent: Agent
) -> None:
    """A 506-colon group scope (under the length cap) is denied by a group:* deny, not by luck:
    the check must answer it, not fail (SQLite allows 500 selects in one compound query)."""
    await store.grant(
        agent_id=agent.id, scope="group:*", config_type="file_writer", sender_id="42",
        permission="deny",
    )  # fmt: skip
    scope = "group:" + ":" * 506
    identity = Identity(
        user_id=scope, sender_id="42", channel="custom", chat_id="1", agent_id=agent.id,
        peer_kind=PeerKind.GROUP,
    )  # fmt: skip
    decision = await PermissionPolicy(store).check_file_writer(identity)
    assert decision.reason is Reason.DENIED_BY_GRANT, decision


async def test_cache_generation_starts_the_feed_once_then_awaits_nothing(
    db: Database, store: GrantStore, agent: Agent, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only the first cache_generation awaits watch_changes (a no-op once it has returned)."""
    calls: list[bool] = []
    real = db.watch_changes

    async def watch_changes() -> None:
        calls.append(True)
        await real()

    monkeypatch.setattr(db, "watch_changes", watch_changes)
    generations = [await store.cache_generation(agent.id) for _ in range(3)]
    assert calls == [True]
    assert db.listening
    assert len(set(generations)) == 1


async def test_soft_deleted_agent_grants_nothing(
    db: Database, store: GrantStore, agent: Agent
) -> None:
    """Grants of a soft-deleted agent stay on record but no longer match."""
    await store.grant(agent_id=agent.id, scope=GROUP, config_type="cron", sender_id="42")
    keys: dict[str, Any] = {"agent_id": agent.id, "config_types": ("cron",), "scopes": (GROUP,)}
    assert await store.check(**keys, sender_id="42") is GrantLookup.ALLOW
    await db.execute("UPDATE agents SET deleted_at = ? WHERE id = ?", ("2026-01-01", agent.id))
    assert await store.check(**keys, sender_id="42") is GrantLookup.NONE
    assert len(await store.list()) == 1


async def test_store_check_applies_precedence(store: GrantStore, agent: Agent) -> None:
    """GrantStore.check answers allow, deny or none for a sender over the candidate scopes."""
    keys: dict[str, Any] = {
        "agent_id": agent.id,
        "config_types": ("cron", "*"),
        "scopes": (GROUP, "*"),
    }
    assert await store.check(**keys, sender_id="42") is GrantLookup.NONE
    await store.grant(agent_id=agent.id, scope="*", config_type="cron", sender_id="*")
    assert await store.check(**keys, sender_id="42") is GrantLookup.ALLOW
    await store.grant(
        agent_id=agent.id, scope=GROUP, config_type="*", sender_id="*", permission="deny"
    )
    assert await store.check(**keys, sender_id="42") is GrantLookup.DENY
    await store.grant(agent_id=agent.id, scope=GROUP, config_type="cron", sender_id="42")
    assert await store.check(**keys, sender_id="42") is GrantLookup.ALLOW
    assert await store.check(**keys, sender_id="43") is GrantLookup.DENY


async def test_change_through_another_store_reaches_this_cache_at_once(
    db: Database, store: GrantStore, agent: Agent
) -> None:
    """A grant or revoke through another GrantStore on the same database: the next check sees it."""
    policy = PermissionPolicy(store)
    other = GrantStore(db)
    identity = Identity(user_id=GROUP, sender_id="42", agent_id=agent.id)
    assert (await policy.check_cron(identity)).reason is Reason.NO_GRANT
    await other.grant(agent_id=agent.id, scope=GROUP, config_type="cron", sender_id="42")
    assert (await policy.check_cron(identity)).reason is Reason.GRANTED
    assert (await policy.check_cron(identity)).reason is Reason.GRANTED  # now warm
    await other.revoke(agent_id=agent.id, scope=GROUP, config_type="cron", sender_id="42")
    assert (await policy.check_cron(identity)).reason is Reason.NO_GRANT


async def test_invalidate_forgets_cached_decisions(store: GrantStore, agent: Agent) -> None:
    """invalidate(agent) drops that agent's decisions; invalidate() drops every one."""
    policy = PermissionPolicy(store)
    await store.grant(agent_id=agent.id, scope=GROUP, config_type="cron", sender_id="42")
    identity = Identity(user_id=GROUP, sender_id="42", agent_id=agent.id)
    assert (await policy.check_cron(identity)).allowed
    assert len(store.cache) == 1
    store.invalidate(agent.id)
    assert len(store.cache) == 0
    assert (await policy.check_cron(identity)).allowed
    assert len(store.cache) == 1
    store.invalidate()
    assert len(store.cache) == 0


async def test_revoke_many_is_one_transaction(store: GrantStore, agent: Agent) -> None:
    """revoke_many() removes the existing keys among those given and counts them."""
    await store.grant(agent_id=agent.id, scope=GROUP, config_type="cron", sender_id="42")
    await store.grant(agent_id=agent.id, scope=GROUP, config_type="cron", sender_id="43")
    removed = await store.revoke_many(
        [
            GrantKey(agent.id, GROUP, "cron", "42"),
            GrantKey(agent.id, GROUP, "cron", "43"),
            GrantKey(agent.id, GROUP, "cron", "44"),
        ]
    )
    assert removed == 2
    assert await store.list() == []


@pytest.mark.parametrize("grantee", ["042", "42\u200b", "\uff14\uff12"])
async def test_a_look_alike_grantee_is_refused_in_a_platform_group(
    store: GrantStore, agent: Agent, grantee: str
) -> None:
    """grant() and import refuse a non-canonical sender in a Telegram group; nothing is stored."""
    with pytest.raises(GrantError, match="telegram sender id must be a positive integer"):
        await store.grant(
            agent_id=agent.id, scope="group:telegram:-1", config_type="file_writer",
            sender_id=grantee,
        )  # fmt: skip
    with pytest.raises(GrantError, match="discord sender id"):
        await store.import_grants(
            [{"agent_id": agent.id, "scope": "guild:1:*", "config_type": "cron",
              "sender_id": grantee}]
        )  # fmt: skip
    assert await store.list() == []


async def test_holders_names_allow_grantees_and_guild_members(
    store: GrantStore, agent: Agent
) -> None:
    """holders(): allow rows at the scope (no '*', no deny) and, with a prefix, member rows."""
    guild, member = "guild:9:*", "guild:9:user:"
    for scope, sender, permission in [
        (guild, "1", "allow"),
        (guild, "2", "deny"),
        (guild, "*", "allow"),
        (member + "3", "3", "allow"),
        (member + "4", "*", "allow"),
        (member + "5", "6", "allow"),  # names someone else: the member does not hold it
        ("guild:10:*", "7", "allow"),
    ]:
        await store.grant(
            agent_id=agent.id,
            scope=scope,
            config_type="file_writer",
            sender_id=sender,
            permission=permission,
        )
    found = await store.holders(agent_id=agent.id, scope=guild, config_type="file_writer")
    assert found == ("1",)
    with_members = await store.holders(
        agent_id=agent.id, scope=guild, config_type="file_writer", member_prefix=member
    )
    assert with_members == ("1", "3", "4")
    async with store.changing([agent.id]) as tx:
        await tx.execute("DELETE FROM config_permissions WHERE sender_id = '1'")
        inside = await store.holders(
            agent_id=agent.id, scope=guild, config_type="file_writer", member_prefix=member, tx=tx
        )
        assert inside == ("3", "4")


def test_grant_store_has_no_raw_sql_door() -> None:
    """GrantStore offers named queries only: the read(sql) method is gone."""
    assert not hasattr(GrantStore, "read")

"""Migration 0007 renames ``config_permissions.user_id`` (the grant's actor) to ``sender_id``.

A database created at 0006 holds grants under the old column; opened by this version, every
row survives under ``sender_id``, and the unique key, the lookup and the epoch trigger work.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from actorscope.agents import AgentRegistry
from actorscope.identity import Identity, PeerKind
from actorscope.permissions import GrantStore, PermissionPolicy
from actorscope.store import Database
from actorscope.store._migrations import Migration, load_migrations

RENAME = "grant_sender_id"
GROUP = "group:telegram:-100200"
_COLUMNS = {
    "sqlite": "SELECT name FROM pragma_table_info('config_permissions')",
    "postgresql": (
        "SELECT column_name AS name FROM information_schema.columns "
        "WHERE table_name = 'config_permissions' AND table_schema = current_schema()"
    ),
}


def _before_the_rename(real: Callable[..., tuple[Migration, ...]]) -> Callable[..., Any]:
    def load(*args: Any, **kwargs: Any) -> tuple[Migration, ...]:
        # Every migration before the rename, none after: the database is at the previous version.
        found = real(*args, **kwargs)
        (rename,) = (m.version for m in found if m.name == RENAME)
        return tuple(m for m in found if m.version < rename)

    return load


async def _columns(db: Database) -> set[str]:
    return {row["name"] for row in await db.fetchall(_COLUMNS[db.dialect])}


async def _epoch(db: Database) -> int:
    row = await db.fetchone("SELECT epoch FROM grant_epoch WHERE id = 1")
    assert row is not None
    return int(row["epoch"])


def test_the_rename_is_migration_0007_on_both_dialects() -> None:
    """Both dialects ship the rename as 0007, right after 0006."""
    for dialect in ("sqlite", "postgresql"):
        found = {m.name: m.version for m in load_migrations(dialect=dialect)}
        assert found[RENAME] == 7


async def test_grants_written_before_the_rename_survive_under_sender_id(
    db_target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """0006 rows keep their sender under sender_id; the key, lookup and epoch trigger still work."""
    older = _before_the_rename(load_migrations)
    monkeypatch.setattr("actorscope.store._sqlite.load_migrations", older)
    monkeypatch.setattr("actorscope.store._postgres.load_migrations", older)
    async with Database.open(db_target) as old:
        assert {"user_id"} <= await _columns(old)
        agent = await AgentRegistry(old).create("main")
        now = Database.utc_now()
        for sender, permission in (("42", "allow"), ("*", "deny")):
            await old.execute(
                "INSERT INTO config_permissions (tenant_id, agent_id, scope, config_type, "
                "user_id, permission, granted_by, metadata, created_at, updated_at) "
                "VALUES (?, ?, ?, 'file_writer', ?, ?, 'ops', '{}', ?, ?)",
                (agent.tenant_id, agent.id, GROUP, sender, permission, now, now),
            )
    monkeypatch.undo()
    async with Database.open(db_target) as db:
        columns = await _columns(db)
        assert "sender_id" in columns
        assert "user_id" not in columns
        store = GrantStore(db)
        assert {(g.sender_id, g.permission, g.granted_by) for g in await store.list()} == {
            ("42", "allow", "ops"),
            ("*", "deny", "ops"),
        }
        member = Identity(
            user_id=GROUP, sender_id="42", peer_kind=PeerKind.GROUP, agent_id=agent.id
        )
        assert (await PermissionPolicy(store).check_file_writer(member)).allowed
        before = await _epoch(db)
        # The renamed unique key: the same key is an update (ON CONFLICT), not a second row.
        await store.grant(
            agent_id=agent.id, scope=GROUP, config_type="file_writer", sender_id="42",
            permission="deny",
        )  # fmt: skip
        assert await _epoch(db) == before + 1
        assert len(await store.list(sender_id="42")) == 1
        assert not (await PermissionPolicy(store).check_file_writer(member)).allowed

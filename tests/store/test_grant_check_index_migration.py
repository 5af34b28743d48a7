"""Migration 0009 replaces the grants' lookup index by the check's covering index.

A database created at 0008 with grants in it, opened by this version, keeps every decision, has
the covering index and no longer the old one; the new index is built before the old is dropped.
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

INDEX = "grant_check_index"
GROUP = "group:telegram:-100200"
_INDEXES = {
    "sqlite": "SELECT name FROM sqlite_master WHERE type = 'index'",
    "postgresql": "SELECT indexname AS name FROM pg_indexes WHERE schemaname = current_schema()",
}


def _before_the_index(real: Callable[..., tuple[Migration, ...]]) -> Callable[..., Any]:
    def load(*args: Any, **kwargs: Any) -> tuple[Migration, ...]:
        found = real(*args, **kwargs)
        (index,) = (m.version for m in found if m.name == INDEX)
        return tuple(m for m in found if m.version < index)

    return load


async def _indexes(db: Database) -> set[str]:
    return {row["name"] for row in await db.fetchall(_INDEXES[db.dialect])}


@pytest.mark.parametrize("dialect", ["sqlite", "postgresql"])
def test_the_index_is_built_before_the_old_one_is_dropped(dialect: str) -> None:
    """CREATE INDEX comes first: DROP INDEX would lock reads while the new index builds."""
    (migration,) = (m for m in load_migrations(dialect=dialect) if m.name == INDEX)
    assert migration.version == 9
    kinds = [
        " ".join(line.split()[:2]) for statement in migration.statements
        for line in statement.splitlines() if line.startswith(("CREATE", "DROP"))
    ]  # fmt: skip
    assert kinds == ["CREATE INDEX", "DROP INDEX"]


async def test_grants_written_at_0008_decide_the_same_after_0009(
    db_target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """0008 grants keep their decisions; the covering index replaces the lookup index."""
    older = _before_the_index(load_migrations)
    monkeypatch.setattr("actorscope.store._sqlite.load_migrations", older)
    monkeypatch.setattr("actorscope.store._postgres.load_migrations", older)
    async with Database.open(db_target) as old:
        assert "config_permissions_lookup" in await _indexes(old)
        agent = await AgentRegistry(old).create("main")
        # Written as 0008 holds them (today's GrantStore audits in today's columns).
        for scope, sender, permission in (("group:*", "*", "allow"), (GROUP, "42", "deny")):
            await old.execute(
                "INSERT INTO config_permissions (tenant_id, agent_id, scope, config_type,"
                " sender_id, permission, created_at, updated_at)"
                " VALUES (?, ?, ?, 'file_writer', ?, ?, '2026-01-01', '2026-01-01')",
                (agent.tenant_id, agent.id, scope, sender, permission),
            )
    monkeypatch.undo()
    async with Database.open(db_target) as db:
        indexes = await _indexes(db)
        assert "config_permissions_check" in indexes
        assert "config_permissions_lookup" not in indexes
        policy = PermissionPolicy(GrantStore(db))
        decisions = {}
        for sender in ("42", "43"):
            member = Identity(
                user_id=GROUP, sender_id=sender, peer_kind=PeerKind.GROUP, agent_id=agent.id
            )
            decisions[sender] = (await policy.check_file_writer(member)).reason.value
        assert decisions == {"42": "denied_by_grant", "43": "granted"}

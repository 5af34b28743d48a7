"""Migration 0013 gives the audit log one vocabulary (issue 26, the operator's view).

Rows written before it, in the old columns (``actor_id``, ``user_id``; a check's sender and a
grant's grantee in ``detail``, a grant's permission as its ``reason``), read back after it as
new rows are written: ``sender_id`` (the actor of a check, whom a change is for), ``actor``
(who made a change), ``scope``, ``permission`` and ``reason``, on both dialects.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from actorscope.agents import AgentRegistry
from actorscope.permissions import AuditLog
from actorscope.store import Database
from actorscope.store._migrations import Migration, load_migrations

VOCABULARY = "audit_vocabulary"
GROUP = "group:telegram:-100200"

#: Rows as the old columns held them: action, actor_id, user_id, config_type, reason, detail.
OLD_ROWS: list[tuple[str, str, str, str, str, dict[str, str]]] = [
    ("check.deny", "42", GROUP, "file_writer", "no_grant", {"sender_id": "42"}),
    ("check.deny", GROUP, GROUP, "file_writer", "empty_sender", {"sender_id": ""}),
    ("check.fail_open", "43", GROUP, "cron", "store_error_fail_open", {"sender_id": "43"}),
    ("grant.add", "ops", GROUP, "cron", "allow", {"grantee": "7", "permission": "allow"}),
    ("grant.remove", "ops", "*", "*", "deny", {"grantee": "*", "permission": "deny"}),
    ("writer.refused", "99", GROUP, "file_writer", "not_authorized", {"target": "44"}),
    ("key.add", "cli", "alice", "", "", {"key": "0123456789ab", "role": "operator"}),
    ("memory.add", "42", GROUP, "memory", "owner", {"sender_id": "42", "entry_id": "1"}),
]

#: The same rows after the migration: action, sender_id, actor, scope, permission, reason.
NEW_ROWS = [
    ("check.deny", "42", "", GROUP, "", "no_grant"),
    ("check.deny", "", "", GROUP, "", "empty_sender"),
    ("check.fail_open", "43", "", GROUP, "", "store_error_fail_open"),
    ("grant.add", "7", "ops", GROUP, "allow", ""),
    ("grant.remove", "*", "ops", "*", "deny", ""),
    ("writer.refused", "44", "99", GROUP, "", "not_authorized"),
    ("key.add", "alice", "cli", "", "", ""),
    ("memory.add", "42", "42", GROUP, "", "owner"),
]


def _before_the_vocabulary(real: Callable[..., tuple[Migration, ...]]) -> Callable[..., Any]:
    def load(*args: Any, **kwargs: Any) -> tuple[Migration, ...]:
        found = real(*args, **kwargs)
        (version,) = (m.version for m in found if m.name == VOCABULARY)
        return tuple(m for m in found if m.version < version)

    return load


async def test_rows_written_before_read_in_the_new_vocabulary(
    db_target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each kind of row written in the old columns names its sender, actor, scope, permission
    and reason in the new ones; its detail is kept as it was."""
    older = _before_the_vocabulary(load_migrations)
    monkeypatch.setattr("actorscope.store._sqlite.load_migrations", older)
    monkeypatch.setattr("actorscope.store._postgres.load_migrations", older)
    async with Database.open(db_target) as old:
        agent = await AgentRegistry(old).create("main")
        for n, (action, actor, user, kind, reason, detail) in enumerate(OLD_ROWS):
            await old.execute(
                "INSERT INTO audit_log (created_at, tenant_id, agent_id, actor_id, user_id,"
                " config_type, action, reason, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    f"2026-01-01T00:00:{n:02d}.000000+00:00",
                    agent.tenant_id,
                    agent.id,
                    actor,
                    user,
                    kind,
                    action,
                    reason,
                    json.dumps(detail),
                ),
            )
    monkeypatch.undo()
    async with Database.open(db_target) as db:
        entries = list(reversed(await AuditLog(db).list()))
        assert [
            (e.action, e.sender_id, e.actor, e.scope, e.permission, e.reason) for e in entries
        ] == NEW_ROWS
        assert [dict(e.detail) for e in entries] == [row[-1] for row in OLD_ROWS]
        assert [e.id for e in await AuditLog(db).list(sender_id="42")] == [8, 1]

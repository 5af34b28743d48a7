"""Nothing grows without bound (issue 32): every table is pruned or bounded, on purpose.

The tables come from the migrations of both dialects. Each is in exactly one of two written
maps: ``PRUNED`` (it grows with every event a bot sees, and something deletes the old rows,
proved by the test named beside it) or ``BOUNDED`` (its size follows what operators configure
or what people keep, not the traffic). A migration that adds a table fails here until its
author decides which it is.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from actorscope.store import Database
from actorscope.store._migrations import load_migrations

TESTS = Path(__file__).resolve().parents[1]

#: Tables that grow per event -> (what prunes them, the tests that prove it).
PRUNED: dict[str, tuple[str, tuple[str, ...]]] = {
    "audit_log": (
        "audit retention: [audit] keep in a running bot, and actorscope audit prune",
        (
            "permissions/test_audit_retention.py::test_keep_audit_prunes_at_once_and_then_again",
            "permissions/test_audit_retention.py::test_a_running_bot_applies_keep",
            "cli/test_audit_prune.py::test_the_prune_command_exports_then_deletes",
        ),
    ),
    "processed_updates": (
        "shared dedup TTL cleanup, in bounded batches every N claims or T seconds",
        (
            "channels/test_shared_dedup.py::test_ttl_cleanup_deletes_old_rows_in_bounded_batches",
            "channels/test_shared_dedup.py::test_cleanup_runs_every_n_claims_and_after_the_interval",
        ),
    ),
    "link_codes": (
        "every new link code deletes the codes (of any account) older than the rate window",
        ("permissions/test_links.py::test_old_link_codes_are_pruned_by_the_next_code",),
    ),
    "console_sessions": (
        "console session expiry: expired rows go when a session starts; sign-out deletes its own",
        (
            "http/test_http_sessions.py::test_expired_and_revoked_sessions_are_refused",
            "http/test_http_sessions.py::test_sign_out_ends_the_session_in_every_process",
        ),
    ),
}

#: Tables whose size follows configuration or kept state, not traffic -> why.
BOUNDED: dict[str, str] = {
    "tenants": "configuration: an operator adds tenants",
    "agents": "configuration: an operator adds, renames and removes agents",
    "teams": "configuration: teams of agents",
    "team_members": "configuration: the agents of each team",
    "config_permissions": "state: the grants in force; a revoke deletes its row",
    "api_keys": "configuration: an operator adds and revokes keys (a revoked key stays, marked)",
    "grant_epoch": "one row: the counter every grant change moves on",
    "memory_entries": "kept state: what people saved, until its owner forgets it",
    "cron_jobs": "kept state: the jobs people scheduled, until removed",
    "persons": "kept state: the persons linked; one without accounts is deleted",
    "person_accounts": "kept state: one row per linked account; an unlink deletes it",
}

#: The migrations' own bookkeeping, created by the store beside them: one row per migration.
BOOKKEEPING = "schema_migrations"

_CREATE = re.compile(r"\bCREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)", re.IGNORECASE)
_DROP = re.compile(r"\bDROP\s+TABLE\s+(?:IF\s+EXISTS\s+)?(\w+)", re.IGNORECASE)
_RENAME = re.compile(r"\bALTER\s+TABLE\s+(\w+)\s+RENAME\s+TO\s+(\w+)", re.IGNORECASE)
_COMMENT = re.compile(r"--[^\n]*")


def migrated_tables(dialect: str) -> set[str]:
    """The tables the migrations of ``dialect`` leave, statement by statement in order."""
    tables: set[str] = set()
    for migration in load_migrations(dialect=dialect):
        for statement in migration.statements:
            sql = _COMMENT.sub(" ", statement)
            events = [(m.start(), "create", m.group(1), "") for m in _CREATE.finditer(sql)]
            events += [(m.start(), "drop", m.group(1), "") for m in _DROP.finditer(sql)]
            events += [(m.start(), "rename", m.group(1), m.group(2)) for m in _RENAME.finditer(sql)]
            for _, kind, name, new in sorted(events):
                if kind == "create":
                    tables.add(name.lower())
                elif kind == "drop":
                    tables.discard(name.lower())
                else:
                    tables.discard(name.lower())
                    tables.add(new.lower())
    return tables


@pytest.mark.parametrize("dialect", ["sqlite", "postgresql"])
def test_every_table_is_pruned_or_bounded_by_decision(dialect: str) -> None:
    """Each table the migrations create is in exactly one map, and each map names only tables."""
    tables = migrated_tables(dialect)
    assert not PRUNED.keys() & BOUNDED.keys()
    undecided = tables - PRUNED.keys() - BOUNDED.keys()
    assert not undecided, f"decide: is each of {sorted(undecided)} pruned or bounded?"
    assert PRUNED.keys() | BOUNDED.keys() == tables


async def test_the_migrated_database_has_exactly_those_tables(db: Database) -> None:
    """What the database holds after migrating is what the migrations say (and bookkeeping)."""
    if db.dialect == "sqlite":
        query = "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
    else:
        query = (
            "SELECT table_name AS name FROM information_schema.tables"
            " WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"
        )
    rows = await db.fetchall(query)
    assert {str(row["name"]) for row in rows} == migrated_tables(db.dialect) | {BOOKKEEPING}


def test_each_pruned_table_names_tests_that_prove_its_pruning() -> None:
    """Every test the PRUNED map cites exists where it says, so the map cannot go stale."""
    for table, (_, proofs) in PRUNED.items():
        assert proofs, table
        for proof in proofs:
            path, _, name = proof.partition("::")
            source = (TESTS / path).read_text(encoding="utf-8")
            assert re.search(rf"^(?:async )?def {name}\(", source, re.MULTILINE), (table, proof)

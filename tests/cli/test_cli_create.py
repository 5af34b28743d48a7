"""Writing commands open an existing database only (issue 26, the operator's view): a mistyped
``--db`` creates nothing, on either dialect; ``--create`` (or ``actorscope migrate``) makes one.
And ``actorscope normalize`` takes ``--json`` like every other command."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from actorscope.cli import main

GRANT = ("--agent", "main", "--scope", "group:telegram:-100200", "--sender", "42")

#: Every command that writes to the database, as typed after ``actorscope`` (``--db`` follows).
WRITING: dict[str, tuple[str, ...]] = {
    "agents add": ("agents", "add", "main"),
    "agents rename": ("agents", "rename", "main", "other"),
    "agents remove": ("agents", "remove", "main"),
    "grants add": ("grants", "add", *GRANT, "--type", "cron"),
    "grants remove": ("grants", "remove", *GRANT, "--type", "cron"),
    "links add": ("links", "add", "telegram:42", "telegram:43"),
    "links remove": ("links", "remove", "telegram:42"),
    "keys add": ("keys", "add", "--tenant", "default", "--user", "ops", "--role", "operator"),
    "keys revoke": ("keys", "revoke", "0123456789ab"),
    "mcp": ("mcp",),
    "audit prune": ("audit", "prune", "--older-than", "90d"),
}
#: Those of them that add (and so take ``--create``).
ADDING = ("agents add", "grants add", "links add", "keys add", "mcp")


async def _tables(url: str) -> int:
    import asyncpg

    conn = await asyncpg.connect(url, timeout=5)
    try:
        found = await conn.fetchval(
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = current_schema()"
        )
    finally:
        await conn.close()
    return int(found)


def _nothing_created(backend: str, target: str) -> bool:
    if backend == "sqlite":
        return not Path(target).exists()
    return asyncio.run(_tables(target)) == 0


@pytest.mark.parametrize("command", WRITING, ids=str)
def test_a_mistyped_db_creates_nothing(
    backend: str,
    db_target: str,
    command: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A writing command on a database that is not there: exit 2, one line saying so (and how
    to create one, for those that add), and no file, no table created."""
    monkeypatch.setenv("ACTORSCOPE_ORIGIN_KEY", "k" * 32)
    assert main([*WRITING[command], "--db", db_target]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("actorscope: error: ")
    assert "does not exist" in err or "has no actorscope tables" in err
    assert ("add --create to create" in err) == (command in ADDING)
    assert _nothing_created(backend, db_target)


def test_create_makes_the_database_and_migrate_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """agents add --create makes a new database; so does migrate, after which keys add and
    grants add need no flag."""
    first, second = str(tmp_path / "a.db"), str(tmp_path / "b.db")
    assert main(["agents", "add", "main", "--db", first, "--create"]) == 0
    assert main(["grants", "add", *GRANT, "--type", "cron", "--db", first]) == 0
    assert main(["migrate", "--db", second]) == 0
    assert main(["agents", "add", "main", "--db", second]) == 0
    assert main([*WRITING["keys add"], "--db", second]) == 0
    assert "error" not in capsys.readouterr().err


def test_normalize_takes_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """normalize --json prints the same one JSON object as without it."""
    update = {
        "update_id": 1,
        "message": {
            "message_id": 1,
            "date": 0,
            "chat": {"id": -100200, "type": "group"},
            "from": {"id": 42, "is_bot": False, "first_name": "a"},
            "text": "hi",
        },
    }
    path = tmp_path / "update.json"
    path.write_text(json.dumps(update))
    assert main(["normalize", "--platform", "telegram", str(path)]) == 0
    plain = capsys.readouterr().out
    assert main(["normalize", "--platform", "telegram", "--json", str(path)]) == 0
    assert capsys.readouterr().out == plain
    assert json.loads(plain)["sender_id"] == "42"

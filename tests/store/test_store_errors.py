"""Failed writes and closed databases surface as one StoreError that names the real cause."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from actorscope.agents import AgentRegistry
from actorscope.errors import StoreError
from actorscope.permissions import GrantStore
from actorscope.store import Database

GROUP = "group:telegram:-100200"

# Runs the CLI with a file-size limit, so that writing the WAL fails as on a full disk.
# SIGXFSZ is ignored so the write returns an error (EFBIG) instead of killing the process.
_LIMITED_CLI = """
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
limit = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
from actorscope.cli import main
sys.exit(main(sys.argv[2:]))
"""
# The WAL index (-shm) is 32 KiB; a grant's commit needs more WAL than that.
_FILE_SIZE_LIMIT = 32768


async def test_a_full_disk_is_a_store_error_with_its_cause(tmp_path: Path) -> None:
    """SQLite's own rollback after a full disk must not turn into 'cannot rollback' on top."""
    async with Database.open(tmp_path / "full.db") as db:
        agent = await AgentRegistry(db).create("main")
        (pages,) = await db.fetchone("PRAGMA page_count") or (0,)
        # The writer connection may not grow the file: the next page it needs is "disk full".
        await db.execute(f"PRAGMA max_page_count = {int(pages)}")
        rows = [
            {
                "agent_id": agent.id,
                "scope": GROUP,
                "config_type": "file_writer",
                "sender_id": str(n),
            }
            for n in range(1, 201)
        ]
        with pytest.raises(StoreError, match="database or disk is full") as caught:
            await GrantStore(db).import_grants(rows)
        assert "cannot rollback" not in str(caught.value)
        # Nothing was left half-open: the next write transaction starts and commits.
        await db.execute(f"PRAGMA max_page_count = {int(pages) + 1000}")
        assert await GrantStore(db).import_grants(rows[:1]) == 1


@pytest.mark.skipif(sys.platform == "win32", reason="needs POSIX file-size limits")
def test_cli_write_failure_is_one_line_exit_2(tmp_path: Path) -> None:
    """A write the disk refuses is one 'actorscope: error:' line and exit 2, not a traceback."""
    path = tmp_path / "cli.db"

    async def setup() -> None:
        async with Database.open(path) as db:
            await AgentRegistry(db).create("main")

    asyncio.run(setup())
    argv = ["grants", "add", "--db", str(path), "--agent", "main", "--scope", GROUP]
    argv += ["--sender", "42", "--type", "file_writer"]
    done = subprocess.run(  # noqa: S603 - our own interpreter and a constant script
        [sys.executable, "-c", _LIMITED_CLI, str(_FILE_SIZE_LIMIT), *argv],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    lines = done.stderr.splitlines()
    assert (done.returncode, len(lines)) == (2, 1), done.stderr
    assert lines[0].startswith("actorscope: error: ")
    assert "disk I/O error" in lines[0] or "disk is full" in lines[0]
    assert "cannot rollback" not in lines[0]


async def test_statements_on_a_closed_database_are_store_errors(db_target: str) -> None:
    """Reads and writes after close raise StoreError saying the database is closed."""
    database = await Database.connect(db_target)
    await database.close()
    assert database.closed
    with pytest.raises(StoreError, match="is closed"):
        await database.fetchall("SELECT 1")
    with pytest.raises(StoreError, match="is closed"):
        await database.execute("DELETE FROM audit_log")


async def _write_after_close(database: Database) -> None:
    """Close ``database`` inside one of its write transactions, then write in it."""
    async with database.transaction() as tx:
        await database.close()
        with pytest.raises(StoreError, match="database write failed"):
            await tx.execute("DELETE FROM audit_log")


async def test_a_statement_on_a_database_closed_under_its_transaction_is_a_store_error(
    tmp_path: Path,
) -> None:
    """aiosqlite's ValueError for a connection closed under a transaction leaves as StoreError."""
    database = await Database.connect(tmp_path / "closing.db")
    with pytest.raises(StoreError, match="commit failed"):
        await _write_after_close(database)


@pytest.mark.parametrize("backend", ["postgresql"])  # a server that drops the connection
async def test_a_connection_dropped_after_the_commit_leaves_the_commit_standing(
    db_target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server ends a connection between a write transaction's commit and its return to
    the pool (a restart does): the transaction stands, and no asyncpg error escapes the store
    (the audit writer died of one and lost its queued rows)."""
    import asyncpg
    import asyncpg.pool

    real = asyncpg.pool.Pool.release
    dropped: list[bool] = []

    async def release(self: asyncpg.pool.Pool, connection: object, **kwargs: object) -> None:
        await real(self, connection, **kwargs)
        if not dropped:
            dropped.append(True)
            raise asyncpg.exceptions.ConnectionDoesNotExistError(
                "connection was closed in the middle of operation"
            )

    async with Database.open(db_target) as db:
        await AgentRegistry(db).create("main")
        monkeypatch.setattr(asyncpg.pool.Pool, "release", release)
        async with db.transaction() as tx:
            await tx.execute(
                "UPDATE agents SET display_name = ? WHERE agent_key = ?", ("x", "main")
            )
        assert dropped == [True]
        row = await db.fetchone("SELECT display_name FROM agents WHERE agent_key = ?", ("main",))
        assert row is not None
        assert row["display_name"] == "x"

"""SQLite grant lookups read on the event loop, never wait there, and fail as StoreError."""

from __future__ import annotations

import asyncio
import sqlite3
import uuid
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from pathlib import Path

import pytest

from actorscope.agents import Agent, AgentRegistry
from actorscope.errors import StoreError
from actorscope.identity import Identity
from actorscope.permissions import GrantStore, PermissionPolicy, Reason
from actorscope.store import Database, Row

GROUP = "group:telegram:-100200"
_COUNT = "SELECT COUNT(*) FROM tenants"
_INSERT = "INSERT INTO tenants (id, slug, name, created_at) VALUES (?, ?, 'T', '')"


@contextmanager
def holding(path: Path, begin: str) -> Iterator[sqlite3.Connection]:
    """Another connection inside an open ``begin`` transaction (rolled back at the end)."""
    with closing(sqlite3.connect(path, isolation_level=None, timeout=0)) as conn:
        conn.execute(begin)
        try:
            yield conn
        finally:
            conn.execute("ROLLBACK")


async def test_lookup_answers_at_once_beside_an_open_write(tmp_path: Path) -> None:
    """A writer's open transaction neither delays a lookup nor shows it uncommitted rows."""
    path = tmp_path / "busy.db"
    async with Database.open(path) as db:
        before = (await db.lookup(_COUNT))[0][0]
        for begin in ("BEGIN IMMEDIATE", "BEGIN EXCLUSIVE"):  # in WAL mode both let readers in
            with holding(path, begin) as other:
                other.execute(_INSERT, (str(uuid.uuid4()), "uncommitted"))
                assert (await db.lookup(_COUNT))[0][0] == before
            other_committed = sqlite3.connect(path, isolation_level=None)
            with closing(other_committed):
                other_committed.execute(_INSERT, (str(uuid.uuid4()), f"t{before}"))
            # Committed elsewhere just now: the next lookup sees it (no snapshot kept).
            assert (await db.lookup(_COUNT))[0][0] == before + 1
            before += 1


def _rollback_journal(path: Path) -> None:
    """Turn an actorscope database into rollback-journal mode, where a writer locks readers out."""
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.execute("PRAGMA journal_mode = DELETE")


async def test_a_locked_database_waits_off_the_loop_then_answers(tmp_path: Path) -> None:
    """A lookup SQLite cannot start waits in the reader thread while the loop keeps running."""
    path = tmp_path / "locked.db"
    async with Database.open(path):
        pass
    _rollback_journal(path)
    async with Database.open(path, create=False, busy_timeout=30.0) as db:
        expected = await db.lookup(_COUNT)
        with holding(path, "BEGIN EXCLUSIVE"):
            lookup = asyncio.create_task(db.lookup(_COUNT))
            ticks = 0
            while not lookup.done() and ticks < 5:  # the loop runs while the lookup waits
                await asyncio.sleep(0.01)
                ticks += 1
            assert ticks == 5
            assert not lookup.done()
        assert [tuple(row) for row in await lookup] == [tuple(row) for row in expected]


async def test_a_lookup_locked_out_too_long_is_a_store_error(tmp_path: Path) -> None:
    """Past the busy timeout a locked lookup raises StoreError; a check then fails open, audited."""
    path = tmp_path / "locked.db"
    async with Database.open(path) as db:
        agent = await AgentRegistry(db).create("main")
    _rollback_journal(path)
    async with Database.open(path, create=False, busy_timeout=0.05) as db:
        with holding(path, "BEGIN EXCLUSIVE"):
            with pytest.raises(StoreError, match="database read failed: database is locked"):
                await db.lookup(_COUNT)
            identity = Identity(user_id=GROUP, sender_id="42", agent_id=agent.id)
            decision = await PermissionPolicy(GrantStore(db), strict=True).check_cron(identity)
        assert decision.reason is Reason.STORE_ERROR_FAIL_CLOSED


async def test_a_failing_lookup_is_a_store_error(tmp_path: Path) -> None:
    """An error of the synchronous read (here a missing table) is a StoreError, never sqlite3's."""
    async with Database.open(tmp_path / "bad.db") as db:
        with pytest.raises(StoreError, match="database read failed: no such table: nowhere"):
            await db.lookup("SELECT * FROM nowhere")


async def test_a_lookup_after_close_is_refused(tmp_path: Path) -> None:
    """A closed database refuses a lookup with the same error as any other read."""
    db = await Database.connect(tmp_path / "closed.db")
    await db.close()
    with pytest.raises(StoreError):
        await db.fetchall(_COUNT)
    with pytest.raises(StoreError):
        await db.lookup(_COUNT)


async def test_an_in_memory_database_looks_up_through_its_one_connection() -> None:
    """``:memory:`` has one private connection: the lookup reads through it."""
    async with Database.open(":memory:") as db:
        assert (await db.lookup(_COUNT))[0][0] == 1


async def test_postgres_checks_keep_the_async_driver(
    db: Database, store: GrantStore, agent: Agent, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PostgreSQL reads a check through the awaited driver; only SQLite reads it on the loop."""
    await store.grant(agent_id=agent.id, scope=GROUP, config_type="cron", sender_id="42")
    awaited: list[str] = []
    real = db.fetchall

    async def fetchall(sql: str, params: Sequence[object] = ()) -> list[Row]:
        awaited.append(sql)
        return await real(sql, params)

    monkeypatch.setattr(db, "fetchall", fetchall)
    identity = Identity(user_id=GROUP, sender_id="42", agent_id=agent.id)
    assert (await PermissionPolicy(store).check_cron(identity)).reason is Reason.GRANTED
    checks = [sql for sql in awaited if "config_permissions" in sql]
    assert len(checks) == (1 if db.dialect == "postgresql" else 0)

"""Writes queued in one process wait at most the busy timeout, as SQLite waits for another
process's lock: under a lock held elsewhere, N queued writes fail in about one timeout, not N."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest

from actorscope.errors import StoreError
from actorscope.store import Database

#: Holds the write lock of the database at argv[1] from "locked" until a line on stdin.
LOCKER = """\
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=10)
conn.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
sys.stdin.readline()
conn.execute("ROLLBACK")
"""
BUSY = 0.5


async def test_queued_writes_fail_within_one_busy_timeout_then_recover(tmp_path: Path) -> None:
    """Four writes at once while another process holds the lock: each fails with a StoreError
    naming the lock within about one busy timeout (not four); after the lock, a write works."""
    path = tmp_path / "t.db"
    async with Database.open(path, busy_timeout=BUSY) as db:
        locker = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            LOCKER,
            str(path),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
        )
        assert locker.stdin is not None
        assert locker.stdout is not None
        assert await asyncio.wait_for(locker.stdout.readline(), 20) == b"locked\n"

        async def write() -> tuple[str, float]:
            started = time.monotonic()
            with pytest.raises(StoreError) as failed:
                await db.execute("UPDATE tenants SET name = name")
            return str(failed.value), time.monotonic() - started

        try:
            results = await asyncio.gather(*(write() for _ in range(4)))
        finally:
            locker.stdin.write(b"release\n")
            await locker.stdin.drain()
            await asyncio.wait_for(locker.wait(), 20)
        assert all("locked" in message for message, _ in results), results
        assert max(seconds for _, seconds in results) < 2 * BUSY + 1.0, results
        await db.execute("UPDATE tenants SET name = name")


async def test_a_write_queued_behind_a_busy_one_waits_only_its_own_budget(tmp_path: Path) -> None:
    """A write queued just behind one that waits out another process's lock fails within
    about one busy timeout of its own start, not after the queue and then a full timeout."""
    path = tmp_path / "t.db"
    busy = 1.0
    async with Database.open(path, busy_timeout=busy) as db:
        locker = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            LOCKER,
            str(path),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
        )
        assert locker.stdin is not None
        assert locker.stdout is not None
        assert await asyncio.wait_for(locker.stdout.readline(), 20) == b"locked\n"

        async def write() -> float:
            started = time.monotonic()
            with pytest.raises(StoreError, match="locked"):
                await db.execute("UPDATE tenants SET name = name")
            return time.monotonic() - started

        try:
            first = asyncio.create_task(write())
            await asyncio.sleep(busy / 10)  # the first write is inside SQLite's busy wait
            second = await write()
            await first
        finally:
            locker.stdin.write(b"release\n")
            await locker.stdin.drain()
            await asyncio.wait_for(locker.wait(), 20)
        # Its own budget: ~1 busy timeout; the queue, then a full timeout again: ~1.9.
        assert second < 1.5 * busy, second
        await db.execute("UPDATE tenants SET name = name")


async def test_a_write_cancelled_while_it_begins_leaves_no_transaction_open(
    tmp_path: Path,
) -> None:
    """A write cancelled while SQLite waits to begin it (another process holds the lock)
    leaves the writer with no open transaction: once the lock is gone, writes work."""
    path = tmp_path / "t.db"
    async with Database.open(path, busy_timeout=2.0) as db:
        locker = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            LOCKER,
            str(path),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
        )
        assert locker.stdin is not None
        assert locker.stdout is not None
        assert await asyncio.wait_for(locker.stdout.readline(), 20) == b"locked\n"
        write = asyncio.create_task(db.execute("UPDATE tenants SET name = name"))
        await asyncio.sleep(0.2)  # the write is inside SQLite's busy wait
        locker.stdin.write(b"release\n")
        await locker.stdin.drain()
        write.cancel()
        with pytest.raises(asyncio.CancelledError):
            await write
        await asyncio.wait_for(locker.wait(), 20)
        assert await db.execute("UPDATE tenants SET name = name") >= 0
        async with Database.open(path) as other:
            assert await other.execute("UPDATE tenants SET name = name") >= 0

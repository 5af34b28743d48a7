"""Writes queued in one process wait at most the busy timeout, as SQLite waits for another
process's lock: under a lock held elsewhere, N queued writes fail in about one timeout, not N."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from tests._sqlite_lock import sqlite_locked

from actorscope.errors import StoreError
from actorscope.store import Database

BUSY = 0.5


async def _failed_write(db: Database) -> tuple[str, float]:
    """A write that fails under the lock: its error and how long it took."""
    started = time.monotonic()
    with pytest.raises(StoreError) as failed:
        await db.execute("UPDATE tenants SET name = name")
    return str(failed.value), time.monotonic() - started


async def test_queued_writes_fail_within_one_busy_timeout_then_recover(tmp_path: Path) -> None:
    """Four writes at once while another process holds the lock: each fails with a StoreError
    naming the lock within about one busy timeout (not four); after the lock, a write works."""
    path = tmp_path / "t.db"
    async with Database.open(path, busy_timeout=BUSY) as db:
        async with sqlite_locked(path):
            results = await asyncio.gather(*(_failed_write(db) for _ in range(4)))
        assert all("locked" in message for message, _ in results), results
        assert max(seconds for _, seconds in results) < 2 * BUSY + 1.0, results
        await db.execute("UPDATE tenants SET name = name")


async def test_a_write_queued_behind_a_busy_one_waits_only_its_own_budget(tmp_path: Path) -> None:
    """A write queued just behind one that waits out another process's lock fails within
    about one busy timeout of its own start, not after the queue and then a full timeout."""
    path = tmp_path / "t.db"
    busy = 1.0
    async with Database.open(path, busy_timeout=busy) as db:
        async with sqlite_locked(path):
            first = asyncio.create_task(_failed_write(db))
            await asyncio.sleep(busy / 10)  # the first write is inside SQLite's busy wait
            message, second = await _failed_write(db)
            assert "locked" in (await first)[0]
        assert "locked" in message
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
        async with sqlite_locked(path) as release:
            write = asyncio.create_task(db.execute("UPDATE tenants SET name = name"))
            await asyncio.sleep(0.2)  # the write is inside SQLite's busy wait
            await release()
            write.cancel()
            with pytest.raises(asyncio.CancelledError):
                await write
        assert await db.execute("UPDATE tenants SET name = name") >= 0
        async with Database.open(path) as other:
            assert await other.execute("UPDATE tenants SET name = name") >= 0

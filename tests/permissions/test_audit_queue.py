"""Audit rows never hold a check up: a locked store queues them, written once it answers."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, closing
from typing import Any

import pytest
from tests._wait import wait_until

from actorscope.agents import Agent, AgentRegistry
from actorscope.errors import RowRefusedError, StoreError
from actorscope.identity import Identity, PeerKind
from actorscope.permissions import GrantStore, PermissionPolicy, Reason
from actorscope.permissions._audit import AuditEntry, AuditLog
from actorscope.store import Database

GROUP = "group:telegram:-100200"
#: Generous: the contract is 100 ms; a loaded test machine must not make this flaky.
QUICK = 1.0
#: How long a test waits for queued rows to appear once the lock is gone (and how long
#: record() waits where a test reads what it returns: whether its row was written, not whether
#: that took under RECORD_WAIT on a loaded machine).
SETTLE = 20.0


def member(agent: Agent, sender: str = "42") -> Identity:
    """Group member ``sender`` acting for ``agent``."""
    return Identity(user_id=GROUP, sender_id=sender, peer_kind=PeerKind.GROUP, agent_id=agent.id)


@asynccontextmanager
async def writes_locked(db_target: str, backend: str) -> AsyncIterator[None]:
    """Another connection holds the lock every audit write needs, until the block ends."""
    if backend == "sqlite":
        with closing(sqlite3.connect(db_target, isolation_level=None)) as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield
            finally:
                conn.execute("ROLLBACK")
        return
    import asyncpg

    other = await asyncpg.connect(db_target, timeout=10)
    try:
        async with other.transaction():
            # EXCLUSIVE blocks every write of audit_log but still lets the test read it.
            await other.execute("LOCK TABLE audit_log IN EXCLUSIVE MODE")
            yield
    finally:
        await other.close()


async def rows(db: Database, action: str) -> int:
    """How many audit rows of ``action`` are committed."""
    row = await db.fetchone("SELECT COUNT(*) FROM audit_log WHERE action = ?", (action,))
    assert row is not None
    return int(row[0])


async def until_rows(db: Database, action: str, expected: int) -> int:
    """Wait (``SETTLE`` at most) until ``expected`` rows of ``action`` exist; return the count."""

    async def enough() -> bool:
        return await rows(db, action) >= expected

    await wait_until(enough, SETTLE)
    return await rows(db, action)


async def test_denials_under_a_held_write_lock_return_fast_and_are_audited_later(
    db_target: str, backend: str, db: Database, agent: Agent, store: GrantStore
) -> None:
    """Each denial returns well before the lock's timeout; its row is written after release."""
    policy = PermissionPolicy(store)
    async with writes_locked(db_target, backend):
        for sender in ("42", "43", "44"):
            started = time.monotonic()
            decision = await policy.check_file_writer(member(agent, sender))
            elapsed = time.monotonic() - started
            assert (decision.allowed, decision.reason) == (False, Reason.NO_GRANT)
            assert elapsed < QUICK, f"a denial waited {elapsed:.2f}s on its audit row"
        assert await rows(db, "check.deny") == 0
    assert await until_rows(db, "check.deny", 3) == 3
    entries = await store.audit.list()
    assert sorted(e.sender_id for e in entries) == ["42", "43", "44"]
    # The tenant is filled in by the insert itself (the decision path does not read it).
    assert {e.tenant_id for e in entries} == {agent.tenant_id}


async def test_unaudited_fail_open_is_logged_at_error_and_audited_later(
    db_target: str,
    backend: str,
    db: Database,
    agent: Agent,
    store: GrantStore,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A fail-open whose row cannot be written now logs ERROR with the decision; the row follows."""

    async def broken(*args: Any, **kwargs: Any) -> None:
        raise StoreError("database read failed: disk I/O error")

    async with writes_locked(db_target, backend):
        monkeypatch.setattr(db, "fetchall", broken)
        monkeypatch.setattr(db, "lookup", broken)
        with caplog.at_level(logging.WARNING):
            started = time.monotonic()
            decision = await PermissionPolicy(store).check_file_writer(member(agent))
            elapsed = time.monotonic() - started
        monkeypatch.undo()
        assert decision.reason is Reason.STORE_ERROR_FAIL_OPEN
        assert elapsed < QUICK
        errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
        assert any("not audited" in m and "store_error_fail_open" in m for m in errors), errors
    assert await until_rows(db, "check.fail_open", 1) == 1


async def test_a_full_queue_drops_new_rows_and_says_how_many(
    db_target: str, backend: str, db: Database, caplog: pytest.LogCaptureFixture
) -> None:
    """Rows beyond the queue bound are dropped; once written, the log says how many were lost."""
    audit = AuditLog(db, max_queued=2)
    with caplog.at_level(logging.WARNING, logger="actorscope.permissions.audit"):
        async with writes_locked(db_target, backend):
            results = [
                await audit.record(AuditEntry(action="check.deny", sender_id=str(n)))
                for n in range(5)
            ]
            assert results == [False] * 5
            assert audit.queued == 2
        assert await until_rows(db, "check.deny", 2) == 2
        await audit.flush()
    assert sorted(e.sender_id for e in await audit.list()) == ["0", "1"]
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert any(m.startswith("3 audit rows could not be written") for m in errors), errors


async def test_closing_the_database_writes_queued_rows(db_target: str, backend: str) -> None:
    """Rows queued while the store was locked are written when the database closes."""
    async with Database.open(db_target) as db:
        agent = await AgentRegistry(db).create("main")
        policy = PermissionPolicy(GrantStore(db))
        async with writes_locked(db_target, backend):
            assert not (await policy.check_file_writer(member(agent))).allowed
            assert policy.store.audit.queued == 1
    async with Database.open(db_target) as db:
        assert await rows(db, "check.deny") == 1


async def test_the_database_settles_the_rows_of_every_audit_log_on_it(
    db: Database, agent: Agent
) -> None:
    """db.settle_audit() writes the denials queued by two policies' separate audit logs."""
    first, second = PermissionPolicy(GrantStore(db)), PermissionPolicy(GrantStore(db))
    assert not (await first.check_file_writer(member(agent, "43"))).allowed
    assert not (await second.check_file_writer(member(agent, "44"))).allowed
    await db.settle_audit()
    assert await rows(db, "check.deny") == 2


async def test_settle_waits_for_the_rows_queued_before_it_not_a_flood_after(
    db: Database, agent: Agent
) -> None:
    """A settle returns once the rows queued before it are written, while denials keep
    coming: a turn waits for its own rows, never for every later turn's."""
    policy = PermissionPolicy(GrantStore(db))
    assert not (await policy.check_file_writer(member(agent, "43"))).allowed
    flooding = True
    sender = iter(range(1000, 10**6))

    async def flood() -> None:
        while flooding:
            await policy.check_file_writer(member(agent, str(next(sender))))
            await asyncio.sleep(0)

    task = asyncio.create_task(flood())
    try:
        started = time.monotonic()
        await db.settle_audit(wait=30.0)
        elapsed = time.monotonic() - started
        assert policy.store.audit.queued > 0 or not task.done()  # the flood goes on
    finally:
        flooding = False
        await task
    assert elapsed < 5.0
    row = await db.fetchone("SELECT COUNT(*) FROM audit_log WHERE sender_id = ?", ("43",))
    assert row is not None
    assert row[0] == 1


async def test_a_listing_sees_the_denials_another_audit_log_queued(
    db: Database, agent: Agent, store: GrantStore
) -> None:
    """A reader's own AuditLog (the API's, the CLI's) lists the denials just queued elsewhere."""
    policy = PermissionPolicy(store)
    assert not (await policy.check_file_writer(member(agent, "43"))).allowed
    assert [e.sender_id for e in await AuditLog(db).list(action="check.deny")] == ["43"]
    assert not (await policy.check_file_writer(member(agent, "44"))).allowed
    counts = await AuditLog(db).count_by_reason(since="2000-01-01", actions=["check.deny"])
    assert counts == {"no_grant": 2}


async def test_rows_still_locked_out_at_close_are_counted_as_lost(
    db_target: str, backend: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Closing while the store stays locked tries once more, then logs how many rows are lost."""
    with caplog.at_level(logging.ERROR, logger="actorscope.permissions.audit"):
        async with Database.open(db_target, busy_timeout=0.2) as db:
            audit = AuditLog(db)
            async with writes_locked(db_target, backend):
                assert not await audit.record(AuditEntry(action="check.deny", sender_id="42"))
                await db.close()
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert any(m.startswith("1 audit rows could not be written") for m in errors), errors


async def test_a_row_no_store_can_hold_neither_fails_nor_blocks_the_rows_behind_it(
    db: Database,
) -> None:
    """A NUL in the actor is stored escaped (PostgreSQL text cannot hold NUL), in order."""
    audit = AuditLog(db, wait=SETTLE)
    assert await audit.record(AuditEntry(action="check.deny", sender_id="4\x002"))
    assert await audit.record(AuditEntry(action="check.deny", sender_id="43"))
    assert [e.sender_id for e in await audit.list()] == ["43", "4\\x002"]


async def test_a_row_the_table_refuses_is_dropped_alone(
    db: Database, caplog: pytest.LogCaptureFixture
) -> None:
    """A row breaking a constraint is dropped and logged; the rows queued with it are written."""
    audit = AuditLog(db, wait=SETTLE)
    with caplog.at_level(logging.ERROR, logger="actorscope.permissions.audit"):
        results = await asyncio.gather(
            audit.record(AuditEntry(action="check.deny", sender_id="41")),
            audit.record(AuditEntry(action="", sender_id="42")),
            audit.record(AuditEntry(action="check.deny", sender_id="43")),
        )
        await audit.flush()
    assert list(results) == [True, False, True]
    assert sorted(e.sender_id for e in await audit.list()) == ["41", "43"]
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert any("audit row dropped" in m for m in errors), errors


async def test_an_oversized_custom_channel_sender_is_denied_and_blocks_nothing(
    db: Database, agent: Agent, store: GrantStore
) -> None:
    """A 4000-letter sender is invalid_identity, audited (cut to fit); later rows follow at once."""
    policy = PermissionPolicy(store)
    long_sender = "q" * 4000
    scope = "group:custom:1"
    oversized = Identity(scope, long_sender, "custom", peer_kind=PeerKind.GROUP, agent_id=agent.id)
    decision = await policy.check_file_writer(oversized)
    assert (decision.allowed, decision.reason) == (False, Reason.INVALID_IDENTITY)
    normal = Identity(scope, "alice", "custom", peer_kind=PeerKind.GROUP, agent_id=agent.id)
    started = time.monotonic()
    for _ in range(3):
        assert (await policy.check_file_writer(normal)).reason is Reason.NO_GRANT
    assert time.monotonic() - started < 3 * QUICK
    await store.audit.settle()
    assert store.audit.queued == 0
    senders = [e.sender_id for e in await store.audit.list()]
    assert senders[:3] == ["alice"] * 3
    assert senders[3].startswith("q" * 512)
    assert senders[3].endswith("…(4000 characters)")


async def test_a_row_the_store_refuses_for_its_values_is_dropped_once_not_retried(
    db: Database, backend: str, caplog: pytest.LogCaptureFixture
) -> None:
    """PostgreSQL refuses a NUL in the action (a data error): that row alone goes, logged cut."""
    audit = AuditLog(db, wait=SETTLE)
    long_actor = "z" * 4000
    with caplog.at_level(logging.WARNING, logger="actorscope.permissions.audit"):
        results = await asyncio.gather(
            audit.record(AuditEntry(action="check.deny\x00", sender_id=long_actor)),
            audit.record(AuditEntry(action="check.deny", sender_id="43")),
        )
        await audit.flush()
    refused = backend == "postgresql"
    assert list(results) == [not refused, True]
    assert audit.queued == 0
    assert [e.sender_id for e in await audit.list()][:1] == ["43"]
    messages = [r.getMessage() for r in caplog.records]
    assert not any(long_actor[:600] in m for m in messages), "an id in a log line is not cut"
    assert sum("audit row dropped" in m for m in messages) == int(refused), messages


async def test_the_store_names_an_index_overflow_a_refused_row(db: Database, backend: str) -> None:
    """A value over PostgreSQL's index row limit is RowRefusedError, not "the store is down"."""
    big = "".join(chr(0x4E00 + i % 500) for i in range(4000))
    insert = "INSERT INTO audit_log (created_at, sender_id, action) VALUES (?, ?, ?)"
    if backend == "postgresql":
        with pytest.raises(RowRefusedError, match="database write failed"):
            await db.execute(insert, ("2026-01-01", big, "check.deny"))
    else:
        assert await db.execute(insert, ("2026-01-01", big, "check.deny")) == 1

"""A flood of denials commits its audit rows in groups, never one transaction per row."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager

import pytest

from actorscope.agents import Agent
from actorscope.identity import Identity, PeerKind
from actorscope.permissions import GrantStore, PermissionPolicy, Reason
from actorscope.permissions._audit import BATCH
from actorscope.store import Database, Transaction

GROUP = "group:telegram:-100200"
FLOOD = 1000


def count_transactions(db: Database, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Wrap ``db.transaction`` (the one seam every write goes through); the list counts them."""
    opened: list[int] = []
    real = db.transaction

    @asynccontextmanager
    async def counted() -> AsyncIterator[Transaction]:
        opened.append(1)
        async with real() as tx:
            yield tx

    def transaction() -> AbstractAsyncContextManager[Transaction]:
        return counted()

    monkeypatch.setattr(db, "transaction", transaction)
    return opened


async def test_a_flood_of_denials_is_written_in_groups_and_kept_on_close(
    db_target: str, db: Database, agent: Agent, store: GrantStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """1,000 denials of one sender: every row is present after close, in a few transactions."""
    policy = PermissionPolicy(store)
    identity = Identity(user_id=GROUP, sender_id="42", peer_kind=PeerKind.GROUP, agent_id=agent.id)
    opened = count_transactions(db, monkeypatch)
    for _ in range(FLOOD):
        assert (await policy.check_file_writer(identity)).reason is Reason.NO_GRANT
    await db.close()  # flushes the queue
    assert store.audit.queued == 0
    # One transaction per row before; groups of up to BATCH rows now (slack for a slow loop).
    assert len(opened) <= 2 * FLOOD // BATCH, len(opened)
    async with Database.open(db_target) as again:
        row = await again.fetchone(
            "SELECT COUNT(*) FROM audit_log WHERE action = 'check.deny' AND sender_id = '42'"
        )
    assert row is not None
    assert row[0] == FLOOD


async def test_a_denial_returns_before_its_row_and_the_row_follows(
    db: Database, agent: Agent, store: GrantStore
) -> None:
    """A denial queues its row without waiting; the row is readable once the group commits."""
    policy = PermissionPolicy(store)
    identity = Identity(user_id=GROUP, sender_id="43", peer_kind=PeerKind.GROUP, agent_id=agent.id)
    assert not (await policy.check_file_writer(identity)).allowed
    assert store.audit.queued == 1
    entries = await store.audit.list(sender_id="43")  # waits for the group, bounded
    assert [e.reason for e in entries] == ["no_grant"]


async def test_a_queued_denial_is_stamped_when_decided_not_when_written(
    db: Database, agent: Agent, store: GrantStore
) -> None:
    """A denial's row keeps the time of the check, though the writer builds it later."""
    policy = PermissionPolicy(store)
    identity = Identity(user_id=GROUP, sender_id="44", peer_kind=PeerKind.GROUP, agent_id=agent.id)
    before = Database.utc_now()
    assert not (await policy.check_file_writer(identity)).allowed
    after = Database.utc_now()
    (entry,) = await store.audit.list(sender_id="44")  # the group is written after `after`
    assert before <= entry.created_at <= after
    assert (entry.agent_id, entry.tenant_id) == (agent.id, agent.tenant_id)
    assert (entry.config_type, dict(entry.detail)) == ("file_writer", {})

"""Leased claims: a worker that dies mid-turn loses nothing (per backend: ``db_target``).

A claim taken as a lease is held while its turn runs (renewed), done when it finishes, and
taken over by a redelivery once nobody renewed it for ``lease`` seconds. Over the webhook: a
request answers only once its turn is over, and a redelivery of an update another worker is
handling now is answered 503 (Telegram tries again later).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from tests._wait import wait_until
from tests._wiring import channel_pipeline

from actorscope.channels._config import ChannelConfig
from actorscope.channels._shared_dedup import Claim, SharedDedup
from actorscope.channels._turns import TurnLedger
from actorscope.channels.telegram._runner import TelegramRunner
from actorscope.channels.telegram._webhook import Fed
from actorscope.errors import StoreError
from actorscope.host import MessageBus
from actorscope.messages import InboundMessage
from actorscope.sandbox import BotApiEmulator
from actorscope.store import Database
from actorscope.store._migrations import Migration, load_migrations

KEY = ("telegram", "-100", "7")


class Clock:
    """A settable clock (seconds since the epoch)."""

    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def two_dbs(db_target: str) -> AsyncIterator[tuple[Database, Database]]:
    """Two handles on one database, as two workers would hold them."""
    async with Database.open(db_target) as first, Database.open(db_target) as second:
        yield first, second


async def test_a_leased_claim_is_held_until_its_turn_is_done(
    two_dbs: tuple[Database, Database],
) -> None:
    """Others see HELD while the lease lives, DONE once it is finished; a plain claim is done."""
    first, second = (SharedDedup(db) for db in two_dbs)
    assert await first.take(*KEY, lease=True) is Claim.WON
    assert await second.take(*KEY, lease=True) is Claim.HELD
    assert await second.claim(*KEY) is False
    assert await first.finish(KEY) is True
    assert await second.take(*KEY, lease=True) is Claim.DONE
    assert await second.claim("telegram", "-100", "8") is True
    assert await first.take("telegram", "-100", "8", lease=True) is Claim.DONE


async def test_a_lease_nobody_renews_is_taken_over(two_dbs: tuple[Database, Database]) -> None:
    """Past ``lease`` without a renewal a claim is a dead worker's: the next claimer wins it,
    and the first worker's late finish says it no longer held it."""
    clock = Clock()
    first, second = (SharedDedup(db, lease=10, clock=clock) for db in two_dbs)
    assert await first.take(*KEY, lease=True) is Claim.WON
    clock.now += 8
    await first.renew([KEY])
    clock.now += 8  # 16 s since the claim, 8 since the renewal
    assert await second.take(*KEY, lease=True) is Claim.HELD
    clock.now += 3  # 11 s since the renewal
    assert await second.take(*KEY, lease=True) is Claim.WON
    assert await first.finish(KEY) is False
    assert await second.finish(KEY) is True
    clock.now += 60
    assert await first.take(*KEY, lease=True) is Claim.DONE


async def test_the_ledger_renews_open_turns_and_finishes_them(
    two_dbs: tuple[Database, Database],
) -> None:
    """An open turn stays held past its lease while the ledger renews it; finishing marks it
    done and wakes whoever waits for the turn."""
    first, second = two_dbs
    shared = SharedDedup(first, lease=0.4)
    message = InboundMessage(
        channel="telegram", chat_id="-100", sender_id="42", user_id="group:telegram:-100",
        message_id="7",
    )  # fmt: skip
    async with TurnLedger(shared) as ledger:
        assert await shared.take_message(message, lease=True) is Claim.WON
        ledger.open(message)
        stamps = {await _seen_at(first)}

        async def renewed_thrice() -> bool:  # more than one lease has gone by
            stamps.add(await _seen_at(first))
            return len(stamps) >= 4

        await wait_until(renewed_thrice)
        assert await SharedDedup(second, lease=0.4).take(*KEY, lease=True) is Claim.HELD
        assert await ledger.wait(message, 0.01) is False
        await ledger.finish(message)
        assert await ledger.wait(message, 0.01) is True
    assert await SharedDedup(second).take(*KEY, lease=True) is Claim.DONE


async def _seen_at(db: Database) -> str:
    row = await db.fetchone("SELECT seen_at FROM processed_updates WHERE message_id = ?", (KEY[2],))
    assert row is not None
    return str(row["seen_at"])


def _runner(
    emu: BotApiEmulator,
    db: Database,
    bus: MessageBus,
    *,
    shared_dedup: SharedDedup | None = None,
    ledger: TurnLedger | None = None,
    **kwargs: Any,
) -> TelegramRunner:
    config = ChannelConfig(platform="telegram")
    pipeline = channel_pipeline(db, config, bus=bus, shared_dedup=shared_dedup, ledger=ledger)
    return TelegramRunner(pipeline, token=emu.token, request=emu.request(), **kwargs)


@asynccontextmanager
async def _worker(
    emu: BotApiEmulator, db: Database, lease: float
) -> AsyncIterator[tuple[TelegramRunner, MessageBus, TurnLedger]]:
    bus = MessageBus()
    shared = SharedDedup(db, lease=lease)
    async with TurnLedger(shared) as ledger:
        yield _runner(emu, db, bus, shared_dedup=shared, ledger=ledger), bus, ledger


async def test_an_update_whose_worker_died_mid_turn_is_handled_by_the_next(
    two_dbs: tuple[Database, Database],
) -> None:
    """Worker A takes the update and dies before its turn ends: its request never answered,
    so Telegram redelivers; worker B answers 503 while A's lease could still be live, then
    takes the update over and handles it (before leases it was dropped as claimed)."""
    emu = BotApiEmulator()
    emu.state.add_user("Alice", username="alice")
    update = emu.user_message("alice", "hello")
    assert update is not None
    async with _worker(emu, two_dbs[0], lease=0.5) as (first, first_bus, _):
        dying = asyncio.create_task(first.feed_webhook(update))
        taken = await asyncio.wait_for(first_bus.get(), 5)  # A published it: its turn runs
        assert taken.content == "hello"
        assert not dying.done()
        dying.cancel()  # A dies: no answer, no finish, no more renewals
        await asyncio.gather(dying, return_exceptions=True)
    async with _worker(emu, two_dbs[1], lease=0.5) as (second, second_bus, ledger):
        assert await second.feed_webhook(update) is Fed.BUSY
        answered = asyncio.create_task(_redeliver(second, update))
        handled = await asyncio.wait_for(second_bus.get(), 10)
        assert handled.content == "hello"
        assert not answered.done()  # B answers once its turn is over
        await ledger.finish(handled)
        assert await asyncio.wait_for(answered, 5) is Fed.ACCEPTED
        assert await second.feed_webhook(update) is Fed.ACCEPTED  # now a duplicate
    assert second_bus.qsize() == 0


async def _redeliver(runner: TelegramRunner, update: dict[str, Any]) -> Fed:
    """Deliver ``update`` again and again while it is busy, as Telegram does (bounded)."""
    async with asyncio.timeout(10):
        while (fed := await runner.feed_webhook(update)) is Fed.BUSY:  # noqa: ASYNC110 - redelivery
            await asyncio.sleep(0.05)
    return fed


async def test_updates_in_hand_past_max_queued_answer_503(tmp_path: Path) -> None:
    """A request waits for its update's turn; past max_queued in hand more are refused."""
    emu = BotApiEmulator()
    emu.state.add_user("Alice", username="alice")
    async with Database.open(tmp_path / "t.db") as db, TurnLedger() as ledger:
        bus = MessageBus()
        runner = _runner(emu, db, bus, ledger=ledger, max_queued=1)
        first = emu.user_message("alice", "one")
        second = emu.user_message("alice", "two")
        assert first is not None
        assert second is not None
        waiting = asyncio.create_task(runner.feed_webhook(first))
        message = await asyncio.wait_for(bus.get(), 5)
        assert await runner.feed_webhook(second) is Fed.BUSY
        assert not waiting.done()
        await ledger.finish(message)
        assert await asyncio.wait_for(waiting, 5) is Fed.ACCEPTED
        assert await runner.feed_webhook({"update_id": True}) is Fed.NOT_AN_UPDATE


@pytest.mark.parametrize("backend", ["postgresql"])  # SQLite serialises every write itself
async def test_claims_do_not_queue_behind_another_workers_write_transaction(
    db_target: str,
) -> None:
    """On PostgreSQL a claim, a finish and a renewal (each one atomic statement) go through
    while another worker holds the write lock; before, every claim waited for it."""
    async with Database.open(db_target) as db, Database.open(db_target) as other:
        shared = SharedDedup(db)
        async with other.transaction() as tx:
            await tx.execute("SELECT 1")  # the write lock is held until the block ends
            async with asyncio.timeout(2):
                assert await shared.take(*KEY, lease=True) is Claim.WON
                await shared.renew([KEY])
                assert await shared.finish(KEY) is True


async def test_an_update_the_store_cannot_take_now_is_deferred_not_dropped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store failure while handling a webhook update answers 503 (Telegram delivers it again
    later) instead of dropping the update after a 200."""
    emu = BotApiEmulator()
    emu.state.add_user("Alice", username="alice")
    update = emu.user_message("alice", "hello")
    assert update is not None

    async def failing(*args: Any, **kwargs: Any) -> None:
        raise StoreError("database write failed: the database system is shutting down")

    async with Database.open(tmp_path / "t.db") as db, TurnLedger() as ledger:
        runner = _runner(emu, db, MessageBus(), ledger=ledger)
        monkeypatch.setattr(runner.pipeline, "process", failing)
        assert await runner.feed_webhook(update) is Fed.BUSY


async def test_claims_made_before_leases_count_as_done(
    db_target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Migration 0010 gives old claims a finish time: a redelivery of one is a duplicate, never
    a takeover of a lease nobody renews."""
    real = load_migrations

    def before_leases(*args: Any, **kwargs: Any) -> tuple[Migration, ...]:
        return tuple(m for m in real(*args, **kwargs) if m.version < 10)

    monkeypatch.setattr("actorscope.store._sqlite.load_migrations", before_leases)
    monkeypatch.setattr("actorscope.store._postgres.load_migrations", before_leases)
    async with Database.open(db_target) as old:
        await old.execute(
            "INSERT INTO processed_updates (channel, chat_id, message_id, seen_at) "
            "VALUES (?, ?, ?, ?)",
            (*KEY, "2020-01-01T00:00:00.000000+00:00"),
        )
    monkeypatch.undo()
    async with Database.open(db_target) as db:
        assert await SharedDedup(db).take(*KEY, lease=True) is Claim.DONE


async def test_finishing_warns_of_a_lost_lease_only_when_another_worker_took_it(
    two_dbs: tuple[Database, Database], caplog: pytest.LogCaptureFixture
) -> None:
    """A turn whose lease another worker took over is logged at WARNING; one whose claim was
    never recorded (the store failed when it was taken, the update handled anyway) is not."""
    clock = Clock()
    mine, theirs = (SharedDedup(db, lease=10, clock=clock) for db in two_dbs)
    taken = InboundMessage(
        channel="telegram", chat_id="-100", sender_id="42", user_id="group:telegram:-100",
        message_id="7",
    )  # fmt: skip
    unrecorded = taken.model_copy(update={"message_id": "8"})
    async with TurnLedger(mine) as ledger:
        assert await mine.take_message(taken, lease=True) is Claim.WON
        ledger.open(taken)
        ledger.open(unrecorded)  # its claim failed: no row
        clock.now += 11
        assert await theirs.take_message(taken, lease=True) is Claim.WON
        with caplog.at_level(logging.DEBUG, logger="actorscope.channels.dedup"):
            await ledger.finish(unrecorded)
            assert "lease_lost" not in caplog.text
            await ledger.finish(taken)
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert [r.getMessage().split(" ")[0] for r in warnings] == ["dedup.lease_lost"]

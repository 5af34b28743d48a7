"""Shared dedup: one claim per update across workers sharing a database, TTL cleanup.

The store-facing cases run once per backend (``db_target``: SQLite, and PostgreSQL when a
server is reachable; see tests/conftest.py).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import discord
import pytest
from discord.webhook.async_ import AsyncWebhookAdapter
from telegram import Update
from tests._wiring import channel_pipeline

from actorscope.channels._config import ChannelConfig
from actorscope.channels._dedup import DedupCache
from actorscope.channels._shared_dedup import SharedDedup, shared_dedup_default
from actorscope.channels.discord._runner import DiscordRunner
from actorscope.channels.telegram._runner import TelegramRunner
from actorscope.errors import ConfigError
from actorscope.host import MessageBus
from actorscope.messages import InboundMessage
from actorscope.sandbox import BotApiEmulator
from actorscope.store import Database


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


async def rows(db: Database) -> list[tuple[str, str, str]]:
    """The claimed keys, sorted."""
    found = await db.fetchall(
        "SELECT channel, chat_id, message_id FROM processed_updates ORDER BY message_id"
    )
    return [(r["channel"], r["chat_id"], r["message_id"]) for r in found]


async def test_first_claim_wins_across_two_handles(two_dbs: tuple[Database, Database]) -> None:
    """The first claimer of a key gets True; the same key on another handle gets False."""
    first, second = (SharedDedup(db) for db in two_dbs)
    assert await first.claim("telegram", "-100", "7") is True
    assert await second.claim("telegram", "-100", "7") is False
    assert await first.claim("telegram", "-100", "7") is False
    assert await second.claim("telegram", "-100", "8") is True
    assert await second.claim("discord", "-100", "7") is True
    assert await first.claim("telegram", "-101", "7") is True
    assert len(await rows(two_dbs[0])) == 4


async def test_concurrent_claims_of_one_key_have_one_winner(
    two_dbs: tuple[Database, Database],
) -> None:
    """Twenty claims of one key racing over two handles: exactly one returns True."""
    first, second = (SharedDedup(db) for db in two_dbs)
    claims = [(first if n % 2 else second).claim("discord", "9", "race") for n in range(20)]
    results = await asyncio.gather(*claims)
    assert sorted(results) == [False] * 19 + [True]


async def test_ttl_cleanup_deletes_old_rows_in_bounded_batches(db_target: str) -> None:
    """cleanup() deletes at most one batch of rows older than ttl; newer rows stay."""
    clock = Clock()
    async with Database.open(db_target) as db:
        dedup = SharedDedup(
            db, ttl=60, cleanup_batch=2, cleanup_every=1000, cleanup_interval=1e9, clock=clock
        )
        for n in range(5):
            assert await dedup.claim("telegram", "1", f"old{n}")
        clock.now += 30
        assert await dedup.claim("telegram", "1", "young")
        clock.now += 31  # the first five are 61 s old, "young" 31 s
        assert [await dedup.cleanup() for _ in range(4)] == [2, 2, 1, 0]
        assert await rows(db) == [("telegram", "1", "young")]
        assert await dedup.claim("telegram", "1", "old0") is True  # expired: claimable again
        assert await dedup.claim("telegram", "1", "young") is False


async def test_cleanup_runs_every_n_claims_and_after_the_interval(db_target: str) -> None:
    """Expired rows go by themselves: on the Nth claim, and on a claim after the interval."""
    clock = Clock()
    async with Database.open(db_target) as db:
        dedup = SharedDedup(db, ttl=10, cleanup_every=3, cleanup_interval=1e9, clock=clock)
        await dedup.claim("telegram", "1", "a")
        await dedup.claim("telegram", "1", "b")
        clock.now += 11
        assert len(await rows(db)) == 2
        await dedup.claim("telegram", "1", "c")  # the third claim cleans up
        assert await rows(db) == [("telegram", "1", "c")]
        timed = SharedDedup(db, ttl=10, cleanup_every=1000, cleanup_interval=5, clock=clock)
        clock.now += 11
        await timed.claim("telegram", "1", "d")  # 11 s since this instance last cleaned up
        assert await rows(db) == [("telegram", "1", "d")]


@pytest.mark.parametrize(
    "kwargs",
    [{"ttl": 0}, {"cleanup_interval": -1}, {"cleanup_every": 0}, {"cleanup_batch": 0}],
)
def test_bad_settings_are_config_errors(kwargs: dict[str, Any]) -> None:
    """Non-positive ttl, interval, batch or period are rejected up front."""
    db: Any = object()  # never touched: validation comes first
    with pytest.raises(ConfigError, match="shared dedup"):
        SharedDedup(db, **kwargs)


async def test_claim_message_without_id_or_on_store_failure_processes(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """No message id: nothing to compare. A failing store: processed, with a warning."""
    message = InboundMessage(
        channel="telegram", sender_id="5", user_id="5", chat_id="5", content="hi"
    )
    async with Database.open(tmp_path / "t.db") as db:
        dedup = SharedDedup(db)
        assert await dedup.claim_message(message) is True
        assert await dedup.claim_message(message) is True
        assert await rows(db) == []
        numbered = message.model_copy(update={"message_id": "9"})
        assert await dedup.claim_message(numbered) is True
        assert await dedup.claim_message(numbered) is False
        await db.execute("DROP TABLE processed_updates")
        with caplog.at_level(logging.WARNING, logger="actorscope.channels.dedup"):
            assert await dedup.claim_message(numbered) is True
        assert "dedup.shared_claim_failed" in caplog.text


async def test_default_is_on_for_postgresql_only(db_target: str, backend: str) -> None:
    """Shared dedup defaults on for PostgreSQL, off for SQLite."""
    async with Database.open(db_target) as db:
        assert shared_dedup_default(db) is (backend == "postgresql")


def telegram_runner(emu: BotApiEmulator, db: Database, bus: MessageBus) -> TelegramRunner:
    """A Telegram runner on ``db`` with shared dedup (never started: updates are handed in)."""
    config = ChannelConfig(platform="telegram")
    return TelegramRunner(
        channel_pipeline(db, config, bus=bus, shared_dedup=SharedDedup(db)),
        token=emu.token,
        request=emu.request(),
    )


async def test_same_telegram_update_to_two_workers_is_handled_once(
    two_dbs: tuple[Database, Database],
) -> None:
    """Two runners on two handles of one database: a redelivered update reaches one bus."""
    emu = BotApiEmulator()
    emu.state.add_user("Alice", username="alice")
    buses = (MessageBus(), MessageBus())
    runners = [telegram_runner(emu, db, bus) for db, bus in zip(two_dbs, buses, strict=True)]
    first = emu.user_message("alice", "hello")
    second = emu.user_message("alice", "again")
    assert first is not None
    assert second is not None
    for runner in runners:
        await runner.handle_update(Update.de_json(first, runner.bot))
    await runners[1].handle_update(Update.de_json(second, runners[1].bot))
    await runners[0].handle_update(Update.de_json(second, runners[0].bot))
    assert (buses[0].qsize(), buses[1].qsize()) == (1, 1)
    assert (await buses[0].get()).content == "hello"
    assert (await buses[1].get()).content == "again"
    # Without shared dedup each worker would handle it: the in-memory filter is per process.
    runners[1].pipeline.shared_dedup = None
    runners[1].pipeline.dedup = DedupCache()
    await runners[1].handle_update(Update.de_json(first, runners[1].bot))
    assert buses[1].qsize() == 1


AUTHOR = {"id": "42", "username": "ann", "discriminator": "0", "avatar": None}


def dm(runner: DiscordRunner, message_id: int, content: str) -> discord.Message:
    """A direct message to the runner's bot, as the gateway would hand it over."""
    state = runner.client._connection
    payload: Any = {
        "id": str(message_id),
        "type": 0,
        "channel_id": "555",
        "author": AUTHOR,
        "content": content,
        "timestamp": "2024-01-01T00:00:00+00:00",
        "edited_timestamp": None,
        "tts": False,
        "mention_everyone": False,
        "mentions": [],
        "mention_roles": [],
        "attachments": [],
        "embeds": [],
        "pinned": False,
    }
    channel_data: Any = {"id": "555", "type": 1, "recipients": [AUTHOR]}
    assert state.user is not None
    channel = discord.DMChannel(me=state.user, state=state, data=channel_data)
    return discord.Message(state=state, channel=channel, data=payload)


def discord_workers(
    two_dbs: tuple[Database, Database],
) -> tuple[tuple[MessageBus, MessageBus], list[DiscordRunner]]:
    """Two Discord runners (never logged in), one per worker database, each with its bus."""
    buses = (MessageBus(), MessageBus())
    runners = [
        DiscordRunner(
            channel_pipeline(
                db, ChannelConfig(platform="discord"), bus=bus, shared_dedup=SharedDedup(db)
            ),
            token="unused",  # noqa: S106 - never logs in
            sync_commands=False,
        )
        for db, bus in zip(two_dbs, buses, strict=True)
    ]
    return buses, runners


async def test_same_discord_event_to_two_workers_is_handled_once(
    two_dbs: tuple[Database, Database],
) -> None:
    """A Discord message replayed to two runners (a resume on another worker) is handled once."""
    buses, runners = discord_workers(two_dbs)
    bot_user: Any = {**AUTHOR, "id": "900", "username": "notes", "bot": True}
    try:
        for runner in runners:
            state = runner.client._connection
            state.user = discord.ClientUser(state=state, data=bot_user)
        for runner in runners:
            await runner.handle_message(dm(runner, 1001, "hello"))
        await runners[1].handle_message(dm(runners[1], 1002, "again"))
        await runners[0].handle_message(dm(runners[0], 1002, "again"))
        assert (buses[0].qsize(), buses[1].qsize()) == (1, 1)
        assert (await buses[0].get()).message_id == "1001"
        assert (await buses[1].get()).message_id == "1002"
    finally:
        for runner in runners:
            await runner.client.close()


async def test_same_discord_interaction_to_two_workers_is_deferred_once(
    two_dbs: tuple[Database, Database], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A slash command replayed to two runners is acknowledged and published by one only."""
    callbacks: list[str] = []

    async def webhook_request(self: Any, route: Any, session: Any, **kwargs: Any) -> Any:
        callbacks.append(route.path)
        return {"interaction": {"id": "1", "type": 2}}

    monkeypatch.setattr(AsyncWebhookAdapter, "request", webhook_request)
    buses, runners = discord_workers(two_dbs)
    payload: Any = {
        "id": "3001",
        "application_id": "900",
        "type": 2,
        "token": "tok",
        "version": 1,
        "channel_id": "555",
        "channel": {"id": "555", "type": 1},
        "data": {"id": "1", "name": "ask", "type": 1},
        "user": AUTHOR,
        "locale": "en-US",
        "app_permissions": "0",
        "entitlements": [],
        "attachment_size_limit": 1,
        "context": 1,
        "authorizing_integration_owners": {"1": "42"},
    }
    try:
        for runner in runners:
            state = runner.client._connection
            await runner.handle_interaction(discord.Interaction(data=payload, state=state))
        assert buses[0].qsize() + buses[1].qsize() == 1
        assert callbacks == ["/interactions/{webhook_id}/{webhook_token}/callback"]
    finally:
        for runner in runners:
            await runner.client.close()

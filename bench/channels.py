"""Channel adapters against the libraries' own parsing of the same payloads.

Normalisation runs on an already-parsed object (a PTB ``Update``, a discord.py ``Message`` or
``Interaction``), which is what a running bot hands to the adapter; the baseline is the library
building that object from the JSON payload (``Update.de_json``; discord.py's ``Message`` and
``Interaction`` constructors, as its ``MESSAGE_CREATE`` / ``INTERACTION_CREATE`` parsers do).

The goal lines run a realistic stream (``bench/_streams.py``: 20,000 events from 5,000
Zipf-distributed senders across 500 chats, ~5 % non-persons), with the adapters' identity
caches cleared at the start of each run; each run's ratio is total adapter time over total
library time, and the line shows the median of the runs with their min-max.
Goals: <= 0.05 (Telegram) and <= 0.20 (Discord).

The single-update lines below them are secondary: one update repeated (warm caches), and the
same with the caches cleared on every call (a never-seen chat and sender).

Whole-pipeline throughput (``actorscope run`` against bare PTB / discord.py) is in
``bench/pipeline.py``.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Sequence
from typing import Any

import discord
from telegram import Update

from actorscope.channels import discord as discord_adapter
from actorscope.channels import telegram as telegram_adapter
from bench._ptb import topic_update
from bench._streams import BOT_USERNAME, discord_stream, telegram_stream
from bench._timing import goal_line, per_call, report

normalize_update = telegram_adapter.PLATFORM.normalize_update
normalize_message = discord_adapter.PLATFORM.normalize_message
normalize_interaction = discord_adapter.PLATFORM.normalize_interaction

__all__ = ["DISCORD_GUILD", "DISCORD_MESSAGE", "TELEGRAM_UPDATE", "discord_state", "main"]

TELEGRAM_UPDATE: dict[str, Any] = topic_update(
    "@actorscope_bot hello there", entities=[{"type": "mention", "offset": 0, "length": 15}]
)

GUILD, CHANNEL, BOT, AUTHOR = 81234567890123456, 81234567890123457, 81234567890000001, 9001
ROUNDS = 15
#: Runs over each stream; the goal line shows their median and min-max.
STREAM_RUNS = 5

DISCORD_GUILD: dict[str, Any] = {
    "id": str(GUILD),
    "name": "devs",
    "owner_id": str(AUTHOR),
    "roles": [{"id": str(GUILD), "name": "@everyone", "permissions": "0", "position": 0}],
    "channels": [{"id": str(CHANNEL), "type": 0, "name": "general", "position": 0}],
    "threads": [],
    "members": [],
    "member_count": 2,
}
DISCORD_MESSAGE: dict[str, Any] = {
    "id": "81234567890999999",
    "type": 0,
    "channel_id": str(CHANNEL),
    "guild_id": str(GUILD),
    "author": {"id": str(AUTHOR), "username": "carol", "discriminator": "0", "avatar": None},
    "member": {"roles": [], "joined_at": "2024-01-01T00:00:00+00:00", "deaf": False, "mute": False},
    "content": f"<@{BOT}> hello there",
    "timestamp": "2024-01-01T00:00:00+00:00",
    "edited_timestamp": None,
    "tts": False,
    "mention_everyone": False,
    "mentions": [{"id": str(BOT), "username": "actorscope", "discriminator": "0", "bot": True}],
    "mention_roles": [],
    "attachments": [],
    "embeds": [],
    "pinned": False,
}


def discord_state() -> tuple[discord.Client, Any]:
    """A discord.py client whose state knows the bench guild (no network, no event loop)."""
    client = discord.Client(intents=discord.Intents.default())
    state = client._connection
    me: Any = {"id": str(BOT), "username": "actorscope", "discriminator": "0", "avatar": None}
    state.user = discord.ClientUser(state=state, data=me | {"bot": True})
    state.parse_guild_create(copy.deepcopy(DISCORD_GUILD))
    return client, state


def _interleaved(ours: Callable[[], object], base: Callable[[], object]) -> tuple[float, float]:
    """Best per-call costs, alternating short runs so machine noise hits both sides alike."""
    best_ours = best_base = float("inf")
    for _ in range(ROUNDS):
        best_ours = min(best_ours, per_call(ours, number=4_000, repeat=1))
        best_base = min(best_base, per_call(base, number=1_000, repeat=1))
    return best_ours, best_base


def _warm_and_cold(
    label: str,
    ours: Callable[[], object],
    base: Callable[[], object],
    base_label: str,
    goal: str,
    cache_clears: Sequence[Callable[[], None]],
) -> None:
    """Report ``ours`` against ``base`` warm (the goal line), then with the caches cleared."""
    assert ours() is not None
    report(label, *_interleaved(ours, base), base_label, goal)

    def cold() -> object:
        for cache_clear in cache_clears:
            cache_clear()
        return ours()

    report("  same, identity caches cleared each call", *_interleaved(cold, base), base_label)


def _clear_caches() -> None:
    telegram_adapter.PLATFORM.clear_caches()
    discord_adapter.PLATFORM.clear_caches()


def _timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def telegram_stream_ratios(runs: int = STREAM_RUNS) -> tuple[list[float], float]:
    """Per run: ``normalize_update`` over the stream / ``Update.de_json`` over it; and us/update."""
    payloads = telegram_stream()
    updates = [Update.de_json(payload, None) for payload in payloads]
    kept = sum(normalize_update(u, bot_username=BOT_USERNAME) is not None for u in updates)
    assert 0.9 * len(updates) < kept < len(updates), kept  # non-persons and others' commands

    def parse() -> None:
        for payload in payloads:
            Update.de_json(payload, None)

    def normalize() -> None:
        _clear_caches()
        for update in updates:
            normalize_update(update, bot_username=BOT_USERNAME)

    ratios, costs = [], []
    for _ in range(runs):
        base, ours = _timed(parse), _timed(normalize)
        ratios.append(ours / base)
        costs.append(ours / len(updates))
    return ratios, sorted(costs)[len(costs) // 2]


def discord_stream_ratios(runs: int = STREAM_RUNS) -> tuple[list[float], float]:
    """Per run: the adapters over the stream / discord.py's constructors over it; and us/event."""
    stream = discord_stream()
    client = discord.Client(intents=discord.Intents.default())
    state = client._connection
    me: Any = {
        "id": str(stream.bot_id),
        "username": "actorscope",
        "discriminator": "0",
        "avatar": None,
    }
    state.user = discord.ClientUser(state=state, data=me | {"bot": True})
    for guild in stream.guilds:
        state.parse_guild_create(copy.deepcopy(guild))

    def parse_one(event: str, payload: Any) -> object:
        if event == "INTERACTION_CREATE":
            return discord.Interaction(data=payload, state=state)
        guild = client.get_guild(int(payload["guild_id"]))
        assert guild is not None
        channel: Any = guild.get_channel(int(payload["channel_id"]))
        return discord.Message(state=state, channel=channel, data=payload)

    parsed = [parse_one(event, payload) for event, payload in stream.events]
    bot_id = stream.bot_id

    def adapt(obj: object) -> object:
        if isinstance(obj, discord.Message):
            return normalize_message(obj, bot_id=bot_id)
        assert isinstance(obj, discord.Interaction)
        return normalize_interaction(obj)

    kept = sum(adapt(obj) is not None for obj in parsed)
    assert 0.9 * len(parsed) < kept < len(parsed), kept

    def parse() -> None:
        for event, payload in stream.events:
            parse_one(event, payload)

    def normalize() -> None:
        _clear_caches()
        for obj in parsed:
            adapt(obj)

    ratios, costs = [], []
    for _ in range(runs):
        base, ours = _timed(parse), _timed(normalize)
        ratios.append(ours / base)
        costs.append(ours / len(parsed))
    return ratios, sorted(costs)[len(costs) // 2]


def main() -> None:
    """Print the stream goal lines, then the single-update lines (secondary)."""
    ratios, cost = telegram_stream_ratios()
    goal_line(f"normalize_update / Update.de_json, stream ({cost * 1e6:.1f} us)", ratios, 0.05)
    ratios, cost = discord_stream_ratios()
    goal_line(
        f"normalize_message+interaction / discord.py, stream ({cost * 1e6:.1f} us)", ratios, 0.20
    )
    print("secondary: one update repeated")
    update = Update.de_json(TELEGRAM_UPDATE, None)

    def ptb() -> object:
        return Update.de_json(TELEGRAM_UPDATE, None)

    def tg() -> object:
        return normalize_update(update, bot_username="actorscope_bot")

    _warm_and_cold(
        "normalize_update (parsed Update)",
        tg,
        ptb,
        "Update.de_json",
        "",
        (telegram_adapter.PLATFORM.clear_caches,),
    )

    _client, state = discord_state()
    channel = state._get_guild(GUILD).get_channel(CHANNEL)

    payload: Any = DISCORD_MESSAGE

    def dpy() -> object:
        return discord.Message(state=state, channel=channel, data=payload)

    message = dpy()
    assert isinstance(message, discord.Message)

    def dc() -> object:
        return normalize_message(message, bot_id=BOT)

    _warm_and_cold(
        "normalize_message (parsed Message)",
        dc,
        dpy,
        "discord.Message(...)",
        "",
        (discord_adapter.PLATFORM.clear_caches,),
    )

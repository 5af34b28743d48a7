"""Channel adapters against the libraries' own parsing of the same payload.

Normalisation runs on an already-parsed object (a PTB ``Update``, a discord.py ``Message``),
which is what a running bot hands to the adapter; the baseline is the library building that
object from the JSON payload (``Update.de_json``; discord.py's ``Message`` constructor, as its
``MESSAGE_CREATE`` parser does). Goals: <= 5% (Telegram) and <= 20% (Discord).

The adapters memoise identities and session keys (chats and senders repeat), so the goal lines
run warm; the "caches cleared" lines show the cost for a never-seen chat and sender.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

import discord
from telegram import Update

from actorscope.channels import _discord_ids as discord_ids
from actorscope.channels import telegram as telegram_adapter
from actorscope.channels.discord import normalize_message
from actorscope.channels.telegram import normalize_update
from bench._ptb import topic_update
from bench._timing import per_call, report

__all__ = ["DISCORD_GUILD", "DISCORD_MESSAGE", "TELEGRAM_UPDATE", "discord_state", "main"]

TELEGRAM_UPDATE: dict[str, Any] = topic_update(
    "@actorscope_bot hello there", entities=[{"type": "mention", "offset": 0, "length": 15}]
)

GUILD, CHANNEL, BOT, AUTHOR = 81234567890123456, 81234567890123457, 81234567890000001, 9001
ROUNDS = 15

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


def main() -> None:
    """Print both ratios, measured in one run."""
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
        "<= 0.05",
        (telegram_adapter._identity.cache_clear, telegram_adapter._session.cache_clear),
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
        "<= 0.20",
        (discord_ids.person.cache_clear, discord_ids.session.cache_clear),
    )

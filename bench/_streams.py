"""Realistic, seeded event streams for the channel benchmarks and the soak.

Telegram: group updates from many senders (Zipf-like: a few talk a lot) across many chats,
with forum topics, replies, commands, mentions and about 5 % non-person senders (anonymous
admins, users posting as a channel, automatic forwards, bots). Discord: the same mix as
``MESSAGE_CREATE`` and ``INTERACTION_CREATE`` payloads over guild text channels.
:func:`mixed_stream`: the same mix, platform-neutral and endless (what people do, not the
payloads: the soak plays it through the emulators), with edits, clicks and writer commands.

Every stream is a pure function of its seed, so two runs (and two machines) parse the same
events.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

__all__ = [
    "DiscordStream",
    "Doing",
    "StreamEvent",
    "discord_stream",
    "mixed_stream",
    "telegram_stream",
    "zipf_weights",
]

SEED = 17
BOT_USERNAME = "actorscope_bot"
#: Telegram's stand-ins: the anonymous group admin and "posted as a channel".
_ANONYMOUS_ADMIN, _CHANNEL_BOT = 1087968824, 136817688
_WORDS = ("deploy", "logs", "why", "ok", "thanks", "build", "broken", "again", "ship", "it")
_COMMANDS = ("/help", "/status", "/addwriter", "/writers", "/ask what now", "/status@other_bot")


def zipf_weights(count: int, exponent: float = 1.1) -> list[float]:
    """Cumulative Zipf-like weights for ``count`` ranks (rank 1 the most frequent)."""
    return list(itertools.accumulate(1.0 / (rank**exponent) for rank in range(1, count + 1)))


def _text(rng: random.Random) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 12)))


def telegram_stream(
    updates: int = 20_000, *, senders: int = 5_000, chats: int = 500, seed: int = SEED
) -> list[dict[str, Any]]:
    """``updates`` Telegram group update payloads (fresh dicts, never shared between updates)."""
    rng = random.Random(seed)  # noqa: S311 -- a reproducible stream, not a secret
    sender_weights = zipf_weights(senders)
    chat_weights = zipf_weights(chats, 0.8)
    # A third of the chats are forums; chat ids are supergroup-style (-100...).
    forum = {c: c % 3 == 0 for c in range(chats)}
    stream: list[dict[str, Any]] = []
    for n in range(updates):
        chat_no = rng.choices(range(chats), cum_weights=chat_weights)[0]
        chat_id = -1_001_000_000_000 - chat_no
        sender = 100_000 + rng.choices(range(senders), cum_weights=sender_weights)[0]
        chat: dict[str, Any] = {"id": chat_id, "type": "supergroup", "title": f"chat {chat_no}"}
        if forum[chat_no]:
            chat["is_forum"] = True
        message: dict[str, Any] = {
            "message_id": 10 + n,
            "date": 1_700_000_000 + n,
            "chat": chat,
            "from": {
                "id": sender,
                "is_bot": False,
                "first_name": f"User{sender}",
                **({"username": f"user{sender}"} if sender % 4 else {}),
            },
        }
        roll = rng.random()
        if roll < 0.02:  # anonymous admin: sender_chat is the group itself
            message["from"] = {"id": _ANONYMOUS_ADMIN, "is_bot": True, "first_name": "Group"}
            message["sender_chat"] = {"id": chat_id, "type": "supergroup", "title": chat["title"]}
        elif roll < 0.035:  # a user posting as their channel
            message["from"] = {"id": _CHANNEL_BOT, "is_bot": True, "first_name": "Channel"}
            message["sender_chat"] = {"id": -1_002_000_000_000 - n % 50, "type": "channel"}
        elif roll < 0.043:  # an automatic forward from the linked channel
            message["is_automatic_forward"] = True
            message["sender_chat"] = {"id": -1_003_000_000_000 - chat_no, "type": "channel"}
        elif roll < 0.05:  # another bot
            message["from"] = {"id": 900 + n % 7, "is_bot": True, "first_name": "Bot"}
        kind = rng.random()
        if kind < 0.10:
            message["text"] = rng.choice(_COMMANDS)
            message["entities"] = [{"type": "bot_command", "offset": 0, "length": 5}]
        elif kind < 0.20:
            message["text"] = f"@{BOT_USERNAME} {_text(rng)}"
            message["entities"] = [{"type": "mention", "offset": 0, "length": 15}]
        else:
            message["text"] = _text(rng)
        if forum[chat_no] and rng.random() < 0.7:
            message["message_thread_id"] = 2 + rng.randrange(20)
            message["is_topic_message"] = True
        if rng.random() < 0.25:
            from_bot = rng.random() < 0.3
            replied = {"id": 1, "is_bot": True, "first_name": "Bot", "username": BOT_USERNAME}
            message["reply_to_message"] = {
                "message_id": 5 + max(0, n - rng.randint(1, 50)),
                "date": 1_700_000_000,
                "chat": dict(chat),
                "from": replied
                if from_bot
                else {"id": sender + 1, "is_bot": False, "first_name": "X"},
                "text": _text(rng),
            }
        stream.append({"update_id": 1_000 + n, "message": message})
    return stream


@dataclass(frozen=True, slots=True)
class DiscordStream:
    """Guilds (``GUILD_CREATE`` payloads) and the events that happen in them, in order."""

    bot_id: int
    guilds: Sequence[dict[str, Any]]
    #: ``("MESSAGE_CREATE" | "INTERACTION_CREATE", payload)``
    events: Sequence[tuple[str, dict[str, Any]]]


def discord_stream(
    events: int = 20_000,
    *,
    senders: int = 5_000,
    channels: int = 500,
    guilds: int = 50,
    seed: int = SEED,
) -> DiscordStream:
    """``events`` guild messages and interactions (about 15 % interactions, 5 % non-persons)."""
    rng = random.Random(seed)  # noqa: S311 -- a reproducible stream, not a secret
    bot_id = 81_234_567_890_000_001
    guild_payloads: list[dict[str, Any]] = []
    channel_guild: list[tuple[int, int]] = []
    per_guild = channels // guilds
    for g in range(guilds):
        guild_id = 81_234_567_000_000_000 + g * 1_000
        chans = [guild_id + 1 + c for c in range(per_guild)]
        channel_guild.extend((chan, guild_id) for chan in chans)
        guild_payloads.append(
            {
                "id": str(guild_id),
                "name": f"guild {g}",
                "owner_id": "9001",
                "roles": [
                    {"id": str(guild_id), "name": "@everyone", "permissions": "0", "position": 0}
                ],
                "channels": [
                    {"id": str(chan), "type": 0, "name": f"c{chan % 1000}", "position": i}
                    for i, chan in enumerate(chans)
                ],
                "threads": [],
                "members": [],
                "member_count": senders,
            }
        )
    sender_weights = zipf_weights(senders)
    chan_weights = zipf_weights(len(channel_guild), 0.8)
    stream: list[tuple[str, dict[str, Any]]] = []
    for n in range(events):
        channel_id, guild_id = rng.choices(channel_guild, cum_weights=chan_weights)[0]
        sender = 70_000_000_000_000_000 + rng.choices(range(senders), cum_weights=sender_weights)[0]
        user: dict[str, Any] = {
            "id": str(sender),
            "username": f"user{sender % 100_000}",
            "discriminator": "0",
            "avatar": None,
        }
        member = {
            "roles": [],
            "joined_at": "2024-01-01T00:00:00+00:00",
            "deaf": False,
            "flags": 0,
            "mute": False,
        }
        event_id = str(90_000_000_000_000_000 + n)
        if rng.random() < 0.15:
            stream.append(
                (
                    "INTERACTION_CREATE",
                    {
                        "id": event_id,
                        "application_id": str(bot_id),
                        "type": 2,
                        "token": "t" * 20,
                        "version": 1,
                        "channel_id": str(channel_id),
                        "channel": {
                            "id": str(channel_id),
                            "type": 0,
                            "guild_id": str(guild_id),
                            "name": f"c{channel_id % 1000}",
                            "position": 0,
                        },
                        "guild_id": str(guild_id),
                        "member": member | {"user": user, "permissions": "0"},
                        "data": {
                            "id": "1",
                            "name": "ask",
                            "type": 1,
                            "options": [{"name": "q", "type": 3, "value": _text(rng)}],
                        },
                        "locale": "en-US",
                        "guild_locale": "en-US",
                        "app_permissions": "0",
                        "entitlements": [],
                        "authorizing_integration_owners": {},
                        "attachment_size_limit": 8_388_608,
                    },
                )
            )
            continue
        message: dict[str, Any] = {
            "id": event_id,
            "type": 0,
            "channel_id": str(channel_id),
            "guild_id": str(guild_id),
            "author": user,
            "member": member,
            "content": _text(rng),
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
        roll = rng.random()
        if roll < 0.03:
            message["author"] = user | {"id": str(60_000 + n % 11), "bot": True}
        elif roll < 0.05:
            message["webhook_id"] = str(50_000 + n % 13)
            message["author"] = user | {"id": message["webhook_id"], "bot": True}
            message.pop("member")
        if rng.random() < 0.15:
            bot = {"id": str(bot_id), "username": "actorscope", "discriminator": "0", "bot": True}
            message["content"] = f"<@{bot_id}> {message['content']}"
            message["mentions"] = [bot]
        if rng.random() < 0.2:
            message["message_reference"] = {
                "message_id": str(90_000_000_000_000_000 + max(0, n - 5)),
                "channel_id": str(channel_id),
                "guild_id": str(guild_id),
            }
        stream.append(("MESSAGE_CREATE", message))
    return DiscordStream(bot_id=bot_id, guilds=guild_payloads, events=stream)


class Doing(StrEnum):
    """What a person (or a non-person) does in one event of :func:`mixed_stream`."""

    TEXT = "text"  # a plain message in the group
    MENTION = "mention"  # a message naming the bot
    COMMAND = "command"  # /status, /help, /ask ... (the handler's)
    ASK = "ask"  # /ask (Telegram) or the /ask slash command (Discord): answered with a button
    OTHER_BOT = "other_bot"  # /status@other_bot: for another bot
    WRITER_COMMAND = "writer_command"  # /writers, /addwriter, /removewriter (or ! on Discord)
    EDIT = "edit"  # the sender edits one of their earlier messages
    CLICK = "click"  # the sender clicks a button of one of the bot's replies
    ANONYMOUS_ADMIN = "anonymous_admin"  # Telegram: an anonymous group admin
    AS_CHANNEL = "as_channel"  # Telegram: a user posting as their channel
    BOT = "bot"  # another bot
    WEBHOOK = "webhook"  # Discord: a webhook message


@dataclass(frozen=True, slots=True)
class StreamEvent:
    """One event of :func:`mixed_stream`: who (a Zipf rank), where (a chat index), what."""

    platform: str  # "telegram" or "discord"
    doing: Doing
    chat: int
    sender: int
    text: str


_WRITER_COMMANDS = ("/writers", "/addwriter", "/removewriter")
# Of 1000 events, per platform: what happens (the rest are plain messages).
_TELEGRAM_MIX = (
    (Doing.MENTION, 100),
    (Doing.COMMAND, 60),
    (Doing.ASK, 30),
    (Doing.OTHER_BOT, 10),
    (Doing.WRITER_COMMAND, 15),
    (Doing.EDIT, 40),
    (Doing.CLICK, 40),
    (Doing.ANONYMOUS_ADMIN, 20),
    (Doing.AS_CHANNEL, 15),
    (Doing.BOT, 15),
)
_DISCORD_MIX = (
    (Doing.MENTION, 100),
    (Doing.ASK, 100),
    (Doing.WRITER_COMMAND, 15),
    (Doing.CLICK, 50),
    (Doing.BOT, 30),
    (Doing.WEBHOOK, 20),
)


def _doing(rng: random.Random, mix: Sequence[tuple[Doing, int]]) -> Doing:
    roll = rng.randrange(1000)
    for doing, share in mix:
        if roll < share:
            return doing
        roll -= share
    return Doing.TEXT


def mixed_stream(
    *,
    telegram_chats: int,
    discord_channels: int,
    senders: int,
    discord_share: float = 0.4,
    seed: int = SEED,
) -> Iterator[StreamEvent]:
    """An endless, seeded stream over both platforms: Zipf senders and chats, commands, writer
    commands, edits, clicks and about 5 % non-persons. A pure function of its arguments."""
    rng = random.Random(seed)  # noqa: S311 -- a reproducible stream, not a secret
    sender_weights = zipf_weights(senders)
    chat_weights = {
        "telegram": zipf_weights(telegram_chats, 0.8),
        "discord": zipf_weights(discord_channels, 0.8),
    }
    while True:
        platform = "discord" if rng.random() < discord_share else "telegram"
        doing = _doing(rng, _DISCORD_MIX if platform == "discord" else _TELEGRAM_MIX)
        chats = len(chat_weights[platform])
        chat = rng.choices(range(chats), cum_weights=chat_weights[platform])[0]
        sender = rng.choices(range(senders), cum_weights=sender_weights)[0]
        if doing is Doing.COMMAND:
            text = rng.choice(_COMMANDS[:2])
        elif doing is Doing.ASK:
            text = f"/ask {_text(rng)}" if platform == "telegram" else _text(rng)
        elif doing is Doing.OTHER_BOT:
            text = "/status@other_bot"
        elif doing is Doing.WRITER_COMMAND:
            text = rng.choice(_WRITER_COMMANDS)
            if platform == "discord":
                text = "!" + text[1:]
        else:
            text = _text(rng)
        yield StreamEvent(platform, doing, chat, sender, text)

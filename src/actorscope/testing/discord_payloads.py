"""Discord gateway and HTTP payloads shaped the way Discord sends them (API v10).

The simulator's world (users, guilds, text channels, threads, DM channels) is a handful of
dataclasses; these functions render them into ``GUILD_CREATE``, ``MESSAGE_CREATE`` and
``INTERACTION_CREATE`` data and into the message objects the HTTP API answers with.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "TIMESTAMP",
    "DiscordChannel",
    "DiscordGuild",
    "DiscordUser",
    "Snowflakes",
    "guild_create",
    "interaction_create",
    "message_create",
    "message_object",
    "user_object",
]

JSON = dict[str, Any]
#: Every simulated event happens at this instant (discord.py only parses it).
TIMESTAMP = "2026-01-01T00:00:00.000000+00:00"
_TEXT, _DM, _PUBLIC_THREAD = 0, 1, 11


class Snowflakes:
    """Increasing, realistic-looking snowflake ids."""

    def __init__(self, start: int = 81_234_567_890_100_001) -> None:
        self._ids: Iterator[int] = itertools.count(start)

    def next(self) -> int:
        """A fresh id."""
        return next(self._ids)


@dataclass(slots=True)
class DiscordUser:
    """A Discord account (a person unless ``bot``)."""

    id: int
    name: str
    bot: bool = False


@dataclass(slots=True)
class DiscordChannel:
    """A guild text channel, a thread (``parent`` set) or a DM channel (``guild`` is ``None``)."""

    id: int
    name: str
    guild: DiscordGuild | None = None
    parent: DiscordChannel | None = None
    recipient: DiscordUser | None = None
    webhook_id: int | None = None

    @property
    def is_thread(self) -> bool:
        """Whether this is a thread."""
        return self.parent is not None

    @property
    def chat_id(self) -> int:
        """The id the identity uses: the parent channel of a thread, else this channel."""
        return self.parent.id if self.parent is not None else self.id

    def to_json(self) -> JSON:
        """The partial channel object an interaction carries."""
        if self.guild is None:
            return {"id": str(self.id), "type": _DM}
        data: JSON = {
            "id": str(self.id),
            "type": _PUBLIC_THREAD if self.parent else _TEXT,
            "guild_id": str(self.guild.id),
            "name": self.name,
        }
        if self.parent is not None:
            data["parent_id"] = str(self.parent.id)
        return data


@dataclass(slots=True)
class DiscordGuild:
    """A guild with its channels, threads and members."""

    id: int
    name: str
    owner: DiscordUser
    channels: list[DiscordChannel] = field(default_factory=list)
    members: list[DiscordUser] = field(default_factory=list)


#: Administrator (1 << 3) and Manage Server (1 << 5): what an owner's permissions must say.
_OWNER_PERMISSIONS = str((1 << 3) | (1 << 5))


def user_object(user: DiscordUser) -> JSON:
    """A Discord ``User`` object."""
    data: JSON = {
        "id": str(user.id),
        "username": user.name,
        "discriminator": "0",
        "avatar": None,
        "global_name": user.name.title(),
    }
    if user.bot:
        data["bot"] = True
    return data


def _member(user: DiscordUser | None = None) -> JSON:
    data: JSON = {
        "roles": [],
        "joined_at": TIMESTAMP,
        "deaf": False,
        "mute": False,
        "flags": 0,
    }
    if user is not None:
        data["user"] = user_object(user)
    return data


def guild_create(guild: DiscordGuild) -> JSON:
    """The ``GUILD_CREATE`` data of ``guild``."""
    channels = [c for c in guild.channels if c.parent is None]
    threads = [c for c in guild.channels if c.parent is not None]
    return {
        "id": str(guild.id),
        "name": guild.name,
        "owner_id": str(guild.owner.id),
        "unavailable": False,
        "roles": [{"id": str(guild.id), "name": "@everyone", "permissions": "0", "position": 0}],
        "channels": [
            {
                "id": str(c.id),
                "type": _TEXT,
                "name": c.name,
                "position": index,
                "guild_id": str(guild.id),
            }
            for index, c in enumerate(channels)
        ],
        "threads": [
            {
                "id": str(t.id),
                "type": _PUBLIC_THREAD,
                "name": t.name,
                "parent_id": str(t.parent.id if t.parent else 0),
                "guild_id": str(guild.id),
                "owner_id": str(guild.owner.id),
                "thread_metadata": {
                    "archived": False,
                    "auto_archive_duration": 1440,
                    "archive_timestamp": TIMESTAMP,
                    "locked": False,
                },
                "message_count": 0,
                "member_count": 1,
                "rate_limit_per_user": 0,
            }
            for t in threads
        ],
        "members": [_member(user) for user in guild.members],
        "member_count": len(guild.members),
        "large": False,
        "emojis": [],
        "stickers": [],
        "features": [],
        "voice_states": [],
        "presences": [],
        "stage_instances": [],
        "guild_scheduled_events": [],
        "joined_at": TIMESTAMP,
    }


def message_object(
    message_id: int,
    channel: DiscordChannel,
    author: DiscordUser,
    content: str,
    *,
    webhook_id: int | None = None,
    mentions: tuple[DiscordUser, ...] = (),
) -> JSON:
    """A ``Message`` object (what ``MESSAGE_CREATE`` carries and the HTTP API returns)."""
    data: JSON = {
        "id": str(message_id),
        "type": 0,
        "channel_id": str(channel.id),
        "author": user_object(author),
        "content": content,
        "timestamp": TIMESTAMP,
        "edited_timestamp": None,
        "tts": False,
        "mention_everyone": False,
        "mentions": [user_object(user) for user in mentions],
        "mention_roles": [],
        "attachments": [],
        "embeds": [],
        "pinned": False,
        "flags": 0,
    }
    if webhook_id is not None:
        data["webhook_id"] = str(webhook_id)
    return data


def message_create(
    message_id: int,
    channel: DiscordChannel,
    author: DiscordUser,
    content: str,
    *,
    webhook_id: int | None = None,
    mentions: tuple[DiscordUser, ...] = (),
) -> JSON:
    """``MESSAGE_CREATE`` data: a message plus ``guild_id`` and ``member`` in a guild."""
    data = message_object(
        message_id, channel, author, content, webhook_id=webhook_id, mentions=mentions
    )
    if channel.guild is not None:
        data["guild_id"] = str(channel.guild.id)
        if webhook_id is None:
            data["member"] = _member()
    return data


def interaction_create(
    interaction_id: int,
    application_id: int,
    channel: DiscordChannel,
    user: DiscordUser,
    command: str,
    options: Mapping[str, str | int | bool | DiscordUser] | None = None,
) -> JSON:
    """``INTERACTION_CREATE`` data of a slash command (``/command opt=value``); a
    :class:`DiscordUser` value is a user option, resolved as Discord resolves it."""
    given = dict(options or {})
    people = {name: value for name, value in given.items() if isinstance(value, DiscordUser)}
    data: JSON = {
        "id": str(interaction_id),
        "application_id": str(application_id),
        "type": 2,
        "token": f"interaction-token-{interaction_id}",
        "version": 1,
        "channel_id": str(channel.id),
        "channel": channel.to_json(),
        "data": {
            "id": str(interaction_id + 1),
            "name": command,
            "type": 1,
            "options": [
                {"name": name, "type": 6, "value": str(value.id)}
                if isinstance(value, DiscordUser)
                else {"name": name, "type": 3, "value": value}
                for name, value in given.items()
            ],
        },
        "locale": "en-US",
        "app_permissions": "0",
        "entitlements": [],
        "attachment_size_limit": 26214400,
    }
    if people:
        data["data"]["resolved"] = {
            "users": {str(p.id): user_object(p) for p in people.values()},
            **(
                {"members": {str(p.id): _member() for p in people.values()}}
                if channel.guild is not None
                else {}
            ),
        }
    if channel.guild is not None:
        data["guild_id"] = str(channel.guild.id)
        data["guild_locale"] = "en-US"
        data["context"] = 0
        data["authorizing_integration_owners"] = {"0": str(channel.guild.id)}
        # What Discord computed for the invoker: a guild owner holds every permission
        # (Administrator and Manage Server among them), a plain member none here.
        owner = user.id == channel.guild.owner.id
        data["member"] = _member(user) | {"permissions": _OWNER_PERMISSIONS if owner else "0"}
    else:
        data["user"] = user_object(user)
        data["context"] = 1
        data["authorizing_integration_owners"] = {"1": str(user.id)}
    return data

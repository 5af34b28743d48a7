"""The emulator's objects: users, chats, forum topics and member statuses, as Bot API JSON.

Each object renders itself exactly the way the Bot API puts it into an ``Update``: optional
fields are left out instead of being sent as ``null``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

__all__ = [
    "ANONYMOUS_ADMIN_ID",
    "CHANNEL_BOT_ID",
    "GENERAL_TOPIC_ID",
    "SERVICE_USER_ID",
    "Chat",
    "ChatType",
    "ForumTopic",
    "MemberStatus",
    "User",
    "anonymous_admin_user",
    "channel_bot_user",
    "service_user",
]

# Telegram's placeholder sender for messages an anonymous group admin writes.
ANONYMOUS_ADMIN_ID = 1087968824
# Telegram's placeholder sender for a user who writes in a group as one of their channels.
CHANNEL_BOT_ID = 136817688
# Telegram's service account: automatic forwards from a linked channel, service notices.
SERVICE_USER_ID = 777000
# The General topic of a forum always has thread id 1; its messages carry no thread id.
GENERAL_TOPIC_ID = 1

JSON = dict[str, Any]


class ChatType(StrEnum):
    """The Bot API ``Chat.type`` values."""

    PRIVATE = "private"
    GROUP = "group"
    SUPERGROUP = "supergroup"
    CHANNEL = "channel"


class MemberStatus(StrEnum):
    """The chat member statuses the emulator models."""

    CREATOR = "creator"
    ADMINISTRATOR = "administrator"
    MEMBER = "member"
    LEFT = "left"
    #: Removed and banned from a supergroup or channel (the bot: blocked by the user).
    KICKED = "kicked"

    @property
    def is_admin(self) -> bool:
        """Whether this status appears in ``getChatAdministrators``."""
        return self in (MemberStatus.CREATOR, MemberStatus.ADMINISTRATOR)

    @property
    def is_present(self) -> bool:
        """Whether a user with this status is in the chat."""
        return self not in (MemberStatus.LEFT, MemberStatus.KICKED)


@dataclass(slots=True)
class User:
    """A Telegram user or bot."""

    id: int
    first_name: str
    username: str | None = None
    last_name: str | None = None
    is_bot: bool = False
    language_code: str | None = "en"

    def to_json(self) -> JSON:
        """The ``User`` object as the Bot API sends it."""
        data: JSON = {"id": self.id, "is_bot": self.is_bot, "first_name": self.first_name}
        if self.last_name:
            data["last_name"] = self.last_name
        if self.username:
            data["username"] = self.username
        if self.language_code and not self.is_bot:
            data["language_code"] = self.language_code
        return data

    @property
    def display_name(self) -> str:
        """``@username`` when there is one, else the first name."""
        return f"@{self.username}" if self.username else self.first_name


def channel_bot_user() -> User:
    """The ``Channel_Bot`` placeholder sender of messages written as a channel."""
    return User(
        id=CHANNEL_BOT_ID,
        first_name="Channel",
        username="Channel_Bot",
        is_bot=True,
        language_code=None,
    )


def service_user() -> User:
    """The ``Telegram`` service account (777000) that posts automatic forwards."""
    return User(id=SERVICE_USER_ID, first_name="Telegram", language_code=None)


def anonymous_admin_user() -> User:
    """The ``GroupAnonymousBot`` placeholder that signs anonymous admin messages."""
    return User(
        id=ANONYMOUS_ADMIN_ID,
        first_name="Group",
        username="GroupAnonymousBot",
        is_bot=True,
        language_code=None,
    )


@dataclass(slots=True)
class ForumTopic:
    """A forum topic; ``thread_id`` is the id of the message that created it."""

    thread_id: int
    name: str
    icon_color: int = 7322096
    created_date: int = 0
    creator: User | None = None


@dataclass(slots=True)
class Chat:
    """A private chat, basic group, supergroup (maybe a forum) or channel."""

    id: int
    type: ChatType
    title: str | None = None
    username: str | None = None
    first_name: str | None = None
    last_name: str | None = None
    is_forum: bool = False
    topics: dict[int, ForumTopic] = field(default_factory=dict)
    #: Ids of the pinned messages, oldest first.
    pinned: list[int] = field(default_factory=list)

    def to_json(self) -> JSON:
        """The ``Chat`` object as the Bot API puts it into a message."""
        data: JSON = {"id": self.id}
        if self.type is ChatType.PRIVATE:
            data["first_name"] = self.first_name or ""
            if self.last_name:
                data["last_name"] = self.last_name
        else:
            data["title"] = self.title or ""
        if self.username:
            data["username"] = self.username
        data["type"] = self.type.value
        if self.is_forum:
            data["is_forum"] = True
        return data

    @property
    def is_group(self) -> bool:
        """Whether this is a basic group or a supergroup."""
        return self.type in (ChatType.GROUP, ChatType.SUPERGROUP)

    @property
    def label(self) -> str:
        """A short human name: ``@username``, the title, or the private chat's first name."""
        if self.username:
            return f"@{self.username}"
        return self.title or self.first_name or str(self.id)

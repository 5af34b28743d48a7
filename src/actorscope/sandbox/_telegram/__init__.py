"""An offline Telegram Bot API emulator (its face is :mod:`actorscope.sandbox`).

:class:`BotApiEmulator` is the core (state, update queue, call log, user actions; its
``request()`` plugs it into python-telegram-bot without sockets);
:class:`BotApiServer` serves it over loopback HTTP.
"""

from __future__ import annotations

from actorscope.sandbox._telegram.emulator import (
    ApiResponse,
    BotApiEmulator,
    EmulatorRequest,
    RecordedCall,
    make_token,
)
from actorscope.sandbox._telegram.errors import BotApiError
from actorscope.sandbox._telegram.models import (
    ANONYMOUS_ADMIN_ID,
    CHANNEL_BOT_ID,
    GENERAL_TOPIC_ID,
    SERVICE_USER_ID,
    Chat,
    ChatType,
    ForumTopic,
    MemberStatus,
    User,
)
from actorscope.sandbox._telegram.server import BotApiServer

__all__ = [
    "ANONYMOUS_ADMIN_ID",
    "CHANNEL_BOT_ID",
    "GENERAL_TOPIC_ID",
    "SERVICE_USER_ID",
    "ApiResponse",
    "BotApiEmulator",
    "BotApiError",
    "BotApiServer",
    "Chat",
    "ChatType",
    "EmulatorRequest",
    "ForumTopic",
    "MemberStatus",
    "RecordedCall",
    "User",
    "make_token",
]

"""Thin stub transports: every side of a throughput line talks to one of these, not a server.

A stub answers a call with canned bytes the library then parses as it would parse Telegram's
or Discord's answer, and records what was sent (chat, topic, message replied to, text), so a
line can check that both of its sides did the same work. Nothing is encoded, routed or
validated on the way: the emulators (:mod:`actorscope.sandbox`) are for correctness tests,
and their ~90 us per reply would flatter every ratio.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from discord.http import Route
from telegram.request import BaseRequest, RequestData

from bench._streams import BOT_USERNAME

__all__ = [
    "BOT_ID",
    "GET_ME",
    "SENT_MESSAGE",
    "TOKEN",
    "DiscordStub",
    "Sends",
    "Sent",
    "StubRequest",
    "same_work",
    "telegram_sent",
]

#: The bot's Telegram id and a token in Bot API form (never sent anywhere).
BOT_ID = 5_000_000_001
TOKEN = f"{BOT_ID}:AAbenchbenchbenchbenchbenchbenchbench"
#: One sent message as the Bot API answers ``sendMessage``: every Telegram side parses these
#: same bytes for every reply.
SENT_MESSAGE = json.dumps(
    {
        "ok": True,
        "result": {
            "message_id": 99,
            "date": 1_700_000_000,
            "chat": {"id": -1_001_000_000_000, "type": "supergroup", "title": "chat 0"},
            "from": {
                "id": BOT_ID,
                "is_bot": True,
                "first_name": "actorscope",
                "username": BOT_USERNAME,
            },
            "text": "noted",
        },
    }
).encode()
#: The bot as the Bot API answers ``getMe``.
GET_ME = json.dumps(
    {
        "ok": True,
        "result": {
            "id": BOT_ID,
            "is_bot": True,
            "first_name": "actorscope",
            "username": BOT_USERNAME,
            "can_join_groups": True,
            "can_read_all_group_messages": True,
            "supports_inline_queries": False,
        },
    }
).encode()
_TRUE = b'{"ok": true, "result": true}'

#: What one reply was: (chat id, topic or None, message replied to or None, text).
Sent = tuple[int, int | None, int | None, str]
Sends = list[Sent]


def telegram_sent(params: dict[str, Any]) -> Sent:
    """The :data:`Sent` record of ``sendMessage`` parameters (as any library passes them)."""
    reply = params.get("reply_parameters")
    if isinstance(reply, str):  # a library that hands the transport JSON text
        reply = json.loads(reply)
    reply_to = reply.get("message_id") if isinstance(reply, dict) else None
    thread = params.get("message_thread_id")
    return (
        int(params["chat_id"]),
        None if thread is None else int(thread),
        None if reply_to is None else int(reply_to),
        str(params["text"]),
    )


def same_work(label: str, sent: Sends, base_label: str, base: Sends) -> str:
    """``"replies N/N"`` when ``sent`` and ``base`` are the same replies; else raise.

    A throughput ratio of two sides that answered differently would compare different work.
    """
    if Counter(sent) != Counter(base):
        extra = Counter(sent) - Counter(base)
        missing = Counter(base) - Counter(sent)
        raise AssertionError(
            f"{label} and {base_label} did not send the same replies "
            f"({len(sent)} vs {len(base)}; first extra {next(iter(extra), None)}, "
            f"first missing {next(iter(missing), None)})"
        )
    return f"replies {len(sent)}/{len(base)}"


class StubRequest(BaseRequest):
    """PTB's transport, answered at once: ``getMe`` is the bot, ``sendMessage`` one message."""

    __slots__ = ("sends",)

    def __init__(self, sends: Sends) -> None:
        self.sends = sends

    @property
    def read_timeout(self) -> float | None:
        """No reads wait."""
        return None

    async def initialize(self) -> None:
        """Nothing to open."""

    async def shutdown(self) -> None:
        """Nothing to close."""

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: Any = BaseRequest.DEFAULT_NONE,
        write_timeout: Any = BaseRequest.DEFAULT_NONE,
        connect_timeout: Any = BaseRequest.DEFAULT_NONE,
        pool_timeout: Any = BaseRequest.DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        """Record a ``sendMessage`` and answer it; ``getMe`` and anything else answer too."""
        api_method = url.rsplit("/", 1)[-1]
        if api_method == "sendMessage" and request_data is not None:
            self.sends.append(telegram_sent(request_data.parameters))
            return 200, SENT_MESSAGE
        if api_method == "getMe":
            return 200, GET_ME
        return 200, _TRUE


class DiscordStub:
    """Stand-in for discord.py's ``HTTPClient.request``: answers message sends, records them."""

    def __init__(self, bot_id: int, sends: Sends) -> None:
        self.sends = sends
        self._author = {
            "id": str(bot_id),
            "username": "actorscope",
            "discriminator": "0",
            "avatar": None,
            "bot": True,
        }

    async def request(self, route: Route, **kwargs: Any) -> Any:
        """A message send: recorded, answered with the message; anything else: ``{}``."""
        if route.method != "POST" or route.path != "/channels/{channel_id}/messages":
            return {}
        payload = kwargs.get("json") or {}
        reference = payload.get("message_reference") or {}
        content = str(payload.get("content", ""))
        reply_to = reference.get("message_id")
        channel = int(route.channel_id or 0)
        self.sends.append((channel, None, None if reply_to is None else int(reply_to), content))
        return {
            "id": str(90_000_000_000_000_000 + len(self.sends)),
            "type": 0,
            "channel_id": str(channel),
            "author": self._author,
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

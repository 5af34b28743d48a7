"""NoneBot2 with its Telegram adapter as a side of the peer lines, driven offline.

Each update goes the way the adapter's webhook takes it: ``Event.parse_event`` of the update
dict, then ``Bot.handle_event`` (the bot's mention check, then NoneBot's matchers). One
``on_message`` matcher answers: its rule skips what every bot of the line skips (bots,
anonymous admins, channel posts, another bot's command), its ``Permission`` looks the sender
up in a dict of members, and its handler sends the reply with ``bot.send_message`` to the
chat and topic, replying. The Bot API calls go through NoneBot's driver to
:class:`StubHttp`, an HTTP client mixin that answers as :mod:`bench._stubs` does.

NoneBot keeps one driver per process (``nonebot.init``): the first side started makes it.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import nonebot
from nonebot.adapters.telegram import Adapter, Bot
from nonebot.adapters.telegram.config import BotConfig
from nonebot.adapters.telegram.event import Event, GroupMessageEvent
from nonebot.adapters.telegram.model import ReplyParameters
from nonebot.drivers import HTTPClientMixin, HTTPClientSession, Request, Response
from nonebot.permission import Permission
from nonebot.rule import Rule

from bench._sides import GENERAL_TOPIC, REPLY, Feed, Payloads, Side, for_another_bot
from bench._streams import BOT_USERNAME
from bench._stubs import BOT_ID, SENT_MESSAGE, TOKEN, Sends, telegram_sent

__all__ = ["StubHttp", "nonebot_side"]

_TRUE = b'{"ok": true, "result": true}'


class StubHttp(HTTPClientMixin):
    """NoneBot's HTTP client, answered at once (``sendMessage``: one message, recorded)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: Where each bot's replies are recorded, by token.
        self.sends_of: dict[str, Sends] = {}

    @property
    def type(self) -> str:
        """The mixin's name in the driver's type."""
        return "bench_stub"

    async def request(self, setup: Request) -> Response:
        """Answer one Bot API call; a ``sendMessage`` is recorded with its bot's replies."""
        path = str(setup.url)
        token, _, api_method = path.rpartition("/bot")[2].partition("/")
        if api_method == "sendMessage":
            self.sends_of[token].append(telegram_sent(dict(setup.json or {})))
            return Response(200, content=SENT_MESSAGE)
        return Response(200, content=_TRUE)

    async def stream_request(
        self, setup: Request, *, chunk_size: int = 1024
    ) -> AsyncGenerator[Response, None]:
        """Not used by the bench's bots."""
        raise NotImplementedError("the bench's stub transport answers single requests only")
        yield Response(500)  # pragma: no cover - makes this an async generator

    def get_session(self, *args: Any, **kwargs: Any) -> HTTPClientSession:
        """Not used by the bench's bots."""
        raise NotImplementedError("the bench's stub transport answers single requests only")


def _driver() -> StubHttp:
    """NoneBot's driver (the "none" driver with :class:`StubHttp`), made on the first call."""
    try:
        driver = nonebot.get_driver()
    except ValueError:
        nonebot.init(driver="~none+bench._nonebot:StubHttp", log_level="WARNING")
        driver = nonebot.get_driver()
        driver.register_adapter(Adapter)
    if not isinstance(driver, StubHttp):
        raise RuntimeError(f"NoneBot was initialised with another driver: {driver.type}")
    return driver


async def _from_person(event: GroupMessageEvent) -> bool:
    text = str(event.original_message)
    return event.sender_chat is None and not event.from_.is_bot and not for_another_bot(text)


def nonebot_side(members: dict[int, bool]) -> Side:
    """NoneBot2 + Telegram adapter; the ``Permission`` allows the senders ``members`` allows."""

    async def member(event: GroupMessageEvent) -> bool:
        return members.get(event.from_.id, False)

    async def answer(bot: Bot, event: GroupMessageEvent) -> None:
        thread = getattr(event, "message_thread_id", None)
        await bot.send_message(
            chat_id=event.chat.id,
            text=REPLY,
            message_thread_id=None if thread == GENERAL_TOPIC else thread,
            reply_parameters=ReplyParameters(
                message_id=event.message_id, allow_sending_without_reply=True
            ),
        )

    @asynccontextmanager
    async def start(sends: Sends) -> AsyncIterator[Feed]:
        driver = _driver()
        adapter = nonebot.get_adapter(Adapter)
        token = f"{BOT_ID}:{id(sends)}{TOKEN.partition(':')[2]}"
        driver.sends_of[token] = sends
        bot = Bot(adapter, str(BOT_ID), config=BotConfig(token=token))
        bot.username = BOT_USERNAME
        matcher = nonebot.on_message(
            rule=Rule(_from_person), permission=Permission(member), handlers=[answer], block=True
        )
        adapter.bot_connect(bot)

        async def feed(payloads: Payloads) -> None:
            for payload in payloads:
                await bot.handle_event(Event.parse_event(payload))

        try:
            yield feed
        finally:
            adapter.bot_disconnect(bot)
            matcher.destroy()
            del driver.sends_of[token]

    return Side("NoneBot2 + Permission", start)

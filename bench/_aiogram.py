"""aiogram 3 as a side of the peer lines, driven offline.

Each update goes in through ``Dispatcher.feed_raw_update`` (what aiogram's webhook handlers
call with the update dict). A ``Router`` answers messages that pass two filters: what every
bot of the line skips (bots, anonymous admins, channel posts, another bot's command), and a
dict lookup of the sender among the members; the handler sends the reply with
``bot.send_message`` to the chat and topic, replying. The Bot API calls go to
:class:`StubSession`, a session that answers as :mod:`bench._stubs` does; aiogram parses the
answer (``BaseSession.check_response``) as after a real call.

The line with actorscope's aiogram gate is one more :class:`~bench._sides.Side` here: the
same bot with :func:`~actorscope.integrations.aiogram.install` and the handler under
``requires`` instead of the member filter (see :func:`aiogram_sides`).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from aiogram import Bot, Dispatcher, Router
from aiogram.client.session.base import BaseSession
from aiogram.methods import GetMe, SendMessage, TelegramMethod
from aiogram.types import Message, ReplyParameters

from actorscope.channels import ChannelConfig
from actorscope.integrations import aiogram as gate
from actorscope.store import Database
from bench._sides import GENERAL_TOPIC, REPLY, Feed, Payloads, Side, for_another_bot
from bench._stubs import GET_ME, SENT_MESSAGE, TOKEN, Sends

__all__ = ["StubSession", "aiogram_sides"]
_SENT = SENT_MESSAGE.decode()
_TRUE = '{"ok": true, "result": true}'


class StubSession(BaseSession):
    """aiogram's HTTP session, answered at once (``sendMessage``: one message, recorded)."""

    def __init__(self, sends: Sends) -> None:
        super().__init__()
        self.sends = sends

    async def close(self) -> None:
        """Nothing to close."""

    async def make_request(
        self,
        bot: Bot,
        method: TelegramMethod[Any],
        timeout: int | None = None,  # noqa: ASYNC109 - aiogram's signature
    ) -> Any:
        """Record a ``sendMessage``; answer every call as the Bot API would."""
        content = _TRUE
        if isinstance(method, GetMe):
            content = GET_ME.decode()
        if isinstance(method, SendMessage):
            reply = method.reply_parameters
            reply_to = reply.message_id if isinstance(reply, ReplyParameters) else None
            thread = method.message_thread_id
            self.sends.append(
                (
                    int(method.chat_id),
                    None if thread is None else int(thread),
                    reply_to,
                    method.text,
                )
            )
            content = _SENT
        return self.check_response(bot=bot, method=method, status_code=200, content=content).result

    async def stream_content(self, *args: Any, **kwargs: Any) -> AsyncGenerator[bytes, None]:
        """Not used by the bench's bots."""
        raise NotImplementedError("the bench's stub session answers single requests only")
        yield b""  # pragma: no cover - makes this an async generator


def _from_person(message: Message) -> bool:
    user = message.from_user
    return (
        message.sender_chat is None
        and user is not None
        and not user.is_bot
        and not for_another_bot(message.text or "")
    )


async def _answer(message: Message, bot: Bot) -> None:
    thread = message.message_thread_id if message.is_topic_message else None
    await bot.send_message(
        chat_id=message.chat.id,
        text=REPLY,
        message_thread_id=None if thread == GENERAL_TOPIC else thread,
        reply_parameters=ReplyParameters(
            message_id=message.message_id, allow_sending_without_reply=True
        ),
    )


def _bare(members: dict[int, bool]) -> Side:
    """aiogram 3: a Router whose message handler passes a dict-lookup filter."""

    def member(message: Message) -> bool:
        return message.from_user is not None and members.get(message.from_user.id, False)

    @asynccontextmanager
    async def start(sends: Sends) -> AsyncIterator[Feed]:
        bot = Bot(TOKEN, session=StubSession(sends))
        router = Router()
        router.message(_from_person, member)(_answer)
        dispatcher = Dispatcher()
        dispatcher.include_router(router)

        async def feed(payloads: Payloads) -> None:
            for payload in payloads:
                await dispatcher.feed_raw_update(bot, payload)

        try:
            yield feed
        finally:
            await bot.session.close()

    return Side("aiogram 3 + dict filter", start)


def _gated(db: Database, agent: str) -> Side:
    """The same aiogram bot with actorscope's gate: ``install()``, the handler under
    ``requires`` (the grants decide who is answered)."""

    @asynccontextmanager
    async def start(sends: Sends) -> AsyncIterator[Feed]:
        bot = Bot(TOKEN, session=StubSession(sends))
        router = Router()
        router.message(_from_person)(gate.requires("file_writer")(_answer))
        dispatcher = Dispatcher()
        gate.install(
            dispatcher,
            database=db,
            agent=agent,
            config=ChannelConfig(platform="telegram", require_mention=False),
        )
        dispatcher.include_router(router)
        await dispatcher.emit_startup(bot=bot, dispatcher=dispatcher, bots=(bot,))

        async def feed(payloads: Payloads) -> None:
            for payload in payloads:
                await dispatcher.feed_raw_update(bot, payload)

        try:
            yield feed
        finally:
            await dispatcher.emit_shutdown(bot=bot, dispatcher=dispatcher, bots=(bot,))
            await bot.session.close()

    return Side("aiogram 3 + install() + requires", start)


def aiogram_sides(members: dict[int, bool], db: Database, agent: str) -> list[Side]:
    """The aiogram sides of the peer lines: bare, and with actorscope's gate on ``db`` as
    ``agent`` (everyone may write there)."""
    return [_bare(members), _gated(db, agent)]

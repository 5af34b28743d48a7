"""A running Telegram bot: a python-telegram-bot ``Application`` fed by polling or a webhook.

The runner is a transport: each update is normalised by
:func:`~actorscope.channels.telegram.inspect_update` and handed to the channel's
:class:`~actorscope.channels.Pipeline` (dedup, admission, shared claim; writer commands are
answered there and never reach the handler; a button click is answered before its message is
published to the host's bus, with the button's data in ``metadata["callback_data"]``). Replies
(:meth:`TelegramRunner.send`) go to the message's chat and forum topic, with their format
(``parse_mode``), buttons (an ``InlineKeyboardMarkup``) and photos or documents. ``base_url``
points the bot at another Bot API server (the sandbox emulator); tests can hand in PTB
``BaseRequest`` objects instead of talking HTTP.

In webhook mode (a :class:`~actorscope.channels.telegram._webhook.Webhook`) a
:class:`~actorscope.channels.telegram._webhook.WebhookServer` receives the updates and each
request takes its update through the same :meth:`TelegramRunner.handle_update` polling uses,
answering only once it is handled: with a :class:`~actorscope.channels._turns.TurnLedger`,
once its turn is over (the handler ran, its replies went out). An update whose worker dies
before that was never acknowledged, and Telegram delivers it again. With a
:class:`~actorscope.channels._shared_dedup.SharedDedup` the pipeline also claims an admitted
update in the shared store (after the in-memory filter), so only one of several workers
handles it; an update another worker is handling right now is answered 503 (Telegram tries
again later).
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import logging
from collections.abc import Callable, Coroutine, Mapping
from typing import Any, NamedTuple

from telegram import (
    Bot,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    InputFile,
    ReplyParameters,
    Update,
)
from telegram.constants import ParseMode
from telegram.error import InvalidToken, TelegramError
from telegram.ext import Application, ApplicationBuilder, ContextTypes, TypeHandler
from telegram.request import BaseRequest

from actorscope.channels._adapter import ChannelAdapter
from actorscope.channels._base import IgnoreReason, Ingress
from actorscope.channels._pipeline import Pipeline
from actorscope.channels._shared_dedup import SharedDedup
from actorscope.channels._writer_commands import WriterCommand
from actorscope.channels.telegram._commands import (
    handle_telegram_writer_command,
    is_telegram_admin,
)
from actorscope.channels.telegram._normalize import GENERAL_TOPIC_ID, inspect_update
from actorscope.channels.telegram._webhook import Fed, Webhook, WebhookServer
from actorscope.errors import ConfigError, ReplyError, StoreError
from actorscope.identity import Identity
from actorscope.messages import (
    Attachment,
    Button,
    InboundMessage,
    OutboundMessage,
    RunRequest,
)

__all__ = [
    "ALLOWED_UPDATES",
    "MAX_CALLBACK_DATA_BYTES",
    "MAX_CAPTION_LENGTH",
    "MAX_MESSAGE_LENGTH",
    "MAX_QUEUED_UPDATES",
    "TURN_WAIT",
    "WEBHOOK_CLAIM_CHANNEL",
    "IgnoredListener",
    "ReplyRoute",
    "TelegramRunner",
    "answer_click",
    "inline_keyboard",
    "reply_route",
    "send_outbound",
    "send_text",
    "text_parts",
]

_log = logging.getLogger("actorscope.channels.telegram")

#: Telegram's limit for one message's text; longer replies are sent in parts.
MAX_MESSAGE_LENGTH = 4096
#: Telegram's limit for a photo's or document's caption.
MAX_CAPTION_LENGTH = 1024
#: Telegram's limit for a button's callback data (UTF-8 bytes).
MAX_CALLBACK_DATA_BYTES = 64
#: The most a bot may upload: 10 MB for a photo, 50 MB for a document.
_UPLOAD_LIMITS = {"photo": 10_000_000, "document": 50_000_000}
_PARSE_MODES = {
    "plain": None,
    "markdown": ParseMode.MARKDOWN_V2,
    "html": ParseMode.HTML,
}
_STOP_TIMEOUT = 10.0
#: Webhook updates in hand (being handled, or waiting for their turn) before more are refused
#: (Telegram retries them).
MAX_QUEUED_UPDATES = 1000
#: Seconds a webhook request waits for its update's turn before it answers 200 anyway (the
#: turn goes on; Telegram gives up on a request after about a minute).
TURN_WAIT = 50.0
#: The update types the runner asks for: what ``inspect_update`` understands.
ALLOWED_UPDATES = (
    "message",
    "edited_message",
    "channel_post",
    "edited_channel_post",
    "callback_query",
    "my_chat_member",
)

#: The shared-dedup "channel" of the claim that elects the worker calling ``setWebhook``
#: (channel names cannot contain ``:``, so it never meets a real update's key).
WEBHOOK_CLAIM_CHANNEL = "telegram:set_webhook"

PTBApp = Application[Any, Any, Any, Any, Any, Any]


def inline_keyboard(rows: tuple[tuple[Button, ...], ...]) -> InlineKeyboardMarkup | None:
    """The Telegram keyboard of a reply's buttons (``None`` without any).

    :class:`ReplyError` when a button's data is longer than Telegram's 64 bytes.
    """
    if not rows:
        return None
    keyboard = []
    for row in rows:
        line = []
        for button in row:
            if button.url:
                line.append(InlineKeyboardButton(button.text, url=button.url))
                continue
            size = len(button.data.encode())
            if size > MAX_CALLBACK_DATA_BYTES:
                raise ReplyError(
                    f"button {button.text[:40]!r}: Telegram allows {MAX_CALLBACK_DATA_BYTES} "
                    f"bytes of callback data, this has {size}"
                )
            line.append(InlineKeyboardButton(button.text, callback_data=button.data))
        keyboard.append(line)
    return InlineKeyboardMarkup(keyboard)


def _upload(item: Attachment) -> InputFile | str:
    """A path's bytes (read now, bounded), or the URL for Telegram to fetch."""
    if item.path is None:
        return item.url
    content = item.read(limit=_UPLOAD_LIMITS[item.kind])
    return InputFile(content, filename=item.name)


#: Told ``(update_id, reason)`` for every update that reaches no handler (e.g. the sandbox).
IgnoredListener = Callable[[int, IgnoreReason], None]


class ReplyRoute(NamedTuple):
    """Where a reply goes on Telegram and how: the chat, its forum topic (``None`` for the
    General topic, which takes no thread id), the message it replies to, the parse mode."""

    chat: int
    thread: int | None
    reply_to: int | None
    parse_mode: str | None


def reply_route(msg: OutboundMessage) -> ReplyRoute:
    """The :class:`ReplyRoute` of ``msg`` (what every Telegram sender of actorscope sends by)."""
    return _route(msg.chat_id, msg.thread_id, msg.reply_to_message_id, _PARSE_MODES[msg.format])


def _route(chat_id: str, thread_id: str, reply_to: str, parse_mode: str | None) -> ReplyRoute:
    thread = int(thread_id) if thread_id.isdigit() else None
    if thread == GENERAL_TOPIC_ID:
        thread = None  # the General topic takes no message_thread_id
    reply = int(reply_to) if reply_to.isdigit() else None
    return ReplyRoute(int(chat_id), thread, reply, parse_mode)


def text_parts(text: str) -> list[str]:
    """``text`` in parts of :data:`MAX_MESSAGE_LENGTH` (an empty text is one space)."""
    text = text or " "
    return [
        text[start : start + MAX_MESSAGE_LENGTH]
        for start in range(0, len(text), MAX_MESSAGE_LENGTH)
    ]


async def send_outbound(bot: Bot, msg: OutboundMessage) -> None:
    """Send ``msg`` with ``bot``: to its chat and forum topic (General: no thread id), replying
    to ``reply_to_message_id`` when possible.

    Attachments go first (the last one captioned with the text when it fits), then the text
    in parts of :data:`MAX_MESSAGE_LENGTH`; the buttons go on the last message. Buttons and
    files are checked before anything is sent (:class:`ReplyError`). The one way actorscope
    sends a reply on Telegram (the runner, the PTB integration).
    """
    keyboard = inline_keyboard(msg.buttons)
    route = reply_route(msg)
    parse_mode = route.parse_mode
    # Files are read off the event loop (up to 50 MB each), all before the first call.
    uploads = [(item.kind, await asyncio.to_thread(_upload, item)) for item in msg.media]
    thread = route.thread
    reply = None
    if route.reply_to is not None:
        reply = ReplyParameters(message_id=route.reply_to, allow_sending_without_reply=True)
    chat = route.chat
    captioned = bool(uploads) and len(msg.content) <= MAX_CAPTION_LENGTH
    for index, (kind, upload) in enumerate(uploads):
        last = captioned and index == len(uploads) - 1
        send_file = bot.send_photo if kind == "photo" else bot.send_document
        await send_file(
            chat,
            upload,
            caption=(msg.content or None) if last else None,
            parse_mode=parse_mode if last else None,
            reply_markup=keyboard if last else None,
            message_thread_id=thread,
            reply_parameters=reply,
        )
        reply = None
    if captioned:
        return
    await _send_text(bot, route, msg.content, keyboard, reply)


async def send_text(bot: Bot, source: InboundMessage | RunRequest, text: str) -> None:
    """Send ``text`` as a plain reply to ``source``: what ``send_outbound`` sends for
    ``OutboundMessage.reply_to(source, text)``, without building that message."""
    route = _route(source.chat_id, source.thread_id, source.reply_target, None)
    reply = None
    if route.reply_to is not None:
        reply = ReplyParameters(message_id=route.reply_to, allow_sending_without_reply=True)
    await _send_text(bot, route, text, None, reply)


async def _send_text(
    bot: Bot,
    route: ReplyRoute,
    text: str,
    keyboard: InlineKeyboardMarkup | None,
    reply: ReplyParameters | None,
) -> None:
    # The text in parts, replying with the first and with the buttons on the last.
    parts = text_parts(text)
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        await bot.send_message(
            chat_id=route.chat,
            text=part,
            parse_mode=route.parse_mode,
            reply_markup=keyboard if last else None,
            message_thread_id=route.thread,
            reply_parameters=reply if index == 0 else None,
        )


async def answer_click(update: Update) -> None:
    """Answer the button click ``update`` carries, if any (stops the button's spinner).

    What the pipeline's ``acknowledge`` step does on Telegram; a failure is only logged.
    """
    if update.callback_query is None:
        return
    try:
        await update.callback_query.answer()
    except TelegramError as exc:
        _log.warning("telegram.answer_callback_query failed: %s", exc)


class TelegramRunner(ChannelAdapter):
    """Receives one bot's updates and feeds them to ``pipeline`` (a Telegram channel's, from
    the composition root); also the sender of the bot's replies."""

    def __init__(
        self,
        pipeline: Pipeline,
        *,
        token: str,
        base_url: str | None = None,
        request: BaseRequest | None = None,
        get_updates_request: BaseRequest | None = None,
        poll_timeout: int = 10,
        webhook: Webhook | None = None,
        max_queued: int = MAX_QUEUED_UPDATES,
        on_ignored: IgnoredListener | None = None,
    ) -> None:
        config = pipeline.config
        if config.platform != "telegram":
            raise ConfigError(f"a Telegram runner needs a telegram config, not {config.platform}")
        if max_queued < 1:
            raise ConfigError(f"max_queued must be at least 1, got {max_queued}")
        self.name = config.name
        self.config = config
        self._poll_timeout = poll_timeout
        builder = ApplicationBuilder().token(token)
        if base_url is not None:
            builder = builder.base_url(base_url).base_file_url(
                base_url.replace("/bot", "/file/bot")
            )
        if request is not None:
            builder = builder.request(request)
        if get_updates_request is not None:
            builder = builder.get_updates_request(get_updates_request)
        self.app: PTBApp = builder.build()
        self.app.add_handler(TypeHandler(Update, self._on_update))
        self.app.add_error_handler(self._on_error)
        self.pipeline = pipeline
        self.writers = pipeline.writers
        self.webhook = webhook
        self.webhook_server: WebhookServer | None = None
        self._max_queued = max_queued
        self._in_hand = 0
        self._on_ignored = on_ignored
        self._bot_username = ""
        self._started = False

    @property
    def shared_dedup(self) -> SharedDedup | None:
        """The pipeline's shared claim store, if any."""
        return self.pipeline.shared_dedup

    @property
    def bot(self) -> Bot:
        """The PTB bot (Bot API calls)."""
        bot: Bot = self.app.bot
        return bot

    @property
    def native(self) -> Bot:
        """The PTB bot: what a handler's ``BotServices.native(telegram.Bot)`` gives."""
        return self.bot

    async def initialize(self) -> None:
        """``getMe`` and get ready to take updates (:meth:`handle_update`), not receiving yet.

        :meth:`start` begins with it; the testing kit calls only this and hands updates in.
        """
        if self._started:
            raise ConfigError("this Telegram runner is already running")
        await self.app.initialize()
        self._started = True
        self._bot_username = self.app.bot.username or ""

    async def start(self) -> None:
        """``getMe``, then start polling or the webhook server; returns once receiving.

        A token the Bot API refuses, or a Bot API it cannot reach, is one
        :class:`~actorscope.errors.ConfigError` naming the channel.
        """
        try:
            await self._start()
        except InvalidToken as exc:
            raise ConfigError(f"{self.name}: the bot token was rejected: {exc}") from None
        except TelegramError as exc:
            raise ConfigError(f"{self.name}: cannot reach the Bot API: {exc}") from None

    async def _start(self) -> None:
        await self.initialize()
        if self.webhook is not None:
            await self._start_webhook(self.webhook)
            return
        updater = self.app.updater
        if updater is None:  # pragma: no cover - ApplicationBuilder always makes one
            raise ConfigError("the Telegram application has no updater")
        await updater.start_polling(
            poll_interval=0.0, timeout=self._poll_timeout, allowed_updates=list(ALLOWED_UPDATES)
        )
        await self.app.start()
        _log.info("telegram.started bot=@%s channel=%s", self._bot_username, self.name)

    async def _start_webhook(self, webhook: Webhook) -> None:
        await self.app.start()
        self.webhook_server = WebhookServer(webhook, self.feed_webhook)
        await self.webhook_server.start()
        if await self._elected_to_set_webhook(webhook):
            await self.app.bot.set_webhook(
                url=webhook.url,
                secret_token=webhook.secret_token,
                allowed_updates=list(ALLOWED_UPDATES),
            )
            _log.info("telegram.webhook_set url=%s", webhook.url)
        _log.info("telegram.started bot=@%s channel=%s mode=webhook", self._bot_username, self.name)

    async def _elected_to_set_webhook(self, webhook: Webhook) -> bool:
        """Explicit ``set_webhook``, else the first worker to claim this (url, secret) pair."""
        if webhook.set_webhook is not None:
            return webhook.set_webhook
        if self.shared_dedup is None:
            return True
        digest = hashlib.sha256(f"{webhook.url}\n{webhook.secret_token}".encode()).hexdigest()
        bot_id = str(self.app.bot.id)
        try:
            return await self.shared_dedup.claim(WEBHOOK_CLAIM_CHANNEL, bot_id, digest[:32])
        except StoreError as exc:
            _log.warning("telegram.webhook_election_failed, setting it here: %s", exc)
            return True  # setWebhook with the same settings is harmless when repeated

    async def feed_webhook(self, data: Mapping[str, Any]) -> Fed:
        """Handle one update received by the webhook; what to answer Telegram.

        The update goes through :meth:`handle_update` now, and with a turn ledger the answer
        waits (at most :data:`TURN_WAIT` s) until its turn is over, so a worker that dies with
        it never acknowledged it. Busy (Telegram delivers it again later, to this or another
        worker): past ``max_queued`` updates in hand, or another worker is handling it now.
        """
        update_id = data.get("update_id")
        if not isinstance(update_id, int) or isinstance(update_id, bool):
            return Fed.NOT_AN_UPDATE
        try:
            update = Update.de_json(dict(data), self.app.bot)
        except (KeyError, TypeError, ValueError, AttributeError):
            return Fed.NOT_AN_UPDATE
        if self._in_hand >= self._max_queued:
            _log.warning("telegram.webhook_busy in_hand=%d", self._in_hand)
            return Fed.BUSY
        self._in_hand += 1
        try:
            return await self._feed(update)
        finally:
            self._in_hand -= 1

    async def _feed(self, update: Update) -> Fed:
        try:
            result = await self.handle_update(update, own_task=True)  # this request's task
        except StoreError as exc:  # the store is away: Telegram delivers it again later
            _log.warning("telegram.update_deferred update_id=%d: %s", update.update_id, exc)
            return Fed.BUSY
        except Exception as exc:  # as PTB's error handler would: logged, the update dropped
            _log.error("telegram.update_failed: %r", exc, exc_info=exc)
            return Fed.ACCEPTED
        if result.reason is IgnoreReason.CLAIM_HELD:
            return Fed.BUSY
        ledger = self.pipeline.ledger
        message = result.message if result.admitted else None
        if ledger is not None and message is not None and not await ledger.wait(message, TURN_WAIT):
            _log.warning(
                "telegram.webhook_turn_slow update_id=%d: answered before its turn ended",
                update.update_id,
            )
        return Fed.ACCEPTED

    def status(self) -> str:
        """In webhook mode, where its receiver listens; ``""`` when it polls."""
        server = self.webhook_server
        return "" if server is None else f"webhook receiver on {server.local_url}"

    async def stop_receiving(self) -> None:
        """Stop polling (or the webhook server) and process what was fetched; can still send."""
        server, self.webhook_server = self.webhook_server, None
        if server is not None:
            try:
                await asyncio.wait_for(server.stop(), _STOP_TIMEOUT)
            except TimeoutError:
                _log.warning("telegram.stop webhook server timed out")
        updater = self.app.updater
        steps = []
        if updater is not None and updater.running:
            steps.append(updater.stop())
        if self.app.running:
            steps.append(self.app.stop())
        await self._bounded(steps)

    async def stop(self) -> None:
        """Stop receiving, then shut the application down; every step bounded."""
        if not self._started:
            return
        await self.stop_receiving()
        self._started = False
        await self._bounded([self.app.shutdown()])

    async def _bounded(self, steps: list[Coroutine[Any, Any, None]]) -> None:
        for step in steps:
            try:
                await asyncio.wait_for(step, _STOP_TIMEOUT)
            except (TimeoutError, TelegramError) as exc:
                _log.warning("telegram.stop step failed: %r", exc)

    async def send(self, msg: OutboundMessage) -> None:
        """Send to the chat and forum topic (General: no thread id), replying when possible."""
        await send_outbound(self.app.bot, msg)

    async def send_text(self, source: InboundMessage | RunRequest, text: str) -> None:
        """Send ``text`` as a plain reply to ``source`` (:func:`send_text`)."""
        await send_text(self.app.bot, source, text)

    async def handle_update(self, update: Update, *, own_task: bool = False) -> Ingress:
        """Normalise one update and take it through the pipeline (what polling calls for each).

        ``own_task``: the caller is a task of this update's own (a webhook request), so a
        pipeline with ``run_here`` may run the turn in it; polling hands updates in one after
        another, where a long turn would hold up every chat.
        """
        ingress = inspect_update(
            update,
            agent_key=self.pipeline.agent_key,
            bot_username=self._bot_username or None,
            channel=self.name,
            ignore_bots=self.pipeline.normaliser_drops_non_persons,
        )

        async def run_command(command: WriterCommand, identity: Identity) -> str | None:
            if update.message is None:
                return None  # an edited or channel command: act on the original message only
            return await handle_telegram_writer_command(
                self.writers,
                command,
                update.message,
                identity,
                chat_admin=functools.partial(is_telegram_admin, self.app.bot),
                agent_id=identity.agent_id,
                tenant_id=identity.tenant_id,
            )

        result = await self.pipeline.process(
            ingress,
            bot_username=self._bot_username or None,
            run_command=run_command,
            acknowledge=functools.partial(answer_click, update),
            sender=self,
            own_task=own_task,
        )
        self._ignored(update, result.reason)
        return result

    def _ignored(self, update: Update, reason: IgnoreReason | None) -> None:
        if self._on_ignored is not None and reason is not None:
            self._on_ignored(update.update_id, reason)

    async def _on_update(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        await self.handle_update(update)

    async def _on_error(self, update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
        _log.error("telegram.update_failed: %r", context.error, exc_info=context.error)

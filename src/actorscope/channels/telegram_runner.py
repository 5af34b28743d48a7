"""A running Telegram bot: a python-telegram-bot ``Application`` polling for updates.

Each update goes through :func:`~actorscope.channels.telegram.inspect_update`, the duplicate
filter and :func:`~actorscope.channels.policy.admit`; writer commands are answered here (they
never reach the handler); everything else is published to the host's bus. Replies
(:meth:`TelegramRunner.send`) go to the message's chat and forum topic. ``base_url`` points the
bot at another Bot API server (the sandbox emulator); tests can hand in PTB ``BaseRequest``
objects instead of talking HTTP.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from telegram import Bot, ReplyParameters, Update
from telegram.error import TelegramError
from telegram.ext import Application, ApplicationBuilder, ContextTypes, TypeHandler
from telegram.request import BaseRequest

from actorscope.channels.adapter import ChannelAdapter
from actorscope.channels.base import META_COMMAND
from actorscope.channels.config import ChannelConfig
from actorscope.channels.dedup import DedupCache
from actorscope.channels.migration import move_grants
from actorscope.channels.policy import admit
from actorscope.channels.telegram import GENERAL_TOPIC_ID, inspect_update
from actorscope.channels.telegram_commands import (
    handle_telegram_writer_command,
    telegram_admin_check,
)
from actorscope.channels.writer_commands import writer_command_named
from actorscope.errors import ConfigError
from actorscope.messages import OutboundMessage
from actorscope.permissions import GrantStore
from actorscope.permissions.writers import WriterManager
from actorscope.propagation.bus import MessageBus

__all__ = ["ALLOWED_UPDATES", "MAX_MESSAGE_LENGTH", "TelegramRunner"]

_log = logging.getLogger("actorscope.channels.telegram")

#: Telegram's limit for one message's text; longer replies are sent in parts.
MAX_MESSAGE_LENGTH = 4096
_STOP_TIMEOUT = 10.0
#: The update types the runner asks for: what ``inspect_update`` understands.
ALLOWED_UPDATES = (
    "message",
    "edited_message",
    "channel_post",
    "edited_channel_post",
    "callback_query",
    "my_chat_member",
)

PTBApp = Application[Any, Any, Any, Any, Any, Any]


class TelegramRunner(ChannelAdapter):
    """Polls one bot token and feeds the bus; also the sender of the bot's replies."""

    def __init__(
        self,
        config: ChannelConfig,
        *,
        token: str,
        bus: MessageBus,
        grants: GrantStore,
        agent_key: str = "main",
        agent_id: str | None = None,
        tenant_id: str | None = None,
        owners: tuple[str, ...] = (),
        base_url: str | None = None,
        request: BaseRequest | None = None,
        get_updates_request: BaseRequest | None = None,
        poll_timeout: int = 10,
    ) -> None:
        if config.platform != "telegram":
            raise ConfigError(f"a Telegram runner needs a telegram config, not {config.platform}")
        self.name = config.name
        self.config = config
        self._bus = bus
        self._agent_key = agent_key
        self._agent_id = agent_id
        self._tenant_id = tenant_id
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
        self.writers = WriterManager(
            grants,
            owners=(*config.owners, *owners),
            is_platform_admin=telegram_admin_check(self.app.bot),
        )
        self.dedup = DedupCache()
        self._bot_username = ""
        self._started = False

    @property
    def bot(self) -> Bot:
        """The PTB bot (Bot API calls)."""
        bot: Bot = self.app.bot
        return bot

    async def start(self) -> None:
        """``getMe``, then start long polling; returns once updates are being fetched."""
        if self._started:
            raise ConfigError("this Telegram runner is already running")
        await self.app.initialize()
        self._started = True
        self._bot_username = self.app.bot.username or ""
        updater = self.app.updater
        if updater is None:  # pragma: no cover - ApplicationBuilder always makes one
            raise ConfigError("the Telegram application has no updater")
        await updater.start_polling(
            poll_interval=0.0, timeout=self._poll_timeout, allowed_updates=list(ALLOWED_UPDATES)
        )
        await self.app.start()
        _log.info("telegram.started bot=@%s channel=%s", self._bot_username, self.name)

    async def stop(self) -> None:
        """Stop polling and the application; every step bounded."""
        if not self._started:
            return
        self._started = False
        updater = self.app.updater
        steps = []
        if updater is not None and updater.running:
            steps.append(updater.stop())
        if self.app.running:
            steps.append(self.app.stop())
        steps.append(self.app.shutdown())
        for step in steps:
            try:
                await asyncio.wait_for(step, _STOP_TIMEOUT)
            except (TimeoutError, TelegramError) as exc:
                _log.warning("telegram.stop step failed: %r", exc)

    async def send(self, msg: OutboundMessage) -> None:
        """Send to the chat and forum topic (General: no thread id), replying when possible."""
        thread = int(msg.thread_id) if msg.thread_id.isdigit() else None
        if thread == GENERAL_TOPIC_ID:
            thread = None  # the General topic takes no message_thread_id
        reply = None
        if msg.reply_to_message_id.isdigit():
            reply = ReplyParameters(
                message_id=int(msg.reply_to_message_id), allow_sending_without_reply=True
            )
        text = msg.content or " "
        for start in range(0, len(text), MAX_MESSAGE_LENGTH):
            await self.app.bot.send_message(
                chat_id=int(msg.chat_id),
                text=text[start : start + MAX_MESSAGE_LENGTH],
                message_thread_id=thread,
                reply_parameters=reply if start == 0 else None,
            )

    async def handle_update(self, update: Update) -> None:
        """Normalise, filter and route one update (what polling calls for each)."""
        ingress = inspect_update(
            update,
            agent_key=self._agent_key,
            bot_username=self._bot_username or None,
            channel=self.name,
            ignore_bots=self.config.ignore_bots,
        )
        if ingress.migration is not None:
            moved = await move_grants(self.writers.store, ingress.migration, moved_by="migration")
            _log.info("telegram.grants_moved count=%d to %s", moved, ingress.migration.new_scope)
        message = ingress.message
        if message is None or self.dedup.seen_message(message):
            return
        admission = admit(message, self.config, bot_username=self._bot_username or None)
        if admission.message is None:
            _log.debug("telegram.not_admitted reason=%s", admission.reason)
            return
        message = admission.message
        command = writer_command_named(message.metadata.get(META_COMMAND, ""))
        if command is not None:
            if update.message is None:
                return  # an edited or channel command: act on the original message only
            text = await handle_telegram_writer_command(
                self.writers,
                command,
                update.message,
                message.identity(),
                agent_id=self._agent_id,
                tenant_id=self._tenant_id,
            )
            await self.send(
                OutboundMessage(
                    channel=message.channel,
                    chat_id=message.chat_id,
                    content=text,
                    thread_id=message.thread_id,
                    reply_to_message_id=message.message_id,
                )
            )
            return
        if update.callback_query is not None:
            try:
                await update.callback_query.answer()  # stops the button's spinner
            except TelegramError as exc:
                _log.warning("telegram.answer_callback_query failed: %s", exc)
        await self._bus.publish_from_channel(message)

    async def _on_update(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        await self.handle_update(update)

    async def _on_error(self, update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
        _log.error("telegram.update_failed: %r", context.error, exc_info=context.error)

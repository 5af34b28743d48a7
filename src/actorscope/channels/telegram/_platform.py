"""Telegram's side of the platform contract (:class:`~actorscope.channels.Platform`)."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from telegram import Bot, Message, Update

from actorscope.channels._base import Ingress
from actorscope.channels._pipeline import Pipeline
from actorscope.channels._writer_commands import WriterCommand
from actorscope.channels.telegram import _commands, _normalize, _runner
from actorscope.channels.telegram._runner import ReplyRoute, TelegramRunner
from actorscope.channels.telegram._section import TelegramSection
from actorscope.errors import ConfigError
from actorscope.identity import Identity
from actorscope.messages import OutboundMessage
from actorscope.permissions import WriterManager
from actorscope.platforms import BuiltInPlatform, PlatformSpec, platform_spec

__all__ = ["PLATFORM", "TOKEN", "Telegram"]

#: A Telegram bot token as @BotFather issues it: the bot's numeric id, ':', ~35 URL-safe chars.
TOKEN = re.compile(r"[0-9]{1,20}:[A-Za-z0-9_-]{30,64}")


class Telegram:
    """Telegram through python-telegram-bot: Bot API updates, a polling or webhook runner.

    Besides the platform contract, what the PTB and aiogram integrations need of Telegram
    to do what ``actorscope run`` does: the updates it asks for, an ``Update`` normalised
    with the bot's username (:meth:`inspect_update`), a reply sent (:meth:`send_outbound`,
    or :meth:`reply_route` and :meth:`text_parts` for a framework's own bot), and the writer
    commands with who administers a chat (:meth:`writer_command`).
    """

    command_prefixes = ""  # the normaliser names /commands itself
    #: The update types the runner asks for: what :meth:`inspect_update` understands.
    allowed_updates = _runner.ALLOWED_UPDATES
    event_name = "a Telegram Update (update_id)"
    simulator = "actorscope.testing:TelegramSim"
    sandbox = "actorscope.sandbox._telegram.sandbox:SANDBOX"
    section = TelegramSection

    @property
    def spec(self) -> PlatformSpec:
        """Telegram's registration: integer ids, forum topics."""
        spec = platform_spec(BuiltInPlatform.TELEGRAM)
        if spec is None:  # built in: only a broken install has it missing
            raise ConfigError(f"{BuiltInPlatform.TELEGRAM} is not a registered platform")
        return spec

    def inspect(
        self, event: Mapping[str, Any], *, agent_key: str = "main", channel: str = ""
    ) -> Ingress:
        """:meth:`inspect_update` of the Update's JSON."""
        return _normalize.inspect_update(
            event, agent_key=agent_key, channel=channel or BuiltInPlatform.TELEGRAM.value
        )

    def recognizes(self, event: Mapping[str, Any]) -> bool:
        """An Update has an ``update_id``."""
        return "update_id" in event

    def token_problem(self, token: str) -> str:
        """A token is ``<bot id>:<secret>`` as @BotFather issues it."""
        if TOKEN.fullmatch(token) is not None:
            return ""
        return (
            "does not hold a Telegram bot token (<bot id>:<secret> as @BotFather gives it, "
            "e.g. 123456789:AAH...)"
        )

    def runner(self, pipeline: Pipeline, *, token: str, **options: Any) -> TelegramRunner:
        """A :class:`TelegramRunner` (``base_url``, ``webhook``, ... as its options)."""
        return TelegramRunner(pipeline, token=token, **options)

    def clear_caches(self) -> None:
        """Forget the memoised identities and session keys (a benchmark's never-seen updates).

        Never needed for correctness: both are pure functions of the ids they are keyed by.
        """
        _normalize.clear_caches()

    def inspect_update(
        self,
        update: Update | Mapping[str, Any],
        *,
        agent_key: str = "main",
        bot_username: str | None = None,
        channel: str = BuiltInPlatform.TELEGRAM.value,
        ignore_bots: bool = True,
    ) -> Ingress:
        """Normalise an ``Update`` (or its JSON dict) as the bot ``bot_username`` sees it;
        never raises on a malformed update (a bad ``agent_key`` or ``channel`` is the
        caller's ``IdentityError``)."""
        return _normalize.inspect_update(
            update,
            agent_key=agent_key,
            bot_username=bot_username,
            channel=channel,
            ignore_bots=ignore_bots,
        )

    async def send_outbound(self, bot: Bot, msg: OutboundMessage) -> None:
        """Send ``msg`` with the PTB ``bot`` the way the runner does (files first, the text in
        parts, the buttons on the last message; :class:`~actorscope.errors.ReplyError` before
        any call for what Telegram cannot take)."""
        await _runner.send_outbound(bot, msg)

    def reply_route(self, msg: OutboundMessage) -> ReplyRoute:
        """Where ``msg`` goes and how: its chat, forum topic (``None`` for General), the
        message it replies to and the parse mode (``chat``, ``thread``, ``reply_to``,
        ``parse_mode``)."""
        return _runner.reply_route(msg)

    def text_parts(self, text: str) -> list[str]:
        """``text`` in parts Telegram takes (an empty text is one space)."""
        return _runner.text_parts(text)

    async def is_chat_admin(self, bot: Bot, identity: Identity) -> bool:
        """Whether the Bot API (``getChatMember``, asked with the PTB ``bot``) says the
        sender administers the chat; a failed call means "not an admin" (logged)."""
        return await _commands.is_telegram_admin(bot, identity)

    async def asks_chat_admin(
        self,
        status_of: Callable[[int, int], Awaitable[str]],
        identity: Identity,
        errors: tuple[type[Exception], ...],
    ) -> bool:
        """:meth:`is_chat_admin` with another framework's bot: ``status_of(chat_id,
        user_id)`` is its ``getChatMember`` status; a call failing with one of ``errors``
        means "not an admin" (logged): writer management fails closed."""
        return await _commands.asks_chat_admin(status_of, identity, errors)

    async def writer_command(
        self,
        manager: WriterManager,
        command: WriterCommand,
        message: Message,
        identity: Identity,
        *,
        chat_admin: Callable[[Identity], Awaitable[bool]],
        agent_id: str | None,
        tenant_id: str | None = None,
    ) -> str:
        """Run the writer command ``command``, sent as ``message`` by ``identity``, and return
        the reply text: its target is the author of the replied-to message; ``chat_admin``
        is asked whether the sender administers the group, only when that can matter."""
        return await _commands.handle_telegram_writer_command(
            manager,
            command,
            message,
            identity,
            chat_admin=chat_admin,
            agent_id=agent_id,
            tenant_id=tenant_id,
        )


#: The contract the registry names (``actorscope.channels.telegram:PLATFORM``).
PLATFORM = Telegram()

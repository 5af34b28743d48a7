"""Telegram's side of the platform contract (:class:`~actorscope.channels.Platform`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from actorscope.channels._base import Ingress
from actorscope.channels._pipeline import Pipeline
from actorscope.channels.telegram import _commands, _normalize, _runner
from actorscope.channels.telegram._runner import TelegramRunner
from actorscope.channels.telegram._section import TelegramSection
from actorscope.errors import ConfigError
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
    probe_world = "actorscope.testing.telegram:PROBE"
    sandbox = "actorscope.sandbox.telegram:SANDBOX"
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

    # What the PTB and aiogram integrations and the benchmarks use, as the functions
    # themselves: one signature and docstring each, and no extra call on an update's path.
    clear_caches = staticmethod(_normalize.clear_caches)
    inspect_update = staticmethod(_normalize.inspect_update)
    normalize_update = staticmethod(_normalize.normalize_update)
    send_outbound = staticmethod(_runner.send_outbound)
    reply_route = staticmethod(_runner.reply_route)
    text_parts = staticmethod(_runner.text_parts)
    is_chat_admin = staticmethod(_commands.is_telegram_admin)
    asks_chat_admin = staticmethod(_commands.asks_chat_admin)
    writer_command = staticmethod(_commands.handle_telegram_writer_command)
    #: A message's identity from Telegram's chat type (``private``, ``group``, ...).
    identity = staticmethod(_normalize.telegram_identity)


#: The contract the registry names (``actorscope.channels.telegram:PLATFORM``).
PLATFORM = Telegram()

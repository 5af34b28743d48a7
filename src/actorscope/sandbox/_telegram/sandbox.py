"""Telegram's sandbox (the platform contract's ``sandbox`` member): the Bot API emulator on
127.0.0.1, populated, with its console, for ``actorscope run --sandbox`` and ``actorscope
sandbox``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any

from actorscope.errors import ConfigError
from actorscope.sandbox._member import Output, bounded
from actorscope.sandbox._telegram.emulator import BotApiEmulator
from actorscope.sandbox._telegram.server import BotApiServer

if TYPE_CHECKING:
    from actorscope.channels import ChannelSection

__all__ = ["SANDBOX", "TelegramSandbox", "TelegramSession"]


class TelegramSession:
    """The Bot API emulator, served: a runner polls it at ``base_url``."""

    def __init__(self, emulator: BotApiEmulator, server: BotApiServer, out: Output) -> None:
        self.emulator = emulator
        self.server = server
        self.console = server.console(out)

    @property
    def token(self) -> str:
        """The emulator's bot token."""
        return self.emulator.token

    def runner_options(self) -> dict[str, Any]:
        """Poll the emulator, briefly, and show on the console why the bot ignored an update."""
        return {
            "base_url": self.server.base_url,
            "poll_timeout": 1,
            "on_ignored": self.console.show_ignored,
        }

    async def ready(self) -> None:
        """The runner's first ``getUpdates`` has arrived."""
        await bounded(self.emulator.queue.first_poll(), "the bot has not polled the emulator")

    async def drained(self) -> None:
        """The bot has fetched every typed update."""
        await bounded(self.emulator.queue.fetched(), "the bot left updates unfetched")

    def connect_lines(self) -> list[str]:
        """How python-telegram-bot and aiogram bots connect."""
        return [
            "connect:  ApplicationBuilder().token(TOKEN).base_url(BASE_URL)",
            "aiogram:  Bot(TOKEN, session=AiohttpSession(api=TelegramAPIServer.from_base(ROOT)))",
        ]

    async def bot_process(self, command: Sequence[str], lines: AsyncIterator[str]) -> str:
        """Not here: a bot connects to the printed URLs itself."""
        raise ConfigError(SANDBOX.command_problem(command))


class TelegramSandbox:
    """Telegram's sandbox: the Bot API emulator and its console."""

    def token_problem(self, token: str) -> str:
        """The emulator takes any ``<bot id>:<secret>``."""
        bot_id, sep, secret = token.partition(":")
        if sep and bot_id.isdigit() and secret:
            return ""
        return "must look like <bot id>:<secret>, e.g. 123456:abc"

    def command_problem(self, command: Sequence[str]) -> str:
        """It runs no bot: a bot points itself at the printed URLs."""
        return (
            "point a PTB bot at the printed base_url and token, or an aiogram Bot at the "
            "printed root, instead"
        )

    async def open(
        self,
        stack: AsyncExitStack,
        section: ChannelSection | None,
        out: Output,
        *,
        port: int = 0,
        token: str | None = None,
    ) -> TelegramSession:
        """The populated emulator served on 127.0.0.1 until ``stack`` closes; its banner."""
        emulator = BotApiEmulator(token)
        emulator.populate()
        server = await stack.enter_async_context(BotApiServer(emulator, port=port))
        session = TelegramSession(emulator, server, out)
        stack.callback(session.console.close)
        if section is None:
            out("actorscope sandbox: a Telegram Bot API emulator (offline)")
            out(f"base_url: {server.base_url}")
            out(f"token:    {emulator.token}")
            out(f"bot:      @{emulator.bot.username}")
            out(f"root:     {server.root_url}")
            return session
        out("actorscope run --sandbox: Telegram Bot API emulator (offline)")
        out(f"base_url: {server.base_url}")
        out(f"bot:      @{emulator.bot.username}")
        if getattr(section, "webhook", None) is not None:
            out("webhook:  not used in --sandbox (the emulator is polled)")
        return session


#: Telegram's sandbox (``Platform.sandbox``), exported at :mod:`actorscope.sandbox.telegram`.
SANDBOX = TelegramSandbox()

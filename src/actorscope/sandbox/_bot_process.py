"""A user's discord.py bot, unmodified, in its own process, talking to the Discord emulator.

:meth:`BotProcess.start` runs the command with the folder of
:mod:`actorscope.sandbox._bootstrap` first on ``PYTHONPATH`` (its ``sitecustomize`` points
discord.py at the emulator before the bot's code runs), the emulator's addresses in the
environment, and the emulator's token as ``DISCORD_BOT_TOKEN`` and ``DISCORD_TOKEN``. The
bot's output is printed line by line, prefixed ``(bot)``; it reads no input. It runs in its
own process group, so a Ctrl-C at the terminal reaches the sandbox alone, and stopping sends
it one SIGINT (discord.py's ``bot.run`` closes cleanly on it), then SIGTERM, then SIGKILL,
each after a bounded wait.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import ClassVar

from actorscope.errors import ConfigError
from actorscope.sandbox._bootstrap import sitecustomize
from actorscope.sandbox._emulator import DiscordEmulator
from actorscope.sandbox._prompt import SETTLE, until_quiet

__all__ = ["BotProcess"]

#: Seconds the bot has to stop after SIGINT, then after SIGTERM.
_STOP = (5.0, 2.0)


class BotProcess:
    """The bot's process, its printed output, and a bounded stop."""

    #: Where a discord.py bot usually reads its token; the bot process gets the emulator's.
    TOKEN_VARIABLES: ClassVar[tuple[str, ...]] = ("DISCORD_BOT_TOKEN", "DISCORD_TOKEN")

    def __init__(self, process: asyncio.subprocess.Process, pump: asyncio.Task[None]) -> None:
        self.process = process
        self._pump = pump

    @classmethod
    async def start(
        cls, command: Sequence[str], emulator: DiscordEmulator, out: Callable[[str], None]
    ) -> BotProcess:
        """Run ``command`` pointed at ``emulator``; a command that cannot start is one
        ConfigError."""
        if not command:
            raise ConfigError("give the bot's command after --, e.g. -- python bot.py")
        bootstrap = str(Path(sitecustomize.__file__).parent)
        inherited = os.environ.get("PYTHONPATH", "")
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [bootstrap, inherited])),
            sitecustomize.API: emulator.api_url,
            sitecustomize.GATEWAY: emulator.gateway_url,
            **dict.fromkeys(cls.TOKEN_VARIABLES, emulator.world.token),
        }
        try:
            process = await asyncio.create_subprocess_exec(
                *command,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                env=env,
                # Its own process group: a Ctrl-C at the terminal reaches the sandbox only,
                # which stops the bot with one SIGINT.
                process_group=0,
            )
        except OSError as exc:
            raise ConfigError(f"cannot run {command[0]}: {exc.strerror or exc}") from None
        stream = process.stdout
        if stream is None:  # pragma: no cover - a pipe was asked for just above
            raise RuntimeError("the bot's output pipe did not open")
        pump = asyncio.create_task(_print(stream, out), name="sandbox-bot-output")
        return cls(process, pump)

    @property
    def pid(self) -> int:
        """The process id."""
        return self.process.pid

    async def wait(self) -> int:
        """Until the process ends (and its output is printed); its exit status."""
        status = await self.process.wait()
        await self._pump
        return status

    async def stop(self) -> int:
        """Stop the bot: SIGINT, then SIGTERM, then SIGKILL; its exit status."""
        for sig, grace in zip((signal.SIGINT, signal.SIGTERM), _STOP, strict=True):
            if self.process.returncode is not None:
                break
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(sig)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self.process.wait()), grace)
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
        return await self.wait()

    @staticmethod
    async def settle_quietly(emulator: DiscordEmulator) -> None:
        """Until the bot has made no REST request for a moment (at most a few seconds): a bot in
        another process says nothing when it is done with an event, so a typed line waits for
        its answer this way before the next one is sent."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(SETTLE):
                await until_quiet(lambda: len(emulator.requests))


async def _print(stream: asyncio.StreamReader, out: Callable[[str], None]) -> None:
    """Print the bot's output lines, prefixed, until it closes."""
    while line := await stream.readline():
        out("(bot) " + line.decode("utf-8", "replace").rstrip("\n"))

"""Discord's sandbox (the platform contract's ``sandbox`` member): the gateway + REST emulator
on 127.0.0.1, populated with the sandbox world, with its console, for ``actorscope run
--sandbox`` (the runner connects to it in process) and ``actorscope sandbox`` (a bot connects
from its own process)."""

from __future__ import annotations

import asyncio
import logging
import shlex
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any

from actorscope.channels import IgnoreReason, Ingress
from actorscope.sandbox._bot_process import BotProcess
from actorscope.sandbox._connect import discord_pointed_at
from actorscope.sandbox._console import DiscordConsole
from actorscope.sandbox._emulator import DiscordEmulator
from actorscope.sandbox._member import SANDBOX_WAIT, Output, bounded
from actorscope.sandbox._world import sandbox_world

if TYPE_CHECKING:
    from actorscope.channels import ChannelSection

__all__ = ["SANDBOX", "DiscordSandbox", "DiscordSession"]

_log = logging.getLogger("actorscope.sandbox")

#: Seconds a bot process has to connect to the emulator.
BOT_CONNECTS = 30.0


class _Taken:
    """The Discord runner's results, so the prompt waits until the bot has taken an event in.

    The prompt sends one event at a time and waits here, so the first result that is not the
    bot's own message belongs to it (a result without a message, such as a webhook's, too).
    """

    def __init__(self, out: Output) -> None:
        self._out = out
        self._results: asyncio.Queue[Ingress] = asyncio.Queue()

    def told(self, result: Ingress) -> None:
        """The runner's listener: every event's result."""
        if result.reason is not IgnoreReason.OWN_MESSAGE:
            self._results.put_nowait(result)

    async def settle(self, event_id: int) -> None:
        """Wait (bounded) for the result of event ``event_id``; say when the bot ignored it."""
        try:
            result = await asyncio.wait_for(self._match(str(event_id)), SANDBOX_WAIT)
        except TimeoutError:
            _log.warning("sandbox: the Discord bot has not taken event %s in", event_id)
            return
        if result.reason is not None:
            self._out(f"  <- discord event {event_id} ignored by the bot: {result.reason}")

    async def _match(self, event_id: str) -> Ingress:
        # Bounded by settle's timeout; an earlier event's late result is skipped.
        while True:
            result = await self._results.get()
            if result.message is None or result.message.message_id == event_id:
                return result


class DiscordSession:
    """The Discord emulator, running: a runner in this process (``actorscope run``) is
    pointed at it, and its console waits until the runner has taken each typed event in."""

    def __init__(self, emulator: DiscordEmulator, out: Output, *, runner: bool) -> None:
        self.emulator = emulator
        self._out = out
        self._taken = _Taken(out) if runner else None
        settle = None if self._taken is None else self._taken.settle
        self.console = DiscordConsole(emulator, out, settle=settle)

    @property
    def token(self) -> str:
        """The sandbox world's bot token."""
        return self.emulator.world.token

    def runner_options(self) -> dict[str, Any]:
        """Tell the console each event's result (one session sees every guild: no shards)."""
        return {"on_result": None if self._taken is None else self._taken.told}

    async def ready(self) -> None:
        """The runner's gateway session is open and its writer slash commands are synced."""

        async def connected() -> None:
            await self.emulator.wait_connected()
            await self.emulator.wait_for(lambda: self.emulator.commands.get(None))

        await bounded(connected(), "the Discord bot has not connected")

    async def drained(self) -> None:
        """Nothing to wait for: the console settled each event as it was typed."""

    def connect_lines(self) -> list[str]:
        """How to run one's own bot pointed here."""
        return [
            "connect:   actorscope sandbox --platform discord -- python bot.py"
            "  (runs your bot pointed here)"
        ]

    async def bot_process(self, command: Sequence[str], lines: AsyncIterator[str]) -> str:
        """Run the bot ``command`` in its own process, pointed here, with the prompt reading
        ``lines`` once it has connected, until either ends; ``""``, or why the bot process
        ended first (or never connected), in a sentence."""
        names = " and ".join(BotProcess.TOKEN_VARIABLES)
        self._out(f"running:   {shlex.join(command)}  (token in {names})")
        bot = await BotProcess.start(command, self.emulator, self._out)
        try:
            return await self._with_bot(bot, lines)
        finally:
            stopped = await bot.stop()
            self._out(f"bot process stopped (status {stopped})")

    async def _with_bot(self, bot: BotProcess, lines: AsyncIterator[str]) -> str:
        emu = self.emulator
        exited = asyncio.create_task(bot.wait())
        connected = asyncio.create_task(emu.wait_connected())
        try:
            await asyncio.wait({exited, connected}, return_when=asyncio.FIRST_COMPLETED)
            if not connected.done() or connected.exception() is not None:
                if exited.done():
                    return f"the bot process exited with status {exited.result()}"
                return f"the bot process did not connect to the emulator within {BOT_CONNECTS:g}s"
            self._out(f"bot process {bot.pid} connected")
            self._out(self.console.help_text())

            async def settle(event: int) -> None:
                await bot.settle_quietly(emu)

            # The session's console waits for nothing: this one waits for the bot's process.
            self.console.close()
            self.console = console = DiscordConsole(emu, self._out, settle=settle)
            prompt = asyncio.create_task(console.run(lines))
            try:
                await asyncio.wait({exited, prompt}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                console.close()
                prompt.cancel()
            if exited.done() and not prompt.done():
                return f"the bot process exited with status {exited.result()}"
            prompt.result()
            return ""
        finally:
            connected.cancel()
            exited.cancel()


class DiscordSandbox:
    """Discord's sandbox: the gateway + REST emulator, its world and its console."""

    def token_problem(self, token: str) -> str:
        """Any token the gateway can carry."""
        return ""

    def command_problem(self, command: Sequence[str]) -> str:
        """It runs a bot's command in its own process."""
        return ""

    async def open(
        self,
        stack: AsyncExitStack,
        section: ChannelSection | None,
        out: Output,
        *,
        port: int = 0,
        token: str | None = None,
    ) -> DiscordSession:
        """The emulator with the sandbox world on 127.0.0.1 until ``stack`` closes; in
        ``actorscope run`` this process's discord.py is pointed at it until then."""
        wait = SANDBOX_WAIT if section is not None else BOT_CONNECTS
        emulator = DiscordEmulator(sandbox_world(token=token), port=port, wait_timeout=wait)
        await stack.enter_async_context(emulator)
        session = DiscordSession(emulator, out, runner=section is not None)
        stack.callback(session.console.close)
        world = emulator.world
        if section is None:
            out("actorscope sandbox: a Discord gateway + REST emulator (offline)")
            out(f"listening: {emulator.base_url}")
            out(f"api:       {emulator.api_url}")
            out(f"gateway:   {emulator.gateway_url}")
            out(f"token:     {world.token}")
            out(f"bot:       {world.bot.username} (id {world.bot.id})")
            return session
        # Process-wide until the session ends: the Discord runner's client talks to it.
        stack.enter_context(discord_pointed_at(emulator))
        out(f"discord:  gateway + REST emulator on {emulator.base_url} (offline)")
        out(f"discord bot: {world.bot.username} (id {world.bot.id})")
        return session


#: Discord's sandbox (``Platform.sandbox``), exported at :mod:`actorscope.sandbox.discord`.
SANDBOX = DiscordSandbox()

"""``actorscope sandbox``: a Telegram Bot API or Discord emulator on 127.0.0.1 with a prompt.

Telegram: point a python-telegram-bot Application at the printed base URL and token, or an
aiogram ``Bot`` at the printed root (``TelegramAPIServer.from_base(ROOT)``). Discord
(``--platform discord``): ``actorscope sandbox --platform discord -- python bot.py`` runs your
unmodified discord.py bot in its own process, pointed at the emulator (or connect one in
process with ``discord_pointed_at``). Then type as different people in different chats; the
bot's replies are printed as they arrive. Ctrl-C (or SIGTERM) stops it all cleanly.
"""

from __future__ import annotations

import asyncio
import shlex
import signal
import sys
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Annotated, Any

import typer

from actorscope.cli._common import cannot_listen
from actorscope.errors import ConfigError

if TYPE_CHECKING:
    from actorscope.sandbox import BotProcess, DiscordEmulator

__all__ = ["sandbox"]


async def _serve(port: int, token: str | None) -> int:
    # Imported here: the emulator (and PTB's types) must not load for every command.
    from actorscope.sandbox import (
        BotApiEmulator,
        BotApiServer,
        SandboxConsole,
        read_lines,
    )

    emu = BotApiEmulator(token)
    emu.populate()
    server = BotApiServer(emu, port=port)
    try:
        await server.start()
    except OSError as exc:  # the port is taken, or not ours to take
        raise cannot_listen(f"127.0.0.1 --port {port}", exc) from None
    try:
        typer.echo("actorscope sandbox: a Telegram Bot API emulator (offline)")
        typer.echo(f"base_url: {server.base_url}")
        typer.echo(f"token:    {emu.token}")
        typer.echo(f"bot:      @{emu.bot.username}")
        typer.echo(f"root:     {server.root_url}")
        typer.echo("connect:  ApplicationBuilder().token(TOKEN).base_url(BASE_URL)")
        typer.echo(
            "aiogram:  Bot(TOKEN, session=AiohttpSession(api=TelegramAPIServer.from_base(ROOT)))"
        )
        typer.echo(SandboxConsole.help_text())
        console = SandboxConsole(emu, typer.echo, wait_for_bot=True)
        try:
            await console.run(read_lines(sys.stdin))
        finally:
            console.close()
    finally:
        await server.stop()
    typer.echo("sandbox stopped")
    return 0


#: Seconds a bot process has to connect to the emulator.
_BOT_CONNECTS = 30.0


async def _serve_discord(port: int, token: str | None, command: list[str]) -> int:
    # Imported here: discord.py must not load for every command.
    from actorscope.sandbox import (
        BotProcess,
        DiscordConsole,
        DiscordEmulator,
        read_lines,
        sandbox_world,
    )

    emu = DiscordEmulator(sandbox_world(token=token), port=port, wait_timeout=_BOT_CONNECTS)
    try:
        await emu.start()
    except OSError as exc:  # the port is taken, or not ours to take
        raise cannot_listen(f"127.0.0.1 --port {port}", exc) from None
    status = 0
    try:
        typer.echo("actorscope sandbox: a Discord gateway + REST emulator (offline)")
        typer.echo(f"listening: {emu.base_url}")
        typer.echo(f"api:       {emu.api_url}")
        typer.echo(f"gateway:   {emu.gateway_url}")
        typer.echo(f"token:     {emu.world.token}")
        typer.echo(f"bot:       {emu.world.bot.username} (id {emu.world.bot.id})")
        if not command:
            typer.echo(
                "connect:   actorscope sandbox --platform discord -- python bot.py"
                "  (runs your bot pointed here)"
            )
            typer.echo(DiscordConsole.help_text())
            console = DiscordConsole(emu, typer.echo)
            try:
                await console.run(read_lines(sys.stdin))
            finally:
                console.close()
        else:
            names = " and ".join(BotProcess.TOKEN_VARIABLES)
            typer.echo(f"running:   {shlex.join(command)}  (token in {names})")
            bot = await BotProcess.start(command, emu, typer.echo)
            try:
                status = await _with_bot(emu, bot, DiscordConsole.help_text())
            finally:
                stopped = await bot.stop()
                typer.echo(f"bot process stopped (status {stopped})")
    finally:
        await emu.stop()
    typer.echo("sandbox stopped")
    return status


async def _with_bot(emu: DiscordEmulator, bot: BotProcess, help_text: str) -> int:
    """The prompt, once the bot process has connected, until the input ends or the bot does;
    1 (with one line on stderr) when the bot stopped first or never connected."""
    from actorscope.sandbox import DiscordConsole, read_lines

    exited = asyncio.create_task(bot.wait())
    connected = asyncio.create_task(emu.wait_connected())
    try:
        await asyncio.wait({exited, connected}, return_when=asyncio.FIRST_COMPLETED)
        if not connected.done() or connected.exception() is not None:
            why = (
                f"exited with status {exited.result()}"
                if exited.done()
                else f"did not connect to the emulator within {_BOT_CONNECTS:g}s"
            )
            typer.echo(f"actorscope: error: the bot process {why}", err=True)
            return 1
        typer.echo(f"bot process {bot.pid} connected")
        typer.echo(help_text)

        async def settle(event: int) -> None:
            await bot.settle_quietly(emu)

        console = DiscordConsole(emu, typer.echo, settle=settle)
        prompt = asyncio.create_task(console.run(read_lines(sys.stdin)))
        try:
            await asyncio.wait({exited, prompt}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            console.close()
            prompt.cancel()
        if exited.done() and not prompt.done():
            status = exited.result()
            typer.echo(f"actorscope: error: the bot process exited with status {status}", err=True)
            return 1
        prompt.result()
        return 0
    finally:
        connected.cancel()
        exited.cancel()


def sandbox(
    port: int = typer.Option(
        0, "--port", help="Port on 127.0.0.1 (0: any free port).", metavar="PORT"
    ),
    token: str | None = typer.Option(
        None, "--token", help="Bot token to accept (default: a random one).", metavar="TOKEN"
    ),
    platform: str = typer.Option(
        "telegram",
        "--platform",
        help="Which platform to emulate: telegram or discord.",
        metavar="PLATFORM",
    ),
    command: Annotated[
        list[str] | None,
        typer.Argument(
            help="Discord: your bot's command, after -- (e.g. -- python bot.py): it runs "
            "unmodified, pointed at the emulator, with its token in DISCORD_BOT_TOKEN.",
            metavar="COMMAND",
            show_default=False,
        ),
    ] = None,
) -> int:
    """Run a Telegram Bot API or Discord emulator on 127.0.0.1 and type as people in its chats."""
    if not 0 <= port <= 65535:
        raise ConfigError(f"--port must be between 0 and 65535, not {port}")
    if platform not in {"telegram", "discord"}:
        raise ConfigError(f"--platform must be telegram or discord, not {platform!r}")
    if platform == "discord":
        if token is not None and (not token or any(c.isspace() for c in token)):
            raise ConfigError("--token must be non-empty and contain no spaces")
        return _stopped_by_signals(_serve_discord(port, token, command or []))
    if command:
        raise ConfigError(
            "a bot command after -- is for --platform discord; point a PTB bot at the printed"
            " base_url and token, or an aiogram Bot at the printed root, instead"
        )
    if token is not None:
        bot_id, sep, secret = token.partition(":")
        if not (sep and bot_id.isdigit() and secret):
            raise ConfigError("--token must look like <bot id>:<secret>, e.g. 123456:abc")
    return _stopped_by_signals(_serve(port, token))


def _stopped_by_signals(session: Coroutine[Any, Any, int | None]) -> int:
    """Run ``session``; Ctrl-C or SIGTERM ends it cleanly (its ``finally`` blocks run, then
    "sandbox stopped"): exit status 0."""
    try:
        return asyncio.run(_terminable(session)) or 0
    except (KeyboardInterrupt, asyncio.CancelledError):
        # asyncio.run has already cancelled the session, which closed what it opened.
        typer.echo("\nsandbox stopped")
        return 0


async def _terminable(session: Coroutine[Any, Any, int | None]) -> int | None:
    """``session``, cancelled by SIGTERM as asyncio.run cancels it on SIGINT."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    if task is not None:
        loop.add_signal_handler(signal.SIGTERM, task.cancel)
    try:
        return await session
    finally:
        loop.remove_signal_handler(signal.SIGTERM)

"""``actorscope sandbox``: a Telegram Bot API or Discord emulator on 127.0.0.1 with a prompt.

Telegram: point a python-telegram-bot Application at the printed base URL and token. Discord
(``--platform discord``): run any discord.py bot inside ``discord_pointed_at`` (printed). Then
type as different people in different chats; the bot's replies are printed as they arrive.
"""

from __future__ import annotations

import asyncio
import sys

import typer

from actorscope.cli._app import app, cannot_listen
from actorscope.errors import ConfigError

__all__ = ["sandbox"]


async def _serve(port: int, token: str | None) -> None:
    # Imported here: the emulator (and PTB's types) must not load for every command.
    from actorscope.sandbox._telegram.console import (
        HELP,
        SandboxConsole,
        populate_sandbox,
        read_lines,
        run_console,
    )
    from actorscope.sandbox._telegram.emulator import BotApiEmulator
    from actorscope.sandbox._telegram.server import BotApiServer

    emu = BotApiEmulator(token)
    populate_sandbox(emu)
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
        typer.echo("connect:  ApplicationBuilder().token(TOKEN).base_url(BASE_URL)")
        typer.echo(HELP)
        console = SandboxConsole(emu, typer.echo)
        try:
            await run_console(console, read_lines(sys.stdin))
        finally:
            console.close()
    finally:
        await server.stop()
    typer.echo("sandbox stopped")


async def _serve_discord(port: int, token: str | None) -> None:
    # Imported here: discord.py must not load for every command.
    from actorscope.sandbox import DiscordEmulator, sandbox_world
    from actorscope.sandbox._console import DISCORD_HELP, DiscordConsole
    from actorscope.sandbox._prompt import read_lines, run_console

    emu = DiscordEmulator(sandbox_world(token=token), port=port)
    try:
        await emu.start()
    except OSError as exc:  # the port is taken, or not ours to take
        raise cannot_listen(f"127.0.0.1 --port {port}", exc) from None
    try:
        typer.echo("actorscope sandbox: a Discord gateway + REST emulator (offline)")
        typer.echo(f"listening: {emu.base_url}")
        typer.echo(f"api:       {emu.api_url}")
        typer.echo(f"gateway:   {emu.gateway_url}")
        typer.echo(f"token:     {emu.world.token}")
        typer.echo(f"bot:       {emu.world.bot.username} (id {emu.world.bot.id})")
        typer.echo(
            "connect:   with actorscope.sandbox.discord_pointed_at(<this emulator>): "
            "await bot.start(TOKEN)  (Route.BASE = api, DEFAULT_GATEWAY = gateway)"
        )
        typer.echo(DISCORD_HELP)
        console = DiscordConsole(emu, typer.echo)
        try:
            await run_console(console, read_lines(sys.stdin))
        finally:
            console.close()
    finally:
        await emu.stop()
    typer.echo("sandbox stopped")


@app.command("sandbox")
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
) -> None:
    """Run a Telegram Bot API or Discord emulator on 127.0.0.1 and type as people in its chats."""
    if not 0 <= port <= 65535:
        raise ConfigError(f"--port must be between 0 and 65535, not {port}")
    if platform not in {"telegram", "discord"}:
        raise ConfigError(f"--platform must be telegram or discord, not {platform!r}")
    if platform == "discord":
        if token is not None and (not token or any(c.isspace() for c in token)):
            raise ConfigError("--token must be non-empty and contain no spaces")
        try:
            asyncio.run(_serve_discord(port, token))
        except KeyboardInterrupt:
            typer.echo("\nsandbox stopped")
        return
    if token is not None:
        bot_id, sep, secret = token.partition(":")
        if not (sep and bot_id.isdigit() and secret):
            raise ConfigError("--token must look like <bot id>:<secret>, e.g. 123456:abc")
    try:
        asyncio.run(_serve(port, token))
    except KeyboardInterrupt:
        # asyncio.run has already cancelled the session, which closed the server.
        typer.echo("\nsandbox stopped")

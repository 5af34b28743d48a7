"""``actorscope run CONFIG.toml [--sandbox]``: the configured Telegram and Discord bots."""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path
from typing import Annotated

import typer

from actorscope.bots.app import run_bots
from actorscope.bots.config import load_bot_config
from actorscope.cli._app import app
from actorscope.testing.botapi.console import read_lines

__all__ = ["run"]


@app.command("run")
def run(
    config: Annotated[Path, typer.Argument(help="The bot configuration (TOML).")],
    sandbox: Annotated[
        bool,
        typer.Option(
            "--sandbox",
            help="Run Telegram against a Bot API emulator on 127.0.0.1 (no token) with a prompt.",
        ),
    ] = False,
) -> None:
    """Run the configured bots until SIGINT or SIGTERM (tokens come from the environment)."""
    bot_config = load_bot_config(config)
    logging.basicConfig(
        level=logging.WARNING, format="actorscope: %(levelname)s %(name)s: %(message)s"
    )
    lines = read_lines(sys.stdin) if sandbox else None
    try:
        asyncio.run(
            run_bots(bot_config, sandbox=sandbox, out=typer.echo, lines=lines, source=str(config))
        )
    except KeyboardInterrupt:  # a second Ctrl-C during shutdown
        typer.echo("actorscope: interrupted", err=True)
        raise typer.Exit(130) from None

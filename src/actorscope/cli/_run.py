"""``actorscope run CONFIG.toml [--sandbox]``: the bots of a file's enabled platform sections."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

__all__ = ["run"]


def run(
    config: Annotated[Path, typer.Argument(help="The bot configuration (TOML).", metavar="CONFIG")],
    sandbox: Annotated[
        bool,
        typer.Option(
            "--sandbox",
            help="Run each enabled platform against its emulator on 127.0.0.1 (no tokens), "
            "with a prompt.",
        ),
    ] = False,
) -> None:
    """Run the configured bots until SIGINT or SIGTERM (tokens come from the environment)."""
    # Imported here: the runtime loads the platform libraries, which `--help` must not.
    from actorscope.bots import BotConfig, run_in_terminal

    status = run_in_terminal(BotConfig.load(config), sandbox=sandbox, source=str(config))
    if status:
        raise typer.Exit(status)

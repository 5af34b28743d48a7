"""``actorscope serve CONFIG.toml``: the HTTP API and console (and the configured bots)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer

from actorscope.cli._common import cannot_listen
from actorscope.errors import ConfigError

__all__ = ["serve"]


def serve(
    config: Annotated[
        Path, typer.Argument(help="The configuration (TOML), with [http].", metavar="CONFIG")
    ],
) -> None:
    """Serve the HTTP API and operator console (the [http] section) next to the bots."""
    # Imported here: the web stack and the platform libraries, which `--help` must not load.
    from actorscope.bots import BotConfig

    loaded = BotConfig.load(config, require_bots=False)
    section = loaded.http
    if section is None:  # BotConfig.load(require_bots=False) refuses such a file already
        raise ConfigError(f"{config}: no [http] section")
    try:
        from actorscope.http import serve as run_server
    except ModuleNotFoundError as exc:
        raise ConfigError(
            f"actorscope serve needs the http extra ({exc.name} is missing): "
            "pip install 'actorscope[http]'"
        ) from None
    try:
        sock = section.listen()
    except OSError as exc:
        raise cannot_listen(f"{section.host}:{section.port}", exc) from None
    try:
        asyncio.run(run_server(loaded, sock, source=str(config), out=typer.echo))
    finally:
        sock.close()

"""Point discord.py at the Discord emulator in a bot's own, unmodified process.

``actorscope sandbox --platform discord -- python bot.py`` starts the bot with this folder
first on ``PYTHONPATH`` and the emulator's addresses in :data:`API` and :data:`GATEWAY`.
Python imports ``sitecustomize`` at startup (before the bot's code), so this module points
discord.py at the emulator there: the two class attributes discord.py reads when it talks to
Discord (:func:`point`, which :func:`~actorscope.sandbox.discord_pointed_at` sets in-process
too). Then it runs the ``sitecustomize`` it shadows, if the environment has one.

Without the variables it does nothing. When discord.py is installed but cannot be pointed,
the process stops at once (status 2, one line on stderr): a sandboxed bot never reaches
Discord. This file imports nothing of actorscope, so it works for a bot whose Python has
discord.py only.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
import warnings
from typing import Any

#: The environment variables the sandbox sets for the bot's process.
API = "ACTORSCOPE_DISCORD_API"
GATEWAY = "ACTORSCOPE_DISCORD_GATEWAY"


def point(api_url: str, gateway_url: str) -> tuple[str, Any]:
    """Make every discord.py client of this process use ``api_url`` (REST) and
    ``gateway_url`` (websocket); returns the previous values, for :func:`restore`."""
    with warnings.catch_warnings():
        # discord.py imports the deprecated stdlib ``audioop`` (voice): never an error here.
        warnings.simplefilter("ignore", DeprecationWarning)
        import discord.gateway
        import discord.http
    import yarl

    previous = (discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY)
    discord.http.Route.BASE = api_url
    discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(gateway_url)
    return previous


def restore(previous: tuple[str, Any]) -> None:
    """Undo :func:`point` with what it returned."""
    import discord.gateway
    import discord.http

    discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = previous


def _bootstrap() -> None:
    api_url, gateway_url = os.environ.get(API), os.environ.get(GATEWAY)
    if not api_url or not gateway_url or importlib.util.find_spec("discord") is None:
        return
    try:
        point(api_url, gateway_url)
    except Exception as exc:  # a sandboxed bot must never reach Discord: stop instead
        sys.stderr.write(f"actorscope sandbox: cannot point discord.py at {api_url}: {exc}\n")
        sys.stderr.flush()
        os._exit(2)


def _shadowed() -> None:
    """Run the ``sitecustomize`` this one hides on ``sys.path``, if there is one."""
    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None or spec.origin == __file__:
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)


if __name__ == "sitecustomize":  # Python's startup import, not actorscope's own
    _bootstrap()
    _shadowed()

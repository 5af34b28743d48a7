"""Run an official example bot unchanged, pointed at an emulator: token and endpoints only.

``python launch.py telegram|discord path/to/example.py`` runs the example as ``python
example.py`` would (``__main__``, its folder first on ``sys.path``), after pointing the library
at the emulator the test started, from the environment:

- ``telegram``: every ``telegram.Bot`` (the ``Application``'s too) is built with
  ``EXAMPLE_TELEGRAM_TOKEN`` and ``EXAMPLE_TELEGRAM_BASE_URL`` / ``EXAMPLE_TELEGRAM_FILE_URL``
  instead of the placeholder token and ``api.telegram.org``;
- ``discord``: discord.py is pointed at the emulator before this runs, by the sandbox's own
  ``sitecustomize`` (``actorscope sandbox --platform discord -- CMD`` puts it first on the
  bot's ``PYTHONPATH``, with the emulator's addresses in the environment); this checks that it
  was. The example's placeholder token is the emulator's token.

Endpoints an example hard-codes besides the platform's are redirected the same way, never
edited in the file: ``EXAMPLE_LISTEN_PORT`` replaces the port a ``uvicorn.Config`` asks for (the
custom-webhook bots listen on 8000, which a test must not depend on), and
``EXAMPLE_STAND_INS`` (JSON: ``{"https://random.dog": "http://127.0.0.1:PORT"}``) sends an
``aiohttp`` GET for an outside site to a local stand-in (tests never touch the internet).

Some discord.py examples hold a placeholder id the reader is told to replace (``MY_GUILD =
discord.Object(id=0)  # replace with your guild id``). Discord has no object with id 0, and
discord.py treats a guild id of 0 as no guild, so such an example cannot run as written against
any Discord. ``EXAMPLE_FILL`` (JSON: ``[[line, filled line], ...]``) fills in exactly those
placeholders, as the reader would, when the file is loaded: each line must occur in the file
exactly once, and the file on disk is never changed.
"""

from __future__ import annotations

import inspect
import json
import os
import runpy
import sys
from pathlib import Path
from typing import Any


def point_telegram() -> None:
    """Build every ``telegram.Bot`` with the emulator's token and URLs."""
    import telegram

    token = os.environ["EXAMPLE_TELEGRAM_TOKEN"]
    urls = {
        "base_url": os.environ["EXAMPLE_TELEGRAM_BASE_URL"],
        "base_file_url": os.environ["EXAMPLE_TELEGRAM_FILE_URL"],
    }
    original = telegram.Bot.__init__
    signature = inspect.signature(original)

    def pointed(*args: Any, **kwargs: Any) -> None:
        bound = signature.bind(*args, **kwargs)
        bound.arguments.update(token=token, **urls)
        original(*bound.args, **bound.kwargs)

    telegram.Bot.__init__ = pointed  # type: ignore[method-assign]


def point_discord() -> None:
    """Stop unless the sandbox's ``sitecustomize`` pointed discord.py at the emulator."""
    import discord.http

    if not discord.http.Route.BASE.startswith("http://127.0.0.1:"):
        raise SystemExit("launch.py: discord.py is not pointed at the emulator (PYTHONPATH)")


def listen_port(port: int) -> None:
    """Every ``uvicorn.Config`` listens on ``port`` (on the host the example chose)."""
    import uvicorn

    original = uvicorn.Config.__init__
    signature = inspect.signature(original)

    def on_port(*args: Any, **kwargs: Any) -> None:
        bound = signature.bind(*args, **kwargs)
        bound.arguments["port"] = port
        original(*bound.args, **bound.kwargs)

    uvicorn.Config.__init__ = on_port  # type: ignore[method-assign]


def stand_ins(routes: dict[str, str]) -> None:
    """``aiohttp.ClientSession.get`` of a URL under a key of ``routes`` goes to its value."""
    import aiohttp

    original = aiohttp.ClientSession.get

    def get(self: aiohttp.ClientSession, url: Any, **kwargs: Any) -> Any:
        text = str(url)
        for site, local in routes.items():
            if text == site or text.startswith(site + "/"):
                text = local + text[len(site) :]
        return original(self, text, **kwargs)

    aiohttp.ClientSession.get = get  # type: ignore[method-assign]


def main() -> None:
    """Point the library, then run the example as its own ``__main__``."""
    platform, script = sys.argv[1], Path(sys.argv[2]).resolve()
    {"telegram": point_telegram, "discord": point_discord}[platform]()
    if "EXAMPLE_LISTEN_PORT" in os.environ:
        listen_port(int(os.environ["EXAMPLE_LISTEN_PORT"]))
    if "EXAMPLE_STAND_INS" in os.environ:
        stand_ins(json.loads(os.environ["EXAMPLE_STAND_INS"]))
    sys.argv = [str(script)]
    sys.path[0] = str(script.parent)
    fills = json.loads(os.environ.get("EXAMPLE_FILL", "[]"))
    if not fills:
        runpy.run_path(str(script), run_name="__main__")
        return
    source = script.read_text(encoding="utf-8")
    for placeholder, filled in fills:
        if source.count(placeholder) != 1:
            raise SystemExit(f"launch.py: {script.name} has not exactly one {placeholder!r}")
        source = source.replace(placeholder, filled)
    namespace: dict[str, Any] = {"__name__": "__main__", "__file__": str(script)}
    exec(compile(source, str(script), "exec"), namespace)  # noqa: S102 - the example itself


if __name__ == "__main__":
    main()

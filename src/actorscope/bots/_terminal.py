"""Running a loaded configuration in the foreground, as ``actorscope run`` does.

:func:`run_in_terminal` is the one copy of what ``actorscope run CONFIG [--sandbox]`` does once
the configuration is loaded; scripts such as ``examples/telegram_bot.py`` call it too, so
``python examples/telegram_bot.py --sandbox`` gets the same prompt and prints the same lines.
"""

from __future__ import annotations

import asyncio
import logging
import sys

from actorscope._aio import read_lines
from actorscope.bots._app import run_bots
from actorscope.bots._config import BotConfig

__all__ = ["run_in_terminal"]

#: The exit status after a second Ctrl-C cut the (bounded) shutdown short (128 + SIGINT).
_EXIT_INTERRUPTED = 130
_LOG_FORMAT = "actorscope: %(levelname)s %(name)s: %(message)s"


def _echo(line: str) -> None:
    """One line on stdout, flushed: a pipe shows the prompt's output as it happens."""
    print(line, flush=True)


def run_in_terminal(config: BotConfig, *, sandbox: bool = False, source: str = "") -> int:
    """Run ``config`` until SIGINT / SIGTERM (sandbox: or the end of stdin); the exit status.

    Warnings are logged on stderr (``actorscope: WARNING ...``) unless logging is already
    configured. With ``sandbox`` Telegram runs against a Bot API emulator on 127.0.0.1 (and
    an enabled Discord bot against a Discord emulator) and the prompt reads stdin: what is
    typed becomes updates from people in groups (guild members after ``/discord``), and the
    bot's replies and why it ignored an update are printed on stdout. ``source`` (the
    configuration's path) names the file in error messages. Returns 0, or 130 when a second
    Ctrl-C interrupted the shutdown (said on stderr). An invalid configuration or a rejected
    token raises :class:`~actorscope.errors.ConfigError`.
    """
    logging.basicConfig(level=logging.WARNING, format=_LOG_FORMAT)
    lines = read_lines(sys.stdin) if sandbox else None
    try:
        asyncio.run(run_bots(config, sandbox=sandbox, out=_echo, lines=lines, source=source))
    except KeyboardInterrupt:  # a second Ctrl-C during shutdown
        print("actorscope: interrupted", file=sys.stderr, flush=True)
        return _EXIT_INTERRUPTED
    return 0

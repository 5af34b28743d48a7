"""Whole-pipeline throughput: ``actorscope run``'s runners against the bare libraries.

Telegram: the realistic stream (``bench/_streams.py``) goes, update by update, through
``Update.de_json`` and ``Application.process_update`` of (a) the production
:class:`~actorscope.channels.telegram._runner.TelegramRunner` (ingress pipeline, bus,
:class:`~actorscope.host.Host` with the production run step, a handler that returns a reply,
sent through the runner) and (b) a bare PTB ``Application`` whose handler sends the same reply
(``send_message`` to the chat and topic, replying).

Discord: the Discord stream's ``MESSAGE_CREATE`` payloads go through discord.py's gateway
parser (``ConnectionState.parse_message_create``) of (a) the production
:class:`~actorscope.channels.discord._runner.DiscordRunner` (its ``on_message``, the pipeline,
the host's turn, run in the event's task while a turn slot is free as under ``actorscope run``,
the reply sent through the runner) and (b) a bare ``discord.Client`` whose
``on_message`` sends the same reply.

Both sides of a line talk to the same thin stub transport (``bench/_stubs.py``), do the same
work (``bench/_sides.py``) and alternate in one process with a garbage collection before each
timed side; a line is the median ratio ours/bare in updates per second, with its min-max.
Goals (issue 33): Telegram >= 0.85, Discord >= 0.60.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from actorscope.store import Database
from bench._sides import (
    alternate,
    bare_discord,
    bare_ptb,
    discord_runner,
    ratio_line,
    telegram_payloads,
    telegram_runner,
    versions,
)
from bench._streams import discord_stream, telegram_stream

__all__ = ["main", "run"]

#: Updates per run (a prefix of the realistic stream) and runs per side.
UPDATES = 3_000
RUNS = 7
TELEGRAM_GOAL = 0.85
DISCORD_GOAL = 0.60


async def run(updates: int = UPDATES, runs: int = RUNS) -> None:
    """Print the Telegram and Discord pipeline lines over ``updates`` updates, ``runs`` runs."""
    print(versions("python-telegram-bot", "discord.py", "pydantic"))
    with tempfile.TemporaryDirectory() as tmp:
        async with Database.open(Path(tmp) / "bench.db") as db:
            ours = telegram_runner(db)
            result = await alternate(
                [bare_ptb, ours], telegram_payloads(telegram_stream(2 * updates), updates), runs
            )
            ratio_line(
                result,
                ours.label,
                bare_ptb.label,
                "telegram pipeline / bare PTB, stub",
                TELEGRAM_GOAL,
            )
            stream = discord_stream(2 * updates)
            payloads = [p for event, p in stream.events if event == "MESSAGE_CREATE"][:updates]
            bare, ours = bare_discord(stream), discord_runner(db, stream)
            result = await alternate([bare, ours], payloads, runs)
            ratio_line(
                result,
                ours.label,
                bare.label,
                "discord pipeline / bare discord.py, stub",
                DISCORD_GOAL,
            )


def main() -> None:
    """Print the Telegram and Discord throughput goal lines."""
    asyncio.run(run())

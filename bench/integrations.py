"""Per-integration overhead: the same bot with and without actorscope in it.

PTB: an ``Application`` whose ``MessageHandler`` answers every person's message in the chat
and topic, replying (``bench/_sides.py``), against the same application with ``install()``
(the gate in group -1) and the handler under ``@requires("file_writer")``.

discord.py: a ``commands.Bot`` whose ``!ask`` command answers ``ctx.send(..., reference=...)``,
against the same bot with ``ActorscopeCog`` added and ``@requires("file_writer")`` on the
command; the Discord stream's messages are sent as ``!ask <text>``.

One ``*`` grant lets every sender write, so each check allows and both bots answer the same
updates; each run starts a new gate over the same database (its decision cache cold, as
after a restart), and the stream's thousands of (chat, sender) pairs make many cold checks.
Both sides of a line talk to the same thin stub transport and alternate in one process with
a garbage collection before each timed side. Goal (issue 33): each >= 0.85 of the bot
without it.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from discord.ext import commands
from telegram.ext import MessageHandler

from actorscope.agents import AgentRegistry
from actorscope.channels import ChannelConfig
from actorscope.channels.discord import bot_intents
from actorscope.integrations import discord_ext, ptb
from actorscope.permissions import GrantStore
from actorscope.store import Database
from bench._sides import (
    REPLY,
    Feed,
    Payloads,
    Side,
    alternate,
    bare_ptb,
    discord_feed,
    from_person,
    offline_client,
    ptb_app,
    ptb_feed,
    ratio_line,
    reply,
    telegram_payloads,
    versions,
)
from bench._streams import DiscordStream, discord_stream, telegram_stream
from bench._stubs import Sends

__all__ = ["main", "ptb_gate", "run"]

UPDATES = 3_000
RUNS = 7
GOAL = 0.85
PTB_AGENT, COG_AGENT = "ptb-gate", "dpy-cog"


async def everyone_writes(db: Database, agent: str) -> None:
    """Agent ``agent`` (created if missing) with one grant: everyone may write everywhere."""
    await AgentRegistry(db).ensure(agent)
    await GrantStore(db).grant(agent_id=agent, scope="*", config_type="file_writer", sender_id="*")


def ptb_gate(db: Database) -> Side:
    """The bare PTB bot with ``install()`` and its handler under ``@requires``."""

    @asynccontextmanager
    async def start(sends: Sends) -> AsyncIterator[Feed]:
        app = ptb_app(sends)
        ptb.install(
            app,
            database=db,
            agent=PTB_AGENT,
            config=ChannelConfig(platform="telegram", require_mention=False),
        )
        app.add_handler(MessageHandler(from_person, ptb.requires("file_writer")(reply)))
        await app.initialize()
        assert app.post_init is not None
        assert app.post_shutdown is not None
        await app.post_init(app)
        try:
            yield ptb_feed(app)
        finally:
            await app.post_shutdown(app)
            await app.shutdown()

    return Side("PTB + install() + requires", start)


async def _ask(ctx: commands.Context[Any], *, text: str = "") -> None:
    await ctx.send(REPLY, reference=ctx.message)


def _dpy_bot(stream: DiscordStream, cog_db: Database | None) -> Side:
    """``commands.Bot`` answering ``!ask``; with ``cog_db``: ActorscopeCog + ``@requires``."""

    @asynccontextmanager
    async def start(sends: Sends) -> AsyncIterator[Feed]:
        bot = commands.Bot(command_prefix="!", intents=bot_intents(), help_command=None)
        ask: commands.Command[Any, ..., None] = commands.Command(_ask, name="ask")
        await offline_client(bot, stream, sends)
        if cog_db is not None:
            cog = discord_ext.ActorscopeCog(
                bot,
                database=cog_db,
                agent=COG_AGENT,
                config=ChannelConfig(platform="discord", require_mention=False),
            )
            await bot.add_cog(cog)
            ask = discord_ext.requires("file_writer")(ask)
        bot.add_command(ask)
        try:
            yield discord_feed(bot)
        finally:
            if cog_db is not None:
                await bot.remove_cog(discord_ext.ActorscopeCog.NAME)
            await bot.close()

    label = "commands.Bot + ActorscopeCog + requires" if cog_db else "bare commands.Bot"
    return Side(label, start)


def discord_commands(stream: DiscordStream, updates: int) -> Payloads:
    """The stream's first ``updates`` messages, each sent as ``!ask <its text>``."""
    messages = [p for event, p in stream.events if event == "MESSAGE_CREATE"][:updates]
    return [p | {"content": f"!ask {p['content']}"} for p in messages]


async def run(updates: int = UPDATES, runs: int = RUNS) -> None:
    """Print the PTB and discord.py integration lines over ``updates`` updates."""
    print(versions("python-telegram-bot", "discord.py", "pydantic"))
    with tempfile.TemporaryDirectory() as tmp:
        async with Database.open(Path(tmp) / "bench.db") as db:
            await everyone_writes(db, PTB_AGENT)
            gated = ptb_gate(db)
            payloads = telegram_payloads(telegram_stream(2 * updates), updates)
            result = await alternate([bare_ptb, gated], payloads, runs)
            ratio_line(
                result, gated.label, bare_ptb.label, "PTB gate: install() + requires / bare", GOAL
            )
            await everyone_writes(db, COG_AGENT)
            stream = discord_stream(2 * updates)
            bare, cog = _dpy_bot(stream, None), _dpy_bot(stream, db)
            result = await alternate([bare, cog], discord_commands(stream, updates), runs)
            ratio_line(
                result,
                cog.label,
                bare.label,
                "discord.py gate: ActorscopeCog + requires / bare",
                GOAL,
            )


def main() -> None:
    """Print the per-integration overhead lines."""
    asyncio.run(run())

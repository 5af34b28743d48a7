"""The production DiscordRunner connects to the emulator and its handle path sees members."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests._wiring import channel_pipeline
from tests.sandbox.conftest import BOUND

from actorscope.agents import AgentRegistry
from actorscope.channels._config import ChannelConfig
from actorscope.channels.discord._runner import DiscordRunner
from actorscope.host import MessageBus
from actorscope.permissions import GrantStore
from actorscope.sandbox import DiscordEmulator, discord_pointed_at
from actorscope.store import Database


@dataclass
class Running:
    """A started runner, its bus and its grants."""

    runner: DiscordRunner
    bus: MessageBus
    grants: GrantStore


@pytest.fixture
async def running(tmp_path: Path, emu: DiscordEmulator) -> AsyncIterator[Running]:
    """A DiscordRunner logged in to the emulator with its gateway session open."""
    async with Database.open(tmp_path / "t.db") as db:
        agent = await AgentRegistry(db).create("main")
        grants = GrantStore(db)
        bus = MessageBus()
        runner = DiscordRunner(
            channel_pipeline(db, ChannelConfig(platform="discord"), bus=bus, agent=agent),
            token=emu.world.token,
        )
        with discord_pointed_at(emu):
            await runner.start()
            try:
                await emu.wait_connected()
                yield Running(runner, bus, grants)
            finally:
                await runner.stop()


async def test_member_message_reaches_the_runner(emu: DiscordEmulator, running: Running) -> None:
    """carol mentions the bot in #general: the runner publishes her, scoped to the guild."""
    carol = emu.world.user("carol")
    guild = emu.world.guild()
    await emu.say(carol, "general", f"<@{emu.world.bot.id}> hello")
    inbound = await asyncio.wait_for(running.bus.get(), BOUND)
    assert inbound.sender_id == str(carol.id)
    assert inbound.user_id == f"guild:{guild.id}:user:{carol.id}"
    assert inbound.content.endswith("hello")


async def test_writer_slash_command_by_a_manage_server_member(
    emu: DiscordEmulator, running: Running
) -> None:
    """dave (Manage Server) runs the synced /addwriter for carol; the runner answers it."""
    await emu.wait_for(lambda: emu.commands.get(None))
    slash = await emu.slash("dave", "general", "addwriter", user="carol")
    reply = await emu.wait_for_reply(slash)
    carol = emu.world.user("carol")
    assert str(carol.id) in reply.content
    rows = await running.grants.list(scope=f"guild:{emu.world.guild().id}:*")
    assert [row.sender_id for row in rows] == [str(carol.id)]

"""Fixtures for the sandbox tests: a running Discord emulator and a bot connected to it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

import discord
import pytest

from actorscope.channels.discord._runner import silence_voice_warnings
from actorscope.sandbox import DiscordEmulator, discord_pointed_at

#: Seconds any wait in these tests may take.
BOUND = 10.0


@pytest.fixture
async def emu() -> AsyncIterator[DiscordEmulator]:
    """A running emulator with the default world."""
    silence_voice_warnings()
    async with DiscordEmulator(wait_timeout=BOUND) as emulator:
        yield emulator


#: ``async with connect(client):`` runs ``client`` against the emulator for the block.
Connect = Callable[[discord.Client], AbstractAsyncContextManager[None]]


@pytest.fixture
def connect(emu: DiscordEmulator) -> Connect:
    """A way to run a discord.py client against ``emu`` for a block (see :func:`connected`)."""
    return lambda client: connected(client, emu)


@asynccontextmanager
async def connected(client: discord.Client, emu: DiscordEmulator) -> AsyncIterator[None]:
    """Log ``client`` in to ``emu`` and run its gateway session for the block; bounded close."""
    with discord_pointed_at(emu):
        task: asyncio.Task[None] | None = None
        try:
            await client.login(emu.world.token)
            task = asyncio.create_task(client.connect())
            await emu.wait_connected()
            yield
        finally:
            await asyncio.wait_for(client.close(), BOUND)
            if task is not None:
                await asyncio.wait_for(task, BOUND)

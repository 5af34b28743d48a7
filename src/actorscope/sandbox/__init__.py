"""Sandboxes: emulated chat platforms on 127.0.0.1 that unmodified bots connect to.

The Discord emulator serves a gateway (websocket) and REST ``/api/v10`` on one loopback port;
an ordinary ``discord.Client`` or ``commands.Bot`` connects to it inside
:func:`discord_pointed_at`::

    async with DiscordEmulator() as emu:
        with discord_pointed_at(emu):
            await bot.login(emu.world.token)
            ...
            await emu.say("carol", "general", "hello")

:func:`declared_world` builds the world from a scenario's ``setup.discord`` (the testing kit's
vocabulary: users, bots, guilds with channels, threads, roles, members and webhooks).

This package never imports pytest or ``actorscope.testing``.
"""

from actorscope.sandbox._connect import discord_pointed_at
from actorscope.sandbox._declare import declared_world
from actorscope.sandbox._emulator import DiscordEmulator, Interaction
from actorscope.sandbox._gateway import CloseCode, Intent
from actorscope.sandbox._rest import RateLimit
from actorscope.sandbox._world import Permission, World, sandbox_world

__all__ = [
    "CloseCode",
    "DiscordEmulator",
    "Intent",
    "Interaction",
    "Permission",
    "RateLimit",
    "World",
    "declared_world",
    "discord_pointed_at",
    "sandbox_world",
]

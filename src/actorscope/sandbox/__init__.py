"""Sandboxes: emulated chat platforms on 127.0.0.1 that unmodified bots connect to.

The Telegram Bot API emulator: :class:`BotApiEmulator` is the core (state, update queue, call
log, user actions, with ``BotApiEmulator.User``, ``.Chat`` and ``.ForumTopic`` describing its
world (a chat's type and a member's status are given and compared as their Bot API strings,
``"supergroup"``, ``"administrator"``); every call is a :class:`BotApiCall`, and a call it
refuses raises :class:`BotApiError`); its ``request()`` plugs it into python-telegram-bot
without sockets; :class:`BotApiServer` serves it over loopback HTTP, and its ``console(out)``
types at it as people (the sandbox prompt)::

    emu = BotApiEmulator()
    async with BotApiServer(emu) as server:
        ...  # point the bot at server.base_url, then emu.user_message("alice", "hi", "@devs")

The Discord emulator serves a gateway (websocket) and REST ``/api/v10`` on one loopback port;
an ordinary ``discord.Client`` or ``commands.Bot`` connects to it inside
:func:`discord_pointed_at`::

    async with DiscordEmulator() as emu:
        with discord_pointed_at(emu):
            await bot.login(emu.world.token)
            ...
            await emu.say("carol", "general", "hello")

Its world is a :class:`DiscordWorld` of ``DiscordWorld.User``, ``.Guild``, ``.Channel`` (text
or voice channel, thread or DM) and :class:`DiscordMessage` objects;
``DiscordWorld.Interaction`` is one a person started and how the bot answered it; every REST
call is logged as a :class:`DiscordHttpCall`. :meth:`DiscordWorld.declared` builds the world
from a scenario's ``setup.discord`` (the testing kit's vocabulary: users, bots, guilds with
channels, threads, roles, members and webhooks).

:func:`platform_sandbox` is a platform's :class:`Sandbox` as its contract names it (the
``sandbox`` member): ``open`` starts its emulator and returns a :class:`SandboxSession` (its
token, its runner's options, its :class:`Console`); ``actorscope run --sandbox`` and
``actorscope sandbox`` ask it, and name no platform.

This package never imports pytest or ``actorscope.testing``.
"""

from actorscope.sandbox._connect import discord_pointed_at
from actorscope.sandbox._emulator import DiscordEmulator
from actorscope.sandbox._member import Console, Sandbox, SandboxSession, platform_sandbox
from actorscope.sandbox._rest import HttpCall as DiscordHttpCall
from actorscope.sandbox._telegram import BotApiEmulator, BotApiError, BotApiServer
from actorscope.sandbox._telegram import RecordedCall as BotApiCall
from actorscope.sandbox._world import Message as DiscordMessage
from actorscope.sandbox._world import World as DiscordWorld

__all__ = [
    "BotApiCall",
    "BotApiEmulator",
    "BotApiError",
    "BotApiServer",
    "Console",
    "DiscordEmulator",
    "DiscordHttpCall",
    "DiscordMessage",
    "DiscordWorld",
    "Sandbox",
    "SandboxSession",
    "discord_pointed_at",
    "platform_sandbox",
]

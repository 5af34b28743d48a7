"""Ephemeral replies (flags 64) on the Discord emulator, as Discord documents them.

Only the interaction's user sees an ephemeral message: it is never dispatched (no
MESSAGE_CREATE or MESSAGE_UPDATE), never in a channel's history, not reachable through the
channel routes, and kept apart in ``DiscordEmulator.ephemeral``. The first follow-up of a
deferred reply takes its ephemerality from the defer; later follow-ups from their own flags.
"""

from __future__ import annotations

from typing import Any

import discord
import pytest
from discord.ext import commands
from tests._wait import wait_until
from tests.sandbox.conftest import Connect

from actorscope.errors import ConfigError
from actorscope.sandbox import DiscordEmulator, DiscordMessage
from actorscope.sandbox._console import DiscordConsole


class Reveal(discord.ui.View):
    """One button that rewrites the (ephemeral) message it sits on."""

    @discord.ui.button(label="Reveal", custom_id="reveal")
    async def reveal(
        self, interaction: discord.Interaction[Any], button: discord.ui.Button[Reveal]
    ) -> None:
        """Edit the message in place (callback type 7)."""
        await interaction.response.edit_message(content="revealed", view=None)


class SecretBot(commands.Bot):
    """/secret answers ephemerally with a button; /slow defers ephemerally, then follows up."""

    def __init__(self) -> None:
        super().__init__(command_prefix="!", intents=discord.Intents.default())
        #: The ids of every MESSAGE_CREATE and MESSAGE_UPDATE the bot received.
        self.created: list[int] = []
        self.updated: list[int] = []

        @self.tree.command(name="secret", description="A secret")
        async def secret(interaction: discord.Interaction[Any]) -> None:
            await interaction.response.send_message("psst", ephemeral=True, view=Reveal())

        @self.tree.command(name="slow", description="Thinks, then answers")
        async def slow(interaction: discord.Interaction[Any]) -> None:
            await interaction.response.defer(ephemeral=True, thinking=True)
            await interaction.followup.send("thought about it")  # the defer decides: ephemeral
            await interaction.followup.send("for everyone")
            await interaction.followup.send("for you", ephemeral=True)

    async def setup_hook(self) -> None:
        """Sync the app commands (global)."""
        await self.tree.sync()

    async def on_message(self, message: discord.Message) -> None:
        """Record what the gateway dispatched."""
        self.created.append(message.id)

    async def on_raw_message_edit(self, payload: discord.RawMessageUpdateEvent) -> None:
        """Record what the gateway dispatched."""
        self.updated.append(payload.message_id)


async def test_an_ephemeral_reply_is_its_users_alone(
    emu: DiscordEmulator, connect: Connect
) -> None:
    """Stored apart, never dispatched, not in the history, clickable by its person only."""
    bot = SecretBot()
    printed: list[str] = []
    console = DiscordConsole(emu, printed.append)
    async with connect(bot):
        await emu.wait_for(lambda: emu.commands.get(None))
        asked = await emu.slash("carol", "general", "secret")
        reply = await emu.wait_for_reply(asked)
        assert reply.content == "psst"
        assert reply.ephemeral_to is not None
        assert reply.ephemeral_to.username == "carol"
        assert reply.to_json(emu.world.guild())["flags"] == 64
        assert reply in emu.ephemeral
        assert reply not in emu.messages
        assert reply.id not in emu.world.messages
        channel = bot.get_channel(emu.world.channel("general").id)
        assert isinstance(channel, discord.TextChannel)
        assert reply.id not in [m.id async for m in channel.history()]
        with pytest.raises(discord.NotFound):
            await channel.fetch_message(reply.id)
        with pytest.raises(ConfigError, match=r"bob cannot see message \d+ \(ephemeral\)"):
            await emu.click("bob", reply, "reveal")
        assert emu.latest_with_button("general", "reveal", viewer=emu.world.user("carol")) == reply
        with pytest.raises(ConfigError, match="no message of the bot in #general"):
            emu.latest_with_button("general", "reveal", viewer=emu.world.user("bob"))
        clicked = await emu.click("carol", reply, "reveal")
        await emu.wait_for(lambda: clicked.callbacks or None)
        # A message the bot itself posts, to know the gateway has caught up with the above.
        marker = await emu.post(emu.world.bot, emu.world.channel("general"), "marker")
        await wait_until(lambda: marker.id in bot.created)
    console.close()
    assert f"[bot -> #general msg {reply.id}, only carol sees it] psst  [reveal]" in printed
    assert clicked.callbacks == [7]
    assert reply.content == "revealed"
    assert reply.id not in bot.created
    assert reply.id not in bot.updated


async def test_a_deferred_reply_is_as_ephemeral_as_its_defer(
    emu: DiscordEmulator, connect: Connect
) -> None:
    """The first follow-up after an ephemeral defer is ephemeral; the next ones as flagged."""
    bot = SecretBot()
    async with connect(bot):
        await emu.wait_for(lambda: emu.commands.get(None))
        asked = await emu.slash("carol", "general", "slow")
        await emu.wait_for(lambda: len(asked.replies) == 3 or None)
    first, public, private = asked.replies
    assert asked.callbacks == [5]
    assert asked.original is first
    seen: list[tuple[str, bool]] = [
        (m.content, m.ephemeral_to is not None) for m in (first, public, private)
    ]
    assert seen == [("thought about it", True), ("for everyone", False), ("for you", True)]
    assert [m for m in emu.messages if m.author.id == emu.world.bot.id] == [public]
    ephemeral: list[DiscordMessage] = emu.ephemeral
    assert ephemeral == [first, private]

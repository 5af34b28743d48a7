"""A commands.Bot with an app command and a button, unchanged, against the Discord emulator."""

from __future__ import annotations

from typing import Any

import discord
from discord.ext import commands
from tests.sandbox.conftest import Connect

from actorscope.sandbox import DiscordEmulator


class Confirm(discord.ui.View):
    """One button that answers "confirmed by <name>" (persistent: it outlives restarts)."""

    def __init__(self) -> None:
        super().__init__(timeout=None)

    @discord.ui.button(label="Confirm", custom_id="confirm", style=discord.ButtonStyle.green)
    async def confirm(
        self, interaction: discord.Interaction[Any], button: discord.ui.Button[Confirm]
    ) -> None:
        """Answer the click."""
        await interaction.response.send_message(f"confirmed by {interaction.user.name}")


class NotesBot(commands.Bot):
    """A commands.Bot with /save (syncs its tree on start) and a Confirm button."""

    def __init__(self) -> None:
        super().__init__(command_prefix="!", intents=discord.Intents.default())

        @self.tree.command(name="save", description="Save a note")
        async def save(interaction: discord.Interaction[Any], text: str) -> None:
            await interaction.response.send_message(f"saved: {text}", view=Confirm())

    async def setup_hook(self) -> None:
        """Register the persistent view and sync the app commands (global)."""
        self.add_view(Confirm())
        await self.tree.sync()


async def test_app_command_and_button(emu: DiscordEmulator, connect: Connect) -> None:
    """/save is synced, answered with a button, and the button click is answered too."""
    async with connect(NotesBot()):
        [command] = await emu.wait_for(lambda: emu.commands.get(None))
        assert command["name"] == "save"
        assert command["options"][0]["name"] == "text"
        slash = await emu.slash("carol", "general", "save", text="buy milk")
        reply = await emu.wait_for_reply(slash)
        assert reply.content == "saved: buy milk"
        assert slash.callbacks == [4]
        click = await emu.click("bob", reply, "confirm")
        answer = await emu.wait_for_reply(click)
    assert answer.content == "confirmed by bob"
    assert answer.interaction_metadata is not None
    assert answer.interaction_metadata["user"]["username"] == "bob"

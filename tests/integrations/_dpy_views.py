"""Views for the ``@requires`` placement tests whose annotations are objects, as discord.py's own
examples write them: this module has no ``from __future__ import annotations``, so
``discord.ui.Button[Any]`` below is a generic alias, not a string."""

from typing import Any

import discord

from actorscope.integrations.discord_ext import requires


class Wiping(discord.ui.View):
    """A View with a writers-only "wipe" button; ``pressed``: who its callback ran for."""

    def __init__(self) -> None:
        super().__init__(timeout=None)
        self.pressed: list[int] = []

    async def wiped(self, interaction: discord.Interaction[Any]) -> None:
        """What the callback does once it runs."""
        self.pressed.append(interaction.user.id)
        await interaction.response.send_message("wiped")


class WipeBelowObject(Wiping):
    """Under ``@discord.ui.button``, the item annotated ``discord.ui.Button[Any]`` (an object)."""

    @discord.ui.button(label="wipe", custom_id="wipe")
    @requires("file_writer")
    async def wipe(
        self, interaction: discord.Interaction[Any], button: discord.ui.Button[Any]
    ) -> None:
        """Wipe (writers only)."""
        await self.wiped(interaction)

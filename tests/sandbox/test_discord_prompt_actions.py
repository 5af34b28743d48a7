"""The Discord prompt's user-action commands: /react, /unreact, /pick, /menu, /modal, /join."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import discord
from discord import app_commands
from tests.sandbox.conftest import BOUND, Connect

from actorscope.sandbox import DiscordEmulator
from actorscope.sandbox._console import DiscordConsole


async def lines_of(*lines: str) -> AsyncIterator[str]:
    """An in-memory prompt input."""
    for line in lines:
        yield line + "\n"


class Bot(discord.Client):
    """A bot with a modal command, a user command and a select; it records what it gets."""

    def __init__(self) -> None:
        intents = discord.Intents.default()
        intents.members = True
        super().__init__(intents=intents)
        self.tree = app_commands.CommandTree(self)
        self.got: asyncio.Queue[object] = asyncio.Queue()

    async def on_raw_reaction_add(self, payload: discord.RawReactionActionEvent) -> None:
        """Record a reaction."""
        await self.got.put(("react", str(payload.emoji)))

    async def on_raw_reaction_remove(self, payload: discord.RawReactionActionEvent) -> None:
        """Record a reaction taken back."""
        await self.got.put(("unreact", str(payload.emoji)))

    async def on_member_join(self, member: discord.Member) -> None:
        """Record a join."""
        await self.got.put(("join", member.name))


class Ask(discord.ui.Modal, title="Ask"):
    """One question."""

    question: discord.ui.TextInput[Ask] = discord.ui.TextInput(label="Your question")

    def __init__(self, got: asyncio.Queue[object]) -> None:
        super().__init__()
        self.got = got

    async def on_submit(self, interaction: discord.Interaction[Any]) -> None:
        """Record the question."""
        await self.got.put(("modal", self.question.value))
        await interaction.response.send_message("asked", ephemeral=True)


async def test_prompt_user_actions_reach_the_bot(emu: DiscordEmulator, connect: Connect) -> None:
    """Each command of the prompt acts as the speaker and the bot hears it."""
    bot = Bot()

    @bot.tree.command(name="ask", description="Ask a question")
    async def ask(interaction: discord.Interaction[Any]) -> None:
        await interaction.response.send_modal(Ask(bot.got))

    @bot.tree.context_menu(name="Greet")
    async def greet(interaction: discord.Interaction[Any], member: discord.Member) -> None:
        await bot.got.put(("menu", member.name))
        await interaction.response.send_message("hello")

    printed: list[str] = []
    console = DiscordConsole(emu, printed.append)
    general = emu.world.channel("general")
    menu = {
        "type": 1,
        "components": [
            {"type": 3, "custom_id": "size", "options": [{"label": "L", "value": "large"}]}
        ],
    }
    async with connect(bot):
        await bot.tree.sync()
        await emu.post(emu.world.bot, general, "pick a size", components=[menu])
        await console.run(
            lines_of(
                "/as carol @general",
                "/react 👍",
                "/unreact 👍",
                "/pick size large",
                "/menu Greet @bob",
                "/slash ask",
            ),
        )
        await emu.wait_for(lambda: any("opens the modal" in line for line in printed) or None)
        await console.run(
            lines_of(
                '/modal "your question=Why owls?"',
                "/join erin",
                "/pick size small",
                "/modal question=again",
            ),
        )
        heard: list[object] = []
        try:
            async with asyncio.timeout(BOUND):
                while len(heard) < 5:
                    heard.append(await bot.got.get())
        except TimeoutError:
            raise AssertionError((heard, printed)) from None
    assert heard == [
        ("react", "👍"),
        ("unreact", "👍"),
        ("menu", "bob"),
        ("modal", "Why owls?"),
        ("join", "erin"),
    ]
    picked = [i for i in emu.interactions.values() if i.data.get("custom_id") == "size"]
    assert picked[0].data["values"] == ["large"]
    assert "[bot opens the modal 'Ask' for carol: your question]  (/modal INPUT=VALUE ...)" in (
        printed
    )
    assert "erin joined sandbox" in printed
    assert "error: select has no option 'small' (options: ['large'])" in printed
    assert "error: the bot has opened no modal for carol" in printed
    console.close()

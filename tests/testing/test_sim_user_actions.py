"""The kit's events for what people do besides writing: a photo whose caption is a command, a
poll vote, a reaction and a modal submit, each reaching the bot as the platform sends it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import discord
from discord import app_commands
from discord.ext import commands

from actorscope.channels import IgnoreReason
from actorscope.channels.discord import bot_intents
from actorscope.integrations.discord_ext import ActorscopeCog
from actorscope.testing import DiscordSim, Grants, TelegramSim, Turn


async def test_a_photo_caption_command_is_judged_like_a_typed_one(
    telegram_sim: TelegramSim, actorscope_grants: Grants
) -> None:
    """A photo captioned with a command reaches the turn and is judged as the sender."""
    alice, bob = telegram_sim.user("alice"), telegram_sim.user("bob")
    family = telegram_sim.group("family")
    await actorscope_grants.allow(f"group:telegram:{family.id}", alice)

    @telegram_sim.handler
    async def bot(turn: Turn) -> None:
        decision = await turn.check("file_writer")
        await turn.reply(f"{turn.request.content}: {decision.reason}")

    telegram_sim.should_deny("file_writer", reason="no_grant", sender=bob)
    telegram_sim.should_send(text="/save chart: no_grant", chat=family)
    event = await telegram_sim.photo(bob, family, caption="/save chart")
    assert event.payload["message"]["photo"][0]["width"] == 2
    telegram_sim.should_allow("file_writer", reason="granted", sender=alice)
    telegram_sim.should_send(text="/save chart: granted", chat=family)
    await telegram_sim.photo(alice, family, caption="/save chart")


async def test_a_vote_reaches_the_bot_and_is_no_message(telegram_sim: TelegramSim) -> None:
    """A vote in the bot's poll is a poll_answer naming the voter; the runner says it is no
    event it handles (no turn, no check: nothing is judged silently)."""
    alice = telegram_sim.user("alice")
    devs = telegram_sim.supergroup("devs")
    sent = await telegram_sim.emu.call(
        "sendPoll",
        {"chat_id": devs.id, "question": "Ship?", "options": ["yes", "no"], "is_anonymous": False},
    )
    assert sent.ok
    event = await telegram_sim.vote(alice, devs, ["no"])
    answer = event.payload["poll_answer"]
    assert (answer["user"]["id"], answer["option_ids"]) == (alice.id, [1])
    assert event.ignored is IgnoreReason.UNSUPPORTED_EVENT


class Ask(discord.ui.Modal, title="Ask"):
    """One question, answered privately."""

    question: discord.ui.TextInput[Ask] = discord.ui.TextInput(
        label="Question", custom_id="question"
    )

    async def on_submit(self, interaction: discord.Interaction[Any]) -> None:
        """Answer the question."""
        await interaction.response.send_message(f"asked: {self.question.value}", ephemeral=True)


async def test_a_reaction_and_a_modal_reach_a_served_bot(
    discord_sim: DiscordSim, tmp_path: Path
) -> None:
    """react() returns once the bot handled the reaction; submit_modal() fills in the modal
    the bot opened and returns once the bot answered it."""
    bot = commands.Bot(command_prefix="!", intents=bot_intents())
    await bot.add_cog(
        ActorscopeCog(bot, database=discord_sim.env.db, workspace=tmp_path / "workspace")
    )
    reactions: list[str] = []

    @bot.listen()
    async def on_raw_reaction_add(payload: discord.RawReactionActionEvent) -> None:
        reactions.append(f"{payload.user_id}:{payload.emoji}")

    @bot.tree.command(name="ask", description="Ask a question")
    async def ask(interaction: discord.Interaction[Any]) -> None:
        await interaction.response.send_modal(Ask())

    carol = discord_sim.user("carol")
    lab = discord_sim.guild("lab", owner=carol)
    general = discord_sim.channel(lab, "general")
    await discord_sim.serve_bot(bot)
    said = await discord_sim.message(carol, "hello", general)
    await discord_sim.react(carol, said, "👍")
    assert reactions == [f"{carol.id}:👍"]
    assert isinstance(bot.tree, app_commands.CommandTree)
    opened = await discord_sim.slash(carol, "ask", general)
    discord_sim.should_send(text="asked: why owls?", chat=general, ephemeral=True)
    await discord_sim.submit_modal(carol, opened, {"question": "why owls?"})

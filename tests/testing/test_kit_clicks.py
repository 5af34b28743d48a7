"""A test clicks what the bot sent, on both simulators: the button on the bot's own message.

``discord_sim.click(user, channel, "show")`` presses the button on the bot's latest message in
that channel that has it and returns once a plain ``discord.ui.View``'s callback has answered;
its ephemeral answer is recorded as such. Each event's ``sent`` observations carry the bot's
message ids, so a test can name the message it clicks on either platform.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import discord
import pytest
from discord.ext import commands
from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.ext import CallbackQueryHandler, CommandHandler, ContextTypes

from actorscope.channels.discord import bot_intents
from actorscope.integrations.discord_ext import ActorscopeCog
from actorscope.integrations.ptb import install
from actorscope.testing import DiscordSim, TelegramSim
from actorscope.testing._expect import ExpectationError


class Menu(discord.ui.View):
    """A plain view: "show" answers only the clicker, after some work of its own."""

    @discord.ui.button(label="Show", custom_id="show")
    async def show(
        self, interaction: discord.Interaction[Any], button: discord.ui.Button[Menu]
    ) -> None:
        """Answer ephemerally once the (simulated) work is done."""
        await asyncio.sleep(0.05)  # the click must wait for this callback, not race it
        await interaction.response.send_message(f"for {interaction.user.name}", ephemeral=True)

    @discord.ui.button(label="Ignore", custom_id="ignore")
    async def ignore(
        self, interaction: discord.Interaction[Any], button: discord.ui.Button[Menu]
    ) -> None:
        """Never answer (Discord then shows "This interaction failed")."""


@pytest.fixture
async def menu_bot(discord_sim: DiscordSim, tmp_path: Path) -> commands.Bot:
    """A commands.Bot whose ``!menu`` replies with a Menu view; served by the simulator."""
    bot = commands.Bot(command_prefix="!", intents=bot_intents())
    await bot.add_cog(
        ActorscopeCog(bot, database=discord_sim.env.db, workspace=tmp_path / "workspace")
    )

    @bot.command(name="menu")
    async def menu(ctx: commands.Context[commands.Bot]) -> None:
        await ctx.reply("pick one", view=Menu(), mention_author=False)

    await discord_sim.serve_bot(bot)
    return bot


async def test_discord_click_presses_the_view_on_the_bots_reply(
    discord_sim: DiscordSim, menu_bot: commands.Bot
) -> None:
    """The click reaches the view on the bot's reply and returns after its ephemeral answer."""
    carol = discord_sim.user("carol")
    lab = discord_sim.guild("lab", owner=carol)
    general = discord_sim.channel(lab, "general")
    discord_sim.should_send(text="pick one", chat=general, ephemeral=False)
    asked = await discord_sim.message(carol, "!menu", general)
    menu = asked.sent[0].message_id
    discord_sim.should_send(text="for carol", chat=general, ephemeral=True)
    clicked = await discord_sim.click(carol, general, "show")
    [answer] = discord_sim.emulator.ephemeral
    assert answer.ephemeral_to == carol
    assert clicked.sent[0].message_id == answer.id
    assert answer.id not in discord_sim.world.messages  # never a channel message
    pressed = list(discord_sim.emulator.interactions.values())[-1]
    assert pressed.message is not None
    assert pressed.message.id == menu  # the bot's own reply, not a made-up message
    assert pressed.callbacks == [4]


async def test_discord_click_names_the_message_by_its_id(
    discord_sim: DiscordSim, menu_bot: commands.Bot
) -> None:
    """``message=`` presses an older message of the bot, named by an event's sent id."""
    carol, dave = discord_sim.user("carol"), discord_sim.user("dave")
    lab = discord_sim.guild("lab", owner=carol)
    general = discord_sim.channel(lab, "general")
    first = await discord_sim.message(carol, "!menu", general)
    await discord_sim.message(carol, "!menu", general)
    discord_sim.should_send(text="for dave", chat=general, ephemeral=True)
    await discord_sim.click(dave, general, "show", message=first.sent[0].message_id)
    pressed = list(discord_sim.emulator.interactions.values())[-1]
    assert pressed.message is not None
    assert pressed.message.id == first.sent[0].message_id


async def test_discord_click_without_the_bots_button_or_answer_fails_clearly(
    discord_sim: DiscordSim, menu_bot: commands.Bot
) -> None:
    """No bot message with that button is a LookupError; an unanswered click fails the test."""
    carol = discord_sim.user("carol")
    lab = discord_sim.guild("lab", owner=carol)
    general = discord_sim.channel(lab, "general")
    with pytest.raises(LookupError, match="no message of the bot in #general has a button"):
        await discord_sim.click(carol, general, "show")
    await discord_sim.message(carol, "!menu", general)
    with pytest.raises(AssertionError, match="did not answer the interaction within 3s"):
        await discord_sim.click(carol, general, "ignore")


async def test_expectations_see_whether_a_reply_is_ephemeral(
    discord_sim: DiscordSim, menu_bot: commands.Bot
) -> None:
    """should_send(ephemeral=False) does not match an ephemeral answer."""
    carol = discord_sim.user("carol")
    lab = discord_sim.guild("lab", owner=carol)
    general = discord_sim.channel(lab, "general")
    await discord_sim.message(carol, "!menu", general)
    discord_sim.should_send(text="for carol", ephemeral=False)
    with pytest.raises(ExpectationError, match="ephemeral: expected 'false', got 'true'"):
        await discord_sim.click(carol, general, "show")


async def test_telegram_click_presses_the_bots_latest_message(telegram_sim: TelegramSim) -> None:
    """``telegram_sim.click(user, chat, data)`` needs no message id; ``message=`` names one."""

    async def menu(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.effective_message is not None
        keyboard = [[InlineKeyboardButton("Show", callback_data="show")]]
        await update.effective_message.reply_text(
            "pick one", reply_markup=InlineKeyboardMarkup(keyboard)
        )

    async def show(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        query, chat = update.callback_query, update.effective_chat
        assert query is not None
        assert query.message is not None
        assert chat is not None
        await chat.send_message(f"shown from {query.message.message_id}")

    app = telegram_sim.application_builder().build()
    install(app, database=telegram_sim.env.db, agent=telegram_sim.env.agent.key)
    app.add_handler(CommandHandler("menu", menu))
    app.add_handler(CallbackQueryHandler(show))
    await telegram_sim.serve_application(app)
    alice = telegram_sim.user("alice")
    first = await telegram_sim.message(alice, "/menu")
    second = await telegram_sim.message(alice, "/menu")
    latest, older = second.sent[0].message_id, first.sent[0].message_id
    private = telegram_sim.chat_id(alice)
    telegram_sim.should_send(text=f"shown from {latest}", ephemeral=False)
    await telegram_sim.click(alice, private, "show")
    telegram_sim.should_send(text=f"shown from {older}")
    await telegram_sim.click(alice, private, "show", message=older)
    with pytest.raises(TypeError, match="the message id goes in message="):
        await telegram_sim.click(alice, private, older)  # type: ignore[arg-type]

"""Links in the PTB and aiogram gates and the discord.py Cog (issue 34): ``install(links=...)``
and ``ActorscopeCog(links=...)`` answer ``/link`` (``!link``) as ``actorscope run`` and the kit
do, and a linked account's DMs reach the bot's handlers in its person's scope."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from aiogram import Dispatcher
from aiogram.types import Message as AiogramMessage
from discord.ext import commands
from telegram import Update
from telegram.ext import ApplicationBuilder, CommandHandler, ContextTypes, MessageHandler, filters

from actorscope.channels.discord import bot_intents
from actorscope.context import current_identity
from actorscope.errors import ConfigError
from actorscope.integrations import aiogram as aiogram_gate
from actorscope.integrations import ptb
from actorscope.integrations.discord_ext import ActorscopeCog, identity_of
from actorscope.testing import DiscordSim, SimulatedEvent, TelegramSim

CODE = re.compile(r"your link code is ([A-Z0-9]{5}-[A-Z0-9]{5})")


def texts(event: SimulatedEvent) -> list[str]:
    """What the bot sent for one event."""
    return [seen.fields["text"] for seen in event.sent]


async def _scope_reply(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    assert update.effective_message is not None
    scope = ptb.identity_of(update, context).user_id
    await update.effective_message.reply_text(f"scope {scope}")


async def _walk(sim: TelegramSim) -> None:
    """Ann asks for a code, Bob's account (the same human) sends it: both DMs are one scope;
    the bot's own handler never sees /link, and no code is given in a group."""
    sim.user("ann")
    sim.user("bob")
    team = sim.supergroup("team")
    (answer,) = texts(await sim.message("ann", "/link"))
    found = CODE.search(answer)
    assert found is not None, answer
    (linked,) = texts(await sim.message("bob", f"/link {found.group(1)}"))
    assert linked.startswith(f"linked: telegram:{sim.user('bob').id}")
    (on_ann,) = texts(await sim.message("ann", "where"))
    (on_bob,) = texts(await sim.message("bob", "where"))
    assert on_ann == on_bob
    assert on_ann.startswith("scope person:")
    (in_group,) = texts(await sim.message("ann", "/link", team))
    assert in_group.startswith("refused (group_context)")


@pytest.mark.parametrize("links", ["dm"])
async def test_ptb_gate_answers_link_and_scopes_the_person(
    telegram_sim: TelegramSim, links: str
) -> None:
    """install(links="dm") on a PTB application: /link answered by the gate, DMs in the
    person's scope."""
    app = telegram_sim.application_builder().build()
    ptb.install(app, database=":memory:", links=links)
    app.add_handler(MessageHandler(filters.ALL, _scope_reply))
    assert await telegram_sim.serve_application(app) is not None
    await _walk(telegram_sim)


async def test_aiogram_gate_answers_link_and_scopes_the_person(telegram_sim: TelegramSim) -> None:
    """install(dp, links="dm") on an aiogram dispatcher: the same walk as PTB's."""
    dp = Dispatcher()
    aiogram_gate.install(dp, database=":memory:", links="dm")

    @dp.message()
    async def scope(message: AiogramMessage, **_: Any) -> None:
        bound = current_identity()
        assert bound is not None
        await message.answer(f"scope {bound.user_id}")

    await telegram_sim.serve_dispatcher(dp)
    await _walk(telegram_sim)


def test_a_bad_links_mode_is_one_clear_error() -> None:
    """links takes off, dm or grants only."""
    app_dp = Dispatcher()
    with pytest.raises(ConfigError, match="links must be one of 'off', 'dm', 'grants'"):
        aiogram_gate.install(app_dp, database=":memory:", links="all")


def code_in(event: SimulatedEvent) -> str:
    """The link code the bot answered ``event`` with."""
    (answer,) = texts(event)
    found = CODE.search(answer)
    assert found is not None, answer
    return found.group(1)


class LinkBot(commands.Bot):
    """A discord.py bot with the ActorscopeCog (``cog`` options) added in ``setup_hook`` and
    ``where`` (the scope the command runs in), with ``prefix``."""

    def __init__(self, workspace: Path, prefix: str = "!", **cog: Any) -> None:
        super().__init__(command_prefix=prefix, intents=bot_intents())
        self.cog = ActorscopeCog(self, database="bot.db", workspace=workspace, **cog)

    async def setup_hook(self) -> None:
        """Add the Cog (adopted by the simulator) and ``where``."""
        await self.add_cog(self.cog)

        @self.command(name="where")
        async def where(ctx: commands.Context[Any]) -> None:
            await ctx.reply(f"scope {(await identity_of(ctx)).user_id}", mention_author=False)


@pytest.mark.parametrize("prefix", ["!", "?", "link ", "bot "])
async def test_the_cog_answers_link_and_scopes_the_person(
    discord_sim: DiscordSim, tmp_path: Path, prefix: str
) -> None:
    """ActorscopeCog(links="dm"): the bot's prefix (any string, "link " too) + link asks for
    a code in a DM, + link CODE from another account links the two (their DMs are one scope),
    no code is given in a guild, and a code shown there is burnt."""
    await discord_sim.serve_bot(LinkBot(tmp_path, prefix, links="dm"))
    ann, bob, eve = discord_sim.user("ann"), discord_sim.user("bob"), discord_sim.user("eve")
    general = discord_sim.channel(discord_sim.guild("lab"), "general")
    code = code_in(await discord_sim.dm(ann, f"{prefix}link"))
    (linked,) = texts(await discord_sim.dm(bob, f"{prefix}link {code}"))
    assert linked.startswith(f"linked: discord:{bob.id} is now one person")
    (on_ann,) = texts(await discord_sim.dm(ann, f"{prefix}where"))
    (on_bob,) = texts(await discord_sim.dm(bob, f"{prefix}where"))
    assert on_ann == on_bob
    assert on_ann.startswith("scope person:")
    (in_guild,) = texts(await discord_sim.message(ann, f"{prefix}link", general))
    assert in_guild.startswith("refused (group_context)")
    shown = code_in(await discord_sim.dm(ann, f"{prefix}link"))
    (burnt,) = texts(await discord_sim.message(ann, f"{prefix}link {shown}", general))
    assert burnt.startswith("refused (group_context)")
    (tried,) = texts(await discord_sim.dm(eve, f"{prefix}link {shown}"))
    assert tried.startswith("refused (used_code)")
    (unlinked,) = texts(await discord_sim.dm(bob, f"{prefix}unlink"))
    assert unlinked.startswith("unlinked:")
    (alone,) = texts(await discord_sim.dm(bob, f"{prefix}where"))
    assert alone == f"scope {bob.id}"


async def test_a_code_from_ptb_links_an_account_of_the_cog(
    telegram_sim: TelegramSim, discord_sim: DiscordSim, tmp_path: Path
) -> None:
    """A PTB application and a discord.py bot on one database, both with links="dm": a code
    asked for on Telegram, sent from Discord, makes one person of the two accounts."""
    app = telegram_sim.application_builder().build()
    ptb.install(app, database=":memory:", links="dm")
    app.add_handler(MessageHandler(filters.ALL, _scope_reply))
    await telegram_sim.serve_application(app)
    await discord_sim.serve_bot(LinkBot(tmp_path, links="dm"))
    telegram_sim.user("ann")
    carol = discord_sim.user("carol")
    code = code_in(await telegram_sim.message("ann", "/link"))
    (linked,) = texts(await discord_sim.dm(carol, f"!link {code}"))
    assert linked.startswith(f"linked: discord:{carol.id}")
    (on_telegram,) = texts(await telegram_sim.message("ann", "where"))
    (on_discord,) = texts(await discord_sim.dm(carol, "!where"))
    assert on_telegram == on_discord
    assert on_discord.startswith("scope person:")


async def test_with_links_off_link_is_the_bots_own_command(
    discord_sim: DiscordSim, tmp_path: Path
) -> None:
    """By default the Cog adds no link command: the bot's own ``!link`` runs."""
    bot = LinkBot(tmp_path)

    @bot.command(name="link")
    async def link(ctx: commands.Context[Any]) -> None:
        await ctx.reply("the bot's own link", mention_author=False)

    await discord_sim.serve_bot(bot)
    ann = discord_sim.user("ann")
    assert texts(await discord_sim.dm(ann, "!link")) == ["the bot's own link"]
    assert texts(await discord_sim.dm(ann, "!unlink")) == []


async def test_links_on_and_a_link_command_of_the_bots_is_one_clear_error(
    tmp_path: Path,
) -> None:
    """A bot with its own ``unlink`` command cannot load ActorscopeCog(links="grants"): one
    ConfigError, and its own command stays."""
    bot = commands.Bot(command_prefix="!", intents=bot_intents())

    @bot.command(name="unlink")
    async def unlink(ctx: commands.Context[Any]) -> None:
        await ctx.reply("mine")

    cog = ActorscopeCog(bot, database=":memory:", workspace=tmp_path, links="grants")
    with pytest.raises(ConfigError, match="answers 'unlink' itself, but the bot has"):
        await bot.add_cog(cog)
    assert bot.get_command("unlink") is unlink
    assert bot.get_command("link") is None


def test_a_bad_links_mode_of_the_cog_is_one_clear_error(tmp_path: Path) -> None:
    """ActorscopeCog takes off, dm or grants only."""
    bot = commands.Bot(command_prefix="!", intents=bot_intents())
    with pytest.raises(ConfigError, match="links must be one of 'off', 'dm', 'grants'"):
        ActorscopeCog(bot, database=":memory:", workspace=tmp_path, links="yes")


async def test_the_cog_burns_a_code_pasted_in_a_guild(
    discord_sim: DiscordSim, tmp_path: Path
) -> None:
    """ActorscopeCog(links="dm") hears a guild's plain text: a live code pasted there (no
    command) is burnt without an answer and can no longer link."""
    await discord_sim.serve_bot(LinkBot(tmp_path, links="dm"))
    ann, eve = discord_sim.user("ann"), discord_sim.user("eve")
    general = discord_sim.channel(discord_sim.guild("lab"), "general")
    code = code_in(await discord_sim.dm(ann, "!link"))
    assert texts(await discord_sim.message(ann, f"my code is {code}", general)) == []
    (tried,) = texts(await discord_sim.dm(eve, f"!link {code}"))
    assert tried.startswith("refused (used_code)")


async def test_the_ptb_gate_burns_a_code_pasted_in_a_group(telegram_sim: TelegramSim) -> None:
    """install(links="dm"): a live code pasted as plain text in a group reaches the bot's
    handler as before, and is burnt: it can no longer link."""
    app = telegram_sim.application_builder().build()
    ptb.install(app, database=":memory:", links="dm")
    app.add_handler(MessageHandler(filters.ALL, _scope_reply))
    await telegram_sim.serve_application(app)
    telegram_sim.user("ann")
    telegram_sim.user("bob")
    team = telegram_sim.supergroup("team")
    code = code_in(await telegram_sim.message("ann", "/link"))
    (answer,) = texts(await telegram_sim.message("ann", f"here: {code}", team))
    assert answer == f"scope group:telegram:{team.id}"
    (tried,) = texts(await telegram_sim.message("bob", f"/link {code}"))
    assert tried.startswith("refused (used_code)")


@pytest.mark.parametrize("name", ["link", "unlink"])
def test_ptb_install_with_links_refuses_the_apps_own_link_handler(name: str) -> None:
    """install(links="dm") on an application with its own /link or /unlink CommandHandler is one
    ConfigError naming it; with links off the handler stays the application's."""
    app = ApplicationBuilder().token("123:" + "A" * 35).build()
    app.add_handler(CommandHandler(["start", name], _scope_reply), group=3)
    with pytest.raises(ConfigError, match=rf"answers /{name} itself, but the application has"):
        ptb.install(app, database=":memory:", links="dm")
    assert ptb.install(app, database=":memory:") is not None

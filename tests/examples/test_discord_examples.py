"""discord.py 2.7.1's own example bots, unchanged, against the Discord emulator.

Each example runs in a subprocess pointed at the emulator the way ``actorscope sandbox
--platform discord -- CMD`` points a bot's own process (the sandbox's ``sitecustomize`` sets
discord.py's REST base and gateway; the emulator's world accepts the example's placeholder
token), started by ``launch.py`` (placeholder ids, stand-ins), and is driven the
way its users drive it, through the emulator's user actions only: they write, mention the bot,
edit and delete, click buttons, pick in selects, run slash and context-menu commands, submit
modals, react, and join the guild. No test pushes a raw event. The placeholder ids some examples
ask the reader to replace (``discord.Object(id=0)``) are filled in by ``launch.py`` as the
reader would; ids that could be real (``get_channel(1234567)``) are given to the world.

``basic_voice.py`` is not run: voice (a voice gateway, RTP audio, youtube_dl) is not emulated.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web
from tests.examples._run import BOUND, DPY, Example, launched

from actorscope._aio import Site
from actorscope.sandbox import DiscordEmulator, DiscordMessage, DiscordWorld
from actorscope.sandbox._bootstrap import sitecustomize
from actorscope.sandbox._world import ChannelType as DiscordChannelType
from actorscope.sandbox._world import Permission as DiscordPermission

JSON = dict[str, Any]
#: What the bot may do in the test guild, through its role.
BOT_PERMISSIONS = (
    DiscordPermission.MANAGE_CHANNELS
    | DiscordPermission.MANAGE_ROLES
    | DiscordPermission.MANAGE_MESSAGES
    | DiscordPermission.MODERATE_MEMBERS
)


def world(token: str = "token") -> DiscordWorld:  # noqa: S107 - the examples' placeholder token
    """The guild ``lab`` owned by alice, with bob and carol, #general (the system channel)
    and #random; the bot holds a role that may manage channels, roles, messages and members."""
    lab = DiscordWorld(token=token)
    alice = lab.add_user("alice")
    guild = lab.add_guild("lab", owner=alice)
    role = lab.add_role(guild, "bots", int(BOT_PERMISSIONS))
    guild.members[lab.bot.id].roles.append(role.id)
    for name in ("bob", "carol"):
        lab.join(guild, lab.add_user(name))
    lab.add_channel(guild, "general")
    lab.add_channel(guild, "random")
    return lab


class Running:
    """A running discord.py example, its emulator and waits on what the bot does."""

    def __init__(self, emu: DiscordEmulator, example: Example) -> None:
        self.emu = emu
        self.example = example

    @property
    def guild(self) -> DiscordWorld.Guild:
        return self.emu.world.guild("lab")

    def channel(self, name: str) -> DiscordWorld.Channel:
        return self.emu.world.channel(name)

    def mention(self) -> str:
        """How a person mentions the bot in a message."""
        return f"<@{self.emu.world.bot.id}>"

    async def says(self, text: str, *, after: int = 0, ephemeral: bool = False) -> DiscordMessage:
        """The bot's first message (above ``after``) whose content has ``text``."""
        pool = self.emu.ephemeral if ephemeral else self.emu.messages

        def found() -> DiscordMessage | None:
            for message in pool:
                if (
                    message.author.id == self.emu.world.bot.id
                    and message.id > after
                    and text in message.content
                ):
                    return message
            return None

        message = await self.example.until(self.emu.wait_for(found))
        await self.example.until(self.emu.wait_answered())
        return message

    async def posts(self, *, after: int = 0) -> DiscordMessage:
        """The bot's next channel message above ``after``."""
        message = await self.example.until(self.emu.wait_for_bot_message(after=after))
        await self.example.until(self.emu.wait_answered())
        return message

    async def act(
        self, start: Callable[[], Awaitable[DiscordWorld.Interaction]]
    ) -> DiscordWorld.Interaction:
        """Start an interaction (``start``: a click, a pick) and return it once the bot has
        answered. A bot stores a message's view only after Discord answered its send, so a
        person quicker than that gets no answer ("This interaction failed" after Discord's
        3 seconds) and clicks again; so does this, twice at most."""
        for _ in range(3):
            interaction = await start()

            def answered(tried: DiscordWorld.Interaction = interaction) -> list[int] | None:
                return tried.callbacks or None

            try:
                await self.example.until(self.emu.wait_for(answered), 3.0)
            except TimeoutError:
                continue
            return interaction
        raise TimeoutError(f"the bot answered none of 3 tries:\n{self.example.output()}")

    async def click(
        self, who: str, message: DiscordMessage, custom_id: str
    ) -> DiscordWorld.Interaction:
        """``who`` clicks a button of ``message``; the interaction once the bot answered."""
        return await self.act(lambda: self.emu.click(who, message, custom_id))

    async def select(
        self, who: str, message: DiscordMessage, custom_id: str, values: Sequence[Any]
    ) -> DiscordWorld.Interaction:
        """``who`` picks ``values`` in a select of ``message``, once the bot answered."""
        return await self.act(lambda: self.emu.select(who, message, custom_id, values))

    async def answer(self, interaction: Any) -> DiscordMessage:
        """The bot's reply to ``interaction`` (a message, ephemeral or not)."""
        return await self.example.until(self.emu.wait_for_reply(interaction))

    async def callback(self, interaction: Any) -> list[int]:
        """The callback types the bot answered ``interaction`` with, once it has."""
        await self.example.until(self.emu.wait_for(lambda: interaction.callbacks or None))
        return list(interaction.callbacks)

    async def synced(self, guild_id: int | None = None) -> list[JSON]:
        """The application commands the bot synced (globally, or to ``guild_id``)."""
        return await self.example.until(
            self.emu.wait_for(lambda: self.emu.commands.get(guild_id) or None)
        )


@contextlib.asynccontextmanager
async def running(
    name: str,
    cwd: Path,
    lab: DiscordWorld | None = None,
    *,
    fill: Sequence[tuple[str, str]] = (),
    env: Mapping[str, str] | None = None,
) -> AsyncIterator[Running]:
    """Run the discord.py example ``name`` against an emulator of ``lab`` (default:
    :func:`world`) until it has connected; ``fill`` fills in its placeholder lines."""
    async with DiscordEmulator(lab if lab is not None else world(), wait_timeout=BOUND) as emu:
        extra = dict(env or {})
        # The sandbox's own way of pointing a bot's process at the emulator: its sitecustomize
        # first on PYTHONPATH (as `actorscope sandbox --platform discord -- CMD` runs a bot).
        paths = [str(Path(sitecustomize.__file__).parent), extra.pop("PYTHONPATH", "")]
        pointed = {
            "PYTHONPATH": os.pathsep.join(filter(None, paths)),
            sitecustomize.API: emu.api_url,
            sitecustomize.GATEWAY: emu.gateway_url,
            "EXAMPLE_FILL": json.dumps([list(pair) for pair in fill]),
            **extra,
        }
        async with launched("discord", DPY / name, cwd, pointed) as example:
            await example.until(emu.wait_connected())
            yield Running(emu, example)


# -- text commands and events ------------------------------------------------------------------


async def test_basic_bot_runs_its_commands(tmp_path: Path) -> None:
    """basic_bot: ?add, ?choose, ?joined (a member converter) and the ?cool group."""
    async with running("basic_bot.py", tmp_path) as bot:
        await bot.emu.say("bob", "general", "?add 2 40")
        await bot.says("42")
        await bot.emu.say("bob", "general", "?choose owls")
        await bot.says("owls")
        await bot.emu.say("bob", "general", "?joined carol")
        joined = await bot.says(" joined <t:")
        assert joined.content.startswith("carol joined")
        await bot.emu.say("bob", "general", "?cool bot")
        await bot.says("Yes, the bot is cool.")


async def test_reply_answers_with_a_reply(tmp_path: Path) -> None:
    """reply: !hello is answered with a reply that mentions the author."""
    async with running("reply.py", tmp_path) as bot:
        hello = await bot.emu.say("carol", "general", "!hello")
        reply = await bot.says("Hello!")
        assert reply.reference is not None
        assert reply.reference["message_id"] == str(hello.id)


async def test_deleted_notices_a_deleted_message(tmp_path: Path) -> None:
    """deleted: !deleteme deletes the bot's own messages; a user's deletion is reported."""
    async with running("deleted.py", tmp_path) as bot:
        await bot.emu.say("bob", "general", "!deleteme")
        first = await bot.says("I will delete myself now...")
        goodbye = await bot.says("Goodbye in 3 seconds...")
        await bot.example.until(bot.emu.wait_for(lambda: first.deleted or None))
        secret = await bot.emu.say("bob", "general", "a secret")
        await bot.emu.delete(secret)
        await bot.says("bob has deleted the message: a secret")
        await bot.example.until(bot.emu.wait_for(lambda: goodbye.deleted or None), BOUND)


async def test_edits_notices_an_edited_message(tmp_path: Path) -> None:
    """edits: a user's edit is reported with before and after; !editme edits the bot's own."""
    async with running("edits.py", tmp_path) as bot:
        said = await bot.emu.say("carol", "general", "tpyo")
        await bot.emu.edit(said, "typo")
        await bot.says("**carol** edited their message:\ntpyo -> typo")
        await bot.emu.say("carol", "general", "!editme")
        ten = await bot.says("10")
        await bot.example.until(bot.emu.wait_for(lambda: ten.content == "40" or None))


async def test_guessing_game_waits_for_the_guess(tmp_path: Path) -> None:
    """guessing_game: $guess, then the user's number is judged."""
    async with running("guessing_game.py", tmp_path) as bot:
        await bot.emu.say("alice", "general", "$guess")
        asked = await bot.says("Guess a number between 1 and 10.")
        # The bot listens for the guess only once Discord answered its question; a guess
        # typed before that goes unheard, so alice types it again until she is judged.
        verdict = None
        for _ in range(4):  # one second each: the game waits five
            await bot.emu.say("alice", "general", "7")
            with contextlib.suppress(TimeoutError):
                verdict = await bot.example.until(bot.emu.wait_for_bot_message(after=asked.id), 1.0)
                break
        assert verdict is not None
        assert verdict.content == "You are right!" or verdict.content.startswith("Oops.")


async def test_custom_context_reacts_to_the_guess(tmp_path: Path) -> None:
    """custom_context: !guess N gets a check mark or a cross, as a reaction of the bot."""
    lab = world(token="your token here")  # noqa: S106 - the example's placeholder
    async with running("custom_context.py", tmp_path, lab) as bot:
        guess = await bot.emu.say("bob", "general", "!guess 3")
        bot_id = bot.emu.world.bot.id
        marks = await bot.example.until(
            bot.emu.wait_for(
                lambda: [key for key, who in guess.reactions.items() if bot_id in who] or None
            )
        )
        assert marks in (["\N{WHITE HEAVY CHECK MARK}"], ["\N{CROSS MARK}"])


async def test_converters_convert_users_members_and_channels(tmp_path: Path) -> None:
    """converters: !userinfo (a user), !notify (a member or a text channel), !ignore, and a
    custom error for a user it cannot find."""
    async with running("converters.py", tmp_path) as bot:
        carol = bot.emu.world.user("carol")
        await bot.emu.say("alice", "general", f"!userinfo <@{carol.id}>")
        await bot.says(f"User found: {carol.id} -- carol")
        await bot.emu.say("alice", "general", "!userinfo nobody")
        await bot.says("Couldn't find that user.")
        random = bot.channel("random")
        await bot.emu.say("alice", "general", f"!notify <#{random.id}>")
        hello = await bot.says("Hello, random!")
        assert hello.channel.id == random.id
        await bot.emu.say("alice", "general", "!ignore bob")
        await bot.says("Member found: <@")
        await bot.emu.say("alice", "general", "!multiply 4 true")
        await bot.says("8")


async def test_new_member_is_welcomed_in_the_system_channel(tmp_path: Path) -> None:
    """new_member: a member who joins is welcomed in the guild's system channel."""
    async with running("new_member.py", tmp_path) as bot:
        dave = await bot.emu.add_member(bot.guild, "dave")
        welcome = await bot.says(f"Welcome <@{dave.id}> to lab!")
        assert welcome.channel.id == bot.guild.system_channel_id


async def test_secret_makes_a_hidden_channel(tmp_path: Path) -> None:
    """secret: @bot secret text NAME @role @member creates a channel only they can see."""
    lab = world()
    guild = lab.guild("lab")
    mods = lab.add_role(guild, "mods")
    async with running("secret.py", tmp_path, lab) as bot:
        bob = bot.emu.world.user("bob")
        await bot.emu.say(
            "alice", "general", f"{bot.mention()} secret text plans <@&{mods.id}> <@{bob.id}>"
        )
        plans = await bot.example.until(
            bot.emu.wait_for(
                lambda: next((c for c in guild.channels.values() if c.name == "plans"), None)
            )
        )
        assert plans.topic is not None
        assert plans.topic.startswith("Top secret text channel.")
        view = int(DiscordPermission.VIEW_CHANNEL)
        assert plans.overwrites[guild.id] == (0, view)  # @everyone cannot see it
        assert plans.overwrites[mods.id] == (view, 0)
        assert plans.overwrites[bob.id] == (view, 0)
        assert bob.id in plans.member_overwrites
        assert not guild.permissions_in(plans, bot.emu.world.user("carol").id) & view
        await bot.emu.say("alice", "general", f"{bot.mention()} secret voice lounge <@{bob.id}>")
        await bot.example.until(
            bot.emu.wait_for(
                lambda: next((c for c in guild.channels.values() if c.name == "lounge"), None)
            )
        )


async def test_background_tasks_post_the_counter(tmp_path: Path) -> None:
    """background_task and background_task_asyncio: a task posts a counter to a channel."""
    for name in ("background_task.py", "background_task_asyncio.py"):
        lab = world()
        lab.add_channel(lab.guild("lab"), "counter", channel_id=1234567)
        folder = tmp_path / name.removesuffix(".py")
        folder.mkdir()
        async with running(name, folder, lab) as bot:
            first = await bot.posts()
            assert (first.channel.id, first.content) == (1234567, "1")


#: The extensions advanced_startup.py loads (general, mod, dice): a user's own cogs, here one
#: command each, the last asking the bot's database pool.
EXTENSIONS = {
    "general": """
from discord.ext import commands


@commands.command()
async def hello(ctx):
    await ctx.send("hello from general")


async def setup(bot):
    bot.add_command(hello)
""",
    "mod": """
from discord.ext import commands


@commands.command()
async def warn(ctx, *, who):
    await ctx.send(f"{who}, you are warned")


async def setup(bot):
    bot.add_command(warn)
""",
    "dice": """
from discord.ext import commands


@commands.command()
async def roll(ctx):
    await ctx.send(f"the database rolled {await ctx.bot.db_pool.fetchval('SELECT 4')}")


async def setup(bot):
    bot.add_command(roll)
""",
}


async def test_advanced_startup_loads_extensions_with_a_database(
    tmp_path: Path, postgres_url: str
) -> None:
    """advanced_startup: its own startup (a file log, an aiohttp session, an asyncpg pool on
    PostgreSQL, extensions loaded in setup_hook) and commands answered by the extensions."""
    cogs = tmp_path / "cogs"
    cogs.mkdir()
    for module, code in EXTENSIONS.items():
        (cogs / f"{module}.py").write_text(code, encoding="utf-8")
    database = urlsplit(postgres_url)
    env = {
        "PYTHONPATH": str(cogs),
        "PGHOST": database.hostname or "127.0.0.1",
        "PGPORT": str(database.port or 5432),
        "PGDATABASE": database.path.lstrip("/"),
    }
    async with running("advanced_startup.py", tmp_path, env=env) as bot:
        await bot.emu.say("bob", "general", f"{bot.mention()} hello")
        await bot.says("hello from general")
        await bot.emu.say("bob", "general", f"{bot.mention()} warn carol")
        await bot.says("carol, you are warned")
        await bot.emu.say("bob", "general", f"{bot.mention()} roll")
        await bot.says("the database rolled 4")
    assert "has connected to Gateway" in (tmp_path / "discord.log").read_text(encoding="utf-8")


# -- views ---------------------------------------------------------------------------------


async def test_confirm_view_confirms(tmp_path: Path) -> None:
    """views/confirm: Confirm answers privately and the command goes on."""
    async with running("views/confirm.py", tmp_path) as bot:
        await bot.emu.say("bob", "general", "$ask")
        question = await bot.says("Do you want to continue?")
        (confirm, _) = button_custom_ids(question)
        click = await bot.click("bob", question, confirm)
        answer = await bot.answer(click)
        assert (answer.content, answer.ephemeral_to) == ("Confirming", bot.emu.world.user("bob"))
        await bot.example.wait(lambda: "Confirmed..." in bot.example.output())


async def test_counter_view_counts_clicks(tmp_path: Path) -> None:
    """views/counter: each click edits the button's label; at 5 it turns green and off."""
    async with running("views/counter.py", tmp_path) as bot:
        await bot.emu.say("carol", "general", "$counter")
        counter = await bot.says("Press!")
        (button,) = button_custom_ids(counter)
        for count in range(1, 6):
            click = await bot.click("carol", counter, button)
            assert await bot.callback(click) == [7]
            assert first_button(counter)["label"] == str(count)
        assert first_button(counter)["disabled"] is True


async def test_dropdown_view_answers_the_pick(tmp_path: Path) -> None:
    """views/dropdown: picking a colour is answered."""
    async with running("views/dropdown.py", tmp_path) as bot:
        await bot.emu.say("alice", "general", "$colour")
        menu = await bot.says("Pick your favourite colour:")
        (select,) = select_custom_ids(menu)
        pick = await bot.select("alice", menu, select, ["Green"])
        answer = await bot.answer(pick)
        assert answer.content == "Your favourite colour is Green"


async def test_ephemeral_counter_counts_in_private(tmp_path: Path) -> None:
    """views/ephemeral: the button answers with a private counter, which counts clicks."""
    async with running("views/ephemeral.py", tmp_path) as bot:
        await bot.emu.say("bob", "general", "$counter")
        shown = await bot.says("Press!")
        (button,) = button_custom_ids(shown)
        private = await bot.answer(await bot.click("bob", shown, button))
        assert (private.content, private.ephemeral_to) == ("Enjoy!", bot.emu.world.user("bob"))
        (counter,) = button_custom_ids(private)
        click = await bot.click("bob", private, counter)
        assert await bot.callback(click) == [7]
        assert first_button(private)["label"] == "1"


async def test_link_view_has_a_url_button(tmp_path: Path) -> None:
    """views/link: $google answers with a link button to the search."""
    async with running("views/link.py", tmp_path) as bot:
        await bot.emu.say("carol", "general", "$google barn owls")
        answer = await bot.says("Google Result for: `barn owls`")
        assert first_button(answer)["url"] == "https://www.google.com/search?q=barn+owls"


async def test_tic_tac_toe_plays_to_a_win(tmp_path: Path) -> None:
    """views/tic_tac_toe: nine buttons; X takes the top row and wins."""
    async with running("views/tic_tac_toe.py", tmp_path) as bot:
        await bot.emu.say("alice", "general", "$tic")
        board = await bot.says("Tic Tac Toe: X goes first")
        cells = button_custom_ids(board)  # column by column: x*3 + y
        for x, y in ((0, 0), (0, 1), (1, 0), (1, 1), (2, 0)):
            click = await bot.click("alice", board, cells[x * 3 + y])
            await bot.callback(click)
        assert board.content == "X won!"
        assert all(b.get("disabled") for b in buttons(board))


async def test_layout_view_answers_its_button(tmp_path: Path) -> None:
    """views/layout: a components-only message; its button answers privately."""
    async with running("views/layout.py", tmp_path) as bot:
        await bot.emu.say("bob", "general", "$layout")
        layout = await bot.posts()
        assert layout.content == ""
        assert layout.flags & (1 << 15)  # IS_COMPONENTS_V2
        (button,) = button_custom_ids(layout)
        answer = await bot.answer(await bot.click("bob", layout, button))
        assert answer.content == "Hi!"


async def test_persistent_view_and_dynamic_button(tmp_path: Path) -> None:
    """views/persistent: the owner's $prepare view answers each colour; a dynamic button
    answers only its owner."""
    async with running("views/persistent.py", tmp_path) as bot:
        await bot.emu.say("alice", "general", "$prepare")
        colours = await bot.says("What's your favourite colour?")
        answer = await bot.answer(await bot.click("carol", colours, "persistent_view:red"))
        assert answer.content == "This is red."
        await bot.emu.say("bob", "general", "$dynamic_button")
        mine = await bot.says("Here is your very own button!")
        bob = bot.emu.world.user("bob")
        answer = await bot.answer(await bot.click("bob", mine, f"button:user:{bob.id}"))
        assert answer.content == "This is your very own button!"


async def test_dynamic_counter_counts_for_its_owner(tmp_path: Path) -> None:
    """views/dynamic_counter: the button keeps its count in its custom id."""
    async with running("views/dynamic_counter.py", tmp_path) as bot:
        await bot.emu.say("carol", "general", f"{bot.mention()} counter")
        counter = await bot.says("Here is your very own button!")
        carol = bot.emu.world.user("carol")
        click = await bot.click("carol", counter, f"counter:0:user:{carol.id}")
        assert await bot.callback(click) == [7]
        assert first_button(counter)["label"] == "Total: 1"
        assert first_button(counter)["custom_id"] == f"counter:1:user:{carol.id}"


async def test_settings_view_sets_and_sends(tmp_path: Path) -> None:
    """views/settings: a layout of selects (fruit, channel, members), a count set through a
    modal, a toggle and Finish; then @bot send posts the emojis where the settings say."""
    async with running("views/settings.py", tmp_path) as bot:
        await bot.emu.say("alice", "general", f"{bot.mention()} settings")
        panel = await bot.posts()
        fruit, channel, members = [
            c["custom_id"] for c in walk(panel.components) if c.get("type") in (3, 5, 8)
        ]
        await bot.select("alice", panel, fruit, ["banana"])
        await bot.select("alice", panel, channel, ["random"])
        await bot.select("alice", panel, members, ["bob", "carol"])
        count_button = next(b for b in buttons(panel) if b.get("label") == "1")
        opened = await bot.click("alice", panel, count_button["custom_id"])
        assert opened.callbacks == [9]
        assert opened.modal is not None
        (count_input,) = [c for c in walk(opened.modal["components"]) if c.get("type") == 4]
        submit = await bot.emu.submit_modal("alice", opened, {count_input["custom_id"]: "3"})
        assert await bot.callback(submit) == [7]  # the modal edits the panel
        assert any(b.get("label") == "3" for b in buttons(panel))
        finish = next(b for b in buttons(panel) if b.get("label") == "Finish")
        done = await bot.click("alice", panel, finish["custom_id"])
        saved = await bot.answer(done)
        assert (saved.content, saved.ephemeral_to) == (
            "Settings saved.",
            bot.emu.world.user("alice"),
        )
        await bot.example.until(bot.emu.wait_for(lambda: panel.deleted or None))
        await bot.emu.say("alice", "general", f"{bot.mention()} send")
        sent = await bot.example.until(bot.emu.wait_for_bot_message(channel="random"))
        bob, carol = (bot.emu.world.user(n) for n in ("bob", "carol"))
        assert sent.content == f"<@{bob.id}> <@{carol.id}> 🍌 🍌 🍌"


async def test_embed_like_view_changes_image_and_text(tmp_path: Path) -> None:
    """views/embed_like: a layout with a dog picture (from random.dog, here a stand-in);
    New Image fetches another, Change Text opens a modal whose text replaces the message's."""
    dogs = {"/woof.json": {"url": "https://random.dog/first.jpg"}}
    async with StandIn(dogs) as site:
        stand_ins = {"EXAMPLE_STAND_INS": json.dumps({"https://random.dog": site})}
        async with running("views/embed_like.py", tmp_path, env=stand_ins) as bot:
            await bot.emu.say("carol", "general", f"{bot.mention()} embed")
            card = await bot.posts()
            (thumbnail,) = [c for c in walk(card.components) if c.get("type") == 11]
            assert thumbnail["media"]["url"] == "https://random.dog/first.jpg"
            new_image, change_text = button_custom_ids(card)
            dogs["/woof.json"] = {"url": "https://random.dog/second.jpg"}
            assert (await bot.click("carol", card, new_image)).callbacks == [7]
            (thumbnail,) = [c for c in walk(card.components) if c.get("type") == 11]
            assert thumbnail["media"]["url"] == "https://random.dog/second.jpg"
            opened = await bot.click("carol", card, change_text)
            assert opened.modal is not None
            (text_input,) = [c for c in walk(opened.modal["components"]) if c.get("type") == 4]
            assert text_input["value"].startswith("This is a random dog image!")
            submit = await bot.emu.submit_modal(
                "carol", opened, {text_input["custom_id"]: "A very good dog."}
            )
            assert await bot.callback(submit) == [7]
            texts = [c.get("content") for c in walk(card.components) if c.get("type") == 10]
            assert "A very good dog." in texts


# -- application commands, context menus and modals ---------------------------------------


def guild_fill(lab: DiscordWorld, line: str = "MY_GUILD = discord.Object(id=0)") -> tuple[str, str]:
    """The placeholder line naming the test guild, filled in with the guild's id."""
    return line, line.replace("0)", f"{lab.guild('lab').id})")


async def test_app_commands_basic_slash_and_context_menus(tmp_path: Path) -> None:
    """app_commands/basic: slash commands with typed options, a user context menu, and a
    message context menu that reports to the log channel."""
    lab = world()
    log = lab.add_channel(lab.guild("lab"), "mod-log")
    fill = [
        guild_fill(lab, "MY_GUILD = discord.Object(id=0)  # replace with your guild id"),
        (
            "interaction.guild.get_channel(0)  # replace with your channel id",
            f"interaction.guild.get_channel({log.id})  # replace with your channel id",
        ),
    ]
    async with running("app_commands/basic.py", tmp_path, lab, fill=fill) as bot:
        synced = {c["name"]: c for c in await bot.synced(bot.guild.id)}
        assert synced["Show Join Date"]["type"] == 2
        assert synced["Report to Moderators"]["type"] == 3
        hello = await bot.answer(await bot.emu.slash("bob", "general", "hello"))
        assert hello.content == f"Hi, <@{bot.emu.world.user('bob').id}>"
        add = await bot.answer(
            await bot.emu.slash("bob", "general", "add", first_value="2", second_value=3)
        )
        assert add.content == "2 + 3 = 5"
        sent = await bot.answer(await bot.emu.slash("bob", "general", "send", text="owls!"))
        assert sent.content == "owls!"
        joined = await bot.answer(await bot.emu.slash("bob", "general", "joined", member="carol"))
        assert joined.content.startswith("carol joined <t:")
        shown = await bot.answer(
            await bot.emu.context_menu("alice", "general", "Show Join Date", "bob")
        )
        assert shown.content.startswith("bob joined at <t:")
        rude = await bot.emu.say("carol", "general", "something rude")
        report = await bot.emu.context_menu("bob", "general", "Report to Moderators", rude)
        thanks = await bot.answer(report)
        assert thanks.content == (
            f"Thanks for reporting this message by <@{rude.author.id}> to our moderators."
        )
        assert thanks.ephemeral_to == bot.emu.world.user("bob")
        logged = await bot.example.until(bot.emu.wait_for_bot_message(channel=log))
        assert logged.embeds[0]["title"] == "Reported Message"
        assert logged.embeds[0]["description"] == "something rude"
        assert first_button(logged)["url"].endswith(f"/{rude.channel.id}/{rude.id}")


async def test_app_commands_transformers_convert_options(tmp_path: Path) -> None:
    """app_commands/transformers: ranges, channels, choices, enums and custom transformers."""
    lab = world()
    lab.add_channel(lab.guild("lab"), "Lounge", kind=DiscordChannelType.VOICE)
    async with running(
        "app_commands/transformers.py", tmp_path, lab, fill=[guild_fill(lab)]
    ) as bot:
        specs = {c["name"]: c for c in await bot.synced(bot.guild.id)}
        assert specs["add"]["options"][0]["max_value"] == 100

        async def run(name: str, **options: object) -> DiscordMessage:
            return await bot.answer(await bot.emu.slash("carol", "general", name, **options))

        assert (await run("add", first=40, second=2)).content == "40 + 2 = 42"
        info = await run("channel-info", channel="Lounge")
        fields = {f["name"]: f["value"] for f in info.embeds[0]["fields"]}
        assert (fields["Name"], fields["Type"]) == ("Lounge", "Voice")
        text = await run("channel-info", channel="random")
        assert {f["name"]: f["value"] for f in text.embeds[0]["fields"]}["Type"] == "Text"
        assert (await run("shop", action="Sell", item="owl")).content == "Action: Sell\nItem: owl"
        assert (await run("fruit", fruit="banana")).content == "<Fruits.banana: 1>"
        assert (await run("graph", point="3, 4")).content == "Point(x=3, y=4)"
        assert (await run("graph3d", point="1,2,3")).content == "Point3D(x=1, y=2, z=3)"


async def test_modals_basic_collects_feedback(tmp_path: Path) -> None:
    """modals/basic: /feedback opens a modal; the submitted name is thanked, privately."""
    lab = world()
    fill = [guild_fill(lab, "TEST_GUILD = discord.Object(0)")]
    async with running("modals/basic.py", tmp_path, lab, fill=fill) as bot:
        await bot.synced(bot.guild.id)
        command = await bot.emu.slash("bob", "general", "feedback")
        assert await bot.callback(command) == [9]
        assert command.modal is not None
        assert command.modal["title"] == "Feedback"
        name, feedback = [
            c["custom_id"] for row in command.modal["components"] for c in row["components"]
        ]
        submit = await bot.emu.submit_modal(
            "bob", command, {name: "Bob", feedback: "More owls, please."}
        )
        thanks = await bot.answer(submit)
        assert (thanks.content, thanks.ephemeral_to) == (
            "Thanks for your feedback, Bob!",
            bot.emu.world.user("bob"),
        )


async def test_modals_label_times_a_member_out(tmp_path: Path) -> None:
    """modals/label: /timeout MEMBER opens a modal of labelled inputs; the member is timed out
    for the picked duration, with the reason."""
    lab = world()
    fill = [guild_fill(lab, "TEST_GUILD = discord.Object(0)")]
    async with running("modals/label.py", tmp_path, lab, fill=fill) as bot:
        await bot.synced(bot.guild.id)
        command = await bot.emu.slash("alice", "general", "timeout", member="carol")
        assert await bot.callback(command) == [9]
        assert command.modal is not None
        duration, reason = [row["component"]["custom_id"] for row in command.modal["components"]]
        submit = await bot.emu.submit_modal(
            "alice", command, {duration: ["300"], reason: "spamming owls"}
        )
        done = await bot.answer(submit)
        carol = bot.emu.world.user("carol")
        assert done.content.startswith(f"Timeout <@{carol.id}> until <t:")
        assert done.content.endswith("with reason: spamming owls")
        assert bot.guild.members[carol.id].timed_out_until is not None


async def test_modals_report_posts_a_report_layout(tmp_path: Path) -> None:
    """modals/report: the submitted report is posted to the reports channel as a layout."""
    lab = world()
    reports = lab.add_channel(lab.guild("lab"), "reports")
    fill = [
        guild_fill(lab, "TEST_GUILD = discord.Object(0)"),
        ("REPORTS_CHANNEL_ID = 0", f"REPORTS_CHANNEL_ID = {reports.id}"),
    ]
    async with running("modals/report.py", tmp_path, lab, fill=fill) as bot:
        await bot.synced(bot.guild.id)
        command = await bot.emu.slash("bob", "general", "report")
        assert await bot.callback(command) == [9]
        assert command.modal is not None
        ids = [
            row["component"]["custom_id"]
            for row in command.modal["components"]
            if "component" in row
        ]
        topic, title, description, _images = ids
        submit = await bot.emu.submit_modal(
            "bob",
            command,
            {topic: ["Bug"], title: "Owls everywhere", description: "The bot hoots."},
        )
        thanks = await bot.answer(submit)
        assert thanks.content == "Thank you for your report! We will look into it shortly."
        posted = await bot.example.until(bot.emu.wait_for_bot_message(channel=reports))
        assert posted.flags & (1 << 15)
        texts = [c.get("content", "") for c in walk(posted.components) if c.get("type") == 10]
        assert "-# User Report\n## Bug" in texts
        assert "### Owls everywhere" in texts
        assert ">>> The bot hoots." in texts


async def test_reaction_roles_give_and_take_roles(tmp_path: Path) -> None:
    """reaction_roles: reacting to the role message gives the emoji's role; taking the
    reaction back takes the role away (a custom emoji too)."""
    lab = world()
    guild = lab.guild("lab")
    red, yellow, green = (lab.add_role(guild, n) for n in ("red", "yellow", "green"))
    owl_key = lab.add_emoji(guild, "green")
    emoji_id = owl_key.rpartition(":")[2]
    async with DiscordEmulator(lab, wait_timeout=BOUND) as staging:
        role_message = await staging.say("alice", "general", "React to get a role")
    fill = [
        (
            "self.role_message_id = 0  #",
            f"self.role_message_id = {role_message.id}  #",
        ),
        ("): 0,  # ID of the role associated with unicode emoji '🔴'.", f"): {red.id},  #"),
        ("): 0,  # ID of the role associated with unicode emoji '🟡'.", f"): {yellow.id},  #"),
        ('name="green", id=0', f'name="green", id={emoji_id}'),
        ("): 0,  # ID of the role associated with a partial emoji's ID.", f"): {green.id},  #"),
    ]
    async with running("reaction_roles.py", tmp_path, lab, fill=fill) as bot:
        bob = bot.emu.world.user("bob")
        member = guild.members[bob.id]
        await bot.emu.react("bob", role_message, "🔴")
        await bot.example.until(bot.emu.wait_for(lambda: red.id in member.roles or None))
        await bot.emu.react("bob", role_message, "green")
        await bot.example.until(bot.emu.wait_for(lambda: green.id in member.roles or None))
        await bot.emu.unreact("bob", role_message, "🔴")
        await bot.example.until(bot.emu.wait_for(lambda: red.id not in member.roles or None))
        assert yellow.id not in member.roles


def buttons(message: DiscordMessage) -> list[JSON]:
    """Every button of ``message``, rows and containers walked, in order."""
    found: list[JSON] = []

    def walk(components: Sequence[JSON]) -> None:
        for component in components:
            if component.get("type") == 2:
                found.append(component)
            walk(component.get("components", []))
            if isinstance(component.get("accessory"), dict):
                walk([component["accessory"]])

    walk(message.components)
    return found


def first_button(message: DiscordMessage) -> JSON:
    """The first button of ``message``."""
    return buttons(message)[0]


def button_custom_ids(message: DiscordMessage) -> list[str]:
    """The custom ids of ``message``'s buttons (link buttons have none)."""
    return [b["custom_id"] for b in buttons(message) if "custom_id" in b]


def walk(components: Sequence[JSON]) -> list[JSON]:
    """Every component of ``components``, nested ones too, depth first."""
    found: list[JSON] = []
    for component in components:
        found.append(component)
        found += walk(component.get("components", []))
        for inner in ("accessory", "component"):
            if isinstance(component.get(inner), dict):
                found += walk([component[inner]])
    return found


def select_custom_ids(message: DiscordMessage) -> list[str]:
    """The custom ids of ``message``'s selects."""
    return [
        c["custom_id"]
        for row in message.components
        for c in row.get("components", [])
        if c.get("type") in (3, 5, 6, 7, 8)
    ]


class StandIn:
    """A local stand-in for an outside web site: answers each path with a JSON document
    (``documents`` is read at each request: a test changes what the site says)."""

    def __init__(self, documents: Mapping[str, JSON]) -> None:
        self.documents = documents
        self.site = Site()

    async def handle(self, request: web.Request) -> web.Response:
        return web.json_response(self.documents[request.path])

    async def __aenter__(self) -> str:
        app = web.Application()
        app.router.add_get("/{tail:.*}", self.handle)
        await self.site.start(app, "127.0.0.1", 0, shutdown_timeout=1.0)
        return f"http://127.0.0.1:{self.site.port}"

    async def __aexit__(self, *exc: object) -> None:
        await self.site.stop()


#: The examples no test runs, and why.
NOT_RUN = {"basic_voice.py": "voice (a voice gateway, RTP audio, youtube_dl) is not emulated"}


def test_every_example_but_voice_is_run() -> None:
    """Each example file of the vendored folder is run by a test of this module, but those
    named in NOT_RUN."""
    named = set(re.findall(r'"([\w/]+\.py)"', Path(__file__).read_text(encoding="utf-8")))
    examples = {p.relative_to(DPY).as_posix() for p in DPY.rglob("*.py")}
    assert examples - (named - set(NOT_RUN)) == set(NOT_RUN)

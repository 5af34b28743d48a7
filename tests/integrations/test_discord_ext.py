"""discord.py, natively: the notes bot as a ``commands.Bot`` with the ActorscopeCog, via the kit."""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import discord
import pytest
from discord import app_commands
from discord.ext import commands
from tests._wait import wait_until
from tests.integrations._dpy_views import WipeBelowObject, Wiping

from actorscope.channels import ChannelConfig, IgnoreReason, Outcome
from actorscope.channels.discord import bot_intents
from actorscope.context import current_identity
from actorscope.errors import ConfigError, GrantError
from actorscope.integrations.discord_ext import (
    ActorscopeCog,
    Refused,
    bound,
    requires,
)
from actorscope.testing import DiscordSim, Grants

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "dpy_notes_bot.py"
EPHEMERAL = 64


def load_example() -> ModuleType:
    """The example module, loaded from its file (examples/ is not a package)."""
    spec = importlib.util.spec_from_file_location("dpy_notes_bot", EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
async def notes_bot(
    discord_sim: DiscordSim, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Any:
    """The example's NotesBot as the guide builds it, run from ``tmp_path``: served, its Cog
    is adopted onto the simulator's database, agent and workspace."""
    monkeypatch.chdir(tmp_path)
    bot = load_example().NotesBot(database="notes.db")
    await discord_sim.serve_bot(bot)
    return bot


def notes_of(bot: Any, guild: int, user: int) -> str:
    """The text of a member's notes file, or "" when there is none."""
    cog = ActorscopeCog.of(bot)
    root = Path(cog.services.workspace.root)
    found = [p for p in root.rglob("notes.md") if f"{guild}" in str(p) and f"{user}" in str(p)]
    return found[0].read_text() if found else ""


async def test_writer_note_is_allowed_and_saved(
    discord_sim: DiscordSim, notes_bot: Any, actorscope_grants: Grants
) -> None:
    """A guild writer's !note passes requires("file_writer") (granted) and is saved."""
    carol = discord_sim.user("carol")
    lab = discord_sim.guild("lab", owner=carol)
    general = discord_sim.channel(lab, "general")
    await actorscope_grants.allow(f"guild:{lab.id}:*", carol)
    discord_sim.should_allow("file_writer", reason="granted", sender=carol)
    discord_sim.should_send(text="saved", chat=general)
    event = await discord_sim.message(carol, "!note buy milk", general)
    assert event.outcome is Outcome.ADMITTED
    assert event.identity is not None
    assert event.identity.user_id == f"guild:{lab.id}:user:{carol.id}"
    assert f"- buy milk (by {carol.id})" in notes_of(notes_bot, lab.id, carol.id)


async def test_non_writer_is_denied_with_the_reason(
    discord_sim: DiscordSim, notes_bot: Any
) -> None:
    """A member without a grant is denied (no_grant), told why, and nothing is written."""
    carol, dave = discord_sim.user("carol"), discord_sim.user("dave")
    lab = discord_sim.guild("lab", owner=carol)
    general = discord_sim.channel(lab, "general")
    discord_sim.should_deny("file_writer", reason="no_grant", sender=dave)
    discord_sim.should_send(text="denied: no_grant", chat=general)
    await discord_sim.message(dave, "!note hack", general)
    assert notes_of(notes_bot, lab.id, dave.id) == ""


async def test_grant_changes_by_the_test_reach_the_cog_at_once(
    discord_sim: DiscordSim, notes_bot: Any, actorscope_grants: Grants
) -> None:
    """The Cog's checks see a grant, then a deny, made between two events (no stale cache)."""
    carol, dave = discord_sim.user("carol"), discord_sim.user("dave")
    lab = discord_sim.guild("lab", owner=carol)
    general = discord_sim.channel(lab, "general")
    discord_sim.should_deny("file_writer", reason="no_grant", sender=dave)
    discord_sim.should_send(text="denied: no_grant")
    await discord_sim.message(dave, "!note a", general)
    await actorscope_grants.allow(f"guild:{lab.id}:*", dave)
    discord_sim.should_allow("file_writer", reason="granted", sender=dave)
    discord_sim.should_send(text="saved")
    await discord_sim.message(dave, "!note b", general)
    await actorscope_grants.deny(f"guild:{lab.id}:*", dave)
    discord_sim.should_deny("file_writer", reason="denied_by_grant", sender=dave)
    discord_sim.should_send(text="denied: denied_by_grant")
    await discord_sim.message(dave, "!note c", general)


async def test_webhook_and_bot_messages_run_no_command(
    discord_sim: DiscordSim, notes_bot: Any
) -> None:
    """A webhook's and another bot's !note run nothing: no decision, no reply."""
    carol = discord_sim.user("carol")
    other = discord_sim.user("otherbot", bot=True)
    lab = discord_sim.guild("lab", owner=carol)
    general = discord_sim.channel(lab, "general")
    hooked = await discord_sim.webhook(general, "!note from a hook")
    botted = await discord_sim.bot_message(other, "!note from a bot", general)
    for event in (hooked, botted):
        assert not event.admitted
        assert event.decisions == []
        assert event.sent == []


async def test_non_person_never_passes_a_check_even_when_bots_are_admitted(
    discord_sim: DiscordSim, tmp_path: Path
) -> None:
    """With ignore_bots off and a bot that runs commands for bots, a webhook is still denied."""

    class EveryAuthorBot(commands.Bot):
        """Runs commands whoever wrote them (discord.py skips bot authors by default)."""

        async def on_message(self, message: discord.Message, /) -> None:
            """Invoke the command in ``message``, bot author or not."""
            await self.invoke(await self.get_context(message))

        async def on_command_error(
            self, context: commands.Context[Any], exception: commands.CommandError, /
        ) -> None:
            """Refusals are answered by actorscope; anything else fails as usual."""
            if not isinstance(exception, Refused):
                await super().on_command_error(context, exception)

    bot = EveryAuthorBot(command_prefix="!", intents=bot_intents())
    config = ChannelConfig(platform="discord", ignore_bots=False, require_mention=False)
    cog = ActorscopeCog(
        bot, database=discord_sim.env.db, config=config, workspace=tmp_path / "workspace"
    )
    await bot.add_cog(cog)

    @bot.command(name="note")
    @requires("file_writer")
    async def note(ctx: commands.Context[Any], *, text: str = "") -> None:
        await ctx.reply("saved")

    await discord_sim.serve_bot(bot)
    lab = discord_sim.guild("lab")
    general = discord_sim.channel(lab, "general")
    discord_sim.should_deny("file_writer", reason="empty_sender")
    discord_sim.should_send(text="denied: empty_sender", chat=general)
    event = await discord_sim.webhook(general, "!note from a hook")
    assert event.message is not None
    assert event.message.sender_id == ""


async def test_slash_command_actor_is_the_invoking_user(
    discord_sim: DiscordSim, notes_bot: Any, actorscope_grants: Grants
) -> None:
    """/note runs as the member who invoked it; a denial is answered ephemerally."""
    carol, dave = discord_sim.user("carol"), discord_sim.user("dave")
    lab = discord_sim.guild("lab", owner=carol)
    general = discord_sim.channel(lab, "general")
    await actorscope_grants.allow(f"guild:{lab.id}:*", carol)
    discord_sim.should_deny("file_writer", reason="no_grant", sender=dave)
    discord_sim.should_send(text="denied: no_grant", chat=general)
    denied = await discord_sim.slash(dave, "note", general, options={"text": "hack"})
    assert denied.identity is not None
    assert denied.identity.sender_id == str(dave.id)
    assert denied.identity.user_id == f"guild:{lab.id}:user:{dave.id}"
    answer = discord_sim.http_calls[-1]
    assert answer.path.endswith("/callback")
    assert answer.json is not None
    assert answer.json["data"]["flags"] & EPHEMERAL
    discord_sim.should_allow("file_writer", reason="granted", sender=carol)
    discord_sim.should_send(text="saved", chat=general)
    allowed = await discord_sim.slash(carol, "note", general, options={"text": "ok"})
    assert allowed.identity is not None
    assert allowed.identity.sender_id == str(carol.id)
    assert f"- ok (by {carol.id})" in notes_of(notes_bot, lab.id, carol.id)


async def test_addwriter_by_a_manage_server_member_makes_a_writer(
    discord_sim: DiscordSim, notes_bot: Any
) -> None:
    """!addwriter @dave by the guild owner (Manage Server) adds dave; his !note then passes."""
    carol, dave = discord_sim.user("carol"), discord_sim.user("dave")
    lab = discord_sim.guild("lab", owner=carol)
    general = discord_sim.channel(lab, "general")
    discord_sim.should_send(text=f"added @dave ({dave.id}) as a writer", chat=general)
    added = await discord_sim.message(carol, f"!addwriter <@{dave.id}>", general, mentions=[dave])
    assert added.outcome is Outcome.WRITER_COMMAND
    discord_sim.should_send(text=f"writers: @dave ({dave.id})", chat=general)
    await discord_sim.slash(carol, "writers", general)
    discord_sim.should_allow("file_writer", reason="granted", sender=dave)
    discord_sim.should_send(text="saved", chat=general)
    await discord_sim.message(dave, "!note mine", general)


async def test_slash_addwriter_and_removewriter_answer_the_interaction(
    discord_sim: DiscordSim, notes_bot: Any
) -> None:
    """/addwriter user: by a Manage Server member, then /removewriter, answer the interaction."""
    carol, dave, erin = (discord_sim.user(n) for n in ("carol", "dave", "erin"))
    lab = discord_sim.guild("lab", owner=carol)
    general = discord_sim.channel(lab, "general")
    discord_sim.should_send(text=f"added @dave ({dave.id}) as a writer", chat=general)
    added = await discord_sim.slash(carol, "addwriter", general, options={"user": dave})
    assert added.outcome is Outcome.WRITER_COMMAND
    assert discord_sim.http_calls[-1].path.endswith("/callback")
    discord_sim.should_send(text=f"added @erin ({erin.id}) as a writer", chat=general)
    await discord_sim.slash(dave, "addwriter", general, options={"user": erin})
    discord_sim.should_send(text=f"removed @dave ({dave.id}) from the writers", chat=general)
    await discord_sim.slash(erin, "removewriter", general, options={"user": dave})


async def test_a_group_the_config_disables_runs_no_command(
    discord_sim: DiscordSim, tmp_path: Path
) -> None:
    """A prefix command in a guild the config disables is ignored: no check, no reply."""
    bot = commands.Bot(command_prefix="!", intents=bot_intents())
    config = ChannelConfig(platform="discord", group_policy="disabled")
    cog = ActorscopeCog(
        bot, database=discord_sim.env.db, config=config, workspace=tmp_path / "workspace"
    )
    await bot.add_cog(cog)

    @bot.command(name="note")
    @requires("file_writer")
    async def note(ctx: commands.Context[Any], *, text: str = "") -> None:
        await ctx.reply("saved")

    async def quiet(ctx: commands.Context[Any], error: commands.CommandError, /) -> None:
        assert isinstance(error, Refused)

    bot.on_command_error = quiet  # type: ignore[method-assign]  # the test's own bot
    await discord_sim.serve_bot(bot)
    carol = discord_sim.user("carol")
    lab = discord_sim.guild("lab", owner=carol)
    general = discord_sim.channel(lab, "general")
    event = await discord_sim.message(carol, "!note hi", general)
    assert event.ignored is IgnoreReason.GROUP_DISABLED
    assert event.decisions == []
    assert event.sent == []


async def test_addwriter_by_a_plain_member_is_refused(
    discord_sim: DiscordSim, notes_bot: Any
) -> None:
    """!addwriter by a member without Manage Server (and no writers yet) is refused."""
    carol, dave, erin = (discord_sim.user(n) for n in ("carol", "dave", "erin"))
    lab = discord_sim.guild("lab", owner=carol)
    general = discord_sim.channel(lab, "general")
    refused = (
        "refused (not_authorized): only owners and writers may manage writers; "
        "group admins may add the first writer only"
    )
    discord_sim.should_send(text=refused, chat=general)
    await discord_sim.message(dave, f"!addwriter <@{erin.id}>", general, mentions=[erin])


async def test_owner_runs_with_role_owner_and_the_identity_is_bound(
    discord_sim: DiscordSim, tmp_path: Path
) -> None:
    """A configured owner passes requires() by role_bypass; bound() binds the identity."""
    carol = discord_sim.user("carol")
    bot = commands.Bot(command_prefix="!", intents=bot_intents())
    owners = [carol.id]
    await bot.add_cog(
        ActorscopeCog(
            bot, database=discord_sim.env.db, owners=owners, workspace=tmp_path / "workspace"
        )
    )

    @bot.command(name="whoami")
    @requires("file_writer")
    async def whoami(ctx: commands.Context[Any]) -> None:
        outside = current_identity()
        async with bound(ctx) as who:
            bound_now = current_identity()
            await ctx.reply(f"{who.sender_id} {who.role} {bound_now == who}")
        await ctx.reply(f"after: {current_identity() == outside}")

    await discord_sim.serve_bot(bot)
    lab = discord_sim.guild("lab")
    general = discord_sim.channel(lab, "general")
    discord_sim.should_allow("file_writer", reason="role_bypass", sender=carol)
    discord_sim.should_send(text=f"{carol.id} owner True", chat=general)
    discord_sim.should_send(text="after: True", chat=general)
    await discord_sim.message(carol, "!whoami", general)


async def test_hybrid_command_as_slash_runs_as_the_interaction_user(
    discord_sim: DiscordSim, actorscope_grants: Grants, tmp_path: Path
) -> None:
    """A hybrid command run as /note takes the pipeline once, as the invoking user: a writer
    passes, a non-writer is denied ephemerally."""
    bot = commands.Bot(command_prefix="!", intents=bot_intents())
    await bot.add_cog(
        ActorscopeCog(bot, database=discord_sim.env.db, workspace=tmp_path / "workspace")
    )

    # discord.py types the hybrid callback as a union over a ParamSpec mypy cannot solve.
    @commands.hybrid_command(name="note", description="Save a note")  # type: ignore[arg-type]
    @requires("file_writer")
    async def note(ctx: commands.Context[commands.Bot], text: str) -> None:
        await ctx.send("saved")

    bot.add_command(note)

    @bot.tree.error
    async def quiet(interaction: discord.Interaction[Any], error: Exception) -> None:
        assert isinstance(error, Refused)

    await discord_sim.serve_bot(bot)
    carol, dave = discord_sim.user("carol"), discord_sim.user("dave")
    lab = discord_sim.guild("lab", owner=carol)
    general = discord_sim.channel(lab, "general")
    discord_sim.should_deny("file_writer", reason="no_grant", sender=dave)
    discord_sim.should_send(text="denied: no_grant", chat=general)
    event = await discord_sim.slash(dave, "note", general, options={"text": "hi"})
    assert event.identity is not None
    assert event.identity.sender_id == str(dave.id)
    answer = discord_sim.http_calls[-1].json
    assert answer is not None
    assert answer["data"]["flags"] & EPHEMERAL
    await actorscope_grants.allow(f"guild:{lab.id}:*", carol)
    discord_sim.should_allow("file_writer", reason="granted", sender=carol)
    discord_sim.should_send(text="saved", chat=general)
    await discord_sim.slash(carol, "note", general, options={"text": "ok"})


async def test_a_slash_commands_refusal_is_a_refused_the_tree_takes(
    discord_sim: DiscordSim, tmp_path: Path
) -> None:
    """A denied app command raises Refused, which the tree's error handler gets as its own."""
    bot = commands.Bot(command_prefix="!", intents=bot_intents())
    await bot.add_cog(
        ActorscopeCog(bot, database=discord_sim.env.db, workspace=tmp_path / "workspace")
    )

    @app_commands.command(name="ping", description="Ping (writers only)")
    @requires("file_writer")
    async def ping(interaction: discord.Interaction[Any]) -> None:
        await interaction.response.send_message("pong")

    bot.tree.add_command(ping)
    errors: list[Exception] = []

    @bot.tree.error
    async def record(interaction: discord.Interaction[Any], error: Exception) -> None:
        errors.append(error)

    await discord_sim.serve_bot(bot)
    dave = discord_sim.user("dave")
    lab = discord_sim.guild("lab")
    general = discord_sim.channel(lab, "general")
    discord_sim.should_deny("file_writer", reason="no_grant", sender=dave)
    discord_sim.should_send(text="denied: no_grant", chat=general)
    await discord_sim.slash(dave, "ping", general)
    await wait_until(lambda: bool(errors))
    assert isinstance(errors[0], Refused)
    assert isinstance(errors[0], app_commands.CheckFailure)
    assert errors[0].reason == "no_grant"


async def test_an_edited_command_is_judged_afresh(
    discord_sim: DiscordSim, actorscope_grants: Grants, tmp_path: Path
) -> None:
    """An edit (MESSAGE_UPDATE through the emulator) is judged anew: a command denied before a
    grant passes when edited after it, never getting the original's result back."""
    bot = commands.Bot(command_prefix="!", intents=bot_intents())
    await bot.add_cog(
        ActorscopeCog(bot, database=discord_sim.env.db, workspace=tmp_path / "workspace")
    )

    @bot.command(name="note")
    @requires("file_writer")
    async def note(ctx: commands.Context[commands.Bot], *, text: str) -> None:
        await ctx.send(f"saved {text}")

    @bot.listen()
    async def on_message_edit(before: discord.Message, after: discord.Message) -> None:
        await bot.process_commands(after)

    @bot.event
    async def on_command_error(ctx: commands.Context[commands.Bot], error: Exception) -> None:
        if not isinstance(error, Refused):
            raise error

    await discord_sim.serve_bot(bot)
    carol = discord_sim.user("carol")
    lab = discord_sim.guild("lab")
    general = discord_sim.channel(lab, "general")
    discord_sim.should_deny("file_writer", reason="no_grant", sender=carol)
    discord_sim.should_send(text="denied: no_grant", chat=general)
    first = await discord_sim.message(carol, "!note a", general)
    await actorscope_grants.allow(f"guild:{lab.id}:*", carol)
    discord_sim.should_allow("file_writer", reason="granted", sender=carol)
    discord_sim.should_send(text="saved b", chat=general)
    edited = await discord_sim.edit(first, "!note b")
    assert edited.outcome is Outcome.ADMITTED


async def test_cog_load_and_unload_leave_no_tasks(tmp_path: Path) -> None:
    """Adding the Cog opens the database and starts the change feed; removing it stops both."""
    bot = commands.Bot(command_prefix="!", intents=bot_intents())
    cog = ActorscopeCog(bot, database=tmp_path / "bot.db", agent="notes")
    before = asyncio.all_tasks()
    await bot.add_cog(cog)
    assert cog.services.agent.key == "notes"
    assert ActorscopeCog.of(bot) is cog
    await bot.remove_cog(ActorscopeCog.NAME)
    assert asyncio.all_tasks() - before == set()
    with pytest.raises(ConfigError, match="not loaded"):
        _ = cog.services
    with pytest.raises(ConfigError, match="no ActorscopeCog"):
        ActorscopeCog.of(bot)
    await bot.close()


@pytest.mark.parametrize("strict", [False, True])
async def test_the_cog_builds_a_fail_closed_policy_when_strict(
    tmp_path: Path, strict: bool
) -> None:
    """ActorscopeCog(strict=True) fails closed like bot.toml's strict; the default stays open."""
    bot = commands.Bot(command_prefix="!", intents=bot_intents())
    cog = ActorscopeCog(bot, database=tmp_path / "bot.db", strict=strict)
    await bot.add_cog(cog)
    try:
        assert cog.services.policy.strict is strict
    finally:
        await bot.remove_cog(ActorscopeCog.NAME)
        await bot.close()


async def test_bad_cog_arguments_are_one_clear_error(tmp_path: Path) -> None:
    """A non-numeric owner or a database that is no path is a ConfigError naming it."""
    bot = commands.Bot(command_prefix="!", intents=bot_intents())
    with pytest.raises(ConfigError, match="ActorscopeCog: owners"):
        ActorscopeCog(bot, database=tmp_path / "bot.db", owners=["bob"])
    with pytest.raises(ConfigError, match="database must be"):
        ActorscopeCog(bot, database=42)  # type: ignore[arg-type]  # the wrong type on purpose
    with pytest.raises(ConfigError, match="strict must be True or False"):
        ActorscopeCog(bot, database=tmp_path / "bot.db", strict="false")  # type: ignore[arg-type]  # a string on purpose
    await bot.close()


def test_the_integration_imports_first_in_a_fresh_interpreter() -> None:
    """Importing discord_ext before anything else works (no cycle through the bots runtime)."""
    done = subprocess.run(
        [sys.executable, "-c", "import actorscope.integrations.discord_ext"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr


def test_example_without_a_token_says_so(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The example's main() without DISCORD_BOT_TOKEN: one line on stderr, exit 2."""
    monkeypatch.delenv("DISCORD_BOT_TOKEN", raising=False)
    assert load_example().main() == 2
    assert capsys.readouterr().err == "dpy_notes_bot: error: set DISCORD_BOT_TOKEN\n"


def test_requires_names_a_bad_action() -> None:
    """requires() with an unknown action fails at decoration time with the valid ones."""
    with pytest.raises(GrantError, match="file_writer"):
        requires("write_files")


async def test_the_guides_two_lines_judge_on_the_tests_grants_and_write_no_bot_file(
    discord_sim: DiscordSim, notes_bot: Any, actorscope_grants: Grants, tmp_path: Path
) -> None:
    """``NotesBot(database="notes.db")`` served as is: the Cog loaded on the test's database,
    agent and workspace, the test's grant decides, and no notes.db exists."""
    cog = ActorscopeCog.of(notes_bot)
    assert cog.opened.database is discord_sim.env.db
    assert cog.opened.agent.id == discord_sim.env.agent.id
    assert cog.opened.adopted is not None
    carol = discord_sim.user("carol")
    lab = discord_sim.guild("lab", owner=carol)
    general = discord_sim.channel(lab, "general")
    await actorscope_grants.allow(f"guild:{lab.id}:*", carol)
    discord_sim.should_allow("file_writer", reason="granted", sender=carol)
    discord_sim.should_send(text="saved", chat=general)
    await discord_sim.message(carol, "!note adopted", general)
    assert not (tmp_path / "notes.db").exists()
    assert "adopted" in notes_of(notes_bot, lab.id, carol.id)


async def test_a_denied_command_logs_one_info_line_and_no_traceback(
    discord_sim: DiscordSim, notes_bot: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """A denied !note and /note (the example has no on_command_error) are answered and logged
    as one INFO line each; nothing is logged with a traceback."""
    carol, dave = discord_sim.user("carol"), discord_sim.user("dave")
    lab = discord_sim.guild("lab", owner=carol)
    general = discord_sim.channel(lab, "general")
    caplog.set_level(logging.DEBUG)
    discord_sim.should_deny("file_writer", reason="no_grant", sender=dave)
    discord_sim.should_send(text="denied: no_grant", chat=general)
    await discord_sim.message(dave, "!note hack", general)
    discord_sim.should_deny("file_writer", reason="no_grant", sender=dave)
    discord_sim.should_send(text="denied: no_grant", chat=general)
    await discord_sim.slash(dave, "note", general, options={"text": "hack"})
    assert [r for r in caplog.records if r.exc_info or r.levelno >= logging.WARNING] == []
    denials = [r.getMessage() for r in caplog.records if "discord.denied" in r.getMessage()]
    line = (
        f"discord.denied command=note file_writer sender={dave.id} "
        f"scope=guild:{lab.id}:user:{dave.id} reason=no_grant"
    )
    assert denials == [line, line]


class EveryAuthorBot(commands.Bot):
    """Runs commands whoever wrote them (discord.py skips bot authors by default); its Cog
    is added in setup_hook, the way the guide does, with ``cog`` options."""

    def __init__(self, workspace: Path, **cog: Any) -> None:
        super().__init__(command_prefix="!", intents=bot_intents())
        self.cog = ActorscopeCog(self, database="bot.db", workspace=workspace, **cog)

    async def setup_hook(self) -> None:
        """Add the Cog (adopted by the simulator) and ``!note``."""
        await self.add_cog(self.cog)

        @self.command(name="note")
        @requires("file_writer")
        async def note(ctx: commands.Context[Any], *, text: str = "") -> None:
            await ctx.reply("saved")

    async def on_message(self, message: discord.Message, /) -> None:
        """Invoke the command in ``message``, bot author or not."""
        await self.invoke(await self.get_context(message))


async def test_a_webhooks_command_reaches_the_bot_and_requires_denies_it(
    discord_sim: DiscordSim, tmp_path: Path
) -> None:
    """By default the Cog drops no non-person: a webhook's !note reaches a bot that runs
    such commands, with its identity (no sender), and requires denies it."""
    await discord_sim.serve_bot(EveryAuthorBot(tmp_path))
    lab = discord_sim.guild("lab")
    general = discord_sim.channel(lab, "general")
    discord_sim.should_deny("file_writer", reason="empty_sender")
    discord_sim.should_send(text="denied: empty_sender", chat=general)
    event = await discord_sim.webhook(general, "!note from a hook")
    assert event.ignored is None


async def test_drop_non_persons_is_an_option_of_the_cog(
    discord_sim: DiscordSim, tmp_path: Path
) -> None:
    """ActorscopeCog(drop_non_persons=True) refuses a webhook's command before any check,
    without a reply."""
    await discord_sim.serve_bot(EveryAuthorBot(tmp_path, drop_non_persons=True))
    lab = discord_sim.guild("lab")
    general = discord_sim.channel(lab, "general")
    event = await discord_sim.webhook(general, "!note from a hook")
    assert event.ignored is IgnoreReason.NONPERSON_SENDER
    assert event.decisions == []
    assert event.sent == []


class WipeAbove(Wiping):
    """``@requires`` above ``@discord.ui.button``."""

    @requires("file_writer")
    @discord.ui.button(label="wipe", custom_id="wipe")
    async def wipe(
        self, interaction: discord.Interaction[Any], button: discord.ui.Button[Any]
    ) -> None:
        """Wipe (writers only)."""
        await self.wiped(interaction)


class WipeBelow(Wiping):
    """``@requires`` under ``@discord.ui.button`` (as checks go under commands)."""

    @discord.ui.button(label="wipe", custom_id="wipe")
    @requires("file_writer")
    async def wipe(
        self, interaction: discord.Interaction[Any], button: discord.ui.Button[Any]
    ) -> None:
        """Wipe (writers only)."""
        await self.wiped(interaction)


class WipeBelowBare(Wiping):
    """Under ``@discord.ui.button``, the item parameter without an annotation."""

    @discord.ui.button(label="wipe", custom_id="wipe")
    @requires("file_writer")
    async def wipe(self, interaction: discord.Interaction[Any], button) -> None:  # type: ignore[no-untyped-def]
        """Wipe (writers only)."""
        await self.wiped(interaction)


class WipeItem(discord.ui.Button[Any]):
    """A Button whose own ``callback`` carries ``@requires``."""

    def __init__(self, view: Wiping) -> None:
        super().__init__(label="wipe", custom_id="wipe")
        self.wiping = view

    @requires("file_writer")
    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        """Wipe (writers only)."""
        await self.wiping.wiped(interaction)


class WipeOwnItem(Wiping):
    """A View holding a :class:`WipeItem`."""

    def __init__(self) -> None:
        super().__init__()
        self.add_item(WipeItem(self))


@pytest.mark.parametrize(
    "view_type",
    [WipeAbove, WipeBelow, WipeBelowBare, WipeBelowObject, WipeOwnItem],
)
async def test_requires_gates_a_button_callback_for_the_clicker(
    discord_sim: DiscordSim, actorscope_grants: Grants, tmp_path: Path, view_type: type[Wiping]
) -> None:
    """``@requires`` on a ``discord.ui.button`` callback (above or under the decorator, the
    item annotated or not) or on an item's own callback judges the clicker: a non-writer is
    denied ephemerally and the callback does not run; a writer's click runs it."""
    view = view_type()
    bot = commands.Bot(command_prefix="!", intents=bot_intents())

    @bot.command(name="danger")
    async def danger(ctx: commands.Context[Any]) -> None:
        await ctx.reply("danger", view=view)

    async def setup_hook() -> None:
        await bot.add_cog(ActorscopeCog(bot, database="bot.db", workspace=tmp_path))

    bot.setup_hook = setup_hook  # type: ignore[method-assign]  # the test's own bot
    await discord_sim.serve_bot(bot)
    carol, dave = discord_sim.user("carol"), discord_sim.user("dave")
    lab = discord_sim.guild("lab", owner=carol)
    general = discord_sim.channel(lab, "general")
    await actorscope_grants.allow(f"guild:{lab.id}:*", carol)
    await discord_sim.message(carol, "!danger", general)
    message = discord_sim.emulator.latest_with_button(general, "wipe")
    calls = len(discord_sim.http_calls)
    await discord_sim.click(dave, general, "wipe", message=message)
    await wait_until(lambda: len(discord_sim.http_calls) > calls)
    answer = discord_sim.http_calls[-1].json
    assert answer is not None
    assert answer["data"]["content"] == "denied: no_grant"
    assert answer["data"]["flags"] & EPHEMERAL
    assert view.pressed == []
    await discord_sim.click(carol, general, "wipe", message=message)
    await wait_until(lambda: view.pressed == [carol.id])


class Desk(commands.Cog):
    """Commands in a Cog shaped like item callbacks: ``(self, ctx, text)`` with no annotation
    on ``text``, and ``(self, interaction)``."""

    def __init__(self) -> None:
        self.ran: list[str] = []

    @commands.command(name="stamp")
    @requires("file_writer")
    async def stamp(self, ctx: commands.Context[Any], text) -> None:  # type: ignore[no-untyped-def]
        """Stamp ``text`` (writers only)."""
        self.ran.append(text)
        await ctx.reply("stamped")

    @app_commands.command(name="ping")
    @requires("file_writer")
    async def ping(self, interaction: discord.Interaction[Any]) -> None:
        """Ping (writers only)."""
        self.ran.append("ping")
        await interaction.response.send_message("pong")


async def test_commands_shaped_like_item_callbacks_are_judged_once(
    discord_sim: DiscordSim, actorscope_grants: Grants, tmp_path: Path
) -> None:
    """A Cog's prefix and slash commands that look like item callbacks to ``requires`` are
    judged once each, by their checks, and run with their arguments."""
    bot = commands.Bot(command_prefix="!", intents=bot_intents())
    desk = Desk()

    async def setup_hook() -> None:
        await bot.add_cog(ActorscopeCog(bot, database="bot.db", workspace=tmp_path))
        await bot.add_cog(desk)

    bot.setup_hook = setup_hook  # type: ignore[method-assign]  # the test's own bot
    await discord_sim.serve_bot(bot)
    carol, dave = discord_sim.user("carol"), discord_sim.user("dave")
    lab = discord_sim.guild("lab", owner=carol)
    general = discord_sim.channel(lab, "general")
    await actorscope_grants.allow(f"guild:{lab.id}:*", carol)
    discord_sim.should_allow("file_writer", reason="granted", sender=carol)
    discord_sim.should_send(text="stamped", chat=general)
    stamped = await discord_sim.message(carol, "!stamp hello", general)
    discord_sim.should_allow("file_writer", reason="granted", sender=carol)
    discord_sim.should_send(text="pong", chat=general)
    pinged = await discord_sim.slash(carol, "ping", general)
    discord_sim.should_deny("file_writer", reason="no_grant", sender=dave)
    discord_sim.should_send(text="denied: no_grant", chat=general)
    denied = await discord_sim.slash(dave, "ping", general)
    assert [len(event.decisions) for event in (stamped, pinged, denied)] == [1, 1, 1]
    assert desk.ran == ["hello", "ping"]


async def test_a_refusal_logged_after_the_cog_unloaded_has_no_traceback(
    discord_sim: DiscordSim, notes_bot: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """discord.py may run a denial's error handler after the Cog has unloaded (a denial just
    before the bot stops): its traceback is still kept out of the log, while another error on
    the same logger is logged as before."""
    bot = notes_bot
    await bot.remove_cog(ActorscopeCog.NAME)
    caplog.set_level(logging.DEBUG)
    logger = logging.getLogger("discord.ext.commands.bot")
    for error in (Refused("no_grant"), RuntimeError("a real failure")):
        try:
            raise error
        except Exception:
            logger.exception("Ignoring exception in command note")
    assert [str(r.exc_info[1]) for r in caplog.records if r.exc_info] == ["a real failure"]

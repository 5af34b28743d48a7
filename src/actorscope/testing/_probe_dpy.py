"""The probe's discord.py mode: the user's own bot, unchanged, against the Discord emulator.

:func:`probe_bot` builds the bot with the factory it is given (a ``discord.Client`` or
``commands.Bot`` subclass, or a function returning one), called with the keyword arguments of
:class:`~actorscope.integrations.discord_ext.ActorscopeCog` that put it on the probe's
throwaway database and workspace (``database``, ``agent``, ``workspace``, ``owners``). The bot
logs in to a :class:`~actorscope.sandbox.DiscordEmulator` inside
:func:`~actorscope.sandbox.discord_pointed_at` (its ``setup_hook`` and tree sync run as at
login), and every probe event of :data:`BOT_EVENTS` is sent with every command: what the bot
synced (global and guild application commands), its text commands (``bot.commands``), the
writer commands and the caller's. An event is done when the bot has dispatched it (a
``wait_for`` marker) and the tasks discord.py started for it have finished; the probe's
deadline bounds the whole case.
"""

from __future__ import annotations

import asyncio
import inspect
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import discord
from discord.ext import commands

from actorscope.bots import load_object
from actorscope.channels import IgnoreReason, Ingress, WriterCommand, writer_command_named
from actorscope.channels._discord_runner import silence_voice_warnings
from actorscope.errors import ConfigError
from actorscope.host import Prepared
from actorscope.integrations.discord_ext import COG_NAME, ActorscopeCog
from actorscope.permissions import Decision
from actorscope.sandbox import DiscordEmulator, declared_world, discord_pointed_at
from actorscope.testing._expect import Expectations, ObservationKind
from actorscope.testing._harness import AgentEnv, Event
from actorscope.testing._probe import (
    D_BOT,
    D_MEMBER,
    D_OTHER_WRITER,
    D_WRITER,
    ProbeReport,
    ProbeWorld,
    play,
    seed_discord,
)

__all__ = ["BOT_EVENTS", "BotFactory", "is_bot_factory", "probe_bot"]

#: A discord.py bot to probe: called with ``database``, ``agent``, ``workspace`` and ``owners``
#: (keywords), it returns the ``discord.Client`` / ``commands.Bot`` to run.
BotFactory = Callable[..., discord.Client]
#: How long the bot may take to log in, sync and connect.
_START_WAIT = 30.0
#: A look-alike of the writer: the writer's digits and one more.
_D_LOOKALIKE = int(f"{D_WRITER}0")
#: The probe's Discord world, in the sandbox's scenario vocabulary.
_DECLARED: dict[str, Any] = {
    "users": {
        "writer": D_WRITER,
        "otherwriter": D_OTHER_WRITER,
        "member": D_MEMBER,
        "writer.": _D_LOOKALIKE,
    },
    "bots": {"helperbot": D_BOT},
    "guilds": {
        "guild": {
            "channels": {"general": None},
            "threads": {"ideas": {"parent": "general"}},
            "webhooks": {"hook": "general"},
        },
        "elsewhere": {"channels": {"lobby": None}},
    },
}
# Application command option types the probe fills in (others are left out).
_STRING, _INTEGER, _BOOLEAN, _USER, _NUMBER = 3, 4, 5, 6, 10
#: A mention of the bot before a command (the prefix of ``commands.when_mentioned``).
_MENTION = re.compile(r"^\s*<@!?\d+>\s*")


@dataclass
class _Hosted:
    """The emulator, the bot logged in to it, and what the bot's Cog reported."""

    emu: DiscordEmulator
    bot: discord.Client
    expect: Expectations = field(default_factory=Expectations)
    results: list[tuple[Ingress, Prepared | None]] = field(default_factory=list)

    def decided(self, action: str, decision: Decision) -> None:
        """The Cog's decision listener."""
        self.expect.record_decision(action, decision)

    def took(self, result: Ingress, prepared: Prepared | None) -> None:
        """The Cog's ingress listener."""
        self.results.append((result, prepared))


_DpyWorld = ProbeWorld[_Hosted]
_T = TypeVar("_T")
_DpySend = Callable[[_DpyWorld, str, str], Awaitable[list[Event]]]


def _built(factory: BotFactory | str, search_dir: Path | None, **overrides: Any) -> discord.Client:
    """The bot ``factory`` builds on the probe's database (one ConfigError otherwise)."""
    spec = factory if isinstance(factory, str) else getattr(factory, "__name__", "bot")
    found = load_object(factory, search_dir, what="bot") if isinstance(factory, str) else factory
    if isinstance(found, discord.Client):
        raise ConfigError(
            f"bot {spec!r} is a discord.py client built already, on its own database: name its "
            "class or a function that builds it from the keyword arguments database, agent, "
            "workspace and owners, so that the probe runs it on a throwaway database"
        )
    if not callable(found):
        raise ConfigError(f"bot {spec!r} is not a class or function")
    try:
        built = found(**overrides)
    except Exception as exc:  # any failure of the user's factory is a config problem
        failure = f"{type(exc).__name__}: {exc}"
        raise ConfigError(f"bot {spec!r}: building it failed: {failure}") from None
    if not isinstance(built, discord.Client):
        raise ConfigError(f"bot {spec!r} did not return a discord.py Client")
    return built


def is_bot_factory(found: object) -> bool:
    """Whether ``found`` (what ``module:attribute`` names) is a discord.py bot or its factory,
    not a PTB application factory (which takes the ``ApplicationBuilder`` positionally)."""
    if isinstance(found, discord.Client):
        return True
    if inspect.isclass(found):
        return issubclass(found, discord.Client)
    if not callable(found):
        return False
    try:
        parameters = inspect.signature(found).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: not a bot factory
        return False
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return not any(p.kind in positional and p.default is p.empty for p in parameters)


@asynccontextmanager
async def _hosted(bot: discord.Client, emu: DiscordEmulator) -> AsyncIterator[_Hosted]:
    """``bot`` logged in to ``emu`` and connected for the block; closed (bounded) after."""
    with discord_pointed_at(emu):
        task: asyncio.Future[None] | None = None
        try:
            try:
                await asyncio.wait_for(bot.login(emu.world.token), _START_WAIT)
                task = asyncio.ensure_future(bot.connect(reconnect=False))
                await emu.wait_connected()
                await asyncio.wait_for(bot.wait_until_ready(), _START_WAIT)
            except Exception as exc:  # any failure of the user's bot while starting is theirs
                raise ConfigError(f"the bot did not start: {type(exc).__name__}: {exc}") from None
            hosted = _Hosted(emu, bot)
            cog = bot.get_cog(COG_NAME) if isinstance(bot, commands.Bot) else None
            if isinstance(cog, ActorscopeCog):
                cog.add_decision_listener(hosted.decided)
                cog.add_ingress_listener(hosted.took)
            yield hosted
        finally:
            await asyncio.wait_for(bot.close(), _START_WAIT)
            if task is not None:
                await asyncio.wait({task}, timeout=_START_WAIT)


def _commands(hosted: _Hosted) -> list[str]:
    """``/name`` of every synced application command, ``<prefix>name`` of every text command."""
    synced = [f"/{c['name']}" for listed in hosted.emu.commands.values() for c in listed]
    bot = hosted.bot
    if not isinstance(bot, commands.Bot):
        return synced
    prefix = bot.command_prefix
    if isinstance(prefix, list | tuple) and prefix:
        prefix = prefix[0]
    if not isinstance(prefix, str):  # a callable prefix: a mention always works with it
        prefix = f"<@{hosted.emu.world.bot.id}> "
    return [*synced, *(f"{prefix}{c.name}" for c in bot.commands)]


def _parts(command: str) -> tuple[str, str]:
    """``!note x`` -> (``note``, ``x``); a leading mention of the bot is skipped."""
    head, _, rest = _MENTION.sub("", command).strip().partition(" ")
    return head.lstrip("/!$.?-+").lower(), rest.strip()


def _text(command: str) -> str:
    """What is sent for ``command``: a writer command names the non-writer, another command
    without an argument gets one."""
    name, rest = _parts(command)
    if rest:
        return command
    named = writer_command_named(name)
    if named in (WriterCommand.ADD, WriterCommand.REMOVE):
        return f"{command} <@{D_MEMBER}>"
    return command if named is not None else f"{command} probe"


async def _observed(
    w: _DpyWorld,
    label: str,
    marker: str,
    check: Callable[..., bool],
    act: Callable[[], Awaitable[_T]],
) -> tuple[Event, _T]:
    """``act``, then wait until the bot dispatched it as ``marker`` (``check`` picks it) and
    the tasks discord.py started for it are done; what the bot did (an :class:`Event`) and
    what ``act`` returned."""
    hosted = w.sim
    hosted.expect.begin()
    hosted.results.clear()
    first = len(hosted.emu.messages)
    # Client.wait_for registers its listener when called, before the event goes out.
    dispatched = asyncio.ensure_future(hosted.bot.wait_for(marker, check=check))
    try:
        before = asyncio.all_tasks()
        acted = await act()
        await dispatched
        started = asyncio.all_tasks() - before - {asyncio.current_task()}
        try:
            if started:
                await asyncio.wait(started)
        finally:
            for task in started:  # done: no-op; a hung case (cancelled here): its handlers stop
                task.cancel()
    finally:
        dispatched.cancel()
    event = Event(label, {"marker": marker})
    if hosted.results:
        result, prepared = hosted.results[-1]
        event.message, event.ignored, event.outcome = result.message, result.reason, result.outcome
        event.request = prepared.request if prepared is not None else None
    bot_id = hosted.emu.world.bot.id
    for message in hosted.emu.messages[first:]:
        if message.author.id == bot_id:
            topic = str(message.channel.id) if message.channel.is_thread else ""
            hosted.expect.record(
                ObservationKind.SEND, text=message.content, chat=message.channel.id, topic=topic
            )
    event.observations = hosted.expect.settle(label)
    return event, acted


async def _posted(
    w: _DpyWorld, label: str, author_id: int, channel_id: int, post: Callable[[], Awaitable[_T]]
) -> tuple[Event, _T]:
    """A message ``post`` makes, by ``author_id`` in ``channel_id``, as the bot handled it."""

    def picks(message: discord.Message) -> bool:
        return message.author.id == author_id and message.channel.id == channel_id

    return await _observed(w, label, "message", picks, post)


async def _say(w: _DpyWorld, who: str, where: str, text: str) -> tuple[Event, Any]:
    """``who`` posts ``text`` in ``where``: the event and the emulator's message."""
    emu = w.sim.emu
    author, channel = emu.world.user(who), emu.world.channel(where)
    return await _posted(
        w, f"{who} in #{where}", author.id, channel.id, lambda: emu.say(author, channel, text)
    )


def _as(who: str) -> _DpySend:
    async def send(w: _DpyWorld, where: str, command: str) -> list[Event]:
        event, _ = await _say(w, who, where, _text(command))
        return [event]

    return send


async def _webhook(w: _DpyWorld, where: str, command: str) -> list[Event]:
    emu = w.sim.emu
    hook = emu.world.webhook("hook")
    event, _ = await _posted(
        w, "webhook", hook.id, hook.channel_id, lambda: emu.webhook_post(hook, _text(command))
    )
    return [event]


def _options(spec: dict[str, Any], command: str) -> dict[str, object]:
    """Values for the synced command's options: the non-writer for a user, the command's
    argument (or ``probe``) for a string, 1 for a number, true for a boolean."""
    rest = _parts(command)[1] or "probe"
    values: dict[int, object] = {
        _STRING: rest,
        _INTEGER: 1,
        _NUMBER: 1,
        _BOOLEAN: True,
        _USER: "member",
    }
    return {
        o["name"]: values[o["type"]]
        for o in spec.get("options", [])
        if isinstance(o, dict) and o.get("type") in values
    }


async def _slash(w: _DpyWorld, where: str, command: str) -> list[Event]:
    emu = w.sim.emu
    name = _parts(command)[0]
    channel = emu.world.channel(where)
    synced = [
        c
        for scope in (channel.guild_id, None)
        for c in emu.commands.get(scope, [])
        if c.get("name") == name
    ]
    if not synced:
        return [Event(f"no slash command {name!r}", {}, ignored=IgnoreReason.NOT_FOR_THIS_BOT)]
    member = emu.world.user("member")
    options = _options(synced[0], command)

    def picks(interaction: discord.Interaction[Any]) -> bool:
        return interaction.user.id == member.id and interaction.channel_id == channel.id

    event, _ = await _observed(
        w,
        f"/{name} by member",
        "interaction",
        picks,
        lambda: emu.slash(member, channel, name, **options),
    )
    return [event]


async def _click(w: _DpyWorld, where: str, command: str) -> list[Event]:
    """The writer says hello, the bot's message answering it carries a button ``command``;
    the non-writer clicks it."""
    emu = w.sim.emu
    channel = emu.world.channel(where)
    _, hello = await _say(w, "writer", where, "hello")  # the writer's own: not part of the case
    custom_id = command[:100]
    button = {"type": 2, "style": 1, "label": command[:80], "custom_id": custom_id}
    bot = emu.world.bot
    _, posted = await _posted(
        w,
        "the bot's buttons",
        bot.id,
        channel.id,
        lambda: emu.post(
            bot,
            channel,
            "choose",
            components=[{"type": 1, "components": [button]}],
            reply_to=hello,
        ),
    )
    member = emu.world.user("member")

    def picks(interaction: discord.Interaction[Any]) -> bool:
        return interaction.user.id == member.id and interaction.channel_id == channel.id

    event, _ = await _observed(
        w, "click by member", "interaction", picks, lambda: emu.click(member, posted, custom_id)
    )
    return [event]


async def _edited(w: _DpyWorld, where: str, command: str) -> list[Event]:
    """The non-writer's harmless text, then its edit into ``command``."""
    emu = w.sim.emu
    first, original = await _say(w, "member", where, "harmless text")

    def edited(payload: discord.RawMessageUpdateEvent) -> bool:
        return bool(payload.message_id == original.id)

    edit, _ = await _observed(
        w, "edit by member", "raw_message_edit", edited, lambda: emu.edit(original, _text(command))
    )
    return [first, edit]


async def _writer_dm(w: _DpyWorld, where: str, command: str) -> list[Event]:
    emu = w.sim.emu
    writer = emu.world.user("writer")
    dm = emu.world.dm_channel(writer)
    event, _ = await _posted(
        w, "the writer's DM", writer.id, dm.id, lambda: emu.dm(writer, _text(command))
    )
    return [event]


#: The discord.py probe events: name → (sender, whether it is the writer's own DM).
BOT_EVENTS: dict[str, tuple[_DpySend, bool]] = {
    "non-writer member": (_as("member"), False),
    "writer of another guild": (_as("otherwriter"), False),
    "look-alike id of the writer": (_as("writer."), False),
    "webhook": (_webhook, False),
    "another bot": (_as("helperbot"), False),
    "slash command by a non-writer": (_slash, False),
    "button click by a non-writer": (_click, False),
    "edited message": (_edited, False),
    "the writer's DM": (_writer_dm, True),
}
_ONCE = frozenset({"webhook", "the writer's DM"})
_BOT_WHERES: dict[str, tuple[str, ...]] = {
    name: ("general",) if name in _ONCE else ("general", "ideas") for name in BOT_EVENTS
}


async def probe_bot(
    factory: BotFactory | str,
    search_dir: Path | None,
    env: AgentEnv,
    report: ProbeReport,
    *,
    owners: Sequence[str],
    deadline: float,
    events: Sequence[str],
) -> None:
    """Run the bot ``factory`` builds against the emulator; every event x command into
    ``report`` (its commands extended by the bot's own)."""
    silence_voice_warnings()
    workspace = env.workspace.root if env.workspace is not None else Path("workspace")
    bot = _built(
        factory,
        search_dir,
        database=env.db,
        agent=env.agent.key,
        workspace=workspace,
        owners=list(owners),
    )
    world = declared_world(_DECLARED)
    async with DiscordEmulator(world, wait_timeout=_START_WAIT) as emu, _hosted(bot, emu) as hosted:
        report.commands[:] = dict.fromkeys([*report.commands, *_commands(hosted)])
        guilds = (world.guild("guild").id, world.guild("elsewhere").id)
        general, lobby = world.channel("general").id, world.channel("lobby").id
        dm = world.dm_channel(world.user("writer")).id
        probed = await seed_discord(hosted, env, guilds, general, lobby, dm)
        await play(probed, BOT_EVENTS, _BOT_WHERES, report.commands, deadline, report, only=events)

"""Discord's probe world: its events for an ``actorscope run`` handler on
:class:`~actorscope.testing.DiscordSim` (:data:`DISCORD_EVENTS`, a phase after the run's first
platform's), and the discord.py mode: the user's own bot, unchanged, against the Discord
emulator. Its contract names :data:`PROBE` (``probe_world``).

:func:`probe_bot` runs the bot it is given, built already, or builds it with the factory it is
given (a ``discord.Client`` or ``commands.Bot`` subclass, or a function returning one), called
with the keyword arguments of :class:`~actorscope.integrations.discord_ext.ActorscopeCog`
(``database``, ``agent``, ``workspace``, ``owners``) it takes. The bot logs in to a
:class:`~actorscope.sandbox.DiscordEmulator` inside :func:`~actorscope.sandbox.discord_pointed_at`
(its ``setup_hook`` and tree sync run as at login), *adopted*
(:meth:`~actorscope.integrations.Adoption.bind`): its ActorscopeCog opens on the probe's database,
agent and workspace whatever it was given, and one found elsewhere stops the probe
(:class:`~actorscope.testing._probe_target.ProbeReachError`). A bot without the Cog is a plain
discord.py bot, probed as it is: the probe shows who can use each command today.
Every probe event of :data:`BOT_EVENTS` is sent with every command: what the bot synced
(global and guild application commands), its text commands (``bot.commands``), the writer
commands (with the Cog) and the caller's, each compared with what the bot does for the writer
(its REST calls, files and SQLite rows). An event is done when the bot has dispatched it (a
``wait_for`` marker) and the tasks discord.py started for it have finished; the probe's
deadline bounds the whole case.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import discord
from discord import app_commands
from discord.ext import commands

from actorscope.channels import ChannelConfig, IgnoreReason, Ingress, WriterCommand
from actorscope.channels.discord import PLATFORM as DISCORD_PLATFORM
from actorscope.errors import ConfigError
from actorscope.host import Handler, Prepared
from actorscope.identity import Identity, Scope
from actorscope.integrations import Adoption
from actorscope.integrations.discord_ext import ActorscopeCog
from actorscope.permissions import Decision, WriterManager
from actorscope.sandbox import DiscordEmulator, DiscordHttpCall, DiscordWorld, discord_pointed_at
from actorscope.sandbox import DiscordMessage as Message
from actorscope.testing._discord_sim import DiscordSim
from actorscope.testing._expect import Expectations, ObservationKind
from actorscope.testing._harness import AgentEnv, SimulatedEvent
from actorscope.testing._probe import (
    PEOPLE,
    PlatformProbe,
    ProbeEvent,
    ProbeReachError,
    ProbeRun,
    ProbeTarget,
    ProbeWorld,
    Send,
    conclude,
    folder_watch,
    group_names,
    plant,
    play,
    seed_writers,
)
from actorscope.testing._probe_effects import CallLog, Watch, api_call
from actorscope.testing._probe_target import (
    NotTheBot,
    Served,
    call_factory,
    command_name,
    source_of,
)

__all__ = ["BOT_EVENTS", "DISCORD_EVENTS", "PROBE", "BotFactory", "is_bot_factory", "probe_bot"]

#: A discord.py bot to probe: called with ``database``, ``agent``, ``workspace`` and ``owners``
#: (keywords, those it takes), it returns the ``discord.Client`` / ``commands.Bot`` to run.
BotFactory = Callable[..., discord.Client]
#: How long the bot may take to log in, sync and connect.
_START_WAIT = 30.0
SimT = TypeVar("SimT")
#: The probe's Discord people: the writer, another guild's writer, a member, another bot.
D_WRITER, D_OTHER_WRITER, D_MEMBER, D_BOT = (
    424200000000000001,
    515100000000000002,
    616100000000000003,
    717100000000000004,
)
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


#: A path segment this long is a token (an interaction's, a webhook's), not a name.
_TOKEN_LENGTH = 20


def discord_calls(requests: Callable[[], Sequence[DiscordHttpCall]]) -> CallLog:
    """The bot's Discord REST calls that change something (a ``GET`` only reads)."""

    def effect(call: object) -> str | None:
        if not isinstance(call, DiscordHttpCall) or call.method == "GET":
            return None
        return api_call(f"{call.method} {_path(call.path)}", call.json or {}, PEOPLE)

    return CallLog(requests, effect)


def _path(path: str) -> str:
    """A REST path without its ids and tokens (``/interactions/#/*/callback``)."""
    parts = path.split("/")
    return "/".join(
        "#" if part.isdigit() else "*" if len(part) > _TOKEN_LENGTH else part for part in parts
    )


# -- an actorscope run handler, on the Discord simulator ----------------------------------------
_DcWorld = ProbeWorld[DiscordSim]
_DcSend = Send[DiscordSim]


def discord_text(command: str) -> str:
    """What a Discord message sends for ``command``: ``/addwriter`` and ``/removewriter`` name
    the non-writer, another command without an argument gets one (``probe``)."""
    if _MENTION.sub("", command).strip().partition(" ")[2]:
        return command
    named = WriterCommand.named(command_name(command))
    if named in (WriterCommand.ADD, WriterCommand.REMOVE):
        return f"{command} <@{D_MEMBER}>"
    return command if named is not None else f"{command} probe"


async def _build_discord(sim: DiscordSim, env: AgentEnv) -> _DcWorld:
    """Guild ``guild`` (#general, thread ideas) with its writer; guild ``elsewhere`` (#lobby)
    with its own; a member, another bot."""
    writer = sim.user("writer", user_id=D_WRITER)
    sim.user("otherwriter", user_id=D_OTHER_WRITER)
    sim.user("member", user_id=D_MEMBER)
    sim.user("helperbot", user_id=D_BOT, bot=True)
    guild, elsewhere = sim.guild("guild"), sim.guild("elsewhere")
    general = sim.channel(guild, "general")
    sim.thread(general, "ideas")
    lobby = sim.channel(elsewhere, "lobby")
    dm = sim.dm_channel(writer)
    requests = sim.emulator.requests
    watch = Watch(discord_calls(lambda: requests), folder_watch(env))
    world = await seed_discord(
        sim, env, (guild.id, elsewhere.id), general.id, lobby.id, dm.id, watch
    )
    world.writer_acts = {"message": _d_writer_says}
    return world


async def seed_discord(
    sim: SimT,
    env: AgentEnv,
    guilds: tuple[int, int],
    general: int,
    lobby: int,
    dm: int,
    watch: Watch,
) -> ProbeWorld[SimT]:
    """The Discord probe world of ``sim``: the writer granted guild-wide in the first guild,
    the other writer in the second; markers planted in the second guild's ``lobby`` channel
    and the writer's ``dm`` channel; what the writer's DM must not change."""
    writers: dict[str, str] = {}
    for guild, person in zip(guilds, (D_WRITER, D_OTHER_WRITER), strict=True):
        scope = WriterManager.scope_of(str(Scope.guild_member(guild, person))) or ""
        writers[scope] = str(person)
    await seed_writers(env, writers)
    planted = {
        str(lobby): Identity.chat("discord", lobby, D_OTHER_WRITER, group=True, guild_id=guilds[1]),
        str(dm): Identity.chat("discord", dm, D_WRITER, group=False),
    }
    secrets = {chat: plant(env, i) for chat, i in planted.items()}
    world = ProbeWorld(sim, env, writers, watch, secrets=secrets)
    world.groups = group_names(
        env,
        [
            Identity.chat("discord", general, person, group=True, guild_id=guild)
            for guild in guilds
            for person in (D_WRITER, D_OTHER_WRITER, D_MEMBER)
        ],
    ) | set(writers)
    return world


async def _d_non_writer(w: _DcWorld, where: str, command: str) -> list[SimulatedEvent]:
    return [await w.sim.message("member", discord_text(command), where, mention_bot=True)]


async def _d_other_writer(w: _DcWorld, where: str, command: str) -> list[SimulatedEvent]:
    return [await w.sim.message("otherwriter", discord_text(command), where, mention_bot=True)]


async def _d_webhook(w: _DcWorld, where: str, command: str) -> list[SimulatedEvent]:
    return [await w.sim.webhook(where, discord_text(command))]


async def _d_bot(w: _DcWorld, where: str, command: str) -> list[SimulatedEvent]:
    return [await w.sim.bot_message("helperbot", discord_text(command), where)]


async def _d_slash(w: _DcWorld, where: str, command: str) -> list[SimulatedEvent]:
    name = command_name(command)
    if name not in _DISCORD_SLASH:
        return [
            SimulatedEvent(f"no slash command {name!r}", {}, ignored=IgnoreReason.NOT_FOR_THIS_BOT)
        ]
    # /addwriter and /removewriter name someone: the non-writer names themself.
    person = w.sim.find_user("member")
    options = {"user": person} if name != "writers" else None
    return [await w.sim.slash(person, name, where, options=options)]


async def _d_writer_dm(w: _DcWorld, where: str, command: str) -> list[SimulatedEvent]:
    return [await w.sim.dm("writer", discord_text(command))]


async def _d_writer_says(w: _DcWorld, where: str, command: str) -> list[SimulatedEvent]:
    return [await w.sim.message("writer", discord_text(command), where, mention_bot=True)]


#: The slash commands the Discord runner registers (the writer commands).
_DISCORD_SLASH = frozenset({"addwriter", "removewriter", "writers"})
_Dc = ProbeEvent[DiscordSim]
#: The Discord probe events, by name.
DISCORD_EVENTS: dict[str, _Dc] = {
    "non-writer member": _Dc(_d_non_writer, person=True),
    "writer of another guild": _Dc(_d_other_writer, person=True),
    "webhook": _Dc(_d_webhook),
    "another bot": _Dc(_d_bot),
    "slash command by a non-writer": _Dc(_d_slash, like="slash"),
    "the writer's DM": _Dc(_d_writer_dm, dm=True),
}
_DISCORD_WHERES: dict[str, tuple[str, ...]] = {
    name: ("general",) if event.dm else ("general", "ideas")
    for name, event in DISCORD_EVENTS.items()
}


#: How discord.py starts the log line of an error no handler of the bot's took (``on_error``,
#: ``on_command_error``, a View's and the command tree's ``on_error``, by default).
_IGNORED = "Ignoring exception"


class _Failures(logging.Handler):
    """The errors discord.py logged as ignored: a handler's error the bot did not take."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.errors: list[BaseException] = []

    def emit(self, record: logging.LogRecord) -> None:
        """Keep the error of an "Ignoring exception" record."""
        error = record.exc_info[1] if record.exc_info else None
        if error is not None and str(record.msg).startswith(_IGNORED):
            self.errors.append(error)


@dataclass
class _Hosted:
    """The emulator, the bot logged in to it, what the bot's Cog reported and the handler
    errors discord.py logged."""

    emu: DiscordEmulator
    bot: discord.Client
    expect: Expectations = field(default_factory=Expectations)
    results: list[tuple[Ingress, Prepared | None]] = field(default_factory=list)
    failures: _Failures = field(default_factory=_Failures)

    def decided(self, action: str, decision: Decision) -> None:
        """The Cog's decision listener."""
        self.expect.record_decision(action, decision)

    def took(self, result: Ingress, prepared: Prepared | None) -> None:
        """The Cog's ingress listener."""
        self.results.append((result, prepared))

    @property
    def cog(self) -> ActorscopeCog | None:
        """The bot's ActorscopeCog (``None``: a plain discord.py bot)."""
        found = self.bot.get_cog(ActorscopeCog.NAME) if isinstance(self.bot, commands.Bot) else None
        return found if isinstance(found, ActorscopeCog) else None


_DpyWorld = ProbeWorld[_Hosted]
_T = TypeVar("_T")
_DpySend = Callable[[_DpyWorld, str, str], Awaitable[list[SimulatedEvent]]]


def _built(found: object, spec: str, **overrides: Any) -> discord.Client:
    """The bot ``found`` is or builds (with the overrides it takes; one ConfigError otherwise)."""
    if isinstance(found, discord.Client):
        return found
    if not callable(found):
        raise ConfigError(f"bot {spec!r} is not a class or function")
    built = call_factory(found, spec, "bot", **overrides)
    if not isinstance(built, discord.Client):
        raise NotTheBot(f"bot {spec!r} did not return a discord.py Client", built)
    return built


def _check_reach(cog: ActorscopeCog, env: AgentEnv) -> None:
    """The bot's ActorscopeCog opened on the probe's database, agent and workspace (one
    :class:`ProbeReachError` otherwise)."""
    opened = cog.opened
    fix = "add the ActorscopeCog in setup_hook (or later), not before the bot logs in"
    if opened.database is not env.db:
        raise ProbeReachError(
            f"the bot's ActorscopeCog opened {opened.url}, not the probe's database: {fix}"
        )
    if opened.agent.id != env.agent.id:
        raise ProbeReachError(
            f"the bot's ActorscopeCog runs as agent {opened.agent.key!r}, not the probe's "
            f"{env.agent.key!r}: {fix}"
        )
    workspace = env.workspace.root if env.workspace is not None else None
    if workspace is not None and opened.workspace.resolve() != workspace.resolve():
        raise ProbeReachError(
            f"the bot's ActorscopeCog uses the workspace {opened.workspace}, not the probe's: {fix}"
        )


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
async def _hosted(
    bot: discord.Client, emu: DiscordEmulator, adoption: Adoption
) -> AsyncIterator[_Hosted]:
    """``bot`` logged in to ``emu`` and connected for the block, adopted (an ActorscopeCog it
    loads opens on ``adoption``); closed (bounded) after."""
    with discord_pointed_at(emu):
        task: asyncio.Future[None] | None = None
        try:
            try:
                with adoption.bind():  # the session task too: a Cog added later loads on it
                    await asyncio.wait_for(bot.login(emu.world.token), _START_WAIT)
                    task = asyncio.ensure_future(bot.connect(reconnect=False))
                await emu.wait_connected()
                await asyncio.wait_for(bot.wait_until_ready(), _START_WAIT)
            except Exception as exc:  # any failure of the user's bot while starting is theirs
                raise ConfigError(f"the bot did not start: {type(exc).__name__}: {exc}") from None
            hosted = _Hosted(emu, bot)
            if hosted.cog is not None:
                hosted.cog.add_decision_listener(hosted.decided)
                hosted.cog.add_ingress_listener(hosted.took)
            logging.getLogger("discord").addHandler(hosted.failures)
            try:
                yield hosted
            finally:
                logging.getLogger("discord").removeHandler(hosted.failures)
        finally:
            await asyncio.wait_for(bot.close(), _START_WAIT)
            if task is not None:
                await asyncio.wait({task}, timeout=_START_WAIT)


def _prefixes(hosted: _Hosted) -> list[str]:
    """The bot's text command prefixes (a mention of it when its prefix is a function)."""
    bot = hosted.bot
    if not isinstance(bot, commands.Bot):
        return []
    prefix = bot.command_prefix
    if isinstance(prefix, str):
        return [prefix]
    if isinstance(prefix, list | tuple) and prefix and all(isinstance(p, str) for p in prefix):
        return [str(p) for p in prefix]
    return [f"<@{hosted.emu.world.bot.id}> "]  # a callable prefix: a mention works with it


def _commands(hosted: _Hosted) -> list[str]:
    """``/name`` of every synced application command, ``<prefix>name`` of every text command."""
    synced = [f"/{c['name']}" for listed in hosted.emu.commands.values() for c in listed]
    bot, prefixes = hosted.bot, _prefixes(hosted)
    if not isinstance(bot, commands.Bot) or not prefixes:
        return synced
    return [*synced, *(f"{prefixes[0]}{c.name}" for c in bot.commands)]


def _parts(command: str) -> tuple[str, str]:
    """``!note x`` -> (``note``, ``x``); a leading mention of the bot is skipped."""
    head, _, rest = _MENTION.sub("", command).strip().partition(" ")
    return head.lstrip("/!$.?-+").lower(), rest.strip()


async def _observed(
    w: _DpyWorld,
    label: str,
    marker: str,
    check: Callable[..., bool],
    act: Callable[[], Awaitable[_T]],
) -> tuple[SimulatedEvent, _T]:
    """``act``, then wait until the bot dispatched it as ``marker`` (``check`` picks it) and
    the tasks discord.py started for it are done; what the bot did (an :class:`SimulatedEvent`) and
    what ``act`` returned. A handler error discord.py logged as ignored is raised (a handler
    error of the case, as a PTB handler's)."""
    hosted = w.sim
    hosted.expect.begin()
    hosted.results.clear()
    hosted.failures.errors.clear()
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
    if hosted.failures.errors:
        raise hosted.failures.errors[0]
    event = SimulatedEvent(label, {"marker": marker})
    if hosted.results:
        result, prepared = hosted.results[-1]
        event.message, event.ignored, event.outcome = result.message, result.reason, result.outcome
        event.request = prepared.request if prepared is not None else None
    bot_id = hosted.emu.world.bot.id
    for message in hosted.emu.messages[first:]:
        if message.author.id == bot_id:
            topic = str(message.channel.id) if message.channel.is_thread else ""
            hosted.expect.record(
                ObservationKind.SEND,
                text=message.content,
                chat=message.channel.id,
                topic=topic,
                message=message.id,
            )
    event.observations = hosted.expect.settle(label)
    return event, acted


async def _posted(
    w: _DpyWorld, label: str, author_id: int, channel_id: int, post: Callable[[], Awaitable[_T]]
) -> tuple[SimulatedEvent, _T]:
    """A message ``post`` makes, by ``author_id`` in ``channel_id``, as the bot handled it."""

    def picks(message: discord.Message) -> bool:
        return message.author.id == author_id and message.channel.id == channel_id

    return await _observed(w, label, "message", picks, post)


async def _say(w: _DpyWorld, who: str, where: str, text: str) -> tuple[SimulatedEvent, Any]:
    """``who`` posts ``text`` in ``where``: the event and the emulator's message."""
    emu = w.sim.emu
    author, channel = emu.world.user(who), emu.world.channel(where)
    return await _posted(
        w, f"{who} in #{where}", author.id, channel.id, lambda: emu.say(author, channel, text)
    )


def _as(who: str) -> _DpySend:
    async def send(w: _DpyWorld, where: str, command: str) -> list[SimulatedEvent]:
        event, _ = await _say(w, who, where, discord_text(command))
        return [event]

    return send


async def _webhook(w: _DpyWorld, where: str, command: str) -> list[SimulatedEvent]:
    emu = w.sim.emu
    hook = emu.world.webhook("hook")
    event, _ = await _posted(
        w,
        "webhook",
        hook.id,
        hook.channel_id,
        lambda: emu.webhook_post(hook, discord_text(command)),
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


def _slash_by(who: str) -> _DpySend:
    """``who`` runs the command as the slash command the bot synced (n/a when it has none)."""

    async def send(w: _DpyWorld, where: str, command: str) -> list[SimulatedEvent]:
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
            ignored = IgnoreReason.NOT_FOR_THIS_BOT
            return [SimulatedEvent(f"no slash command {name!r}", {}, ignored=ignored)]
        person = emu.world.user(who)
        options = _options(synced[0], command)

        def picks(interaction: discord.Interaction[Any]) -> bool:
            return interaction.user.id == person.id and interaction.channel_id == channel.id

        event, _ = await _observed(
            w,
            f"/{name} by {who}",
            "interaction",
            picks,
            lambda: emu.slash(person, channel, name, **options),
        )
        return [event]

    return send


def _shown_buttons(w: _DpyWorld, answers: Sequence[SimulatedEvent]) -> list[tuple[Message, str]]:
    """The buttons the bot's messages answering ``answers`` show now (not disabled):
    (the emulator's message, custom id), in order."""
    sent = {int(o.fields["message"]) for a in answers for o in a.sent if "message" in o.fields}
    return [
        (message, custom_id)
        for message in w.sim.emu.messages
        if message.id in sent and not message.deleted
        for custom_id in w.sim.emu.pressable(message)
    ]


async def _press(
    w: _DpyWorld, where: str, answers: Sequence[SimulatedEvent], who: str
) -> list[SimulatedEvent]:
    """``who`` presses each button of the bot's answers, in order, while it is still shown
    (a press may edit the buttons away)."""
    emu = w.sim.emu
    person, channel = emu.world.user(who), emu.world.channel(where)

    def picks(interaction: discord.Interaction[Any]) -> bool:
        return interaction.user.id == person.id and interaction.channel_id == channel.id

    pressed: list[SimulatedEvent] = []
    for message, custom_id in _shown_buttons(w, answers):
        if any(m is message and c == custom_id for m, c in _shown_buttons(w, answers)):
            event, _ = await _observed(
                w,
                f"click {custom_id!r} by {who}",
                "interaction",
                picks,
                partial(emu.click, person, message, custom_id),
            )
            pressed.append(event)
    return pressed


async def _writer_answer(w: _DpyWorld, where: str, command: str) -> list[SimulatedEvent]:
    """The writer's ``command``: the bot's answer is what a click presses (none for a writer
    command of the Cog, whose answers have no button)."""
    if w.gated and WriterCommand.named(command_name(command)) is not None:
        return []
    event, _ = await _say(w, "writer", where, discord_text(command))
    return [event]


async def _click(w: _DpyWorld, where: str, command: str) -> list[SimulatedEvent]:
    """The non-writer presses the buttons of the bot's answer to the writer's ``command``."""
    return await _press(w, where, w.prepared, "member")


async def _writer_clicks(w: _DpyWorld, where: str, command: str) -> list[SimulatedEvent]:
    """The writer's ``command``, then the writer presses the buttons of the bot's answer."""
    answer = await _writer_answer(w, where, command)
    w.watch.begin()
    return [*answer, *await _press(w, where, answer, "writer")]


async def _edited(w: _DpyWorld, where: str, command: str) -> list[SimulatedEvent]:
    """The non-writer's harmless text, then its edit into ``command``."""
    emu = w.sim.emu
    first, original = await _say(w, "member", where, "harmless text")

    def edited(payload: discord.RawMessageUpdateEvent) -> bool:
        return bool(payload.message_id == original.id)

    w.watch.begin()
    edit, _ = await _observed(
        w,
        "edit by member",
        "raw_message_edit",
        edited,
        lambda: emu.edit(original, discord_text(command)),
    )
    return [first, edit]


async def _writer_dm(w: _DpyWorld, where: str, command: str) -> list[SimulatedEvent]:
    emu = w.sim.emu
    writer = emu.world.user("writer")
    dm = emu.world.dm_channel(writer)
    event, _ = await _posted(
        w, "the writer's DM", writer.id, dm.id, lambda: emu.dm(writer, discord_text(command))
    )
    return [event]


_Dpy = ProbeEvent[_Hosted]
#: The discord.py probe events, by name.
BOT_EVENTS: dict[str, _Dpy] = {
    "non-writer member": _Dpy(_as("member"), person=True),
    "writer of another guild": _Dpy(_as("otherwriter"), person=True),
    "look-alike id of the writer": _Dpy(_as("writer.")),
    "webhook": _Dpy(_webhook),
    "another bot": _Dpy(_as("helperbot")),
    "slash command by a non-writer": _Dpy(_slash_by("member"), like="slash"),
    "button click by a non-writer": _Dpy(
        _click, like="click", setup=_writer_answer, untested="the bot showed no button"
    ),
    "edited message": _Dpy(_edited),
    "the writer's DM": _Dpy(_writer_dm, dm=True),
}
_ONCE = frozenset({"webhook", "the writer's DM"})
_BOT_WHERES: dict[str, tuple[str, ...]] = {
    name: ("general",) if name in _ONCE else ("general", "ideas") for name in BOT_EVENTS
}
#: The writer's acts the events are compared with.
_WRITER_ACTS: dict[str, _DpySend] = {
    "message": _as("writer"),
    "slash": _slash_by("writer"),
    "click": _writer_clicks,
}


async def _prove_writer(world: _DpyWorld, served: Served) -> None:
    """The positive control: the seeded writer's ``writers`` command names the writer."""
    listing = [c for c in served.commands if command_name(c) == "writers" and c[:1] != "/"]
    send = _as("writer") if listing else _slash_by("writer")
    [said] = await send(world, "general", listing[0] if listing else "/writers")
    answers = [o.fields.get("text", "") for o in said.sent]
    if any(str(D_WRITER) in answer for answer in answers):
        return
    why = f"answered {answers[0]!r}" if answers else "got no answer"
    raise ProbeReachError(
        f"the seeded writer is not a writer of the probe's guild for {served.name}: its "
        f"writers command {why}; the bot does not read the probe's database"
    )


async def probe_bot(found: object, spec: str, run: ProbeRun) -> None:
    """Run the bot ``found`` is or builds against the emulator; every event x command into the
    run's report (its commands extended by the bot's own)."""
    DISCORD_PLATFORM.silence_voice_warnings()
    env = run.env
    workspace = env.workspace.root if env.workspace is not None else Path("workspace")
    bot = _built(
        found,
        spec,
        database=env.db,
        agent=env.agent.key,
        workspace=workspace,
        owners=list(run.owners),
    )
    if bot.is_closed():
        raise ConfigError(
            f"bot {spec!r} was closed already (run before in this process), and discord.py "
            "does not start a client twice: name its class or a function that builds it"
        )
    world = DiscordWorld.declared(_DECLARED)
    adoption = env.adoption()
    async with (
        DiscordEmulator(world, wait_timeout=_START_WAIT) as emu,
        _hosted(bot, emu, adoption) as hosted,
    ):
        if hosted.cog is not None:
            _check_reach(hosted.cog, env)
        served = Served(
            tuple(_commands(hosted)),
            hosted.cog is not None,
            source_of(found, spec),
            f"bot {spec!r}",
        )
        prefixes = "/" + "".join(p[0] for p in _prefixes(hosted) if p[:1] != "<")
        run.gather(served, prefixes)
        guilds = (world.guild("guild").id, world.guild("elsewhere").id)
        general, lobby = world.channel("general").id, world.channel("lobby").id
        dm = world.dm_channel(world.user("writer")).id
        watch = Watch(discord_calls(lambda: emu.requests), folder_watch(env))
        probed = await seed_discord(hosted, env, guilds, general, lobby, dm, watch)
        probed.writer_acts = dict(_WRITER_ACTS)
        probed.writer_only, probed.gated = run.writer_only, served.gated
        if served.gated:
            await _prove_writer(probed, served)
        report = run.report
        await play(
            probed, BOT_EVENTS, _BOT_WHERES, report.commands, run.deadline, report, only=run.events
        )
        conclude(report, [probed], served.name)


class _Bots:
    """discord.py bots, their classes and factories (``bot=``, or ``application=`` when it
    names one), run against the emulator as they are."""

    arguments = frozenset({"application", "bot"})
    fallback = False
    serves = "a discord.py bot, its class or a function building one"

    def recognises(self, found: object) -> bool:
        """:func:`is_bot_factory`."""
        return is_bot_factory(found)

    def describe(self, found: object) -> str | None:
        """A Cog or a command (its class too), not the bot that has it."""
        kind = found if inspect.isclass(found) else type(found)
        if issubclass(kind, commands.Cog):
            what = "a discord.py Cog"
        elif issubclass(kind, commands.Command | app_commands.Command | app_commands.Group):
            what = "a discord.py command"
        else:
            return None
        return (
            f"{what}: the probe takes the bot that adds it (the bot, its class or a "
            "function building it)"
        )

    async def probe(
        self, found: object, spec: str, run: ProbeRun, config: ChannelConfig | None
    ) -> None:
        """:func:`probe_bot` (the bot's own intents and commands: ``config`` is not used)."""
        await probe_bot(found, spec, run)


class _DiscordProbe:
    """Discord's probe world: a handler's phase after the run's first platform's (the
    commands were gathered there), and discord.py bots."""

    alone = False
    targets: Sequence[ProbeTarget] = (_Bots(),)

    async def phase(
        self,
        run: ProbeRun,
        handler: Handler | str,
        name: str,
        config: ChannelConfig | None,
        prefix: str,
        prefixes: str | None,
    ) -> tuple[ProbeWorld[Any], Served]:
        """:data:`DISCORD_EVENTS` for ``handler``, in a channel and a thread."""
        channel = config or ChannelConfig(platform=name, require_mention=False)
        async with DiscordSim(run.env, config=channel) as sim:
            served = run.serve_handler(sim, handler, prefixes)
            world = await _build_discord(sim, run.env)
            world.writer_only = run.writer_only
            report = run.report
            await play(
                world,
                DISCORD_EVENTS,
                _DISCORD_WHERES,
                report.commands,
                run.deadline,
                report,
                prefix=prefix,
                only=run.events,
            )
        return world, served


#: What Discord's contract names (``probe_world``), at :mod:`actorscope.testing.discord`.
PROBE: PlatformProbe = _DiscordProbe()

"""``actorscope probe``: hostile senders x the bot's commands, and every permission leak.

:func:`probe` serves a user's ``actorscope run`` handler in the Telegram simulator on a
throwaway database and workspace (a temporary folder, removed afterwards) seeded with one writer
per group, and sends every probe event (:data:`EVENTS`: a non-writer, another group's writer,
an anonymous admin, a post as a channel, a channel post, an automatic forward, another bot, a
click, runs started by a non-writer, forged / unsigned / replayed origins, look-alike ids, an
edit, text naming the writer's id, the writer's DM) with every command; with a Discord
configuration the Discord simulator's events (:data:`DISCORD_EVENTS`) too. A **leak** is an
allowed decision for an actor that is not a writer of the scope (other than
``not_group_context`` in the writer's own DM), a change to the workspace, the grants, the cron
jobs or the memory entries, or a reply carrying a marker planted in another scope. A case that
outlives its deadline is reported as hung, not waited on.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import secrets
import tempfile
from collections.abc import Awaitable, Callable, Collection, Coroutine, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

import yaml
from telegram import InlineKeyboardButton, InlineKeyboardMarkup
from telegram.ext import Application, ApplicationBuilder

from actorscope.bots import load_object
from actorscope.channels import ChannelConfig, IgnoreReason
from actorscope.context import bind_identity
from actorscope.errors import ConfigError
from actorscope.host import Handler
from actorscope.identity import (
    Identity,
    PeerKind,
    SenderKind,
    discord_identity,
    guild_member_scope,
    telegram_identity,
)
from actorscope.messages import InboundMessage
from actorscope.permissions import AuditLog, writer_scope
from actorscope.propagation import (
    Origin,
    OriginSigner,
    RunInfo,
    bind_run,
    create_ticker_job,
    delegate,
    spawn_subagent,
    ticker_run,
)
from actorscope.testing._discord_sim import DiscordSim
from actorscope.testing._grants import Grants, open_env
from actorscope.testing._harness import AgentEnv, Event
from actorscope.testing._telegram_sim import TelegramSim

__all__ = [
    "DEFAULT_COMMANDS",
    "DISCORD_EVENTS",
    "EVENTS",
    "AppFactory",
    "ProbeCase",
    "ProbeReport",
    "Prober",
    "Status",
    "probe",
    "write_repros",
]

#: The writer commands every bot has (answered by the runner, never by the handler).
DEFAULT_COMMANDS: tuple[str, ...] = ("/addwriter", "/removewriter", "/writers")
#: How long one event x command may take before it is reported as hung.
DEFAULT_DEADLINE = 10.0
#: How long a hung case's cancellation is given before the probe moves on.
_CANCEL_WAIT = 1.0
#: The placeholder accounts Telegram puts in ``from`` for non-persons.
_PLACEHOLDERS = ("1087968824", "136817688", "777000")
#: The files a marker is planted in, in the other scopes.
_PLANTED_FILES = ("notes.md", "memory.md")
_WRITER_ID = 4242
_OTHER_WRITER_ID = 5151
_MEMBER_ID = 6161
_BOT_ID = 7171


class Status(StrEnum):
    """What one event x command came to."""

    HELD = "held"
    LEAK = "leak"
    HUNG = "hung"
    ERROR = "error"
    SKIPPED = "skipped"
    NOT_APPLICABLE = "n/a"


SimT = TypeVar("SimT")
_App = Application[Any, Any, Any, Any, Any, Any]
#: A PTB bot to probe: called with the simulator's ``ApplicationBuilder`` and keyword
#: overrides for :func:`~actorscope.integrations.ptb.install` (``database``, ``agent``,
#: ``workspace``, ``owners``, ``config``, ``signer``), it returns the built application.
AppFactory = Callable[..., _App]
_FAILED = frozenset({Status.LEAK, Status.HUNG, Status.ERROR, Status.SKIPPED})


@dataclass
class ProbeCase:
    """One event x command: its status, why, the decisions and audit rows it produced."""

    event: str
    command: str
    status: Status = Status.HELD
    problems: list[str] = field(default_factory=list)
    decisions: list[dict[str, str]] = field(default_factory=list)
    audit: list[dict[str, Any]] = field(default_factory=list)
    repro: str = ""

    def as_dict(self) -> dict[str, Any]:
        """The case as JSON-ready data."""
        return {
            "event": self.event,
            "command": self.command,
            "status": str(self.status),
            "problems": self.problems,
            "decisions": self.decisions,
            "audit": self.audit,
            "repro": self.repro,
        }


@dataclass
class ProbeReport:
    """Every case of a probe, in event-major order."""

    events: list[str]
    commands: list[str]
    cases: list[ProbeCase]

    @property
    def leaks(self) -> list[ProbeCase]:
        """The cases that leaked."""
        return [c for c in self.cases if c.status is Status.LEAK]

    @property
    def failures(self) -> list[ProbeCase]:
        """The cases that did not hold: leaked, hung, failed, or skipped after a hang."""
        return [c for c in self.cases if c.status in _FAILED]

    def summary(self) -> str:
        """``2 leak(s), 1 hung, 0 error(s), 0 skipped in 164 cases``."""
        count = {status: sum(c.status is status for c in self.cases) for status in Status}
        return (
            f"{count[Status.LEAK]} leak(s), {count[Status.HUNG]} hung, "
            f"{count[Status.ERROR]} error(s), {count[Status.SKIPPED]} skipped "
            f"in {len(self.cases)} cases"
        )

    def case(self, event: str, command: str) -> ProbeCase:
        """The case of ``event`` x ``command``."""
        for found in self.cases:
            if found.event == event and found.command == command:
                return found
        raise KeyError(f"no probe case {event!r} x {command!r}")

    def as_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data."""
        return {
            "events": self.events,
            "commands": self.commands,
            "leaks": len(self.leaks),
            "failures": len(self.failures),
            "summary": self.summary(),
            "cases": [c.as_dict() for c in self.cases],
        }

    def to_json(self) -> str:
        """The report as indented JSON."""
        return json.dumps(self.as_dict(), indent=2, ensure_ascii=False)


@dataclass
class ProbeWorld(Generic[SimT]):
    """A probe's world on one platform: its groups, the people, the planted markers."""

    sim: SimT
    env: AgentEnv
    writers: dict[str, str]  # group scope → its one writer
    #: chat id → a marker planted in that scope's workspace: no reply elsewhere may carry it.
    secrets: dict[str, str] = field(default_factory=dict)
    #: where → a message of the non-writer there, which hostile commands reply to (so that
    #: ``/addwriter`` names someone, as it must).
    targets: dict[str, int] = field(default_factory=dict)
    #: The groups' scopes and workspace folder names: what the writer's DM must not change.
    groups: set[str] = field(default_factory=set)


_Send = Callable[[ProbeWorld[SimT], str, str], Awaitable[list[Event]]]
_TgWorld = ProbeWorld[TelegramSim]
_TgSend = _Send[TelegramSim]


async def _say(w: _TgWorld, who: str | int, text: str, where: str) -> Event:
    """``who`` writes ``text`` in ``where``, replying to the non-writer's message there."""
    return await w.sim.message(who, text, where, topic=_topic(where), reply_to=w.targets.get(where))


class Prober(Protocol):
    """:func:`probe`'s signature (what the ``actorscope_probe`` fixture gives)."""

    def __call__(
        self,
        handler: Handler | str | None = ...,
        *,
        application: AppFactory | str | None = ...,
        bot: Callable[..., Any] | str | None = ...,
        search_dir: Path | None = ...,
        commands: Sequence[str] = ...,
        config: ChannelConfig | None = ...,
        discord: ChannelConfig | None = ...,
        owners: Sequence[str] = ...,
        deadline: float = ...,
        agent: str = ...,
        events: Sequence[str] = ...,
    ) -> Coroutine[Any, Any, ProbeReport]:
        """Probe ``handler``."""
        ...


def _scope(chat_id: int) -> str:
    return telegram_identity(chat_id, "supergroup", None).user_id


_GROUP_ID = -1001000000001
_FORUM_ID = -1001000000002
_OTHER_ID = -1001000000003
_CHANNEL_ID = -1001000000004


def _group_names(env: AgentEnv, identities: Sequence[Identity]) -> set[str]:
    """The scopes of ``identities`` and their workspace folders' names (for the env's agent)."""
    names = {i.user_id for i in identities}
    if env.workspace is not None:
        names |= {env.workspace.directory(env.agent, _of_agent(env, i)).name for i in identities}
    return names


def _of_agent(env: AgentEnv, identity: Identity) -> Identity:
    """``identity`` as a run of the env's agent."""
    return replace(identity, agent_id=env.agent.id, tenant_id=env.agent.tenant_id)


async def _build(sim: TelegramSim, env: AgentEnv) -> _TgWorld:
    sim.user("writer", user_id=_WRITER_ID)
    sim.user("otherwriter", user_id=_OTHER_WRITER_ID)
    sim.user("member", user_id=_MEMBER_ID)
    sim.emu.state.add_user("helperbot", username="helper_bot", user_id=_BOT_ID, is_bot=True)
    sim.supergroup("group", chat_id=_GROUP_ID)
    sim.supergroup("forum", chat_id=_FORUM_ID, forum=True)
    sim.topic("forum", "ideas")
    sim.supergroup("elsewhere", chat_id=_OTHER_ID)
    sim.channel("news", chat_id=_CHANNEL_ID)
    grants = Grants(env.store, env.agent)
    writers = {
        _scope(_GROUP_ID): str(_WRITER_ID),
        _scope(_FORUM_ID): str(_WRITER_ID),
        _scope(_OTHER_ID): str(_OTHER_WRITER_ID),
    }
    for scope, writer in writers.items():
        await grants.allow(scope, writer, by="probe")
    planted = {
        str(_OTHER_ID): _plant(env, telegram_identity(_OTHER_ID, "supergroup", None)),
        str(_WRITER_ID): _plant(env, telegram_identity(_WRITER_ID, "private", _WRITER_ID)),
    }
    world = ProbeWorld(sim, env, writers, planted)
    world.groups = _group_names(
        env,
        [telegram_identity(chat, "supergroup", None) for chat in (_GROUP_ID, _FORUM_ID, _OTHER_ID)],
    )
    for where in ("group", "forum"):
        said = await sim.message("member", "hello", where, topic=_topic(where))
        world.targets[where] = int(said.payload["message"]["message_id"])
    return world


def _plant(env: AgentEnv, identity: Identity) -> str:
    """Write a marker into ``identity``'s scope's notes (every file name the bot may read)."""
    marker = f"probe-secret-{secrets.token_hex(8)}"
    bound = _of_agent(env, identity)
    if env.workspace is not None:
        for name in _PLANTED_FILES:
            env.workspace.write(env.agent, bound, name, f"{marker}\n")
    return marker


# -- the probe events ---------------------------------------------------------------------------
# Each sends ``command`` as its hostile sender in ``where`` ("group" or "forum" topic "ideas").


def _topic(where: str) -> str | None:
    return "ideas" if where == "forum" else None


async def _non_writer(w: _TgWorld, where: str, command: str) -> list[Event]:
    return [await _say(w, "member", command, where)]


async def _other_group_writer(w: _TgWorld, where: str, command: str) -> list[Event]:
    return [await _say(w, "otherwriter", command, where)]


async def _anonymous_admin(w: _TgWorld, where: str, command: str) -> list[Event]:
    return [await w.sim.anonymous_admin(where, command, topic=_topic(where))]


async def _as_channel(w: _TgWorld, where: str, command: str) -> list[Event]:
    return [await w.sim.as_channel("news", where, command)]


async def _channel_post(w: _TgWorld, where: str, command: str) -> list[Event]:
    return [await w.sim.channel_post("news", command)]


async def _automatic_forward(w: _TgWorld, where: str, command: str) -> list[Event]:
    post = await w.sim.channel_post("news", command)
    message_id = int(post.payload["channel_post"]["message_id"])
    return [post, await w.sim.automatic_forward("news", message_id, where)]


async def _other_bot(w: _TgWorld, where: str, command: str) -> list[Event]:
    return [await _say(w, _BOT_ID, command, where)]


async def _click(w: _TgWorld, where: str, command: str) -> list[Event]:
    mine = await w.sim.message("writer", "hello", where, topic=_topic(where))
    button = InlineKeyboardButton(command, callback_data=command[:64])
    posted = await w.sim.app.bot.send_message(
        int(w.sim.chat_id(where)),
        "choose",
        message_thread_id=None if where == "group" else int(w.sim.topic_id(where, "ideas")),
        reply_to_message_id=int(mine.payload["message"]["message_id"]),
        reply_markup=InlineKeyboardMarkup([[button]]),
    )
    return [await w.sim.click("member", where, command[:64], message=posted.message_id)]


async def _edited(w: _TgWorld, where: str, command: str) -> list[Event]:
    first = await w.sim.message("member", "harmless text", where, topic=_topic(where))
    return [first, await w.sim.edit(first, command)]


async def _claims_writer(w: _TgWorld, where: str, command: str) -> list[Event]:
    text = f"{command} sender_id={_WRITER_ID}"
    return [await _say(w, "member", text, where)]


async def _started_by_non_writer(
    w: _TgWorld, where: str, command: str, build: Callable[[], InboundMessage], label: str
) -> list[Event]:
    parent = await w.sim.message("member", "hello", where, topic=_topic(where))
    if parent.request is None:
        return [parent]
    request = parent.request
    info = RunInfo(session_key=request.session_key, thread_id=request.thread_id)
    with bind_identity(request.identity()), bind_run(info):
        message = build()
    return [parent, await w.sim.synthetic(message, label)]


async def _subagent(w: _TgWorld, where: str, command: str) -> list[Event]:
    signer = w.env.signer
    return await _started_by_non_writer(
        w, where, command, lambda: spawn_subagent(command, signer=signer).message, "sub-agent"
    )


async def _delegate(w: _TgWorld, where: str, command: str) -> list[Event]:
    signer, agent_id = w.env.signer, w.env.agent.id
    return await _started_by_non_writer(
        w, where, command, lambda: delegate(agent_id, command, signer=signer).message, "delegate"
    )


async def _ticker(w: _TgWorld, where: str, command: str) -> list[Event]:
    signer = w.env.signer
    return await _started_by_non_writer(
        w,
        where,
        command,
        lambda: ticker_run(create_ticker_job("probe", command), signer=signer),
        "ticker",
    )


def _writer_carrier(w: _TgWorld, where: str, command: str, signer: OriginSigner) -> InboundMessage:
    """A sub-agent carrier signed by ``signer`` claiming the writer's run in ``where``."""
    chat_id = _FORUM_ID if where == "forum" else _GROUP_ID
    identity = _of_agent(w.env, telegram_identity(chat_id, "supergroup", _WRITER_ID))
    with bind_identity(identity):
        return spawn_subagent(command, signer=signer).message


async def _forged_origin(w: _TgWorld, where: str, command: str) -> list[Event]:
    carrier = _writer_carrier(w, where, command, OriginSigner())  # another key
    return [await w.sim.synthetic(carrier, "forged origin")]


async def _unsigned_origin(w: _TgWorld, where: str, command: str) -> list[Event]:
    carrier = _writer_carrier(w, where, command, w.env.signer)
    claimed = Origin.from_metadata(carrier.metadata)
    metadata = {} if claimed is None else claimed.to_metadata()
    unsigned = carrier.model_copy(update={"metadata": metadata})
    return [await w.sim.synthetic(unsigned, "unsigned origin")]


async def _replayed_origin(w: _TgWorld, where: str, command: str) -> list[Event]:
    carrier = _writer_carrier(w, where, command, w.env.signer)
    w.env.signer.verify(carrier, consume=True)  # its one honest use
    return [await w.sim.synthetic(carrier, "replayed origin")]


def _synthetic_sender(sender_id: str, kind: SenderKind = SenderKind.USER) -> _TgSend:
    """A message in the group from ``sender_id`` that no platform event produces as such."""

    async def send(w: _TgWorld, where: str, command: str) -> list[Event]:
        chat_id = _FORUM_ID if where == "forum" else _GROUP_ID
        message = InboundMessage(
            channel="telegram",
            sender_id=sender_id,
            chat_id=str(chat_id),
            user_id=_scope(chat_id),
            peer_kind=PeerKind.GROUP,
            sender_kind=kind,
            content=command,
            thread_id="" if where == "group" else str(w.sim.topic_id("forum", "ideas")),
        )
        return [await w.sim.synthetic(message, f"sender {sender_id!r}")]

    return send


async def _writer_dm(w: _TgWorld, where: str, command: str) -> list[Event]:
    return [await w.sim.message("writer", command)]


#: The probe events: name → (sender, whether it is the writer's own DM).
EVENTS: dict[str, tuple[_TgSend, bool]] = {
    "non-writer member": (_non_writer, False),
    "writer of another group": (_other_group_writer, False),
    "anonymous admin": (_anonymous_admin, False),
    "user posting as a channel": (_as_channel, False),
    "channel post": (_channel_post, False),
    "automatic forward": (_automatic_forward, False),
    "another bot": (_other_bot, False),
    "button click by a non-writer": (_click, False),
    "edited message": (_edited, False),
    "text naming the writer's sender_id": (_claims_writer, False),
    "sub-agent started by a non-writer": (_subagent, False),
    "delegate started by a non-writer": (_delegate, False),
    "ticker started by a non-writer": (_ticker, False),
    "forged origin claiming the writer": (_forged_origin, False),
    "unsigned origin claiming the writer": (_unsigned_origin, False),
    "replayed origin of the writer": (_replayed_origin, False),
    "message with no sender": (_synthetic_sender("", SenderKind.NONE), False),
    "look-alike id of the writer (0-prefixed)": (_synthetic_sender(f"0{_WRITER_ID}"), False),
    **{
        f"look-alike id of placeholder {p}": (_synthetic_sender(f"0{p}"), False)
        for p in _PLACEHOLDERS
    },
    "the writer's DM": (_writer_dm, True),
}
#: Where each event is sent: a supergroup and a forum topic (channel posts and DMs: once).
_WHERES: dict[str, tuple[str, ...]] = {
    "channel post": ("group",),
    "the writer's DM": ("group",),
    "user posting as a channel": ("group",),
}


#: The tables of what a bot may change for a scope besides its files and grants.
_STATE_TABLES = ("cron_jobs", "memory_entries")


@dataclass(frozen=True)
class _Snapshot:
    files: dict[str, str]
    grants: frozenset[tuple[str, ...]]
    rows: frozenset[tuple[str, str]]  # (table, the row as JSON)


async def _snapshot(env: AgentEnv) -> _Snapshot:
    files: dict[str, str] = {}
    root = env.workspace.root if env.workspace is not None else None
    if root is not None and root.exists():
        for path in sorted(root.rglob("*")):
            if path.is_file():
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                files[str(path.relative_to(root))] = digest
    grants = await env.store.list(agent_id=env.agent.id)
    rows = {
        (table, json.dumps(dict(row), sort_keys=True, default=str))
        for table in _STATE_TABLES
        for row in await env.db.fetchall(f"SELECT * FROM {table}")  # the constants above
    }
    return _Snapshot(
        files,
        frozenset((g.scope, g.config_type, g.sender_id, g.permission) for g in grants),
        frozenset(rows),
    )


def _changes(before: _Snapshot, after: _Snapshot, *, groups: set[str] | None) -> list[str]:
    """What changed; with ``groups`` (the groups' scopes and folder names), only what names one
    of them (the writer's DM may change the writer's own scope)."""

    def counts(text: str) -> bool:
        return groups is None or any(group in text for group in groups)

    problems = [
        f"workspace file {name} changed"
        for name in sorted(set(before.files) | set(after.files))
        if before.files.get(name) != after.files.get(name)
        and not name.endswith(".agent.json")
        and counts(name)
    ]
    problems += [
        f"grant {' '.join(grant)} changed"
        for grant in sorted(before.grants ^ after.grants)
        if counts(grant[0])
    ]
    problems += [
        f"{table} row changed: {row}"
        for table, row in sorted(before.rows ^ after.rows)
        if counts(row)
    ]
    return problems


def _decision_leaks(
    events: Sequence[Event], writers: dict[str, str], dm: bool
) -> tuple[list[str], list[dict[str, str]]]:
    problems: list[str] = []
    decisions: list[dict[str, str]] = []
    for event in events:
        for observed in event.decisions:
            fields = dict(observed.fields)
            decisions.append(fields)
            if fields.get("allowed") != "true":
                continue
            if dm and fields.get("reason") == "not_group_context":
                continue
            if writers.get(fields.get("scope", "")) == fields.get("sender") and not dm:
                # the seeded writer, in their group: a hostile event must still never get here
                problems.append(f"allowed {fields.get('action')} as the writer ({event.label})")
                continue
            problems.append(
                f"allowed {fields.get('action')} for sender {fields.get('sender')!r} "
                f"in {fields.get('scope')} ({fields.get('reason')})"
            )
    return problems, decisions


async def _run_case(
    world: ProbeWorld[SimT],
    audit: AuditLog,
    case: ProbeCase,
    send: _Send[SimT],
    where: str,
    dm: bool,
) -> None:
    env = world.env
    before = await _snapshot(env)
    seen = await audit.list(agent_id=env.agent.id, limit=1)
    last_id = seen[0].id if seen else 0
    events = await send(world, where, case.command)
    problems, case.decisions = _decision_leaks(events, world.writers, dm)
    after = await _snapshot(env)
    problems += _changes(before, after, groups=world.groups if dm else None)
    problems += _cross_scope(events, world.secrets)
    rows = await audit.list(agent_id=env.agent.id, limit=100)
    case.audit = [r.as_dict() for r in rows if r.id > last_id]
    case.problems = problems
    if problems:
        case.status = Status.LEAK
    elif events[-1].ignored is not None and not case.decisions:
        case.status = Status.NOT_APPLICABLE


def _cross_scope(events: Sequence[Event], planted: dict[str, str]) -> list[str]:
    """Replies carrying a marker planted in another chat's scope."""
    problems: list[str] = []
    for event in events:
        for sent in event.sent:
            chat, text = sent.fields.get("chat", ""), sent.fields.get("text", "")
            problems += [
                f"reply in chat {chat} carries content of chat {owner}'s scope"
                for owner, marker in planted.items()
                if owner != chat and marker in text
            ]
    return problems


async def _bounded(
    world: ProbeWorld[SimT],
    audit: AuditLog,
    case: ProbeCase,
    how: tuple[_Send[SimT], str, bool],
    deadline: float,
    cases: Sequence[ProbeCase],
) -> None:
    """Run ``case`` within ``deadline``; after any case hung, the rest are skipped."""
    if any(c.status is Status.HUNG for c in cases):
        case.status = Status.SKIPPED
        case.problems.append("not run: an earlier case hung")
        return
    send, where, dm = how
    task = asyncio.ensure_future(_run_case(world, audit, case, send, where, dm))
    done, _ = await asyncio.wait({task}, timeout=deadline)
    if not done:
        task.cancel()
        await asyncio.wait({task}, timeout=_CANCEL_WAIT)
        case.status = Status.HUNG
        case.problems.append(f"no answer within {deadline:g} s: the handler hangs")
        return
    error = task.exception()
    if error is not None:
        case.status = Status.ERROR
        case.problems.append(f"the handler failed: {type(error).__name__}: {error}")


async def play(
    world: ProbeWorld[SimT],
    events: dict[str, tuple[_Send[SimT], bool]],
    wheres: dict[str, tuple[str, ...]],
    commands: Sequence[str],
    deadline: float,
    report: ProbeReport,
    prefix: str = "",
    only: Collection[str] = (),
) -> None:
    """Every event of ``events`` x every command, in each of its places, into ``report``
    (with ``only``: just the events labelled so)."""
    audit = world.env.store.audit
    for name, (send, dm) in events.items():
        places = wheres[name]
        for where in places:
            label = prefix + (name if len(places) == 1 else f"{name} ({where})")
            if only and label not in only:
                continue
            report.events.append(label)
            for command in commands:
                case = ProbeCase(label, command)
                report.cases.append(case)
                await _bounded(world, audit, case, (send, where, dm), deadline, report.cases)


def _registered(sim: TelegramSim) -> list[str]:
    """The commands the bot registered with ``setMyCommands`` (every scope and language)."""
    return [f"/{c['command']}" for listed in sim.emu.commands.values() for c in listed]


def _application(
    factory: AppFactory | str,
    search_dir: Path | None,
    builder: ApplicationBuilder[Any, Any, Any, Any, Any, Any],
    **overrides: Any,
) -> _App:
    """The application ``factory`` builds against the simulator (one ConfigError otherwise)."""
    spec = factory if isinstance(factory, str) else getattr(factory, "__name__", "application")
    found = (
        load_object(factory, search_dir, what="application")
        if isinstance(factory, str)
        else factory
    )
    if isinstance(found, Application):
        raise ConfigError(
            f"application {spec!r} is an Application already built: name a function that takes "
            "an ApplicationBuilder and install()'s keyword arguments and builds it, so that the "
            "probe can build it against its emulator"
        )
    if not callable(found):
        raise ConfigError(f"application {spec!r} is not a function")
    try:
        built = found(builder, **overrides)
    except Exception as exc:  # any failure of the user's factory is a config problem
        raise ConfigError(
            f"application {spec!r}: building it failed: {type(exc).__name__}: {exc}"
        ) from None
    if not isinstance(built, Application):
        raise ConfigError(f"application {spec!r} did not return a python-telegram-bot Application")
    return built


async def probe(
    handler: Handler | str | None = None,
    *,
    application: AppFactory | str | None = None,
    bot: Callable[..., Any] | str | None = None,
    search_dir: Path | None = None,
    commands: Sequence[str] = (),
    config: ChannelConfig | None = None,
    discord: ChannelConfig | None = None,
    owners: Sequence[str] = (),
    deadline: float = DEFAULT_DEADLINE,
    agent: str = "main",
    events: Sequence[str] = (),
) -> ProbeReport:
    """Probe ``handler`` (a function or ``module:function``) with every event x command.

    Or, with ``application`` (an :data:`AppFactory` or its ``module:function``), the PTB bot it
    builds (with :func:`~actorscope.integrations.ptb.install`) against the Telegram simulator.
    ``commands`` are added to the writer commands and the commands the bot registers with
    ``setMyCommands``; ``config`` is the Telegram channel configuration the runner admits by
    (default: mention not required); with ``discord`` (the Discord one) the Discord events are
    sent too, labelled ``discord: ...`` (not with ``application``). Or, with ``bot`` (a
    discord.py bot's class or factory, called with ``database``, ``agent``, ``workspace`` and
    ``owners``, or its ``module:attribute``), that bot against the Discord emulator.
    ``events`` limits the run to the events labelled so (as in the report). Everything is
    written to a temporary folder that is removed before this returns.
    """
    if sum(given is not None for given in (handler, application, bot)) != 1:
        raise ConfigError("probe takes a handler, an application or a bot, exactly one")
    all_commands = list(dict.fromkeys([*commands, *DEFAULT_COMMANDS]))
    report = ProbeReport([], all_commands, [])
    with tempfile.TemporaryDirectory(prefix="actorscope-probe-") as tmp:
        async with open_env(Path(tmp) / "probe.db", agent_key=agent) as env:
            env.roles.update(dict.fromkeys(owners, "owner"))
            if bot is not None:
                # Imported here: the discord.py mode builds on this module.
                from actorscope.testing._probe_dpy import probe_bot

                await probe_bot(
                    bot, search_dir, env, report, owners=owners, deadline=deadline, events=events
                )
                return report
            telegram = config or ChannelConfig(platform="telegram", require_mention=False)
            async with TelegramSim(env, config=telegram) as sim:
                if application is not None:
                    workspace = env.workspace.root if env.workspace is not None else None
                    built = _application(
                        application,
                        search_dir,
                        sim.application_builder(),
                        database=env.db,
                        agent=env.agent.key,
                        workspace=workspace or Path(tmp) / "workspace",
                        owners=list(owners),
                        config=telegram,
                        signer=env.signer,
                    )
                    await sim.serve_application(built)
                elif handler is not None:
                    sim.serve(handler, search_dir=search_dir)
                all_commands[:] = dict.fromkeys([*all_commands, *_registered(sim)])
                world = await _build(sim, env)
                wheres = {name: _WHERES.get(name, ("group", "forum")) for name in EVENTS}
                await play(world, EVENTS, wheres, all_commands, deadline, report, only=events)
            if discord is not None and handler is not None:
                async with DiscordSim(env, config=discord) as dsim:
                    dsim.serve(handler, search_dir=search_dir)
                    dworld = await _build_discord(dsim, env)
                    await play(
                        dworld,
                        DISCORD_EVENTS,
                        _DISCORD_WHERES,
                        all_commands,
                        deadline,
                        report,
                        prefix="discord: ",
                        only=events,
                    )
    return report


# -- Discord ------------------------------------------------------------------------------------
_DcWorld = ProbeWorld[DiscordSim]
_DcSend = _Send[DiscordSim]
D_WRITER, D_OTHER_WRITER, D_MEMBER, D_BOT = (
    424200000000000001,
    515100000000000002,
    616100000000000003,
    717100000000000004,
)


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
    return await seed_discord(sim, env, (guild.id, elsewhere.id), general.id, lobby.id, dm.id)


async def seed_discord(
    sim: SimT, env: AgentEnv, guilds: tuple[int, int], general: int, lobby: int, dm: int
) -> ProbeWorld[SimT]:
    """The Discord probe world of ``sim``: the writer granted guild-wide in the first guild,
    the other writer in the second; markers planted in the second guild's ``lobby`` channel
    and the writer's ``dm`` channel; what the writer's DM must not change."""
    grants = Grants(env.store, env.agent)
    writers: dict[str, str] = {}
    for guild, person in zip(guilds, (D_WRITER, D_OTHER_WRITER), strict=True):
        scope = writer_scope(guild_member_scope(guild, person)) or ""
        writers[scope] = str(person)
        await grants.allow(scope, str(person), by="probe")
    planted = {
        str(lobby): discord_identity(D_OTHER_WRITER, chat_id=lobby, guild_id=guilds[1]),
        str(dm): discord_identity(D_WRITER, chat_id=dm),
    }
    world = ProbeWorld(sim, env, writers, {chat: _plant(env, i) for chat, i in planted.items()})
    world.groups = _group_names(
        env,
        [
            discord_identity(person, chat_id=general, guild_id=guild)
            for guild in guilds
            for person in (D_WRITER, D_OTHER_WRITER, D_MEMBER)
        ],
    ) | set(writers)
    return world


async def _d_non_writer(w: _DcWorld, where: str, command: str) -> list[Event]:
    return [await w.sim.message("member", command, where, mention_bot=True)]


async def _d_other_writer(w: _DcWorld, where: str, command: str) -> list[Event]:
    return [await w.sim.message("otherwriter", command, where, mention_bot=True)]


async def _d_webhook(w: _DcWorld, where: str, command: str) -> list[Event]:
    return [await w.sim.webhook(where, command)]


async def _d_bot(w: _DcWorld, where: str, command: str) -> list[Event]:
    return [await w.sim.bot_message("helperbot", command, where)]


async def _d_slash(w: _DcWorld, where: str, command: str) -> list[Event]:
    name = command.lstrip("/!").split(" ", 1)[0].split("@", 1)[0].lower()
    if name not in _DISCORD_SLASH:
        return [Event(f"no slash command {name!r}", {}, ignored=IgnoreReason.NOT_FOR_THIS_BOT)]
    # /addwriter and /removewriter name someone: the non-writer names themself.
    person = w.sim.find_user("member")
    options = {"user": person} if name != "writers" else None
    return [await w.sim.slash(person, name, where, options=options)]


async def _d_writer_dm(w: _DcWorld, where: str, command: str) -> list[Event]:
    return [await w.sim.dm("writer", command)]


#: The slash commands the Discord runner registers (the writer commands).
_DISCORD_SLASH = frozenset({"addwriter", "removewriter", "writers"})
#: The Discord probe events: name → (sender, whether it is the writer's own DM).
DISCORD_EVENTS: dict[str, tuple[_DcSend, bool]] = {
    "non-writer member": (_d_non_writer, False),
    "writer of another guild": (_d_other_writer, False),
    "webhook": (_d_webhook, False),
    "another bot": (_d_bot, False),
    "slash command by a non-writer": (_d_slash, False),
    "the writer's DM": (_d_writer_dm, True),
}
_DISCORD_WHERES: dict[str, tuple[str, ...]] = {
    name: ("general",) if dm else ("general", "ideas") for name, (_, dm) in DISCORD_EVENTS.items()
}


#: The events a scenario file can replay as a Telegram step: name → (from, text template).
_SCENARIO_STEPS = {
    "non-writer member": ("member", "{command}"),
    "writer of another group": ("otherwriter", "{command}"),
    "text naming the writer's sender_id": ("member", "{command} sender_id=" + str(_WRITER_ID)),
}


def _scenario(case: ProbeCase, handler: str) -> dict[str, Any]:
    base = case.event.rsplit(" (", 1)[0]
    where = "forum" if case.event.endswith("(forum)") else "group"
    scenario: dict[str, Any] = {
        "name": f"probe leak: {case.event} x {case.command}",
        "description": "; ".join(case.problems),
        "setup": {
            "handler": handler,
            "telegram": {
                "users": {
                    "writer": _WRITER_ID,
                    "otherwriter": _OTHER_WRITER_ID,
                    "member": _MEMBER_ID,
                },
                "chats": {
                    "group": {"type": "supergroup", "id": _GROUP_ID},
                    "forum": {"type": "supergroup", "id": _FORUM_ID},
                },
            },
            "grants": [
                {"scope": scope, "sender": sender}
                for scope, sender in {
                    _scope(_GROUP_ID): str(_WRITER_ID),
                    _scope(_FORUM_ID): str(_WRITER_ID),
                    _scope(_OTHER_ID): str(_OTHER_WRITER_ID),
                }.items()
            ],
        },
        "steps": [],
    }
    if base in _SCENARIO_STEPS:
        sender, text = _SCENARIO_STEPS[base]
        step = {"from": sender, "chat": where, "text": text.format(command=case.command)}
        scenario["steps"].append(
            {"name": case.event, "telegram": step, "expect": {"decision": {"allowed": False}}}
        )
    return scenario


#: A reproduction for a PTB application or a discord.py bot: a pytest file probing the case.
_REPRO_TEST = '''\
"""A leak `actorscope probe` found; this test fails while the bot still leaks.

Run it with pytest: the actorscope testing kit gives the actorscope_probe fixture.
"""

from pathlib import Path

from actorscope.testing import Prober, Status

# {title}
# {problems}


async def test_probe_leak_{index:03d}(actorscope_probe: Prober) -> None:
    """The probe's case above holds."""
    report = await actorscope_probe(
        {kind}={spec!r},
        search_dir=Path({search_dir!r}),
        commands=[{command!r}],
        events=[{event!r}],
    )
    case = report.case({event!r}, {command!r})
    assert case.status is Status.HELD, "; ".join(case.problems)
'''


def _one_line(text: str) -> str:
    return " ".join(text.split())


def write_repros(
    report: ProbeReport,
    out: Path,
    *,
    handler: str | None = None,
    application: str | None = None,
    bot: str | None = None,
    search_dir: Path | None = None,
) -> list[Path]:
    """Write one reproduction per leak or hang into ``out``.

    For a ``handler``: a ``*.scenario.yaml`` whose setup is the probe's world (a step replays
    the event where a scenario can express it). For a PTB ``application`` or a discord.py
    ``bot`` (as ``module:attribute``, found in ``search_dir``), which a scenario cannot serve:
    a ``test_probe_leak_NNN.py`` that probes that one event x command with the
    ``actorscope_probe`` fixture and fails while the case does not hold.
    """
    given = [(k, v) for k, v in (("application", application), ("bot", bot)) if v is not None]
    if len(given) + (handler is not None) != 1:
        raise ConfigError("write_repros takes a handler, an application or a bot, exactly one")
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    reproducible = [c for c in report.cases if c.status in (Status.LEAK, Status.HUNG)]
    for index, case in enumerate(reproducible, 1):
        if handler is not None:
            path = out / f"probe-leak-{index:03d}.scenario.yaml"
            text = yaml.safe_dump(_scenario(case, handler), sort_keys=False)
        else:
            [(kind, spec)] = given
            path = out / f"test_probe_leak_{index:03d}.py"
            text = _REPRO_TEST.format(
                title=_one_line(f"{case.event} x {case.command}"),
                problems=_one_line("; ".join(case.problems)),
                index=index,
                kind=kind,
                spec=spec,
                search_dir=str((search_dir or Path.cwd()).resolve()),
                command=case.command,
                event=case.event,
            )
        path.write_text(text, "utf-8")
        case.repro = str(path)
        written.append(path)
    return written

"""``actorscope probe``: hostile senders x the bot's commands, judged by what the bot does.

:func:`~actorscope.testing.probe` serves a user's bot on a throwaway database and workspace in
a temporary folder (removed afterwards) that is also the bot's working directory while it
runs, in the probe world of a platform: the one its contract's ``probe_world`` names (a
:class:`PlatformProbe` beside its simulator, which serves a handler and the application or bot
targets of the frameworks it knows), or, when it names none, the world every chat has
(:data:`CHAT_EVENTS`, on a :class:`ChatSim`). A world seeds one writer per group and proves
its reach first (the positive control): a gate on another database or workspace, or a writer
the bot does not know or refuses, stops it with one :class:`ProbeReachError`.

Then, per command, it records what the bot does for the writer (:mod:`._probe_effects`: its
platform calls, the files and SQLite rows it writes under its working directory) and sends
every probe event of the world (a non-writer, another group's writer, forged / unsigned /
replayed origins, the writer's DM, and what the platform has besides) with every command
(:func:`play`). A **leak** is an allowed decision for an actor that is not a writer of the
scope (other than ``not_group_context`` in the writer's own DM), a change to the workspace,
the grants, the cron jobs or the memory entries, an account linked that is not the writer's, a
reply carrying a marker planted in another scope, or a writer-only command (one the bot asks a
permission for, or one named in ``writer_only``) doing for a hostile sender what it does for
the writer. An undeclared command that does so is **open** (not a failure); one that does so
for every person and refuses no one is open to everyone. What the probe could not test is
said, one line each (:func:`conclude`), and a run that reached none of the bot's own commands
is not a clean pass. A case that outlives its deadline is reported as hung, not waited on.

This module names no platform: each world lives beside its platform's simulator and is found
through the platform's contract (:func:`probe_world`).
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import json
import os
import secrets
import sys
from collections.abc import Awaitable, Callable, Collection, Coroutine, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

import yaml

from actorscope.bots import load_object
from actorscope.channels import ChannelConfig, WriterCommand
from actorscope.channels import platform as contract_of
from actorscope.context import bind_identity
from actorscope.errors import ConfigError
from actorscope.host import Handler
from actorscope.identity import (
    Identity,
    PeerKind,
    Scope,
    SenderKind,
)
from actorscope.messages import InboundMessage
from actorscope.permissions import AuditLog
from actorscope.propagation import OriginSigner, RunInfo, spawn_subagent
from actorscope.testing._expect import Observation, ObservationKind
from actorscope.testing._grants import Grants
from actorscope.testing._harness import AgentEnv, SimulatedEvent, Simulator
from actorscope.testing._probe_effects import Behaviour, CallLog, FolderWatch, Watch, api_call
from actorscope.testing._probe_target import (
    ProbeReachError,
    Served,
    command_name,
    inferred_commands,
    scenario_files,
    source_of,
)

__all__ = [
    "CHAT_EVENTS",
    "DEFAULT_COMMANDS",
    "AppFactory",
    "ChatSim",
    "PlatformProbe",
    "ProbeCase",
    "ProbeEvent",
    "ProbeReachError",
    "ProbeReport",
    "ProbeStatus",
    "ProbeTarget",
    "Prober",
    "probe_world",
]

#: The writer commands every bot with actorscope's gate has (answered by the gate, never by
#: the bot's own handlers).
DEFAULT_COMMANDS: tuple[str, ...] = ("/addwriter", "/removewriter", "/writers")
#: How long one event x command may take before it is reported as hung.
DEFAULT_DEADLINE = 10.0
#: How long a hung case's cancellation is given before the probe moves on.
_CANCEL_WAIT = 1.0
#: The files a marker is planted in, in the other scopes.
_PLANTED_FILES = ("notes.md", "memory.md")
#: The name of the probe's database in its temporary folder.
_PROBE_DB = "probe.db"
#: The names the probe's people go by (left out of the bot's replies when comparing them).
PEOPLE = ("writer", "otherwriter", "member", "helperbot", "helper_bot", "writer.", "wrlter")


class ProbeStatus(StrEnum):
    """What one event x command came to."""

    HELD = "held"
    LEAK = "leak"
    #: An undeclared command did for this sender what it does for the writer (not a failure).
    OPEN = "open"
    HUNG = "hung"
    ERROR = "error"
    SKIPPED = "skipped"
    NOT_APPLICABLE = "n/a"
    #: Nothing to send (a click when the bot's answers show no button): not a held case.
    NOT_TESTED = "not tested"


SimT = TypeVar("SimT")
#: A PTB bot to probe: called with the simulator's ``ApplicationBuilder`` and, when it takes
#: them, keyword overrides for :func:`~actorscope.integrations.ptb.install` (``database``,
#: ``agent``, ``workspace``, ``owners``, ``config``, ``signer``), it returns the built
#: application.
AppFactory = Callable[..., Any]
_FAILED = frozenset({ProbeStatus.LEAK, ProbeStatus.HUNG, ProbeStatus.ERROR, ProbeStatus.SKIPPED})


@dataclass
class ProbeCase:
    """One event x command: its status, why, the decisions and audit rows it produced, what
    the bot did (``behaviour``) and whether that was what it does for the writer."""

    event: str
    command: str
    status: ProbeStatus = ProbeStatus.HELD
    problems: list[str] = field(default_factory=list)
    decisions: list[dict[str, str]] = field(default_factory=list)
    audit: list[dict[str, Any]] = field(default_factory=list)
    repro: str = ""
    behaviour: list[str] = field(default_factory=list)
    #: The bot did for this sender everything it does for the writer.
    as_writer: bool = False
    #: The bot refused this sender: a denied decision, or something other than the writer got.
    refused: bool = False
    #: The event is a plain person's (a non-writer member, another group's writer).
    person: bool = False
    #: A leak only what the bot did shows (no decision, state change or planted content).
    behaviour_only: bool = False

    def as_dict(self) -> dict[str, Any]:
        """The case as JSON-ready data."""
        return {
            "event": self.event,
            "command": self.command,
            "status": str(self.status),
            "problems": self.problems,
            "decisions": self.decisions,
            "audit": self.audit,
            "behaviour": self.behaviour,
            "as_writer": self.as_writer,
            "repro": self.repro,
        }


@dataclass
class ProbeReport:
    """Every case of a probe, in event-major order, and what it could not test.

    ``writer_only``: the commands judged writer-only (the bot asked a permission for them, or
    they were declared so); ``notes``: what the probe could not test, one line each;
    ``untested``: what keeps the run from being a clean pass (a run that reached none of the
    bot's own commands, a writer-only command that did nothing for the writer).
    """

    events: list[str]
    commands: list[str]
    cases: list[ProbeCase]
    writer_only: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    untested: list[str] = field(default_factory=list)
    #: How a handler's case is written as a scenario file (set by the probe world whose
    #: events a scenario replays); ``None``: each case as a pytest file.
    scenario: Callable[[ProbeCase, str], dict[str, Any]] | None = field(
        default=None, repr=False, compare=False
    )

    @property
    def leaks(self) -> list[ProbeCase]:
        """The cases that leaked."""
        return [c for c in self.cases if c.status is ProbeStatus.LEAK]

    @property
    def failures(self) -> list[ProbeCase]:
        """The cases that did not hold: leaked, hung, failed, or skipped after a hang."""
        return [c for c in self.cases if c.status in _FAILED]

    @property
    def passed(self) -> bool:
        """A clean pass: every case held (or was open or not applicable) and nothing that
        matters was left untested."""
        return not self.failures and not self.untested

    @property
    def open_to_everyone(self) -> list[str]:
        """The commands not judged writer-only that did for every person what they do for the
        writer and refused no sender."""
        found: list[str] = []
        for command in self.commands:
            if command in self.writer_only:
                continue
            cases = [c for c in self.cases if c.command == command]
            persons = [c for c in cases if c.person]
            if persons and all(c.as_writer for c in persons) and not any(c.refused for c in cases):
                found.append(command)
        return found

    def summary(self) -> str:
        """``2 leak(s), 1 hung, 0 error(s), 0 skipped in 164 cases``."""
        count = {status: sum(c.status is status for c in self.cases) for status in ProbeStatus}
        return (
            f"{count[ProbeStatus.LEAK]} leak(s), {count[ProbeStatus.HUNG]} hung, "
            f"{count[ProbeStatus.ERROR]} error(s), {count[ProbeStatus.SKIPPED]} skipped "
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
            "writer_only": self.writer_only,
            "leaks": len(self.leaks),
            "failures": len(self.failures),
            "passed": self.passed,
            "summary": self.summary(),
            "open_to_everyone": self.open_to_everyone,
            "notes": self.notes,
            "untested": self.untested,
            "cases": [c.as_dict() for c in self.cases],
        }

    def to_json(self) -> str:
        """The report as indented JSON."""
        return json.dumps(self.as_dict(), indent=2, ensure_ascii=False)

    def write_repros(
        self,
        out: Path,
        *,
        handler: str | None = None,
        application: str | None = None,
        bot: str | None = None,
        search_dir: Path | None = None,
    ) -> list[Path]:
        """Write one reproduction per leak or hang into ``out``.

        For a ``handler``: a ``*.scenario.yaml`` whose setup is the probe's world (a step replays
        the event where a scenario can express it), where the world knows one (:attr:`scenario`).
        For an ``application`` or a ``bot`` (as ``module:attribute``, found in ``search_dir``),
        which a scenario cannot serve,
        and for a handler's behaviour leak (a writer-only command doing for a hostile sender what
        it does for the writer), which a scenario step cannot judge: a ``test_probe_leak_NNN.py``
        that probes that one event x command with the ``actorscope_probe`` fixture (the same
        writer-only commands) and fails while the case does not hold.
        """
        given = [
            (k, v)
            for k, v in (("handler", handler), ("application", application), ("bot", bot))
            if v is not None
        ]
        if len(given) != 1:
            raise ConfigError(
                "ProbeReport.write_repros takes a handler, an application or a bot, exactly one"
            )
        [(kind, spec)] = given
        out.mkdir(parents=True, exist_ok=True)
        written: list[Path] = []
        reproducible = [c for c in self.cases if c.status in (ProbeStatus.LEAK, ProbeStatus.HUNG)]
        for index, case in enumerate(reproducible, 1):
            if handler is not None and self.scenario is not None and not case.behaviour_only:
                path = out / f"probe-leak-{index:03d}.scenario.yaml"
                text = yaml.safe_dump(self.scenario(case, handler), sort_keys=False)
            else:
                path = out / f"test_probe_leak_{index:03d}.py"
                text = _REPRO_TEST.format(
                    title=_one_line(f"{case.event} x {case.command}"),
                    problems=_one_line("; ".join(case.problems)),
                    index=index,
                    kind=kind,
                    spec=spec,
                    search_dir=str((search_dir or Path.cwd()).resolve()),
                    command=case.command,
                    writer_only=list(dict.fromkeys(c.split(" ", 1)[0] for c in self.writer_only)),
                    event=case.event,
                )
            path.write_text(text, "utf-8")
            case.repro = str(path)
            written.append(path)
        return written


@dataclass(frozen=True)
class Baseline:
    """What the bot did for the writer: its behaviour, and whether it asked a permission."""

    behaviour: Behaviour
    gated: bool


@dataclass
class ProbeWorld(Generic[SimT]):
    """A probe's world on one platform: its groups, the people, the planted markers, and how
    the bot's behaviour is watched and compared with the writer's."""

    sim: SimT
    env: AgentEnv
    writers: dict[str, str]  # group scope → its one writer
    watch: Watch
    #: chat id → a marker planted in that scope's workspace: no reply elsewhere may carry it.
    secrets: dict[str, str] = field(default_factory=dict)
    #: where → a message of the non-writer there, which hostile commands reply to (so that
    #: ``/addwriter`` names someone, as it must).
    targets: dict[str, int] = field(default_factory=dict)
    #: The groups' scopes and workspace folder names: what the writer's DM must not change.
    groups: set[str] = field(default_factory=set)
    #: ``like`` → the writer's version of an event (what hostile events are compared with).
    writer_acts: dict[str, Send[SimT]] = field(default_factory=dict)
    #: (like, command, where) → what the bot did for the writer.
    baselines: dict[tuple[str, str, str], Baseline] = field(default_factory=dict)
    #: The names of the commands declared writer-only (``note`` for ``/note``).
    writer_only: frozenset[str] = frozenset()
    #: An ``actorscope run`` handler (it receives the handler-only events).
    handler: bool = True
    #: The bot answers the writer commands (actorscope's gate is in it).
    gated: bool = True
    #: The writer's person (``person:<uuid>``) where the agent's links are on, else ``""``.
    person: str = ""
    #: The writer's accounts (``<platform>:<id>``) the person may hold; any other account
    #: linked during a case is a leak.
    accounts: frozenset[str] = frozenset()
    #: What the case's event's ``setup`` did (the writer's command whose answer a click presses).
    prepared: list[SimulatedEvent] = field(default_factory=list)
    #: Set by a case's send when the defence it tries was never reached (the bot dropped the
    #: event before actorscope saw it): the case is then "not tested", never held.
    unreached: str = ""
    #: Run before each case, outside what the case is judged by (the writer's person restored
    #: where links are on).
    reset: Callable[[], Awaitable[None]] | None = None


Send = Callable[[ProbeWorld[SimT], str, str], Awaitable[list[SimulatedEvent]]]


@dataclass(frozen=True)
class ProbeEvent(Generic[SimT]):
    """A probe event: how it is sent, and what of the writer's it is compared with.

    ``send(world, where, command)`` sends it (a send that first needs events of its own, such
    as the message an edit changes, calls ``world.watch.begin()`` before the event itself);
    ``dm``: the writer's own DM (judged by what it may not change, not compared);
    ``like``: the writer's act it is compared with (a key of ``ProbeWorld.writer_acts``);
    ``handler_only``: only an ``actorscope run`` handler receives it (not an application);
    ``person``: a plain person's event (a non-writer member, another group's writer);
    ``setup``: what the case needs done first, by the writer (its events go to
    ``world.prepared``; what it does, changes and audits is not the case's);
    ``untested``: why a case whose send sent nothing tested nothing (it is reported
    "not tested", never held); ``ignored_holds``: the bot ignoring the event's last message is
    the defence tried (a non-person's link attempt), so the case holds rather than being
    not applicable.
    """

    send: Send[SimT]
    dm: bool = False
    like: str = "message"
    handler_only: bool = False
    person: bool = False
    setup: Send[SimT] | None = None
    untested: str = ""
    ignored_holds: bool = False


def sent_text(command: str) -> str:
    """What a text event sends for ``command``: a command without an argument gets one
    (``probe``), so that the bot does what it does, not print its usage; a writer command is
    sent as it is (it names the message it replies to)."""
    if command.strip().partition(" ")[2] or WriterCommand.named(command_name(command)):
        return command
    return f"{command} probe"


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
        writer_only: Sequence[str] = ...,
        config: ChannelConfig | None = ...,
        owners: Sequence[str] = ...,
        deadline: float = ...,
        agent: str = ...,
        events: Sequence[str] = ...,
        platform: str = ...,
        links: str = ...,
        channels: Sequence[ChannelConfig] = ...,
    ) -> Coroutine[Any, Any, ProbeReport]:
        """Probe ``handler``."""
        ...


def group_names(env: AgentEnv, identities: Sequence[Identity]) -> set[str]:
    """The scopes of ``identities`` and their workspace folders' names (for the env's agent)."""
    names = {i.user_id for i in identities}
    if env.workspace is not None:
        names |= {env.workspace.directory(env.agent, of_agent(env, i)).name for i in identities}
    return names


def of_agent(env: AgentEnv, identity: Identity) -> Identity:
    """``identity`` as a run of the env's agent."""
    return replace(identity, agent_id=env.agent.id, tenant_id=env.agent.tenant_id)


async def seed_writers(env: AgentEnv, writers: dict[str, str]) -> None:
    """Grant each scope's writer: ``file_writer`` (a writer, as ``/addwriter`` makes one) and
    every other action (``*``), so that whatever a command asks, the writer is allowed."""
    grants = Grants(env.store, env.agent)
    for scope, writer in writers.items():
        await grants.allow(scope, writer, by="probe")
        await grants.allow(scope, writer, "*", by="probe")


def folder_watch(env: AgentEnv) -> FolderWatch:
    """The bot's working directory (the probe's folder), without the probe's own database."""
    root = Path(env.db.path).resolve().parent
    return FolderWatch(root, ignore=[root / _PROBE_DB])


def plant(env: AgentEnv, identity: Identity) -> str:
    """Write a marker into ``identity``'s scope's notes (every file name the bot may read)."""
    marker = f"probe-secret-{secrets.token_hex(8)}"
    bound = of_agent(env, identity)
    if env.workspace is not None:
        for name in _PLANTED_FILES:
            env.workspace.write(env.agent, bound, name, f"{marker}\n")
    return marker


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
    events: Sequence[SimulatedEvent], writers: dict[str, str], dm: bool
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


def is_writer_command(world: ProbeWorld[SimT], command: str) -> bool:
    """A writer command the bot's gate answers (judged by its decisions and grants)."""
    return world.gated and WriterCommand.named(command_name(command)) is not None


async def _baseline(
    world: ProbeWorld[SimT], like: str, command: str, where: str
) -> Baseline | None:
    """What the bot does for the writer's ``like`` act of ``command`` in ``where`` (found once);
    ``None`` when the writer has no such act. A refusal of the writer (who holds every grant)
    is a :class:`ProbeReachError`: the bot does not judge by the probe's grants."""
    key = (like, command, where)
    known = world.baselines.get(key)
    act = world.writer_acts.get(like)
    if known is not None or act is None:
        return known
    world.watch.begin()
    events = await act(world, where, command)
    behaviour = world.watch.end()
    decisions = [dict(o.fields) for event in events for o in event.decisions]
    refused = [d for d in decisions if d.get("allowed") != "true"]
    if refused:
        raise ProbeReachError(
            f"the seeded writer was refused {command} ({refused[0].get('reason')}) in the "
            f"probe's {where}, where it holds every grant: the bot does not judge the sender by "
            "the probe's grants, so what it does for others cannot be compared"
        )
    baseline = Baseline(behaviour, gated=bool(decisions))
    world.baselines[key] = baseline
    return baseline


def _compare(
    world: ProbeWorld[SimT],
    case: ProbeCase,
    base: Baseline,
    behaviour: Behaviour,
    problems: list[str],
) -> None:
    """Judge ``case`` by what the bot did for it (``behaviour``) and for the writer."""
    case.as_writer = behaviour.covers(base.behaviour)
    denied = any(d.get("allowed") != "true" for d in case.decisions)
    different = not case.as_writer and bool(behaviour.effects) and bool(base.behaviour.effects)
    case.refused = denied or different
    writer_only = base.gated or command_name(case.command) in world.writer_only
    if case.as_writer and writer_only:
        case.behaviour_only = not problems
        problems.append(
            f"{case.command} is writer-only and did for this sender what it does for the "
            f"writer: {base.behaviour.describe()}"
        )


async def _run_case(
    world: ProbeWorld[SimT],
    audit: AuditLog,
    case: ProbeCase,
    event: ProbeEvent[SimT],
    where: str,
) -> None:
    env = world.env
    compared = not event.dm and not is_writer_command(world, case.command)
    base = await _baseline(world, event.like, case.command, where) if compared else None
    if world.reset is not None:
        await world.reset()
    setup = event.setup
    world.prepared = [] if setup is None else await setup(world, where, case.command)
    before = await _snapshot(env)
    foreign = await _foreign_links(world)
    seen = await audit.list(agent_id=env.agent.id, limit=1)
    last_id = seen[0].id if seen else 0
    world.watch.begin()
    world.unreached = ""
    events = await event.send(world, where, case.command)
    behaviour = world.watch.end()
    if not events:
        case.status = ProbeStatus.NOT_TESTED
        case.problems = [f"not tested: {event.untested or 'nothing was sent'}"]
        return
    problems, case.decisions = _decision_leaks(events, world.writers, event.dm)
    after = await _snapshot(env)
    problems += _changes(before, after, groups=world.groups if event.dm else None)
    problems += [
        f"{account} was linked to {Scope.person(person)!s}, the writer's person"
        if str(Scope.person(person)) == world.person
        else f"{account} was linked to {Scope.person(person)!s}"
        for account, person in sorted((await _foreign_links(world)).items())
        if foreign.get(account) != person
    ]
    problems += _cross_scope(events, world.secrets)
    rows = await audit.list(agent_id=env.agent.id, limit=100)
    case.audit = [r.as_dict() for r in rows if r.id > last_id]
    case.behaviour = sorted(behaviour.effects)
    if base is not None:
        _compare(world, case, base, behaviour, problems)
    case.problems = problems
    if problems:
        case.status = ProbeStatus.LEAK
    elif case.as_writer:
        case.status = ProbeStatus.OPEN
    elif world.unreached:
        case.status = ProbeStatus.NOT_TESTED
        case.problems = [f"not tested: {world.unreached}"]
    elif events[-1].ignored is not None and not case.decisions and not event.ignored_holds:
        case.status = ProbeStatus.NOT_APPLICABLE


async def _foreign_links(world: ProbeWorld[SimT]) -> dict[str, str]:
    """Where the agent's links are on: every linked account but the writer's, with its
    person's id."""
    if not world.accounts:
        return {}
    links = await world.env.assembly.links.links(tenant_id=world.env.agent.tenant_id)
    return {link.account: link.person_id for link in links if link.account not in world.accounts}


def _cross_scope(events: Sequence[SimulatedEvent], planted: dict[str, str]) -> list[str]:
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
    how: tuple[ProbeEvent[SimT], str],
    deadline: float,
    cases: Sequence[ProbeCase],
) -> None:
    """Run ``case`` within ``deadline``; after any case hung, the rest are skipped."""
    if any(c.status is ProbeStatus.HUNG for c in cases):
        case.status = ProbeStatus.SKIPPED
        case.problems.append("not run: an earlier case hung")
        return
    event, where = how
    task = asyncio.ensure_future(_run_case(world, audit, case, event, where))
    done, _ = await asyncio.wait({task}, timeout=deadline)
    if not done:
        task.cancel()
        await asyncio.wait({task}, timeout=_CANCEL_WAIT)
        case.status = ProbeStatus.HUNG
        case.problems.append(f"no answer within {deadline:g} s: the handler hangs")
        return
    error = task.exception()
    if isinstance(error, ProbeReachError):
        raise error
    if error is not None:
        case.status = ProbeStatus.ERROR
        case.problems.append(f"the handler failed: {type(error).__name__}: {error}")


async def play(
    world: ProbeWorld[SimT],
    events: dict[str, ProbeEvent[SimT]],
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
    for name, event in events.items():
        places = wheres[name]
        for where in places:
            label = prefix + (name if len(places) == 1 else f"{name} ({where})")
            if only and label not in only:
                continue
            report.events.append(label)
            for command in commands:
                case = ProbeCase(label, command, person=event.person)
                report.cases.append(case)
                if event.handler_only and not world.handler:
                    case.status = ProbeStatus.NOT_APPLICABLE
                    continue
                await _bounded(world, audit, case, (event, where), deadline, report.cases)


@contextmanager
def _contained(folder: Path, search_dir: Path | None) -> Iterator[tuple[Path, Path]]:
    """For the block: ``folder`` is the working directory (what the bot writes by a relative
    path lands there), ``search_dir`` (default: the working directory) comes first on
    ``sys.path`` (a bot split into modules imports its siblings as under ``python -m`` from its
    folder) and no bytecode is written beside the bot; each is restored after. Yields both,
    resolved."""
    cwd, path, bytecode = Path.cwd(), list(sys.path), sys.dont_write_bytecode
    search = (search_dir or cwd).resolve()
    os.chdir(folder)
    sys.path.insert(0, str(search))
    sys.dont_write_bytecode = True
    try:
        yield folder.resolve(), search
    finally:
        os.chdir(cwd)
        sys.path[:] = path
        sys.dont_write_bytecode = bytecode


def _gather(
    report: ProbeReport, served: Served, given: Sequence[str], inferred: Sequence[str]
) -> None:
    """The commands to send (into ``report.commands``): the given ones, the writer commands
    of a gated bot, what the bot says it handles and what its source suggests."""
    gated = DEFAULT_COMMANDS if served.gated else ()
    known = [
        c
        for c in dict.fromkeys([*given, *served.commands])
        if WriterCommand.named(command_name(c)) is None
    ]
    names = {command_name(c) for c in known}
    extra = [
        c
        for c in inferred
        if command_name(c) not in names and WriterCommand.named(command_name(c)) is None
    ]
    if not known and extra:
        report.notes.append(
            f"the probe knows no command of {served.name}: name them with --command "
            f"(or [probe] commands); it tried {', '.join(extra)}, found in its source"
        )
    report.commands[:] = dict.fromkeys([*given, *gated, *served.commands, *extra])


def conclude(report: ProbeReport, worlds: Sequence[ProbeWorld[Any]], name: str) -> None:
    """The writer-only commands, and what the run could not test."""
    declared = frozenset().union(*(w.writer_only for w in worlds))
    baselines = [(key[1], base) for w in worlds for key, base in w.baselines.items()]
    gated = any(w.gated for w in worlds)
    own = [
        c
        for c in report.commands
        if not (gated and WriterCommand.named(command_name(c)) is not None)
    ]
    report.writer_only = [
        c
        for c in own
        if command_name(c) in declared or any(b.gated for cmd, b in baselines if cmd == c)
    ]
    untested: dict[tuple[str, str], list[str]] = {}
    for case in report.cases:
        if case.status is ProbeStatus.NOT_TESTED:
            untested.setdefault((case.event, case.problems[0]), []).append(case.command)
    report.notes += [
        f"{event} x {', '.join(commands)}: {why}" for (event, why), commands in untested.items()
    ]
    reached: list[str] = []
    for command in own:
        found = [b for cmd, b in baselines if cmd == command]
        if any(b.gated or b.behaviour.effects for b in found):
            reached.append(command)
        elif found and command in report.writer_only:
            report.untested.append(
                f"{command} did nothing for the writer: the probe cannot tell whether it does "
                "for others what it does for writers"
            )
        elif found:
            report.notes.append(f"{command} did nothing for the writer: nothing to compare with")
    if not own:
        report.untested.append(
            f"the probe knows no command of {name}: only the writer commands were probed; "
            "name them with --command (or [probe] commands)"
        )
    elif baselines and not reached:
        report.untested.append(
            f"the probe reached none of {name}'s own commands: they did nothing for the writer"
        )


@dataclass
class ProbeRun:
    """One probe run: its database, its report and what it was asked."""

    env: AgentEnv
    report: ProbeReport
    search_dir: Path
    commands: Sequence[str]
    writer_only: frozenset[str]
    owners: Sequence[str]
    deadline: float
    events: Sequence[str]

    def gather(self, served: Served, prefixes: str, scenarios: Sequence[Path] = ()) -> None:
        """The commands to send, into the report."""
        sources = [served.source] if served.source is not None else []
        inferred = inferred_commands(sources, scenarios, prefixes)
        _gather(self.report, served, self.commands, inferred)

    def serve_handler(self, sim: Simulator, handler: Handler | str, prefixes: str | None) -> Served:
        """``handler`` served on ``sim``; with ``prefixes`` (not ``None``: this is the run's
        first phase), the commands to send gathered from its source and scenario files."""
        loaded = sim.serve(handler, search_dir=self.search_dir)
        named = handler if isinstance(handler, str) else getattr(loaded, "__name__", "")
        source = source_of(loaded, handler if isinstance(handler, str) else "")
        served = Served((), True, source, f"handler {named!r}")
        if prefixes is not None:
            scenarios = scenario_files(self.search_dir, handler) if isinstance(handler, str) else []
            self.gather(served, prefixes, scenarios)
        return served

    async def handler_phases(
        self,
        handler: Handler | str,
        base: str,
        config: ChannelConfig | None,
        others: Sequence[ChannelConfig] = (),
    ) -> None:
        """Probe ``handler`` in the probe world of platform ``base`` (on ``config``, default:
        mention not required), then in the world of each of ``others``' platforms (its events
        labelled ``<platform>: ...``), and conclude over them all."""
        first = probe_world(base)
        if not first.alone:
            raise ConfigError(
                f"the {base} platform's probe world is a phase after another platform's: the "
                "probe cannot drive it alone"
            )
        prefixes = (contract_of(base).command_prefixes or "/") + "".join(
            contract_of(other.platform).command_prefixes for other in others
        )
        world, served = await first.phase(self, handler, base, config, "", prefixes)
        worlds = [world]
        for other in others:
            name = other.platform
            phase = probe_world(name)
            later, _ = await phase.phase(self, handler, name, other, f"{name}: ", None)
            worlds.append(later)
        conclude(self.report, worlds, served.name)


@runtime_checkable
class ProbeTarget(Protocol):
    """A framework's bot the probe serves as it is (``application=`` or ``bot=``), offered
    by a platform's probe world (:attr:`PlatformProbe.targets`)."""

    #: The arguments of :func:`~actorscope.testing.probe` that may name its bots
    #: (``application``, ``bot``).
    arguments: frozenset[str]
    #: It takes what no other target recognises (a build function is told by nothing but
    #: being called), so it is asked last.
    fallback: bool
    #: What it serves, as a refusal names it (``an aiogram Dispatcher``).
    serves: str

    def recognises(self, found: object) -> bool:
        """Whether ``found`` (what ``module:attribute`` names) is its bot."""
        ...

    def describe(self, found: object) -> str | None:
        """What ``found`` (what ``module:attribute`` names, or what it returned) is, and what
        to name instead, when it is of this target's framework but not what the probe takes
        (``an aiogram Router: the probe takes ...``); ``None`` for anything else."""
        ...

    async def probe(
        self, found: object, spec: str, run: ProbeRun, config: ChannelConfig | None
    ) -> None:
        """Serve ``found`` (named ``spec``) in its platform's world (on ``config``) and probe
        it, every event x command into ``run.report``, concluded."""
        ...


@runtime_checkable
class PlatformProbe(Protocol):
    """A platform's probe world, as its contract's ``probe_world`` names it: its events, and
    how a handler is served and probed on its simulator. :data:`CHAT_PROBE` is the world
    every chat has, for a contract that names none."""

    #: Whether it can be a run's first phase, where the commands are gathered and the run's
    #: writer proven; ``False``: only a phase after another platform's.
    alone: bool
    #: The frameworks whose bots it serves as they are (``application=``, ``bot=``).
    targets: Sequence[ProbeTarget]

    async def phase(
        self,
        run: ProbeRun,
        handler: Handler | str,
        name: str,
        config: ChannelConfig | None,
        prefix: str,
        prefixes: str | None,
    ) -> tuple[ProbeWorld[Any], Served]:
        """Probe ``handler`` on the simulator of platform ``name`` (on ``config``; default:
        mention not required), its events labelled ``prefix``; with ``prefixes`` (the first
        phase), gather the commands to send with them first (:meth:`ProbeRun.serve_handler`).
        Its world, to conclude with, and what serving the handler told."""
        ...


def probe_world(name: str) -> PlatformProbe:
    """The probe world of platform ``name``: what its contract's ``probe_world`` names,
    imported now (so probing one platform loads no other platform's world), or
    :data:`CHAT_PROBE` when it names none. :class:`ConfigError` when it cannot be imported or
    is not a :class:`PlatformProbe` (naming the platform)."""
    where = contract_of(name).probe_world
    if not where:
        return CHAT_PROBE
    module, _, attribute = where.partition(":")
    try:
        imported = importlib.import_module(module)
    except Exception as exc:  # an installed plugin's import: any failure is its problem
        raise ConfigError(
            f"platform {name!r}: its probe world module {module!r} cannot be imported: "
            f"{type(exc).__name__}: {exc}"
        ) from None
    found = getattr(imported, attribute, None)
    if not isinstance(found, PlatformProbe):
        raise ConfigError(f"{where} is not the probe world of {name!r}")
    return found


# -- any other platform of the contract ---------------------------------------------------------
#: The rooms of a chat probe's world: the writer's, and another writer's.
_ROOM, _ELSEWHERE = "group", "elsewhere"


@runtime_checkable
class ChatSim(Protocol):
    """What the probe asks of another platform's simulator besides being a
    :class:`~actorscope.testing.Simulator`: a person and a room by name (their ids), and a
    message by someone in a room (``None``: their DM with the bot)."""

    def person(self, name: str) -> str:
        """Add a person; their sender id."""
        ...

    def room(self, name: str) -> str:
        """Add a group room; its chat id."""
        ...

    async def say(self, who: str, text: str, where: str | None = None) -> SimulatedEvent:
        """``who`` writes ``text`` in room ``where`` (``None``: their DM)."""
        ...


_ChatWorld = ProbeWorld[Any]


def _chat_sim(world: _ChatWorld) -> ChatSim:
    sim: ChatSim = world.sim
    return sim


def _chat_says(who: str) -> Send[Any]:
    """``who`` sends the command in the writer's room."""

    async def send(w: _ChatWorld, where: str, command: str) -> list[SimulatedEvent]:
        return [await _chat_sim(w).say(who, sent_text(command), _ROOM)]

    return send


async def _chat_writer_dm(w: _ChatWorld, where: str, command: str) -> list[SimulatedEvent]:
    return [await _chat_sim(w).say("writer", sent_text(command))]


def _room(w: _ChatWorld, sender: str | None) -> Identity:
    """The identity of ``sender`` (``None``: nobody) in the writer's room."""
    sim: Simulator = w.sim
    return Identity.chat(sim.platform, _ROOM, sender, group=True)


def _chat_from(sender_id: str, kind: SenderKind) -> Send[Any]:
    """A message in the room from ``sender_id`` that no platform event produces as such."""

    async def send(w: _ChatWorld, where: str, command: str) -> list[SimulatedEvent]:
        room = _room(w, None)
        message = InboundMessage(
            channel=room.channel,
            sender_id=sender_id,
            chat_id=room.chat_id,
            user_id=room.user_id,
            peer_kind=PeerKind.GROUP,
            sender_kind=kind,
            content=sent_text(command),
        )
        sim: Simulator = w.sim
        return [await sim.synthetic(message, f"sender {sender_id!r}")]

    return send


def _chat_carrier(w: _ChatWorld, command: str, signer: OriginSigner) -> InboundMessage:
    """A sub-agent carrier signed by ``signer`` claiming the writer's run in the room."""
    writer = w.writers[_room(w, None).user_id]
    with bind_identity(of_agent(w.env, _room(w, writer))):
        return spawn_subagent(sent_text(command), signer=signer).message


async def _chat_subagent(w: _ChatWorld, where: str, command: str) -> list[SimulatedEvent]:
    """The member says hello; inside that run, a sub-agent is started with ``command``."""
    parent = await _chat_sim(w).say("member", "hello", _ROOM)
    if parent.request is None:
        return [parent]
    request, signer = parent.request, w.env.signer
    info = RunInfo(session_key=request.session_key, thread_id=request.thread_id)
    with bind_identity(request.identity()), info.bind():
        message = spawn_subagent(sent_text(command), signer=signer).message
    w.watch.begin()
    sim: Simulator = w.sim
    return [parent, await sim.synthetic(message, "sub-agent")]


async def _chat_forged(w: _ChatWorld, where: str, command: str) -> list[SimulatedEvent]:
    sim: Simulator = w.sim
    return [await sim.synthetic(_chat_carrier(w, command, OriginSigner()), "forged origin")]


async def _chat_writers_run(w: _ChatWorld, where: str, command: str) -> list[SimulatedEvent]:
    sim: Simulator = w.sim
    return [await sim.synthetic(_chat_carrier(w, command, w.env.signer), "the writer's run")]


_Chat = ProbeEvent[Any]
#: The probe events every chat platform has, by name (what :func:`probe` sends on a platform
#: whose contract names no probe world of its own).
CHAT_EVENTS: dict[str, _Chat] = {
    "non-writer member": _Chat(_chat_says("member"), person=True),
    "writer of another group": _Chat(_chat_says("otherwriter"), person=True),
    "message with no sender": _Chat(_chat_from("", SenderKind.NONE), handler_only=True),
    "synthetic sender": _Chat(
        _chat_from("subagent:probe", SenderKind.SYNTHETIC), handler_only=True
    ),
    "sub-agent started by a non-writer": _Chat(_chat_subagent, like="run", handler_only=True),
    "forged origin claiming the writer": _Chat(_chat_forged, like="run", handler_only=True),
    "the writer's DM": _Chat(_chat_writer_dm, dm=True),
}


def _chat_sends(sim: Simulator) -> CallLog:
    """The bot's messages, as the simulator observed them."""

    def effect(observed: object) -> str | None:
        if not isinstance(observed, Observation) or observed.kind is not ObservationKind.SEND:
            return None
        return api_call("send", {"text": observed.fields.get("text", "")}, PEOPLE)

    return CallLog(lambda: sim.expect.history, effect)


async def _build_chat(sim: Simulator, env: AgentEnv, name: str) -> _ChatWorld:
    """Room ``group`` with its writer, room ``elsewhere`` with another (a marker planted in
    its scope), and a member."""
    chat: ChatSim = sim  # type: ignore[assignment]
    writer, other = chat.person("writer"), chat.person("otherwriter")
    chat.person("member")
    rooms = [chat.room(_ROOM), chat.room(_ELSEWHERE)]
    identities = [Identity.chat(name, room, None, group=True) for room in rooms]
    writers = {identities[0].user_id: writer, identities[1].user_id: other}
    await seed_writers(env, writers)
    planted = {rooms[1]: plant(env, identities[1])}
    watch = Watch(_chat_sends(sim), folder_watch(env))
    world: _ChatWorld = ProbeWorld(sim, env, writers, watch, secrets=planted)
    world.writer_acts = {"message": _chat_says("writer"), "run": _chat_writers_run}
    world.groups = group_names(env, identities)
    return world


async def _prove_chat_writer(sim: ChatSim, world: _ChatWorld, name: str) -> None:
    """The positive control: the seeded writer's ``/writers`` names the writer."""
    writer = world.writers[_room(world, None).user_id]
    said = await sim.say("writer", "/writers", _ROOM)
    answers = [o.fields.get("text", "") for o in said.sent]
    if not any(writer in answer for answer in answers):
        raise ProbeReachError(
            f"the seeded writer is not a writer of the probe's room for {name}: its /writers "
            f"got {answers or 'no answer'}; the probe does not reach the bot's gate"
        )


class _ChatProbe:
    """The probe world every chat has: :data:`CHAT_EVENTS` on a :class:`ChatSim`, for a
    platform whose contract names no probe world of its own."""

    alone = True
    targets: Sequence[ProbeTarget] = ()

    async def phase(
        self,
        run: ProbeRun,
        handler: Handler | str,
        name: str,
        config: ChannelConfig | None,
        prefix: str,
        prefixes: str | None,
    ) -> tuple[ProbeWorld[Any], Served]:
        """The events every chat has, on the simulator of platform ``name``'s contract."""
        contract = contract_of(name)
        if not contract.simulator:
            raise ConfigError(
                f"the {name} platform's contract names no simulator: the probe cannot drive it"
            )
        factory = load_object(contract.simulator, None, what=f"the {name} simulator")
        channel = config or ChannelConfig(platform=name, require_mention=False)
        report = run.report
        async with factory(run.env, config=channel) as sim:
            if not isinstance(sim, ChatSim) or not isinstance(sim, Simulator):
                raise ConfigError(
                    f"the {name} simulator ({contract.simulator}) is not a Simulator that adds "
                    "a person and a room and says something: the probe cannot drive it"
                )
            served = run.serve_handler(sim, handler, prefixes)
            world = await _build_chat(sim, run.env, name)
            world.writer_only = run.writer_only
            await _prove_chat_writer(sim, world, served.name)
            wheres: dict[str, tuple[str, ...]] = dict.fromkeys(CHAT_EVENTS, (_ROOM,))
            await play(
                world,
                CHAT_EVENTS,
                wheres,
                report.commands,
                run.deadline,
                report,
                prefix=prefix,
                only=run.events,
            )
        report.notes.append(
            f"{name}: sent the events every chat has ({', '.join(CHAT_EVENTS)}); the events "
            "only the platforms with a probe world of their own have (anonymous admins, "
            "channel posts, other bots, clicks, edits, webhooks, slash commands) are not events "
            "the probe knows there"
        )
        return world, served


#: The probe world every chat has (a contract's ``probe_world`` of ``""``).
CHAT_PROBE: PlatformProbe = _ChatProbe()


#: A reproduction a scenario file cannot express (an application, a bot, a
#: behaviour leak): a pytest file probing the case.
_REPRO_TEST = '''\
"""A leak `actorscope probe` found; this test fails while the bot still leaks.

Run it with pytest: the actorscope testing kit gives the actorscope_probe fixture.
"""

from pathlib import Path

from actorscope.testing import Prober, ProbeStatus

# {title}
# {problems}


async def test_probe_leak_{index:03d}(actorscope_probe: Prober) -> None:
    """The probe's case above holds."""
    report = await actorscope_probe(
        {kind}={spec!r},
        search_dir=Path({search_dir!r}),
        commands=[{command!r}],
        writer_only={writer_only!r},
        events=[{event!r}],
    )
    case = report.case({event!r}, {command!r})
    assert case.status not in (ProbeStatus.LEAK, ProbeStatus.HUNG), "; ".join(case.problems)
'''


def _one_line(text: str) -> str:
    return " ".join(text.split())

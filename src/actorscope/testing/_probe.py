"""``actorscope probe``: hostile senders x the bot's commands, judged by what the bot does.

:func:`probe` serves a user's bot on a throwaway database and workspace in a temporary folder
(removed afterwards) that is also the bot's working directory while it runs: an ``actorscope
run`` handler, a PTB application (:mod:`._probe_ptb`) or an aiogram dispatcher
(:mod:`._probe_aiogram`) in the Telegram simulator, a discord.py bot (:mod:`._probe_dpy`)
against the Discord emulator. It seeds one writer per group and proves
its reach first (the positive control): a gate on another database or workspace, or a writer
the bot does not know or refuses, stops it with one :class:`ProbeReachError`.

Then, per command, it records what the bot does for the writer (:mod:`._probe_effects`: its
platform calls, the files and SQLite rows it writes under its working directory) and sends
every probe event (:data:`EVENTS`: a non-writer, another group's writer, an anonymous admin, a
post as a channel, a channel post, an automatic forward, another bot, a click, runs started by
a non-writer, forged / unsigned / replayed origins, look-alike ids, an edit, text naming the
writer's id, the writer's DM) with every command; with a Discord configuration the Discord
simulator's events (:data:`DISCORD_EVENTS`) too; with the agent's links on, the link events
(:data:`LINK_EVENTS`), after proving that the writer's own link works. A **leak** is an
allowed decision for an actor that is not a writer of the scope (other than
``not_group_context`` in the writer's own DM), a change to the workspace, the grants, the
cron jobs or the memory entries, an account linked that is not the writer's, a reply carrying
a marker planted in another scope, or a writer-only command (one the bot asks a permission for,
or one named in ``writer_only``) doing for a hostile sender what it does for the writer. An
undeclared command that does so is **open** (not a failure); one that does so for every person
and refuses no one is open to everyone. What the probe could not test is said, one line each,
and a run that reached none of the bot's own commands is not a clean pass. A case that
outlives its deadline is reported as hung, not waited on.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import secrets
import sys
from collections.abc import Awaitable, Callable, Collection, Coroutine, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

import yaml
from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from actorscope.bots import load_object
from actorscope.channels import ChannelConfig, IgnoreReason, WriterCommand
from actorscope.channels import platform as contract_of
from actorscope.context import bind_identity
from actorscope.errors import ConfigError, NotFoundError
from actorscope.host import Handler
from actorscope.identity import (
    ANONYMOUS_ADMIN_ID,
    CHANNEL_BOT_ID,
    SERVICE_ID,
    Identity,
    PeerKind,
    Scope,
    SenderKind,
)
from actorscope.messages import InboundMessage
from actorscope.permissions import (
    AuditAction,
    AuditLog,
    LinkMode,
    LinkStore,
    Reason,
    WriterManager,
)
from actorscope.propagation import (
    Origin,
    OriginSigner,
    RunInfo,
    TickerJob,
    delegate,
    spawn_subagent,
)
from actorscope.sandbox import BotApiCall, DiscordHttpCall
from actorscope.testing._discord_sim import DiscordSim
from actorscope.testing._expect import Observation, ObservationKind
from actorscope.testing._grants import Grants
from actorscope.testing._harness import AgentEnv, Event, Simulator
from actorscope.testing._probe_aiogram import AIOGRAM
from actorscope.testing._probe_effects import Behaviour, CallLog, FolderWatch, Watch, api_call
from actorscope.testing._probe_ptb import PTB
from actorscope.testing._probe_target import (
    ProbeReachError,
    Served,
    TelegramFramework,
    command_name,
    inferred_commands,
    scenario_files,
    source_of,
)
from actorscope.testing._telegram_sim import TelegramSim

__all__ = [
    "CHAT_EVENTS",
    "DEFAULT_COMMANDS",
    "DISCORD_EVENTS",
    "EVENTS",
    "AppFactory",
    "ChatSim",
    "ProbeCase",
    "ProbeEvent",
    "ProbeReachError",
    "ProbeReport",
    "ProbeStatus",
    "Prober",
]

#: The writer commands every bot with actorscope's gate has (answered by the gate, never by
#: the bot's own handlers).
DEFAULT_COMMANDS: tuple[str, ...] = ("/addwriter", "/removewriter", "/writers")
#: How long one event x command may take before it is reported as hung.
DEFAULT_DEADLINE = 10.0
#: How long a hung case's cancellation is given before the probe moves on.
_CANCEL_WAIT = 1.0
#: The placeholder accounts Telegram puts in ``from`` for non-persons (identity's own).
_PLACEHOLDERS = (ANONYMOUS_ADMIN_ID, CHANNEL_BOT_ID, SERVICE_ID)
#: The files a marker is planted in, in the other scopes.
_PLANTED_FILES = ("notes.md", "memory.md")
#: The name of the probe's database in its temporary folder.
_PROBE_DB = "probe.db"
#: Bot API methods that only read: not part of what a bot does.
_READS = ("get",)
#: The names the probe's people go by (left out of the bot's replies when comparing them).
_PEOPLE = ("writer", "otherwriter", "member", "helperbot", "helper_bot", "writer.", "wrlter")
#: A path segment this long is a token (an interaction's, a webhook's), not a name.
_TOKEN_LENGTH = 20
_WRITER_ID = 4242
_OTHER_WRITER_ID = 5151
_MEMBER_ID = 6161
#: The writer's second account (linked to the writer's person where the agent's links are on).
_WRITER_ALT_ID = 4343
#: A look-alike of the writer where links are on: the writer's name, a username one letter off
#: (``wrlter``), the writer's digits and one more.
_LOOK_ALIKE_ID = 42420
_BOT_ID = 7171
#: The frameworks the probe serves on the Telegram simulator, asked in order which one a bot
#: is. aiogram goes first: PTB takes any function (a build function is told by nothing but
#: being called with a builder), so it is last.
_TELEGRAM_FRAMEWORKS: tuple[TelegramFramework, ...] = (AIOGRAM, PTB)


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
        the event where a scenario can express it). For a PTB ``application`` or a discord.py
        ``bot`` (as ``module:attribute``, found in ``search_dir``), which a scenario cannot serve,
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
            if handler is not None and not case.behaviour_only:
                path = out / f"probe-leak-{index:03d}.scenario.yaml"
                text = yaml.safe_dump(_scenario(case, handler), sort_keys=False)
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
    writer_acts: dict[str, _Send[SimT]] = field(default_factory=dict)
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
    #: The writer's accounts (``telegram:<id>``) the person may hold; any other account
    #: linked during a case is a leak.
    accounts: frozenset[str] = frozenset()
    #: What the case's event's ``setup`` did (the writer's command whose answer a click presses).
    prepared: list[Event] = field(default_factory=list)
    #: Set by a case's send when the defence it tries was never reached (the bot dropped the
    #: event before actorscope saw it): the case is then "not tested", never held.
    unreached: str = ""
    #: Run before each case, outside what the case is judged by (the writer's person restored
    #: where links are on).
    reset: Callable[[], Awaitable[None]] | None = None


_Send = Callable[[ProbeWorld[SimT], str, str], Awaitable[list[Event]]]


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

    send: _Send[SimT]
    dm: bool = False
    like: str = "message"
    handler_only: bool = False
    person: bool = False
    setup: _Send[SimT] | None = None
    untested: str = ""
    ignored_holds: bool = False


_TgWorld = ProbeWorld[TelegramSim]
_TgSend = _Send[TelegramSim]


def sent_text(command: str) -> str:
    """What a text event sends for ``command``: a command without an argument gets one
    (``probe``), so that the bot does what it does, not print its usage; a writer command is
    sent as it is (it names the message it replies to)."""
    if command.strip().partition(" ")[2] or WriterCommand.named(command_name(command)):
        return command
    return f"{command} probe"


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
        writer_only: Sequence[str] = ...,
        config: ChannelConfig | None = ...,
        discord: ChannelConfig | None = ...,
        owners: Sequence[str] = ...,
        deadline: float = ...,
        agent: str = ...,
        events: Sequence[str] = ...,
        platform: str = ...,
        links: str = ...,
    ) -> Coroutine[Any, Any, ProbeReport]:
        """Probe ``handler``."""
        ...


def _scope(chat_id: int) -> str:
    return Identity.chat("telegram", chat_id, None, group=True).user_id


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


def _telegram_calls(sim: TelegramSim) -> CallLog:
    """The bot's Bot API calls that change something (``get*`` only read)."""

    def effect(call: object) -> str | None:
        if not isinstance(call, BotApiCall) or call.method.lower().startswith(_READS):
            return None
        if call.method.lower() == "answercallbackquery" and not call.params.get("text"):
            return None  # the click acknowledged: nothing a user sees
        return api_call(call.method, call.params, _PEOPLE)

    return CallLog(lambda: sim.emu.calls, effect)


def discord_calls(requests: Callable[[], Sequence[DiscordHttpCall]]) -> CallLog:
    """The bot's Discord REST calls that change something (a ``GET`` only reads)."""

    def effect(call: object) -> str | None:
        if not isinstance(call, DiscordHttpCall) or call.method == "GET":
            return None
        return api_call(f"{call.method} {_path(call.path)}", call.json or {}, _PEOPLE)

    return CallLog(requests, effect)


def _path(path: str) -> str:
    """A REST path without its ids and tokens (``/interactions/#/*/callback``)."""
    parts = path.split("/")
    return "/".join(
        "#" if part.isdigit() else "*" if len(part) > _TOKEN_LENGTH else part for part in parts
    )


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
    writers = {
        _scope(_GROUP_ID): str(_WRITER_ID),
        _scope(_FORUM_ID): str(_WRITER_ID),
        _scope(_OTHER_ID): str(_OTHER_WRITER_ID),
    }
    await seed_writers(env, writers)
    planted = {
        str(_OTHER_ID): _plant(env, Identity.chat("telegram", _OTHER_ID, None, group=True)),
        str(_WRITER_ID): _plant(
            env, Identity.chat("telegram", _WRITER_ID, _WRITER_ID, group=False)
        ),
    }
    watch = Watch(_telegram_calls(sim), folder_watch(env))
    world = ProbeWorld(sim, env, writers, watch, secrets=planted)
    world.writer_acts = {"message": _writer_says, "click": _writer_clicks, "run": _writers_run}
    world.groups = _group_names(
        env,
        [
            Identity.chat("telegram", chat, None, group=True)
            for chat in (_GROUP_ID, _FORUM_ID, _OTHER_ID)
        ],
    )
    for where in ("group", "forum"):
        said = await sim.message("member", "hello", where, topic=_topic(where))
        world.targets[where] = int(said.payload["message"]["message_id"])
    if env.assembly.settings.links is not LinkMode.OFF:
        sim.user("writer-alt", user_id=_WRITER_ALT_ID)
        sim.emu.state.add_user("writer", username="wrlter", user_id=_LOOK_ALIKE_ID)
        world.accounts = frozenset(sim.account(who) for who in ("writer", "writer-alt"))
        await _prove_link(world)
        world.reset = lambda: _linked_writer(world)
    return world


async def _prove_link(w: _TgWorld) -> None:
    """The positive control of the link events: the writer's own link, proven as a person
    proves one (a code asked for in the writer's DM, sent from the writer's second account in
    its DM), makes one person of the two; else :class:`ProbeReachError`."""
    code = await _code_for(w, "writer")
    redeemed = await w.sim.message("writer-alt", f"/link {code}") if code else None
    store = LinkStore(w.env.db)
    tenant = w.env.agent.tenant_id
    persons = {await store.person_of(account, tenant) for account in w.accounts}
    if code and len(persons) == 1 and None not in persons:
        return
    said = [] if redeemed is None else _texts(redeemed)
    why = (
        "the writer's /link got no code"
        if not code
        else f"the writer's second account sent it and got {said[0]!r}"
        if said
        else "the writer's second account sent it and got no answer"
    )
    raise ProbeReachError(
        f"the agent's links are on, but the writer could not link their own two accounts: "
        f"{why}; the probe cannot tell whether a hostile link is refused where a proven one "
        "is not made (the bot answers /link itself, or its DMs are not admitted)"
    )


async def _linked_writer(w: _TgWorld) -> None:
    """Before each case where links are on (outside what the case is judged by): the writer's
    two accounts are the writer's person and no other account is linked (what an earlier
    case changed is undone); where the agent counts persons' grants, the person holds the
    writer's grant in the writer's groups (what a hostile link would reach). Every earlier
    code is forgotten, and so are the refusals counted against the probe's accounts: each
    event asks for its own codes, and no limit earlier cases reached stands in for the check
    the event makes."""
    env = w.env
    tenant = env.agent.tenant_id
    store = LinkStore(env.db)
    current = {link.account: link.person for link in await store.links(tenant_id=tenant)}
    keep = w.person or current.get(w.sim.account("writer"), "")
    for account, person in current.items():
        if account not in w.accounts or person != keep:
            await store.remove(account, by="probe", tenant=tenant)
    accounts = sorted(w.accounts)
    try:
        linked = await store.add(accounts, person=keep or None, by="probe", tenant=tenant)
    except NotFoundError:  # an earlier case unlinked every account: the person is gone
        linked = await store.add(accounts, by="probe", tenant=tenant)
    person = linked[0].person
    if person != w.person and env.assembly.settings.links is LinkMode.GRANTS:
        for chat in (_GROUP_ID, _FORUM_ID):
            await env.store.grant(
                agent_id=env.agent.id,
                scope=_scope(chat),
                config_type="file_writer",
                sender_id=person,
                granted_by="probe",
            )
    w.person = person
    await env.db.execute("DELETE FROM link_codes")
    await env.db.execute(
        "DELETE FROM audit_log WHERE action = ?", (AuditAction.LINK_REFUSED.value,)
    )


_CODE = re.compile(r"your link code is ([A-Z0-9]{5}-[A-Z0-9]{5})")


def _texts(event: Event) -> list[str]:
    """What the bot sent for ``event``."""
    return [seen.fields.get("text", "") for seen in event.sent]


async def _code_for(w: _TgWorld, who: str | int) -> str:
    """``who`` asks for a link code in their DM; the code the bot answered with, or ``""``."""
    asked = await w.sim.message(who, "/link")
    for text in _texts(asked):
        found = _CODE.search(text)
        if found is not None:
            return found.group(1)
    return ""


async def _writer_code(w: _TgWorld) -> str:
    """The writer asks for a link code in their DM; the code the bot answered with."""
    return await _code_for(w, "writer")


async def _look_alike(w: _TgWorld, where: str, command: str) -> list[Event]:
    """An account with the writer's name and a username one letter off (another id) sends
    /unlink (the writer's person must stay whole), asks for its own code and has the
    writer's second account send it (as a phisher would: refused, that account is the
    writer's person's), then sends the command. Nothing is sent (not tested) when it got no
    code or the sending was refused for a limit."""
    await w.sim.message(_LOOK_ALIKE_ID, "/unlink")
    code = await _code_for(w, _LOOK_ALIKE_ID)
    if not code:
        return []
    sent = await w.sim.message("writer-alt", f"/link {code}")
    said = _texts(sent)
    if not said or any(f"({Reason.RATE_LIMITED.value})" in text for text in said):
        return []
    w.watch.begin()
    return [await _say(w, _LOOK_ALIKE_ID, sent_text(command), where)]


async def _non_person_link(w: _TgWorld, where: str, command: str) -> list[Event]:
    """Non-persons try to link while the writer holds a live code: an anonymous admin asks
    for a code in the group, another bot asks for one in its DM, then sends the writer's code
    there. It holds when the link store refused it (a ``link.refused`` row) or burnt the code;
    a bot that drops the other bot's message before actorscope sees it leaves the code live
    and writes no row: the link store was not reached, so the case is not tested."""
    code = await _writer_code(w)
    if not code:
        return []
    await w.sim.anonymous_admin(where, "/link", topic=_topic(where))
    await w.sim.message(_BOT_ID, "/link")
    refusals = await _link_refusals(w)
    w.watch.begin()
    sent = await w.sim.message(_BOT_ID, f"/link {code}")
    if await _link_refusals(w) == refusals and await _live_codes(w, "writer"):
        w.unreached = (
            "the other bot's /link CODE was dropped before actorscope: the link store was not "
            "reached (the writer's code is still live, no link refusal was written)"
        )
    return [sent]


async def _link_refusals(w: _TgWorld) -> int:
    """How many link refusals the audit log holds."""
    await w.env.db.settle_audit()
    row = await w.env.db.fetchone(
        "SELECT COUNT(*) AS n FROM audit_log WHERE action = ?", (AuditAction.LINK_REFUSED.value,)
    )
    return 0 if row is None else int(row["n"])


async def _live_codes(w: _TgWorld, user: str) -> int:
    """How many unused link codes ``user``'s account holds."""
    row = await w.env.db.fetchone(
        "SELECT COUNT(*) AS n FROM link_codes WHERE account = ? AND used_at IS NULL",
        (w.sim.account(user),),
    )
    return 0 if row is None else int(row["n"])


async def _replayed_code(w: _TgWorld, where: str, command: str) -> list[Event]:
    code = await _writer_code(w)
    await w.sim.message("writer-alt", f"/link {code}")  # the writer's own use of it
    await w.sim.message("member", f"/link {code}")  # a third account replays it
    w.watch.begin()
    return [await _say(w, "member", sent_text(command), where)]


async def _code_in_group(w: _TgWorld, where: str, command: str) -> list[Event]:
    code = await _writer_code(w)
    await w.sim.message("writer", f"/link {code}", where, topic=_topic(where))  # burnt there
    await w.sim.message("member", f"/link {code}")  # a member who read it tries it
    w.watch.begin()
    return [await _say(w, "member", sent_text(command), where)]


async def _guessed_code(w: _TgWorld, where: str, command: str) -> list[Event]:
    for guess in ("AAAAA-AAAAA", "23456-78923", "ZZZZZ-ZZZZZ"):
        await w.sim.message("member", f"/link {guess}")
    w.watch.begin()
    return [await _say(w, "member", sent_text(command), where)]


async def _after_unlink(w: _TgWorld, where: str, command: str) -> list[Event]:
    await w.sim.unlink("writer-alt", by="probe")  # the writer keeps the person and its grant
    w.watch.begin()
    return [await _say(w, "writer-alt", sent_text(command), where)]


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
    return [await _say(w, "member", sent_text(command), where)]


async def _other_group_writer(w: _TgWorld, where: str, command: str) -> list[Event]:
    return [await _say(w, "otherwriter", sent_text(command), where)]


async def _anonymous_admin(w: _TgWorld, where: str, command: str) -> list[Event]:
    return [await w.sim.anonymous_admin(where, sent_text(command), topic=_topic(where))]


async def _as_channel(w: _TgWorld, where: str, command: str) -> list[Event]:
    return [await w.sim.as_channel("news", where, sent_text(command))]


async def _channel_post(w: _TgWorld, where: str, command: str) -> list[Event]:
    return [await w.sim.channel_post("news", sent_text(command))]


async def _automatic_forward(w: _TgWorld, where: str, command: str) -> list[Event]:
    post = await w.sim.channel_post("news", sent_text(command))
    message_id = int(post.payload["channel_post"]["message_id"])
    w.watch.begin()
    return [post, await w.sim.automatic_forward("news", message_id, where)]


async def _other_bot(w: _TgWorld, where: str, command: str) -> list[Event]:
    return [await _say(w, _BOT_ID, sent_text(command), where)]


async def _made_up_click(w: _TgWorld, where: str, command: str, clicker: str) -> list[Event]:
    """A handler's click: the writer says hello, the bot's answer carries a button whose
    callback data is ``command`` (the run channel delivers it as the clicker's message);
    ``clicker`` clicks it."""
    mine = await w.sim.message("writer", "hello", where, topic=_topic(where))
    data = sent_text(command)[:64]
    button = InlineKeyboardButton(command, callback_data=data)
    posted = await w.sim.app.bot.send_message(
        int(w.sim.chat_id(where)),
        "choose",
        message_thread_id=None if where == "group" else int(w.sim.topic_id(where, "ideas")),
        reply_to_message_id=int(mine.payload["message"]["message_id"]),
        reply_markup=InlineKeyboardMarkup([[button]]),
    )
    w.watch.begin()
    return [await w.sim.click(clicker, where, data, message=posted.message_id)]


def _shown_buttons(w: _TgWorld, where: str, answer: Event) -> list[tuple[int, str]]:
    """The callback buttons the bot's messages answering ``answer`` show now:
    (message id, callback data), in order."""
    chat = w.sim.find_chat(where)
    shown: list[tuple[int, str]] = []
    for sent in answer.sent:
        stored = w.sim.emu.state.message(chat, sent.message_id) or {}
        rows = stored.get("reply_markup", {}).get("inline_keyboard", [])
        shown += [
            (sent.message_id, str(b["callback_data"]))
            for row in rows
            for b in row
            if "callback_data" in b
        ]
    return shown


async def _press(w: _TgWorld, where: str, answer: Event, presser: str) -> list[Event]:
    """``presser`` presses each button of the bot's answer, in order, while it is still
    shown (a press may edit the buttons away)."""
    pressed: list[Event] = []
    for message, data in _shown_buttons(w, where, answer):
        if (message, data) in _shown_buttons(w, where, answer):
            pressed.append(await w.sim.click(presser, where, data, message=message))
    return pressed


async def _writer_answer(w: _TgWorld, where: str, command: str) -> list[Event]:
    """The writer's ``command``: the bot's answer is what a click presses (an application's;
    none for a writer command of the gate, whose answers have no button)."""
    if w.handler or _writer_command(w, command):
        return []
    return [await _say(w, "writer", sent_text(command), where)]


async def _click(w: _TgWorld, where: str, command: str) -> list[Event]:
    if w.handler:
        return await _made_up_click(w, where, command, "member")
    return [p for answer in w.prepared for p in await _press(w, where, answer, "member")]


async def _writer_clicks(w: _TgWorld, where: str, command: str) -> list[Event]:
    if w.handler:
        return await _made_up_click(w, where, command, "writer")
    answer = await _writer_answer(w, where, command)
    w.watch.begin()
    return [*answer, *[p for a in answer for p in await _press(w, where, a, "writer")]]


async def _edited(w: _TgWorld, where: str, command: str) -> list[Event]:
    first = await w.sim.message("member", "harmless text", where, topic=_topic(where))
    w.watch.begin()
    return [first, await w.sim.edit(first, sent_text(command))]


async def _claims_writer(w: _TgWorld, where: str, command: str) -> list[Event]:
    text = f"{command} sender_id={_WRITER_ID}"
    return [await _say(w, "member", text, where)]


async def _started_by(
    w: _TgWorld,
    where: str,
    who: str,
    build: Callable[[], InboundMessage],
    label: str,
) -> list[Event]:
    """``who`` says hello in ``where``; inside that run, ``build`` makes a message."""
    parent = await w.sim.message(who, "hello", where, topic=_topic(where))
    if parent.request is None:
        return [parent]
    request = parent.request
    info = RunInfo(session_key=request.session_key, thread_id=request.thread_id)
    with bind_identity(request.identity()), info.bind():
        message = build()
    w.watch.begin()
    return [parent, await w.sim.synthetic(message, label)]


async def _subagent(w: _TgWorld, where: str, command: str) -> list[Event]:
    signer, text = w.env.signer, sent_text(command)
    return await _started_by(
        w, where, "member", lambda: spawn_subagent(text, signer=signer).message, "sub-agent"
    )


async def _delegate(w: _TgWorld, where: str, command: str) -> list[Event]:
    signer, agent_id, text = w.env.signer, w.env.agent.id, sent_text(command)
    return await _started_by(
        w, where, "member", lambda: delegate(agent_id, text, signer=signer).message, "delegate"
    )


async def _ticker(w: _TgWorld, where: str, command: str) -> list[Event]:
    signer, text = w.env.signer, sent_text(command)
    return await _started_by(
        w,
        where,
        "member",
        lambda: TickerJob.create("probe", text).run(signer=signer),
        "ticker",
    )


def _writer_carrier(w: _TgWorld, where: str, command: str, signer: OriginSigner) -> InboundMessage:
    """A sub-agent carrier signed by ``signer`` claiming the writer's run in ``where``."""
    chat_id = _FORUM_ID if where == "forum" else _GROUP_ID
    identity = _of_agent(w.env, Identity.chat("telegram", chat_id, _WRITER_ID, group=True))
    with bind_identity(identity):
        return spawn_subagent(sent_text(command), signer=signer).message


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
            content=sent_text(command),
            thread_id="" if where == "group" else str(w.sim.topic_id("forum", "ideas")),
        )
        return [await w.sim.synthetic(message, f"sender {sender_id!r}")]

    return send


async def _writer_dm(w: _TgWorld, where: str, command: str) -> list[Event]:
    return [await w.sim.message("writer", sent_text(command))]


# -- the writer's acts: what the hostile events are compared with -------------------------------


async def _writer_says(w: _TgWorld, where: str, command: str) -> list[Event]:
    return [await _say(w, "writer", sent_text(command), where)]


async def _writers_run(w: _TgWorld, where: str, command: str) -> list[Event]:
    """A sub-agent the writer started in ``where`` (an honest, signed origin)."""
    carrier = _writer_carrier(w, where, command, w.env.signer)
    return [await w.sim.synthetic(carrier, "the writer's sub-agent")]


_Tg = ProbeEvent[TelegramSim]
#: The probe events, by name.
EVENTS: dict[str, _Tg] = {
    "non-writer member": _Tg(_non_writer, person=True),
    "writer of another group": _Tg(_other_group_writer, person=True),
    "anonymous admin": _Tg(_anonymous_admin),
    "user posting as a channel": _Tg(_as_channel),
    "channel post": _Tg(_channel_post),
    "automatic forward": _Tg(_automatic_forward),
    "another bot": _Tg(_other_bot),
    "button click by a non-writer": _Tg(
        _click, like="click", setup=_writer_answer, untested="the bot showed no button"
    ),
    "edited message": _Tg(_edited),
    "text naming the writer's sender_id": _Tg(_claims_writer),
    "sub-agent started by a non-writer": _Tg(_subagent, like="run", handler_only=True),
    "delegate started by a non-writer": _Tg(_delegate, like="run", handler_only=True),
    "ticker started by a non-writer": _Tg(_ticker, like="run", handler_only=True),
    "forged origin claiming the writer": _Tg(_forged_origin, like="run", handler_only=True),
    "unsigned origin claiming the writer": _Tg(_unsigned_origin, like="run", handler_only=True),
    "replayed origin of the writer": _Tg(_replayed_origin, like="run", handler_only=True),
    "message with no sender": _Tg(_synthetic_sender("", SenderKind.NONE), handler_only=True),
    "look-alike id of the writer (0-prefixed)": _Tg(
        _synthetic_sender(f"0{_WRITER_ID}"), handler_only=True
    ),
    **{
        f"look-alike id of placeholder {p}": _Tg(_synthetic_sender(f"0{p}"), handler_only=True)
        for p in _PLACEHOLDERS
    },
    "the writer's DM": _Tg(_writer_dm, dm=True),
}
#: The probe events of an agent whose links are on (``[identity] links``): each tries to get a
#: hostile account into the writer's person (linked to the writer's second account), then sends
#: the command as that account.
LINK_EVENTS: dict[str, _Tg] = {
    "link code replayed by a third account": _Tg(_replayed_code, person=True),
    "link code sent in a group, then tried": _Tg(_code_in_group, person=True),
    "link codes guessed": _Tg(_guessed_code, person=True),
    "the writer's other account after an unlink": _Tg(_after_unlink, person=True),
    "look-alike account of the writer": _Tg(
        _look_alike, person=True, untested="the look-alike's link steps were not answered"
    ),
    "link attempt by a non-person": _Tg(
        _non_person_link,
        dm=True,
        ignored_holds=True,
        untested="the writer was given no code to try",
    ),
}
#: Where each event is sent: a supergroup and a forum topic (channel posts and DMs: once).
_WHERES: dict[str, tuple[str, ...]] = {
    "link attempt by a non-person": ("group",),
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


def _writer_command(world: ProbeWorld[SimT], command: str) -> bool:
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
    compared = not event.dm and not _writer_command(world, case.command)
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
    links = await LinkStore(world.env.db).links(tenant_id=world.env.agent.tenant_id)
    return {link.account: link.person_id for link in links if link.account not in world.accounts}


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


def _framework(found: object, spec: str) -> TelegramFramework:
    """The framework whose bot ``found`` is (one ConfigError when none is)."""
    for framework in _TELEGRAM_FRAMEWORKS:
        if framework.recognises(found):
            return framework
    raise ConfigError(
        f"application {spec!r} is not a function building a python-telegram-bot Application "
        "or an aiogram Dispatcher, nor a discord.py bot"
    )


async def _prove_writer(world: _TgWorld, name: str) -> None:
    """The positive control: the seeded writer's ``/writers`` names the writer."""
    said = await _say(world, "writer", "/writers", "group")
    answers = [o.fields.get("text", "") for o in said.sent]
    if any(str(_WRITER_ID) in answer for answer in answers):
        return
    why = (
        f"answered {answers[0]!r}"
        if answers
        else f"was ignored ({said.ignored})"
        if said.ignored is not None
        else "got no answer"
    )
    raise ProbeReachError(
        f"the seeded writer is not a writer of the probe's group for {name}: its /writers "
        f"{why}; the probe does not reach the bot's gate (on another database, or behind a "
        "handler of the bot's that answers first)"
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

    async def telegram(
        self,
        handler: Handler | str | None,
        found: object,
        spec: str,
        config: ChannelConfig | None,
        discord: ChannelConfig | None,
        others: Sequence[ChannelConfig] = (),
    ) -> None:
        """Probe a handler (and its Discord phase, and one phase on each of ``others``'
        platforms, labelled with its name) or an application on the simulator."""
        env, report = self.env, self.report
        telegram = config or ChannelConfig(platform="telegram", require_mention=False)
        worlds: list[ProbeWorld[Any]] = []
        async with TelegramSim(env, config=telegram) as sim:
            if handler is not None:
                loaded = sim.serve(handler, search_dir=self.search_dir)
                named = handler if isinstance(handler, str) else getattr(loaded, "__name__", "")
                source = source_of(loaded, handler if isinstance(handler, str) else "")
                served = Served((), True, source, f"handler {named!r}")
                scenarios = (
                    scenario_files(self.search_dir, handler) if isinstance(handler, str) else []
                )
                prefixes = "/!" if discord is not None else "/"
                for other in others:
                    prefixes += contract_of(other.platform).command_prefixes
                self.gather(served, prefixes, scenarios)
            else:
                workspace = env.workspace.root if env.workspace is not None else Path("workspace")
                overrides = {
                    "database": env.db,
                    "agent": env.agent.key,
                    "workspace": workspace,
                    "owners": list(self.owners),
                    "config": telegram,
                    "signer": env.signer,
                }
                served = await _framework(found, spec).serve(found, spec, sim, overrides)
                self.gather(served, "/")
            world = await _build(sim, env)
            world.writer_only, world.gated = self.writer_only, served.gated
            world.handler = handler is not None
            worlds.append(world)
            if served.gated:
                await _prove_writer(world, served.name)
            events = dict(EVENTS)
            if env.assembly.settings.links is not LinkMode.OFF:
                events.update(LINK_EVENTS)
                report.notes.append(
                    "the link events run between two Telegram accounts of the writer: a link "
                    "across platforms, and /link on any other platform, are not probed"
                )
            wheres = {name: _WHERES.get(name, ("group", "forum")) for name in events}
            await play(
                world, events, wheres, report.commands, self.deadline, report, only=self.events
            )
        if discord is not None and handler is not None:
            async with DiscordSim(env, config=discord) as dsim:
                dsim.serve(handler, search_dir=self.search_dir)
                dworld = await _build_discord(dsim, env)
                dworld.writer_only = self.writer_only
                worlds.append(dworld)
                await play(
                    dworld,
                    DISCORD_EVENTS,
                    _DISCORD_WHERES,
                    report.commands,
                    self.deadline,
                    report,
                    prefix="discord: ",
                    only=self.events,
                )
        if handler is not None:
            for other in others:
                name = other.platform
                world, _ = await self.on_chat(
                    handler, name, other, prefix=f"{name}: ", gathered=True
                )
                worlds.append(world)
        conclude(report, worlds, served.name)
        if handler is None:
            report.notes.append(
                "sub-agents, delegates, tickers, origins and synthetic senders reach only an "
                f"actorscope run handler: not applicable to {served.name}"
            )

    async def chat(self, handler: Handler | str, name: str, config: ChannelConfig | None) -> None:
        """Probe a handler on the simulator of platform ``name``'s contract alone."""
        world, served = await self.on_chat(handler, name, config)
        conclude(self.report, [world], served.name)

    async def on_chat(
        self,
        handler: Handler | str,
        name: str,
        config: ChannelConfig | None,
        *,
        prefix: str = "",
        gathered: bool = False,
    ) -> tuple[_ChatWorld, Served]:
        """The events every chat has, on the simulator of platform ``name``'s contract,
        labelled ``prefix``; its world, to conclude with. ``gathered``: the commands to send
        are in the report already (another platform's phase gathered them)."""
        contract = contract_of(name)
        if not contract.simulator:
            raise ConfigError(
                f"the {name} platform's contract names no simulator: the probe cannot drive it"
            )
        factory = load_object(contract.simulator, None, what=f"the {name} simulator")
        channel = config or ChannelConfig(platform=name, require_mention=False)
        report = self.report
        async with factory(self.env, config=channel) as sim:
            if not isinstance(sim, ChatSim) or not isinstance(sim, Simulator):
                raise ConfigError(
                    f"the {name} simulator ({contract.simulator}) is not a Simulator that adds "
                    "a person and a room and says something: the probe cannot drive it"
                )
            loaded = sim.serve(handler, search_dir=self.search_dir)
            named = handler if isinstance(handler, str) else getattr(loaded, "__name__", "")
            source = source_of(loaded, handler if isinstance(handler, str) else "")
            served = Served((), True, source, f"handler {named!r}")
            if not gathered:
                scenarios = (
                    scenario_files(self.search_dir, handler) if isinstance(handler, str) else []
                )
                self.gather(served, contract.command_prefixes or "/", scenarios)
            world = await _build_chat(sim, self.env, name)
            world.writer_only = self.writer_only
            await _prove_chat_writer(sim, world, served.name)
            wheres: dict[str, tuple[str, ...]] = dict.fromkeys(CHAT_EVENTS, (_ROOM,))
            await play(
                world,
                CHAT_EVENTS,
                wheres,
                report.commands,
                self.deadline,
                report,
                prefix=prefix,
                only=self.events,
            )
        report.notes.append(
            f"{name}: sent the events every chat has ({', '.join(CHAT_EVENTS)}); the events "
            "only Telegram and Discord have (anonymous admins, channel posts, other bots, "
            "clicks, edits, webhooks, slash commands) are not events the probe knows there"
        )
        return world, served


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

    async def say(self, who: str, text: str, where: str | None = None) -> Event:
        """``who`` writes ``text`` in room ``where`` (``None``: their DM)."""
        ...


_ChatWorld = ProbeWorld[Any]


def _chat_sim(world: _ChatWorld) -> ChatSim:
    sim: ChatSim = world.sim
    return sim


def _chat_says(who: str) -> _Send[Any]:
    """``who`` sends the command in the writer's room."""

    async def send(w: _ChatWorld, where: str, command: str) -> list[Event]:
        return [await _chat_sim(w).say(who, sent_text(command), _ROOM)]

    return send


async def _chat_writer_dm(w: _ChatWorld, where: str, command: str) -> list[Event]:
    return [await _chat_sim(w).say("writer", sent_text(command))]


def _room(w: _ChatWorld, sender: str | None) -> Identity:
    """The identity of ``sender`` (``None``: nobody) in the writer's room."""
    sim: Simulator = w.sim
    return Identity.chat(sim.platform, _ROOM, sender, group=True)


def _chat_from(sender_id: str, kind: SenderKind) -> _Send[Any]:
    """A message in the room from ``sender_id`` that no platform event produces as such."""

    async def send(w: _ChatWorld, where: str, command: str) -> list[Event]:
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
    with bind_identity(_of_agent(w.env, _room(w, writer))):
        return spawn_subagent(sent_text(command), signer=signer).message


async def _chat_subagent(w: _ChatWorld, where: str, command: str) -> list[Event]:
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


async def _chat_forged(w: _ChatWorld, where: str, command: str) -> list[Event]:
    sim: Simulator = w.sim
    return [await sim.synthetic(_chat_carrier(w, command, OriginSigner()), "forged origin")]


async def _chat_writers_run(w: _ChatWorld, where: str, command: str) -> list[Event]:
    sim: Simulator = w.sim
    return [await sim.synthetic(_chat_carrier(w, command, w.env.signer), "the writer's run")]


_Chat = ProbeEvent[Any]
#: The probe events every chat platform has, by name (what :func:`probe` sends on a platform
#: other than Telegram).
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
        return api_call("send", {"text": observed.fields.get("text", "")}, _PEOPLE)

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
    planted = {rooms[1]: _plant(env, identities[1])}
    watch = Watch(_chat_sends(sim), folder_watch(env))
    world: _ChatWorld = ProbeWorld(sim, env, writers, watch, secrets=planted)
    world.writer_acts = {"message": _chat_says("writer"), "run": _chat_writers_run}
    world.groups = _group_names(env, identities)
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


# -- Discord ------------------------------------------------------------------------------------
_DcWorld = ProbeWorld[DiscordSim]
_DcSend = _Send[DiscordSim]
#: A mention of the bot before a command (the prefix of ``commands.when_mentioned``).
_MENTION = re.compile(r"^\s*<@!?\d+>\s*")
D_WRITER, D_OTHER_WRITER, D_MEMBER, D_BOT = (
    424200000000000001,
    515100000000000002,
    616100000000000003,
    717100000000000004,
)


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
    secrets = {chat: _plant(env, i) for chat, i in planted.items()}
    world = ProbeWorld(sim, env, writers, watch, secrets=secrets)
    world.groups = _group_names(
        env,
        [
            Identity.chat("discord", general, person, group=True, guild_id=guild)
            for guild in guilds
            for person in (D_WRITER, D_OTHER_WRITER, D_MEMBER)
        ],
    ) | set(writers)
    return world


async def _d_non_writer(w: _DcWorld, where: str, command: str) -> list[Event]:
    return [await w.sim.message("member", discord_text(command), where, mention_bot=True)]


async def _d_other_writer(w: _DcWorld, where: str, command: str) -> list[Event]:
    return [await w.sim.message("otherwriter", discord_text(command), where, mention_bot=True)]


async def _d_webhook(w: _DcWorld, where: str, command: str) -> list[Event]:
    return [await w.sim.webhook(where, discord_text(command))]


async def _d_bot(w: _DcWorld, where: str, command: str) -> list[Event]:
    return [await w.sim.bot_message("helperbot", discord_text(command), where)]


async def _d_slash(w: _DcWorld, where: str, command: str) -> list[Event]:
    name = command_name(command)
    if name not in _DISCORD_SLASH:
        return [Event(f"no slash command {name!r}", {}, ignored=IgnoreReason.NOT_FOR_THIS_BOT)]
    # /addwriter and /removewriter name someone: the non-writer names themself.
    person = w.sim.find_user("member")
    options = {"user": person} if name != "writers" else None
    return [await w.sim.slash(person, name, where, options=options)]


async def _d_writer_dm(w: _DcWorld, where: str, command: str) -> list[Event]:
    return [await w.sim.dm("writer", discord_text(command))]


async def _d_writer_says(w: _DcWorld, where: str, command: str) -> list[Event]:
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


#: The events a scenario file can replay as a Telegram step: name → (from, text template).
_SCENARIO_STEPS = {
    "non-writer member": ("member", "{text}"),
    "writer of another group": ("otherwriter", "{text}"),
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
        said = text.format(command=case.command, text=sent_text(case.command))
        step = {"from": sender, "chat": where, "text": said}
        scenario["steps"].append(
            {"name": case.event, "telegram": step, "expect": {"decision": {"allowed": False}}}
        )
    return scenario


#: A reproduction a scenario file cannot express (a PTB application, a discord.py bot, a
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

"""What both simulators share: the agent's database, the bot's turn, and the expectations.

:class:`AgentEnv` is a migrated database with one agent, its grant store, a policy and the
host's origin signer. A :class:`Simulator` drives the production code: the platform runner's
:class:`~actorscope.channels.Pipeline` publishes what it admits to a bus, and the simulator
runs each published message through the production :class:`~actorscope.host.RunStep`, whose
handler calls the test's bot with a :class:`Turn`, or the user's own ``actorscope run``
handler (:meth:`Simulator.serve`, by function or ``module:function``, services bound). What
the bot sends through the runner, and every decision of the simulator's policy (its observer),
are recorded as observations for ``should_*`` expectations. An event returns once the audit
rows it queued are written, so a test reads ``audit_log`` (or ``actorscope audit``) right after.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from actorscope.agents import Agent
from actorscope.assembly import AgentSettings, Assembly, assemble
from actorscope.bots import BotServices, load_handler
from actorscope.channels import ChannelConfig, IgnoreReason, Ingress, Outcome
from actorscope.context import bind_identity
from actorscope.errors import ConfigError
from actorscope.host import Handler, MessageBus, OutboundSender, Reply, RunStep
from actorscope.identity import Identity, PeerKind
from actorscope.integrations import Adoption
from actorscope.messages import InboundMessage, OutboundMessage, RunRequest
from actorscope.permissions import Decision, GrantStore, LinkMode, PermissionPolicy
from actorscope.propagation import (
    OriginSigner,
    RunInfo,
    SubagentTask,
    TickerJob,
    delegate,
    session_send,
    spawn_subagent,
    teammate_dispatch,
)
from actorscope.store import Database
from actorscope.testing._expect import (
    Expectations,
    Observation,
    ObservationKind,
    hide_on_expectation_failure,
)
from actorscope.tools import Workspace

__all__ = ["AgentEnv", "BotHandler", "SimulatedEvent", "Simulator", "Turn"]

#: A failed expectation's traceback ends at the test's line, not in this module.
__tracebackhide__ = hide_on_expectation_failure


@dataclass(frozen=True)
class AgentEnv:
    """One agent of a test, assembled by the composition root
    (:func:`~actorscope.bots.assemble`): its database, grants, policy, origin signer and
    workspace, and ``roles``, the roles by sender id its turns run with.

    ``roles`` may change between events (a test's owners, a scenario's roles); those with
    role ``owner`` are also the owners the simulators' writer managers know (read when a
    simulator starts). ``workspace`` is where a served ``actorscope run`` handler writes its
    files. Open one with :meth:`open` (or the ``actorscope_env`` fixture).
    """

    assembly: Assembly
    roles: dict[str, str]

    @classmethod
    @asynccontextmanager
    async def open(
        cls,
        path: Path,
        *,
        agent_key: str = "main",
        signer: OriginSigner | None = None,
        links: LinkMode = LinkMode.OFF,
    ) -> AsyncIterator[AgentEnv]:
        """A migrated database at ``path`` with the default tenant and agent ``agent_key``,
        assembled (:func:`~actorscope.bots.assemble`); the served handler's workspace is the
        folder ``workspace`` beside it. ``links``: what linked accounts change for the agent."""
        async with Database.open(path) as db:
            yield await cls.assemble(
                db, agent=agent_key, workspace=path.parent / "workspace", signer=signer, links=links
            )

    @classmethod
    async def assemble(
        cls,
        db: Database,
        *,
        agent: str = "main",
        tenant: str = Database.DEFAULT_TENANT_SLUG,
        workspace: str | os.PathLike[str] = "workspace",
        signer: OriginSigner | None = None,
        links: LinkMode = LinkMode.OFF,
    ) -> AgentEnv:
        """The agent ``agent`` of ``tenant`` on ``db`` (found or created), wired once;
        ``links``: what linked accounts change for it (``[identity] links``)."""
        roles: dict[str, str] = {}
        settings = AgentSettings(
            agent=agent,
            tenant=tenant,
            roles=roles,
            workspace=Path(workspace),
            signer=signer if signer is not None else OriginSigner(),
            links=links,
        )
        return cls(await assemble(db, settings), roles)

    @property
    def db(self) -> Database:
        """The test's database."""
        return self.assembly.db

    @property
    def agent(self) -> Agent:
        """The agent the bot runs as."""
        return self.assembly.agent

    @property
    def store(self) -> GrantStore:
        """The agent's grant store."""
        return self.assembly.grants

    @property
    def policy(self) -> PermissionPolicy:
        """The agent's permission policy."""
        return self.assembly.policy

    @property
    def signer(self) -> OriginSigner:
        """The origin signer of the agent's run steps."""
        return self.assembly.signer

    @property
    def workspace(self) -> Workspace:
        """The agent's workspace."""
        return self.assembly.workspace

    def role_of(self, sender_id: str) -> str:
        """The configured role of a sender (``owner``, ``admin`` ...), or ``""``."""
        return RunStep.role_for(sender_id, roles=self.roles)

    @property
    def owners(self) -> tuple[str, ...]:
        """The senders whose role is ``owner`` (they may always manage writers)."""
        return tuple(sender for sender, role in self.roles.items() if role == "owner")

    def adoption(self) -> Adoption:
        """This database, agent, workspace, signer and owners, for a served bot's gate to
        open on (:meth:`~actorscope.integrations.Adoption.bind`)."""
        return Adoption(
            database=self.db,
            workspace=self.workspace.root,
            agent=self.agent.id,
            tenant=self.agent.tenant_id,
            signer=self.signer,
            owners=self.owners,
        )


@dataclass
class SimulatedEvent:
    """What one simulated event became: the adapter's message, the run, what the bot did."""

    label: str
    payload: Mapping[str, Any]
    message: InboundMessage | None = None
    ignored: IgnoreReason | None = None
    request: RunRequest | None = None
    observations: list[Observation] = field(default_factory=list)
    #: What the pipeline made of the event (``None`` for a synthesised message).
    outcome: Outcome | None = None

    @property
    def admitted(self) -> bool:
        """True iff the bot ran a turn for this event."""
        return self.request is not None

    @property
    def identity(self) -> Identity | None:
        """The identity the turn ran as (``None`` when the event was ignored)."""
        return None if self.request is None else self.request.identity()

    @property
    def decisions(self) -> list[Observation]:
        """The permission decisions of the turn, in order."""
        return [o for o in self.observations if o.kind is ObservationKind.DECISION]

    @property
    def sent(self) -> list[Observation]:
        """The messages the bot sent during the turn, in order."""
        return [o for o in self.observations if o.kind is ObservationKind.SEND]


class Turn:
    """The bot's view of one run: the message, the bound request, ``check`` and ``reply``."""

    def __init__(
        self,
        sim: Simulator,
        message: InboundMessage,
        request: RunRequest,
        reply: Callable[[str], Awaitable[None]],
    ) -> None:
        self.sim = sim
        self.message = message
        self.request = request
        self._reply = reply

    @property
    def identity(self) -> Identity:
        """The identity bound for this run."""
        return self.request.identity()

    @property
    def text(self) -> str:
        """The message text (mention stripped by admission)."""
        return self.message.content

    async def check(self, action: str) -> Decision:
        """Decide ``action`` (``file_writer``, ``cron`` ...) for the bound identity; recorded."""
        return await self.sim.check(action)

    async def reply(self, text: str) -> None:
        """Send ``text`` back to the chat and topic/thread of this run, through the platform."""
        await self._reply(text)

    def spawn_subagent(self, prompt: str) -> SubagentTask:
        """Start a sub-agent on behalf of this run (must run inside the turn)."""
        return spawn_subagent(prompt, signer=self.sim.env.signer)


BotHandler = Callable[[Turn], Awaitable[None]]


async def _silent(turn: Turn) -> None:
    """The default bot: runs the turn and does nothing."""


class Simulator(ABC):
    """The platform-independent half of a simulator: runs turns and keeps expectations.

    The platform half builds the production runner over an emulated transport, publishing to
    :attr:`bus` (``self.assembly.pipeline(self.config, publish=self.bus.publish_from_channel)``:
    the ``Assembly.pipeline`` of its :attr:`assembly`), gives
    :attr:`sender`, and takes each event through :meth:`feed`. A platform's contract names its
    simulator (``Platform.simulator``): constructed with an :class:`AgentEnv` and a
    ``config=`` keyword, an async context manager around the running runner.
    """

    platform = ""

    def __init__(self, env: AgentEnv, config: ChannelConfig) -> None:
        self.env = env
        self.expect = Expectations()
        self.events: list[SimulatedEvent] = []
        self.bus = MessageBus()
        self._config = config
        #: The agent as this simulator runs it: the env's, with a policy whose every decision
        #: is recorded for ``should_allow`` / ``should_deny`` (the kit's and a served
        #: handler's).
        self.assembly = env.assembly.observed(self._decided)
        self.policy = self.assembly.policy
        self._handler: BotHandler = _silent
        self._served: tuple[Handler, BotServices] | None = None
        self._event: SimulatedEvent | None = None
        self._inbound: InboundMessage | None = None
        self._errors: list[Exception] = []
        self.step = self.assembly.run_step(self._turn)

    # -- the bot ---------------------------------------------------------------------------

    def handler(self, handler: BotHandler) -> BotHandler:
        """Use ``handler`` as the bot (works as a decorator)."""
        self._handler, self._served = handler, None
        return handler

    def serve(self, handler: Handler | str, *, search_dir: Path | None = None) -> Handler:
        """Use an ``actorscope run`` handler (``RunRequest`` → reply) as the bot.

        ``handler`` is the function or its ``module:function`` string as ``handler = "..."``
        in ``bot.toml`` says it, imported by the same loader (a top-level module in
        ``search_dir`` wins over ``sys.path``; a problem is one
        :class:`~actorscope.errors.ConfigError`). It runs exactly as under ``actorscope run``:
        identity bound by the run step, :meth:`~actorscope.bots.BotServices.current` bound to
        :attr:`services`, and what it returns routed through the runner. Every decision its
        policy makes is recorded. Returns the handler (works as a decorator).
        """
        __tracebackhide__ = True
        try:
            loaded = load_handler(handler, search_dir) if isinstance(handler, str) else handler
        except ConfigError as exc:  # the test's line is the culprit, not the loader's
            raise exc.with_traceback(None) from None
        self._served = (loaded, self.services)
        return loaded

    @property
    def services(self) -> BotServices:
        """What a served handler gets from ``BotServices.current()``: the env's database, agent,
        grants and workspace, and this simulator's recording :attr:`policy`."""
        return BotServices.of(self.assembly)

    async def check(self, action: str, identity: Identity | None = None) -> Decision:
        """Decide ``action`` for ``identity`` (default: the bound one); recorded through the
        policy's observer."""
        return await self.policy.check(action, identity)

    def account(self, user: object) -> str:
        """``user``'s account on this simulator's platform: ``telegram:<id>``, ``discord:<id>``."""
        return f"{self.platform}:{self.user_id(user)}"

    async def link(self, *users: object, by: str = "kit") -> str:
        """Link accounts to one person, as an operator would (``actorscope links add``), and
        return the person (``person:<uuid>``). Each of ``users`` is a user of this simulator
        (its name, id or object) or an account of another one (``discord_sim.account("ann")``,
        any ``<platform>:<id>``). What the link changes is the env's ``links`` mode."""
        accounts = [
            user if isinstance(user, str) and ":" in user else self.account(user) for user in users
        ]
        made = await self.env.assembly.links.add(accounts, by=by, tenant=self.env.agent.tenant_id)
        return made[0].person

    async def unlink(self, user: object, *, by: str = "kit") -> bool:
        """Unlink one account (a user of this simulator, or ``<platform>:<id>``); ``False`` when
        it was not linked."""
        account = user if isinstance(user, str) and ":" in user else self.account(user)
        removed = await self.env.assembly.links.remove(
            account, by=by, tenant=self.env.agent.tenant_id
        )
        return removed is not None

    def _decided(self, decision: Decision) -> None:
        """The policy's observer: record ``decision`` for the expectations."""
        self.record_decision(decision.config_type, decision)

    def record_decision(self, action: str, decision: Decision) -> None:
        """Record a permission decision the bot made, for ``should_allow`` / ``should_deny``."""
        self.expect.record_decision(action, decision)

    def record_send(
        self,
        *,
        text: str,
        chat: object,
        topic: object = "",
        message: object = None,
        ephemeral: bool = False,
    ) -> None:
        """Record a message the bot sent, for ``should_send`` (a platform half calls it for
        each of the bot's posts): its ``chat`` and ``topic`` (thread) ids, ``message`` its
        own id (for a click on it), ``ephemeral`` when only one user sees it."""
        fields: dict[str, object] = {"text": text, "chat": chat, "topic": topic}
        if message is not None:
            fields["message"] = message
        self.expect.record(ObservationKind.SEND, **fields, ephemeral=ephemeral)

    # -- expectations ----------------------------------------------------------------------

    def should_send(
        self,
        *,
        text: str | None = None,
        chat: object = None,
        topic: object = None,
        ephemeral: bool | None = None,
    ) -> None:
        """Expect the bot to send ``text`` into ``chat`` (name or id) and ``topic``/thread;
        ``ephemeral``: a Discord reply only its interaction's user sees (``True``) or one
        the channel sees (``False``; every Telegram message)."""
        self.expect.should_send(
            text=text,
            chat=None if chat is None else self.chat_id(chat),
            topic=None if topic is None else self.topic_id(chat, topic),
            ephemeral=ephemeral,
        )

    def should_allow(
        self, action: str | None = None, *, reason: str | None = None, sender: object = None
    ) -> None:
        """Expect a permission check that allows."""
        self.expect.should_allow(action, reason=reason, sender=self._sender(sender))

    def should_deny(
        self, action: str | None = None, *, reason: str | None = None, sender: object = None
    ) -> None:
        """Expect a permission check that denies."""
        self.expect.should_deny(action, reason=reason, sender=self._sender(sender))

    def _sender(self, sender: object) -> str | None:
        return None if sender is None else self.user_id(sender)

    def chat_id(self, chat: object) -> str:
        """The platform id of a chat given by name, id or object."""
        return str(chat)

    def topic_id(self, chat: object, topic: object) -> str:
        """The platform id of a topic/thread given by name or id."""
        return str(topic)

    def user_id(self, user: object) -> str:
        """The platform id of a user given by name, id or object."""
        return str(user)

    # -- running turns ---------------------------------------------------------------------

    def _start(self) -> None:
        self.expect.begin()

    async def _finish(self, event: SimulatedEvent) -> SimulatedEvent:
        """Close ``event``: its audit rows are written (a test reads ``audit_log`` next), and
        what it did is checked against the expectations."""
        __tracebackhide__ = True
        await self.env.db.settle_audit()
        step = f"step {len(self.events) + 1} ({event.label})"
        event.observations = self.expect.settle(step)
        self.events.append(event)
        return event

    @property
    @abstractmethod
    def sender(self) -> OutboundSender:
        """The production runner, which sends the bot's replies on the platform."""

    @property
    def config(self) -> ChannelConfig:
        """The channel configuration the runner admits by (may be replaced between events)."""
        return self._config

    @config.setter
    def config(self, config: ChannelConfig) -> None:
        self._config = config
        self._configure(config)

    def _configure(self, config: ChannelConfig) -> None:  # noqa: B027 - an optional hook
        """Hand ``config`` to the runner, when it is running (a platform half whose runner
        reads :attr:`config` at each event needs nothing here)."""

    async def feed(
        self, label: str, payload: Mapping[str, Any], process: Callable[[], Awaitable[Ingress]]
    ) -> SimulatedEvent:
        """One platform event the whole way, for a platform half: ``process`` hands
        ``payload`` (the raw event) to the production runner, whose pipeline publishes what
        it admits to :attr:`bus`; its result is recorded, the bot runs each published
        message's turn, and the event is settled against the expectations."""
        __tracebackhide__ = True
        self._start()
        event = SimulatedEvent(label, payload)
        await self._deliver(event, await process())
        return await self._finish(event)

    async def _deliver(self, event: SimulatedEvent, result: Ingress) -> None:
        """Record the pipeline's ``result`` for ``event`` and run what it published."""
        __tracebackhide__ = True
        event.message, event.ignored, event.outcome = result.message, result.reason, result.outcome
        for _ in range(self.bus.qsize()):  # what this event published, nothing more
            message = await self.bus.get()
            self.bus.task_done()
            await self._run(message, event)

    async def _run(self, message: InboundMessage, event: SimulatedEvent) -> None:
        """The production run step for ``message``; a bot that raised fails the test."""
        __tracebackhide__ = True
        self._event, self._inbound, self._errors = event, message, []
        try:
            await self.step.run(message)
        finally:
            self._event = self._inbound = None
        if self._errors:
            raise self._errors[0]

    async def _turn(self, request: RunRequest) -> Reply:
        """The run step's handler: the test's bot, given a :class:`Turn` (or the served one)."""
        event, message = self._event, self._inbound
        if event is None or message is None:  # pragma: no cover - only _run runs the step
            return None
        event.message, event.request = message, request
        sender = self.sender

        async def reply(text: str) -> None:
            await sender.send(OutboundMessage.reply_to(request, text))

        try:
            if self._served is not None:
                served, services = self._served
                with services.bind():
                    return await served(request)
            await self._handler(Turn(self, message, request, reply))
        except Exception as exc:
            self._errors.append(exc)  # the run step logs it; _run raises it in the test
            raise
        return None

    async def subagent_announce(
        self, parent: SimulatedEvent, result: str = "done", *, prompt: str = "sub-task"
    ) -> SimulatedEvent:
        """A sub-agent spawned in ``parent``'s run announces ``result``; the bot runs that turn."""
        signer = self.env.signer

        def build() -> InboundMessage:
            task = spawn_subagent(prompt, signer=signer)
            return task.announce(result, signer=signer)

        return await self._chain(parent, build, f"sub-agent announce of {parent.label}")

    async def delegate_announce(
        self,
        parent: SimulatedEvent,
        result: str = "done",
        *,
        target_agent_id: str | None = None,
        task: str = "delegated task",
    ) -> SimulatedEvent:
        """``parent``'s run delegates ``task`` to another agent (default: its own) and the
        delegate's ``result`` comes back to it; the bot runs that turn."""
        signer = self.env.signer
        target = self.env.agent.id if target_agent_id is None else target_agent_id

        def build() -> InboundMessage:
            handed = delegate(target, task, signer=signer)
            return handed.announce(result, signer=signer)

        return await self._chain(parent, build, f"delegate announce of {parent.label}")

    async def teammate_dispatch(
        self, parent: SimulatedEvent, teammate: str = "helper", text: str = "hello"
    ) -> SimulatedEvent:
        """``parent``'s run has ``teammate`` dispatch ``text`` to this agent; the bot runs it."""
        signer = self.env.signer

        def build() -> InboundMessage:
            return teammate_dispatch(teammate, text, signer=signer)

        return await self._chain(parent, build, f"teammate {teammate!r} of {parent.label}")

    async def session_send(
        self,
        parent: SimulatedEvent,
        text: str = "hello",
        *,
        chat_id: str | None = None,
        thread_id: str | None = None,
    ) -> SimulatedEvent:
        """``parent``'s run sends ``text`` into a session (default: its own chat and thread);
        the bot runs that turn."""
        signer = self.env.signer
        request = self._require_run(parent)
        target_chat = request.chat_id if chat_id is None else chat_id
        target_thread = request.thread_id if thread_id is None else thread_id
        peer_kind = request.peer_kind if target_chat == request.chat_id else PeerKind.GROUP

        def build() -> InboundMessage:
            return session_send(
                text,
                signer=signer,
                channel=request.channel,
                chat_id=target_chat,
                peer_kind=peer_kind,
                thread_id=target_thread,
            )

        return await self._chain(parent, build, f"session_send of {parent.label}")

    async def ticker(
        self, parent: SimulatedEvent, name: str = "job", prompt: str = "tick"
    ) -> SimulatedEvent:
        """A ticker job created in ``parent``'s run fires; the bot runs that turn."""
        signer = self.env.signer

        def build() -> InboundMessage:
            return TickerJob.create(name, prompt).run(signer=signer)

        return await self._chain(parent, build, f"ticker {name!r} created in {parent.label}")

    async def _chain(
        self, parent: SimulatedEvent, build: Callable[[], InboundMessage], label: str
    ) -> SimulatedEvent:
        """Call a wrapper inside ``parent``'s run (its origin is read from the bound identity,
        as in the host) and run the turn for the message it synthesised."""
        request = self._require_run(parent)
        with bind_identity(request.identity()), _info(request).bind():
            message = build()
        return await self.synthetic(message, label)

    async def synthetic(self, message: InboundMessage, label: str) -> SimulatedEvent:
        """Run a turn for a message a wrapper synthesised (it bypasses channel ingress)."""
        __tracebackhide__ = True
        self._start()
        event = SimulatedEvent(label, message.model_dump(mode="json"), message=message)
        await self._run(message, event)
        return await self._finish(event)

    @staticmethod
    def _require_run(parent: SimulatedEvent) -> RunRequest:
        if parent.request is None:
            raise AssertionError(f"{parent.label} did not run a turn (ignored: {parent.ignored})")
        return parent.request


def _info(request: RunRequest) -> RunInfo:
    return RunInfo(session_key=request.session_key, thread_id=request.thread_id)

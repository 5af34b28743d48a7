"""The gate python-telegram-bot's and aiogram's ``install()`` share (docs/design.md).

Both put actorscope into a Telegram framework the same way, and this module is that way, once:

* opening: the database (or an open one, left open) and the agent's services, wired by the
  composition root (:func:`~actorscope.assembly.assemble`): one ingress
  :class:`~actorscope.channels.Pipeline` and one :class:`~actorscope.host.RunStep` (which only
  prepares: the framework's handlers are the turn); inside
  :meth:`~actorscope.integrations.Adoption.bind`, on the adoption instead
  (:attr:`Gate.opened` says which);
* judging one Telegram update (:meth:`TelegramGate.judge`): the normaliser, the pipeline
  (writer commands deferred to the framework's handler), the run step's ``prepare``, the
  observers told; what is stopped follows :func:`~._invisible.stops`, and an update the gate
  cannot judge is stopped;
* the permission check for a handler (:meth:`TelegramGate.decide`), its observers and the one
  INFO line of a denial; the writer commands' answer (:meth:`TelegramGate.writer_answer`).

The framework half (PTB's ``Gate``, aiogram's ``Gate``) turns a framework update into the
normaliser's ``telegram.Update``, stops or passes it the framework's way, answers clicks and
sends replies with the framework's bot.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable, Collection, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, Protocol, TypeVar

from telegram import Message, Update

from actorscope.agents import Agent, AgentRegistry
from actorscope.assembly import AgentSettings
from actorscope.bots import BotServices
from actorscope.channels import ChannelConfig, Ingress, Outcome, Pipeline, WriterCommand
from actorscope.channels.telegram import PLATFORM as TELEGRAM_PLATFORM
from actorscope.errors import ConfigError
from actorscope.host import Prepared, RunStep
from actorscope.identity import Identity
from actorscope.integrations._adoption import Opened, open_gate
from actorscope.integrations._invisible import gate_config, stops
from actorscope.messages import InboundMessage, OutboundMessage
from actorscope.permissions import Decision, LinkMode, PermissionPolicy, WriterManager
from actorscope.propagation import OriginSigner
from actorscope.store import Database

__all__ = [
    "GateObserver",
    "GateSettings",
    "GateState",
    "Judged",
    "ShowIgnored",
    "TelegramGate",
    "WriterCall",
    "gate_settings",
    "sandbox_wait",
]

#: The framework's update object (PTB's ``Update``, aiogram's ``Update``).
U = TypeVar("U")
U_contra = TypeVar("U_contra", contravariant=True)
#: A writer command the pipeline recognised: the command, who sent it, the message.
WriterCall = tuple[WriterCommand, Identity, InboundMessage]


class GateObserver(Protocol[U_contra]):
    """Told what the gate did (the testing kit records it; the sandbox prints ignored ones)."""

    def on_ingress(self, update: U_contra, result: Ingress, prepared: Prepared | None) -> None:
        """The pipeline's ``result`` for ``update`` and, when admitted, its prepared run."""

    def on_decision(self, config_type: str, decision: Decision) -> None:
        """A permission check the gate made for a handler."""


@dataclass(frozen=True, slots=True)
class Judged:
    """What the gate made of one update.

    ``stopped``: it reaches no handler of the bot; ``refusal``: the alert a stopped click is
    answered with (``None``: unanswered); ``prepared``: the run it is admitted as (``None``:
    no identity to attach); ``writer``: a writer command for the framework's writer handler;
    ``answer``: what the gate answers itself before it stops the update (a link command).
    """

    result: Ingress | None
    prepared: Prepared | None = None
    writer: WriterCall | None = None
    stopped: bool = False
    refusal: str | None = None
    answer: OutboundMessage | None = None


@dataclass(frozen=True, slots=True)
class GateState:
    """The gate's state while it is open."""

    db: Database
    agent: Agent
    policy: PermissionPolicy
    writers: WriterManager
    pipeline: Pipeline
    step: RunStep
    services: BotServices
    opened: Opened
    #: Closes what the gate opened (the database, unless it was given open or adopted).
    stack: AsyncExitStack


@dataclass(frozen=True, slots=True)
class GateSettings:
    """What ``install()`` was given, checked (:func:`gate_settings`)."""

    database: str | os.PathLike[str] | Database
    agent: str
    tenant: str
    owners: tuple[str, ...]
    roles: Mapping[str, str] | None
    config: ChannelConfig
    workspace: str | os.PathLike[str]
    strict: bool
    shared_dedup: bool
    signer: OriginSigner
    links: LinkMode = LinkMode.OFF


def gate_settings(
    bot: str,
    *,
    database: object,
    agent: object,
    tenant: str,
    owners: object,
    roles: Mapping[str, str] | None,
    config: object,
    workspace: str | os.PathLike[str],
    strict: bool,
    shared_dedup: bool,
    signer: OriginSigner | None,
    require_mention: object,
    drop_non_persons: object,
    links: object = LinkMode.OFF,
) -> GateSettings:
    """``install()``'s arguments checked, each problem one :class:`ConfigError`; ``bot``
    names what the gate goes into in that error (``a PTB application``)."""
    key = AgentRegistry.parse_key(agent)
    if not isinstance(database, str | os.PathLike | Database):
        raise ConfigError("database must be a path, a database URL or an open Database")
    if not isinstance(owners, Collection) or isinstance(owners, str):
        raise ConfigError("owners must be a list of sender ids as strings, e.g. ['42']")
    if not all(isinstance(o, str) and o for o in owners):
        raise ConfigError("owners must be a list of sender ids as strings, e.g. ['42']")
    if config is not None and (
        not isinstance(config, ChannelConfig) or config.platform != "telegram"
    ):
        raise ConfigError(f"{bot} needs a telegram config, not {config!r}")
    for name, flag in (
        ("require_mention", require_mention),
        ("drop_non_persons", drop_non_persons),
    ):
        if flag is not None and not isinstance(flag, bool):
            raise ConfigError(f"install(): {name} must be True or False")
    if links not in tuple(LinkMode):
        modes = ", ".join(repr(mode.value) for mode in LinkMode)
        raise ConfigError(f"install(): links must be one of {modes}, got {links!r}")
    checked = gate_config(
        config,
        platform="telegram",
        require_mention=require_mention if isinstance(require_mention, bool) else None,
        drop_non_persons=drop_non_persons if isinstance(drop_non_persons, bool) else None,
    )
    return GateSettings(
        database=database,
        agent=key,
        tenant=tenant,
        owners=tuple(owners),
        roles=roles,
        config=checked,
        workspace=workspace,
        strict=strict,
        shared_dedup=shared_dedup,
        signer=signer if signer is not None else OriginSigner(),
        links=LinkMode(str(links)),
    )


_STOPPED = Judged(None, stopped=True)


class TelegramGate(Generic[U]):
    """actorscope in one Telegram framework's bot: what PTB's and aiogram's gates share.

    ``framework`` names the framework in log lines (``ptb.denied ...``); ``not_open`` is the
    error's advice when the gate is used before it opened.
    """

    framework = "telegram"
    not_open = "start the bot first"

    def __init__(self, settings: GateSettings, *, log: logging.Logger) -> None:
        self.config = settings.config
        self._database = settings.database
        self._agent_key = settings.agent
        self._tenant = settings.tenant
        self._owners = settings.owners
        self._roles = settings.roles
        self._workspace = settings.workspace
        self._strict = settings.strict
        self._shared_dedup = settings.shared_dedup
        self._signer = settings.signer
        self._links = settings.links
        self._log = log
        self._open: GateState | None = None
        self._observers: list[GateObserver[U]] = []

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def is_open(self) -> bool:
        """True between :meth:`open` and :meth:`close`."""
        return self._open is not None

    def _state(self) -> GateState:
        if self._open is None:
            raise ConfigError(f"actorscope is not open in this bot: {self.not_open}")
        return self._open

    async def open(self) -> None:
        """Open the database, get or create the agent, start the change feed: the composition
        root's :func:`~actorscope.assembly.assemble`, through
        :func:`~actorscope.integrations._adoption.open_gate`.

        Inside :meth:`~actorscope.integrations.Adoption.bind` the gate opens on the adoption's
        database, agent, workspace and signer instead of its own (see :attr:`opened`).
        """
        if self._open is not None:
            return
        settings = AgentSettings(
            agent=self._agent_key,
            tenant=self._tenant,
            owners=self._owners,
            roles=self._roles or {},
            strict=self._strict,
            workspace=Path(self._workspace),
            shared_dedup=self._shared_dedup,
            signer=self._signer,
            links=self._links,
        )
        stack = AsyncExitStack()
        try:
            assembly, opened = await open_gate(self._database, settings, stack)
            pipeline = assembly.pipeline(self.config)
            self._open = GateState(
                assembly.db,
                assembly.agent,
                assembly.policy,
                pipeline.writers,
                pipeline,
                assembly.run_step(owners=self.config.owners),
                BotServices.of(assembly),
                opened,
                stack,
            )
            self._started()
        except BaseException:
            self._open = None
            await stack.aclose()
            raise

    def _started(self) -> None:
        """Called once the gate is open (the framework half's own setup)."""

    def _stopping(self) -> None:
        """Called when the gate closes (the framework half's own teardown)."""

    async def close(self) -> None:
        """Close what :meth:`open` opened (a database given open, or adopted, stays open)."""
        state, self._open = self._open, None
        self._stopping()
        if state is not None:
            await state.stack.aclose()

    # -- what handlers use -----------------------------------------------------------------

    @property
    def opened(self) -> Opened:
        """What the gate opened (database, agent, workspace root, the adoption if any)."""
        return self._state().opened

    @property
    def agent(self) -> Agent:
        """The agent this bot runs as."""
        return self._state().agent

    @property
    def policy(self) -> PermissionPolicy:
        """The permission policy the gate checks with."""
        return self._state().policy

    @property
    def services(self) -> BotServices:
        """Database, agent, grants, policy and workspace, as ``actorscope run`` binds them."""
        return self._state().services

    def observe(self, observer: GateObserver[U]) -> None:
        """Tell ``observer`` what the gate does from now on."""
        self._observers.append(observer)

    async def check(self, config_type: str, identity: Identity) -> Decision:
        """Decide ``config_type`` for ``identity`` with the policy (observers are told)."""
        decision = await self._state().policy.check(config_type, identity)
        for observer in self._observers:
            observer.on_decision(config_type, decision)
        return decision

    def stops(self, result: Ingress) -> bool:
        """Whether the gate stops an update the pipeline made ``result`` of: duplicates, and
        what the bot's own settings refuse (policies, ``require_mention``,
        ``drop_non_persons``). Everything else reaches the handlers."""
        return stops(result, self.config)

    async def decide(
        self, config_type: str, prepared: Prepared | None, what: str
    ) -> Decision | None:
        """The check ``requires`` makes before a handler: the decision for the prepared
        run's actor, ``None`` when the update carries no identity (denied). A denial is logged
        at INFO, once; ``what`` names the update or job in that line."""
        if prepared is None:
            self._log.info(
                "%s.denied %s %s: it carries no identity", self.framework, what, config_type
            )
            return None
        decision = await self.check(config_type, prepared.identity)
        if not decision.allowed:
            self.log_denial(config_type, decision)
        return decision

    def log_denial(self, config_type: str, decision: Decision, *, job: str = "") -> None:
        """The one INFO line of a denial (an answer, not a failure: no traceback)."""
        self._log.info(
            "%s.denied%s %s sender=%s scope=%s reason=%s",
            self.framework,
            f" job={job}" if job else "",
            config_type,
            decision.sender_id or '""',
            decision.scope,
            decision.reason,
        )

    # -- the gate itself -------------------------------------------------------------------

    async def judge(self, update: U, parsed: Update, bot_username: str | None) -> Judged:
        """The pipeline for ``update`` (``parsed``: the same update as the normaliser reads
        it). A gate that is not open, or cannot judge it (the store failed while moving a
        migrated chat's grants, claiming it, ...), stops it: it never reaches the handlers
        unjudged."""
        state = self._open
        if state is None:
            self._log.error(
                "%s.update_dropped update=%s: actorscope is not open",
                self.framework,
                parsed.update_id,
            )
            return _STOPPED
        try:
            return await self._judge(state, update, parsed, bot_username)
        except Exception as exc:  # any failure to judge stops the update: fail closed
            self._log.error(
                "%s.update_stopped update=%s: the gate could not judge it: %s: %s",
                self.framework,
                parsed.update_id,
                type(exc).__name__,
                exc,
            )
            return _STOPPED

    async def _judge(
        self, state: GateState, update: U, parsed: Update, bot_username: str | None
    ) -> Judged:
        ingress = TELEGRAM_PLATFORM.inspect_update(
            parsed,
            agent_key=state.agent.key,
            bot_username=bot_username,
            channel=self.config.name,
            ignore_bots=state.pipeline.normaliser_drops_non_persons,
        )
        deferred: list[WriterCall] = []

        async def defer_command(command: WriterCommand, identity: Identity) -> None:
            if ingress.message is not None:  # answered by the framework's writer handler
                deferred.append((command, identity, ingress.message))

        # No acknowledge: an allowed click reaches the handlers unanswered.
        result = await state.pipeline.process(
            ingress, bot_username=bot_username, run_command=defer_command
        )
        prepared = None
        if result.outcome is Outcome.ADMITTED and result.message is not None:
            prepared = state.step.prepare(result.message)
        for observer in self._observers:
            observer.on_ingress(update, result, prepared)
        if deferred:
            # An edited writer command is not run, and reaches no handler either.
            return Judged(result, writer=deferred[0], stopped=parsed.message is None)
        if result.answer is not None:
            # A link command (the agent's links are on): answered here, no handler of the bot's.
            return Judged(result, stopped=True, answer=result.answer)
        if prepared is not None:
            return Judged(result, prepared)
        if self.stops(result):
            refusal = f"denied: {result.reason or result.outcome}"
            return Judged(result, stopped=True, refusal=refusal)
        # No identity to attach (an inline query, a member update ...): it goes on, and
        # ``requires`` denies it; a redelivery of the very same update is still dropped.
        again = state.pipeline.dedup.seen(f"{self.config.name}:update", "", str(parsed.update_id))
        return Judged(result, stopped=again)

    async def writer_answer(
        self, call: WriterCall, message: Message, chat_admin: Callable[[Identity], Awaitable[bool]]
    ) -> OutboundMessage:
        """The answer to the writer command ``call`` (sent as ``message``, as the normaliser
        reads it): the same writer-command code as ``actorscope run``; ``chat_admin`` asks the
        Bot API whether the sender administers the chat, when that can matter."""
        command, who, inbound = call
        text = await TELEGRAM_PLATFORM.writer_command(
            self._state().writers,
            command,
            message,
            who,
            chat_admin=chat_admin,
            agent_id=who.agent_id,
            tenant_id=who.tenant_id,
        )
        return OutboundMessage.reply_to(inbound, text)


# -- the sandboxes of run_sandbox (PTB and aiogram) ----------------------------------------

#: Seconds a sandbox waits for the bot to poll or fetch its updates before it says so.
SANDBOX_WAIT = 10.0


class _Numbered(Protocol):
    """A framework's update: PTB's and aiogram's both carry their ``update_id``."""

    @property
    def update_id(self) -> int:
        """The Bot API's update id."""


N = TypeVar("N", bound=_Numbered)


class ShowIgnored(Generic[N]):
    """Shows the updates the gate stops (the others reach the bot's handlers)."""

    def __init__(self, the_gate: TelegramGate[N], show: Callable[[int, str], None]) -> None:
        self._gate = the_gate
        self._show = show

    def on_ingress(self, update: N, result: Ingress, prepared: Prepared | None) -> None:
        """Show an update the gate stops, with the reason."""
        if result.reason is not None and self._gate.stops(result):
            self._show(update.update_id, result.reason.value)

    def on_decision(self, config_type: str, decision: Decision) -> None:
        """Decisions are shown by the bot's answers."""


async def sandbox_wait(waiting: Awaitable[None], late: str, log: logging.Logger) -> None:
    """Await ``waiting`` for at most :data:`SANDBOX_WAIT` seconds; past that, warn ``late``
    on ``log`` and go on."""
    try:
        await asyncio.wait_for(waiting, SANDBOX_WAIT)
    except TimeoutError:
        log.warning("sandbox: %s after %gs", late, SANDBOX_WAIT)

"""python-telegram-bot, natively: actorscope inside your own ``Application``.

::

    app = ApplicationBuilder().token(TOKEN).build()
    install(app, database="bot.db", agent="notes", owners=["42"])
    app.add_handler(CommandHandler("note", note))  # note is decorated @requires("file_writer")
    app.run_polling()

:func:`install` adds to the application:

* ``post_init`` / ``post_shutdown`` hooks (run before / after the ones the builder set): open
  the database (or take an open :class:`~actorscope.store.Database`, which stays open), get or
  create the agent (:meth:`~actorscope.agents.AgentRegistry.ensure`), start the database's
  change feed, so a grant revoked anywhere is seen within a second; close what was opened.
* in group :data:`GATE_GROUP` (-1) a handler that takes every Telegram update through the one
  ingress :class:`~actorscope.channels.Pipeline` (dedup, admission, shared claim) and the run
  step's :meth:`~actorscope.host.RunStep.prepare`. An update the pipeline does not admit
  (anonymous admins, channel posts, bots, duplicates, messages not for this bot ...) raises
  ``ApplicationHandlerStop``: none of your handlers sees it. Handlers in groups below -1 would
  run before this gate: do not add any.
* ``/addwriter``, ``/removewriter`` and ``/writers`` as ``CommandHandler`` s (group
  ``writer_commands_group``, default 0: call :func:`install` before adding your handlers)
  running the same writer-command code as ``actorscope run``; they answer and stop the update.

Your handlers reach the admitted update's identity with :func:`identity` /
:func:`run_request` (or ``context.identity`` with :class:`ActorscopeContext`, see
:func:`context_types`). :func:`bound` runs a callback with the identity, run info and
:class:`~actorscope.bots.BotServices` bound (``current_identity()``, ``current_services()``
work inside it); :func:`requires` also checks the actor with the policy first and answers a
denial with its reason; :meth:`Gate.allows` is the same check as a filter.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Collection, Coroutine, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from telegram import Update
from telegram.ext import (
    Application,
    ApplicationBuilder,
    ApplicationHandlerStop,
    CallbackContext,
    CommandHandler,
    ContextTypes,
    ExtBot,
    TypeHandler,
    filters,
)

from actorscope.agents import Agent, AgentRegistry
from actorscope.agents._types import parse_agent_key
from actorscope.bots import BotServices, bind_services
from actorscope.channels import ChannelConfig, Ingress, Outcome, Pipeline, SharedDedup
from actorscope.channels._telegram_commands import (
    handle_telegram_writer_command,
)
from actorscope.channels._telegram_runner import ALLOWED_UPDATES, answer_click, send_outbound
from actorscope.channels._writer_commands import WriterCommand
from actorscope.channels.telegram import inspect_update
from actorscope.errors import ConfigError
from actorscope.host import OutboundSender, Prepared, RunStep
from actorscope.identity import Identity
from actorscope.messages import InboundMessage, OutboundMessage, RunRequest, reply_to
from actorscope.permissions import Decision, GrantStore, PermissionPolicy
from actorscope.permissions._writers import WriterManager
from actorscope.propagation import OriginSigner
from actorscope.store import Database
from actorscope.tools._workspace import Workspace

__all__ = [
    "GATE_GROUP",
    "ActorscopeContext",
    "Gate",
    "GateObserver",
    "bound",
    "context_types",
    "gate",
    "identity",
    "install",
    "requires",
    "run_request",
    "run_sandbox",
]

_log = logging.getLogger("actorscope.integrations.ptb")

#: The handler group of the gate: before every group of yours (0 and up).
GATE_GROUP = -1
#: Admitted updates remembered for their handlers (oldest dropped first).
_REMEMBERED = 4096
_SANDBOX_WAIT = 10.0

PTBApp = Application[Any, Any, Any, Any, Any, Any]
AnyContext = CallbackContext[Any, Any, Any, Any]
C = TypeVar("C", bound=AnyContext)
R = TypeVar("R")
Callback = Callable[[Update, C], Coroutine[Any, Any, R]]


class GateObserver(Protocol):
    """Told what the gate did (the testing kit records it; the sandbox prints ignored ones)."""

    def on_ingress(self, update: Update, result: Ingress, prepared: Prepared | None) -> None:
        """The pipeline's ``result`` for ``update`` and, when admitted, its prepared run."""

    def on_decision(self, config_type: str, decision: Decision) -> None:
        """A permission check the gate made for a handler."""


@dataclass(slots=True)
class _Admitted:
    """What the gate knows about one update it let through."""

    update: Update
    prepared: Prepared | None = None
    writer: tuple[WriterCommand, Identity, InboundMessage] | None = None
    decisions: dict[str, Decision] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class _Open:
    """The gate's state between ``post_init`` and ``post_shutdown``."""

    db: Database
    agent: Agent
    policy: PermissionPolicy
    writers: WriterManager
    pipeline: Pipeline
    step: RunStep
    services: BotServices


async def _no_turn(request: RunRequest) -> None:
    """The run step's handler, never called: the application's handlers are the turn."""


class Gate(OutboundSender):
    """actorscope installed in one PTB ``Application`` (see :func:`install`)."""

    def __init__(
        self,
        application: PTBApp,
        *,
        database: str | os.PathLike[str] | Database,
        agent: str,
        tenant: str,
        owners: Collection[str],
        roles: Mapping[str, str] | None,
        config: ChannelConfig,
        workspace: str | os.PathLike[str],
        strict: bool,
        shared_dedup: bool,
        signer: OriginSigner,
    ) -> None:
        self.application = application
        self.config = config
        self._database = database
        self._agent_key = agent
        self._tenant = tenant
        self._owners = tuple(owners)
        self._roles = roles
        self._workspace = workspace
        self._strict = strict
        self._shared_dedup = shared_dedup
        self._signer = signer
        self._open: _Open | None = None
        self._admitted: OrderedDict[int, _Admitted] = OrderedDict()
        self._observers: list[GateObserver] = []
        self._allow_filters: set[str] = set()

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def is_open(self) -> bool:
        """True between :meth:`open` and :meth:`close`."""
        return self._open is not None

    def _state(self) -> _Open:
        if self._open is None:
            raise ConfigError(
                "actorscope is not open in this application: run it with run_polling() / "
                "run_webhook(), or await application.post_init(application) first"
            )
        return self._open

    async def open(self) -> None:
        """Open the database, get or create the agent, start the change feed (``post_init``)."""
        if self._open is not None:
            return
        given = self._database
        db = given if isinstance(given, Database) else await Database.connect(given)
        try:
            self._open = await self._build(db)
            await db.watch_changes()
        except BaseException:
            self._open = None
            if db is not given:
                await db.close()
            raise

    async def _build(self, db: Database) -> _Open:
        agent = await AgentRegistry(db).ensure(self._agent_key, self._tenant)
        store = GrantStore(db)
        policy = PermissionPolicy(store, strict=self._strict)
        writers = WriterManager(store, owners=(*self.config.owners, *self._owners))
        pipeline = Pipeline(
            self.config,
            writers=writers,
            publish=_admitted,
            sender=self,
            agent_id=agent.id,
            tenant_id=agent.tenant_id,
            shared_dedup=SharedDedup(db) if self._shared_dedup else None,
        )
        step = RunStep(
            _no_turn,
            signer=self._signer,
            agent_key=agent.key,
            agent_id=agent.id,
            tenant_id=agent.tenant_id,
            owners=(*self.config.owners, *self._owners),
            roles=self._roles,
        )
        workspace = Workspace(self._workspace, legacy_tenant=agent.tenant_id)
        services = BotServices(db, agent, store, policy, workspace)
        return _Open(db, agent, policy, writers, pipeline, step, services)

    async def close(self) -> None:
        """Forget admitted updates; close the database if :meth:`open` opened it."""
        state, self._open = self._open, None
        self._admitted.clear()
        if state is not None and state.db is not self._database:
            await state.db.close()

    # -- what handlers use -----------------------------------------------------------------

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

    def observe(self, observer: GateObserver) -> None:
        """Tell ``observer`` what the gate does from now on."""
        self._observers.append(observer)

    def prepared(self, update: object) -> Prepared | None:
        """The prepared run of ``update`` if the gate admitted it, else ``None``."""
        admitted = self._find(update)
        return None if admitted is None else admitted.prepared

    async def check(self, config_type: str, identity: Identity) -> Decision:
        """Decide ``config_type`` for ``identity`` with the policy (observers are told)."""
        decision = await self._state().policy.check(config_type, identity)
        for observer in self._observers:
            observer.on_decision(config_type, decision)
        return decision

    def allows(self, config_type: str) -> filters.UpdateFilter:
        """A filter passing updates whose actor the policy allows ``config_type``.

        The gate decides it (once per admitted update, observers told) before your handlers
        run; a filter cannot answer, so pair it with a handler that explains a denial, or use
        :func:`requires`, which does.
        """
        self._allow_filters.add(config_type)
        return _Allows(self, config_type)

    def decided(self, update: object, config_type: str) -> Decision | None:
        """What the gate decided about ``config_type`` for ``update`` (see :meth:`allows`)."""
        admitted = self._find(update)
        return None if admitted is None else admitted.decisions.get(config_type)

    async def send(self, msg: OutboundMessage) -> None:
        """Send ``msg`` with the application's bot (chat, forum topic, reply)."""
        await send_outbound(self.application.bot, msg)

    # -- the gate itself -------------------------------------------------------------------

    def _find(self, update: object) -> _Admitted | None:
        if not isinstance(update, Update):
            return None
        admitted = self._admitted.get(update.update_id)
        # The very update object the gate saw: a stale or forged one with the same id is not.
        return admitted if admitted is not None and admitted.update is update else None

    def _remember(self, admitted: _Admitted) -> None:
        self._admitted[admitted.update.update_id] = admitted
        self._admitted.move_to_end(admitted.update.update_id)
        while len(self._admitted) > _REMEMBERED:
            self._admitted.popitem(last=False)

    async def _on_update(self, update: Update, context: AnyContext) -> None:
        """Group -1: the pipeline for ``update``; not admitted → ``ApplicationHandlerStop``."""
        if self._open is None:
            _log.error("ptb.update_dropped update=%d: actorscope is not open", update.update_id)
            raise ApplicationHandlerStop
        state = self._open
        username = context.bot.username or None
        ingress = inspect_update(
            update,
            agent_key=state.agent.key,
            bot_username=username,
            channel=self.config.name,
            ignore_bots=self.config.ignore_bots,
        )
        admitted = _Admitted(update)

        async def defer_command(command: WriterCommand, identity: Identity) -> None:
            if ingress.message is not None:  # answered by the writer CommandHandler
                admitted.writer = (command, identity, ingress.message)

        result = await state.pipeline.process(
            ingress,
            bot_username=username,
            run_command=defer_command,
            acknowledge=functools.partial(answer_click, update),
        )
        if result.outcome is Outcome.ADMITTED and result.message is not None:
            admitted.prepared = state.step.prepare(result.message)
        self._tell(update, result, admitted.prepared)
        if admitted.prepared is None and (admitted.writer is None or update.message is None):
            raise ApplicationHandlerStop  # ignored, or an edited writer command (not run)
        self._remember(admitted)
        if admitted.prepared is not None:
            if isinstance(context, ActorscopeContext):
                context.admit(admitted.prepared)
            for config_type in sorted(self._allow_filters):
                identity = admitted.prepared.identity
                admitted.decisions[config_type] = await self.check(config_type, identity)

    def _tell(self, update: Update, result: Ingress, prepared: Prepared | None) -> None:
        for observer in self._observers:
            observer.on_ingress(update, result, prepared)

    async def _writer_command(self, update: Update, context: AnyContext) -> None:
        """``/addwriter``, ``/removewriter``, ``/writers``: answer, then stop the update."""
        admitted = self._find(update)
        if admitted is None or admitted.writer is None or update.message is None:
            return  # the pipeline did not take it for a writer command (another bot's)
        command, who, message = admitted.writer
        text = await handle_telegram_writer_command(
            self._state().writers,
            command,
            update.message,
            who,
            bot=self.application.bot,
            agent_id=who.agent_id,
            tenant_id=who.tenant_id,
        )
        await self.send(reply_to(message, text))
        raise ApplicationHandlerStop


async def _admitted(message: InboundMessage) -> None:
    """The pipeline's publish step: an admitted message goes on to the application's handlers
    (the gate reads it from the pipeline's result)."""


class _GateHandler(TypeHandler[Update, Any, None]):
    """The gate's group -1 handler; :func:`gate` finds the gate through it."""

    __slots__ = ("gate",)

    def __init__(self, the_gate: Gate) -> None:
        super().__init__(Update, the_gate._on_update)
        self.gate = the_gate


class _Allows(filters.UpdateFilter):
    """``Gate.allows(config_type)``: the gate's decision for the update's actor."""

    __slots__ = ("_config_type", "_gate")

    def __init__(self, gate: Gate, config_type: str) -> None:
        super().__init__(name=f"actorscope.allows({config_type!r})")
        self._gate = gate
        self._config_type = config_type

    def filter(self, update: Update) -> bool:
        decision = self._gate.decided(update, self._config_type)
        return decision is not None and decision.allowed


class ActorscopeContext(
    CallbackContext[ExtBot[None], dict[Any, Any], dict[Any, Any], dict[Any, Any]]
):
    """A ``CallbackContext`` that also carries the admitted update's identity and request.

    Use it with ``ApplicationBuilder().context_types(context_types())``.
    """

    __slots__ = ("_prepared",)

    def __init__(
        self,
        application: Application[Any, Any, Any, Any, Any, Any],
        chat_id: int | None = None,
        user_id: int | None = None,
    ) -> None:
        super().__init__(application, chat_id=chat_id, user_id=user_id)
        self._prepared: Prepared | None = None

    def admit(self, prepared: Prepared) -> None:
        """Set by the gate for the update this context serves."""
        self._prepared = prepared

    @property
    def identity(self) -> Identity | None:
        """The identity of the admitted update (``None`` in jobs and error handlers)."""
        return None if self._prepared is None else self._prepared.identity

    @property
    def run_request(self) -> RunRequest | None:
        """The run request of the admitted update (``None`` in jobs and error handlers)."""
        return None if self._prepared is None else self._prepared.request


def context_types() -> ContextTypes[
    ActorscopeContext, dict[Any, Any], dict[Any, Any], dict[Any, Any]
]:
    """``ContextTypes`` with :class:`ActorscopeContext` (``ApplicationBuilder().context_types``)."""
    return ContextTypes(context=ActorscopeContext)


def install(
    application: PTBApp,
    *,
    database: str | os.PathLike[str] | Database,
    agent: str = "main",
    tenant: str = "default",
    owners: Collection[str] = (),
    roles: Mapping[str, str] | None = None,
    config: ChannelConfig | None = None,
    workspace: str | os.PathLike[str] = "workspace",
    strict: bool = False,
    shared_dedup: bool = False,
    signer: OriginSigner | None = None,
    writer_commands_group: int = 0,
) -> Gate:
    """Put actorscope into ``application`` (see the module documentation); return the gate.

    ``database``: a path, ``sqlite:///`` or ``postgresql://`` URL (opened at ``post_init``,
    closed at ``post_shutdown``) or an open :class:`~actorscope.store.Database` (left open).
    ``owners`` (sender ids) run with role ``owner`` and always manage writers; ``config`` is
    the channel configuration the pipeline admits by (default: Telegram, mention required in
    groups); ``shared_dedup`` claims each update in the database (several workers);
    ``workspace`` is the root of the files :class:`~actorscope.bots.BotServices` hands out.
    """
    if not isinstance(application, Application):
        raise ConfigError(
            f"install() takes a python-telegram-bot Application, got {type(application).__name__}"
        )
    if _installed(application) is not None:
        raise ConfigError("actorscope is already installed in this application")
    parse_agent_key(agent)
    if not isinstance(database, str | os.PathLike | Database):
        raise ConfigError("database must be a path, a database URL or an open Database")
    if isinstance(owners, str) or not all(isinstance(o, str) and o for o in owners):
        raise ConfigError("owners must be a list of sender ids as strings, e.g. ['42']")
    config = config if config is not None else ChannelConfig(platform="telegram")
    if config.platform != "telegram":
        raise ConfigError(f"a PTB application needs a telegram config, not {config.platform}")
    the_gate = Gate(
        application,
        database=database,
        agent=agent,
        tenant=tenant,
        owners=owners,
        roles=roles,
        config=config,
        workspace=workspace,
        strict=strict,
        shared_dedup=shared_dedup,
        signer=signer if signer is not None else OriginSigner(),
    )
    their_init, their_shutdown = application.post_init, application.post_shutdown

    async def post_init(app: PTBApp) -> None:
        await the_gate.open()
        if their_init is not None:
            await their_init(app)

    async def post_shutdown(app: PTBApp) -> None:
        try:
            if their_shutdown is not None:
                await their_shutdown(app)
        finally:
            await the_gate.close()

    application.post_init = post_init
    application.post_shutdown = post_shutdown
    application.add_handler(_GateHandler(the_gate), group=GATE_GROUP)
    for command in WriterCommand:
        application.add_handler(
            CommandHandler(
                command.value, the_gate._writer_command, filters=filters.UpdateType.MESSAGE
            ),
            group=writer_commands_group,
        )
    return the_gate


# -- what handlers use -----------------------------------------------------------------------


def gate(context: AnyContext | PTBApp) -> Gate:
    """The :class:`Gate` :func:`install` put into the application of ``context``."""
    application = context if isinstance(context, Application) else context.application
    found = _installed(application)
    if found is None:
        raise ConfigError("actorscope is not installed in this application: call install(app)")
    return found


def _installed(application: PTBApp) -> Gate | None:
    for handler in application.handlers.get(GATE_GROUP, ()):
        if isinstance(handler, _GateHandler):
            return handler.gate
    return None


def _prepared(update: object, context: AnyContext) -> Prepared:
    prepared = gate(context).prepared(update)
    if prepared is None:
        raise ConfigError("this update was not admitted by actorscope: it has no identity")
    return prepared


def identity(update: object, context: AnyContext) -> Identity:
    """The identity of the admitted ``update`` (scope, actor, role ...)."""
    return _prepared(update, context).identity


def run_request(update: object, context: AnyContext) -> RunRequest:
    """The run request of the admitted ``update`` (session key, content, metadata ...)."""
    return _prepared(update, context).request


def bound(callback: Callback[C, R]) -> Callback[C, R | None]:
    """Run ``callback`` with the update's identity, run info and bot services bound.

    An update the gate did not admit (it cannot reach here through the gate) runs nothing.
    """

    @functools.wraps(callback)
    async def run(update: Update, context: C) -> R | None:
        the_gate = gate(context)
        prepared = the_gate.prepared(update)
        if prepared is None:
            _log.warning("ptb.unbound update=%s: not admitted by the gate", update.update_id)
            return None
        with RunStep.bound(prepared), bind_services(the_gate.services):
            return await callback(update, context)

    return run


def requires(
    config_type: str, *, denied: Any = None
) -> Callable[[Callback[C, R]], Callback[C, Any]]:
    """Check the actor for ``config_type`` before ``callback``; answer a denial with its reason.

    The callback runs bound (see :func:`bound`) only when the policy allows; otherwise the
    chat gets ``denied: <reason>`` and the wrapper returns ``denied`` (for a
    ``ConversationHandler`` state, e.g. ``ConversationHandler.END``).
    """
    if not isinstance(config_type, str) or not config_type.strip():
        raise ConfigError("requires() takes a permission name such as 'file_writer'")

    def decorate(callback: Callback[C, R]) -> Callback[C, Any]:
        @functools.wraps(callback)
        async def run(update: Update, context: C) -> Any:
            the_gate = gate(context)
            prepared = the_gate.prepared(update)
            if prepared is None:
                _log.warning("ptb.denied update=%s: not admitted by the gate", update.update_id)
                return denied
            with RunStep.bound(prepared), bind_services(the_gate.services):
                decision = await the_gate.check(config_type, prepared.identity)
                if not decision.allowed:
                    await the_gate.send(reply_to(prepared.request, f"denied: {decision.reason}"))
                    return denied
                return await callback(update, context)

        return run

    return decorate


# -- offline ---------------------------------------------------------------------------------


def run_sandbox(
    build: Callable[[ApplicationBuilder[Any, Any, Any, Any, Any, Any]], PTBApp],
    *,
    lines: AsyncIterator[str] | None = None,
    out: Callable[[str], None] = print,
) -> int:
    """Run the application ``build`` makes against a Bot API emulator on 127.0.0.1, with the
    sandbox prompt on stdin (or ``lines``), until ``/quit`` or the end of the input.

    ``build`` gets an ``ApplicationBuilder`` pointed at the emulator (token set) and returns
    the application, :func:`install` done. Returns 0.
    """
    # Imported here: only the sandbox needs the emulator.
    import sys

    from actorscope.sandbox._telegram.console import read_lines

    asyncio.run(_sandbox(build, lines if lines is not None else read_lines(sys.stdin), out))
    return 0


class _ShowIgnored:
    def __init__(self, show: Callable[[int, str], None]) -> None:
        self._show = show

    def on_ingress(self, update: Update, result: Ingress, prepared: Prepared | None) -> None:
        if result.reason is not None:
            self._show(update.update_id, result.reason.value)

    def on_decision(self, config_type: str, decision: Decision) -> None:
        """Decisions are shown by the bot's answers."""


async def _bounded(waiting: Coroutine[Any, Any, None], late: str) -> None:
    try:
        await asyncio.wait_for(waiting, _SANDBOX_WAIT)
    except TimeoutError:
        _log.warning("sandbox: %s after %gs", late, _SANDBOX_WAIT)


async def _sandbox(
    build: Callable[[ApplicationBuilder[Any, Any, Any, Any, Any, Any]], PTBApp],
    lines: AsyncIterator[str],
    out: Callable[[str], None],
) -> None:
    from actorscope.sandbox import BotApiEmulator, BotApiServer
    from actorscope.sandbox._telegram.console import (
        HELP,
        SandboxConsole,
        populate_sandbox,
        run_console,
    )

    emulator = BotApiEmulator()
    populate_sandbox(emulator)
    async with BotApiServer(emulator) as server:
        base = server.base_url
        builder = (
            ApplicationBuilder()
            .token(emulator.token)
            .base_url(base)
            .base_file_url(base.replace("/bot", "/file/bot"))
        )
        app = build(builder)
        console = SandboxConsole(emulator, out)
        gate(app).observe(_ShowIgnored(console.show_ignored))
        out("PTB sandbox: Telegram Bot API emulator (offline)")
        out(f"bot: @{emulator.bot.username}")
        out(HELP)
        await app.initialize()
        try:
            if app.post_init is not None:
                await app.post_init(app)
            updater = app.updater
            if updater is None:
                raise ConfigError("the application has no updater: build it with an Updater")
            await updater.start_polling(
                poll_interval=0.0, timeout=1, allowed_updates=list(ALLOWED_UPDATES)
            )
            await app.start()
            await _bounded(emulator.queue.first_poll(), "the bot has not polled the emulator")
            await run_console(console, lines)
            await _bounded(emulator.queue.fetched(), "the bot left updates unfetched")
            await updater.stop()
            await app.stop()
        finally:
            if app.post_shutdown is not None:
                await app.post_shutdown(app)
            await app.shutdown()
            console.close()

"""python-telegram-bot, natively: actorscope inside your own ``Application``.

::

    app = ApplicationBuilder().token(TOKEN).build()
    install(app, database="bot.db", agent="notes", owners=["42"])
    app.add_handler(CommandHandler("note", note))  # note is decorated @requires("file_writer")
    app.run_polling()

:func:`install` changes nothing your handlers received until it denies. It adds to the
application:

* ``post_init`` / ``post_shutdown`` hooks (run before / after the ones the builder set): open
  the database (or take an open :class:`~actorscope.store.Database`, which stays open), get or
  create the agent (:meth:`~actorscope.agents.AgentRegistry.ensure`), start the database's
  change feed, so a grant revoked anywhere is seen within a second; close what was opened.
  Inside :meth:`~actorscope.integrations.Adoption.bind` (the testing kit, ``actorscope probe``)
  it opens the adoption's database, agent and workspace instead (:attr:`Gate.opened`).
* in group :attr:`Gate.GROUP` (-1) a blocking handler (whatever the application's
  ``Defaults``) that takes every Telegram update through the one ingress
  :class:`~actorscope.channels.Pipeline` (dedup, admission, shared claim) and the run step's
  :meth:`~actorscope.host.RunStep.prepare`, and attaches the identity. Every update goes on
  to your handlers, un-mentioned group text, channel posts and anonymous admins included,
  except duplicates and what your own settings refuse (a DM or group policy, and the options
  ``require_mention`` and ``drop_non_persons``): those raise ``ApplicationHandlerStop``. An
  update the gate cannot judge (its store failed) is stopped too. Button clicks reach your
  handlers unanswered (``await query.answer()`` works); the gate answers a click only when
  it stops it. Handlers in groups below -1 would run before this gate: do not add any.
* ``/addwriter``, ``/removewriter`` and ``/writers`` as ``CommandHandler`` s (group
  ``writer_commands_group``, default 0: call :func:`install` before adding your handlers)
  running the same writer-command code as ``actorscope run``; they answer and stop the update.

Your handlers reach the update's identity with :func:`identity_of` (or ``context.identity`` and
``context.run_request`` with :class:`ActorscopeContext`, see :meth:`ActorscopeContext.types`;
:meth:`Gate.prepared` gives an admitted update's prepared run). :func:`bound`
runs a callback with the identity, run info and :class:`~actorscope.bots.BotServices` bound
(``current_identity()``, ``BotServices.current()`` work inside it); :func:`requires` also checks
the actor with the policy first and answers a denial with its reason (fail-closed: non-persons,
empty and synthetic senders and updates without an identity are denied); :meth:`Gate.allows`
is the same check as a filter.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import warnings
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Collection, Coroutine, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, TypeVar, overload

from telegram import Update
from telegram.error import TelegramError
from telegram.ext import (
    Application,
    ApplicationBuilder,
    ApplicationHandlerStop,
    CallbackContext,
    CommandHandler,
    ContextTypes,
    ExtBot,
    Job,
    TypeHandler,
    filters,
)
from telegram.warnings import PTBUserWarning

from actorscope.channels import ChannelConfig, WriterCommand
from actorscope.channels.telegram import PLATFORM as TELEGRAM_PLATFORM
from actorscope.context import bind_identity, current_identity
from actorscope.errors import ConfigError
from actorscope.host import OutboundSender, Prepared, RunStep
from actorscope.identity import Identity
from actorscope.integrations._telegram_gate import (
    GateSettings,
    ShowIgnored,
    TelegramGate,
    WriterCall,
    gate_settings,
    sandbox_wait,
)
from actorscope.messages import OutboundMessage, RunRequest
from actorscope.permissions import Decision, LinkMode
from actorscope.propagation import OriginSigner, RunInfo
from actorscope.store import Database

__all__ = [
    "ActorscopeContext",
    "Gate",
    "bound",
    "gate",
    "identity_of",
    "install",
    "requires",
    "run_sandbox",
]

_log = logging.getLogger("actorscope.integrations.ptb")

#: Admitted updates remembered for their handlers (oldest dropped first).
_REMEMBERED = 4096

PTBApp = Application[Any, Any, Any, Any, Any, Any]
AnyContext = CallbackContext[Any, Any, Any, Any]
C = TypeVar("C", bound=AnyContext)
R = TypeVar("R")
Callback = Callable[[Update, C], Coroutine[Any, Any, R]]
#: A ``JobQueue`` callback: ``async def job(context)``.
JobCallback = Callable[[C], Coroutine[Any, Any, R]]


@dataclass(slots=True)
class _JobActor:
    """Who scheduled one job, and whether it can still run."""

    identity: Identity
    info: RunInfo | None
    #: Run times submitted to the executor and not over yet.
    runs: int = 0
    #: Off the schedule: forgotten once ``runs`` is 0.
    removed: bool = False


@dataclass(slots=True)
class _Admitted:
    """What the gate knows about one update it let through."""

    update: Update
    prepared: Prepared | None = None
    writer: WriterCall | None = None
    decisions: dict[str, Decision] = field(default_factory=dict)


class Gate(TelegramGate[Update], OutboundSender):
    """actorscope installed in one PTB ``Application`` (see :func:`install`)."""

    #: The handler group of the gate: before every group of yours (0 and up).
    GROUP: ClassVar[int] = -1
    framework = "ptb"
    not_open = (
        "run it with run_polling() / run_webhook(), or await application.post_init(application)"
        " first"
    )

    def __init__(self, application: PTBApp, settings: GateSettings) -> None:
        super().__init__(settings, log=_log)
        self.application = application
        self._admitted: OrderedDict[int, _Admitted] = OrderedDict()
        self._allow_filters: set[str] = set()
        #: Who scheduled each job (its APScheduler id): the identity and run bound when a
        #: gated handler (``requires`` / ``bound``) called the JobQueue. Kept while the job is
        #: scheduled or a run of it is under way, no longer.
        self._job_actors: dict[str, _JobActor] = {}

    # -- lifecycle -------------------------------------------------------------------------

    def _started(self) -> None:
        self._watch_jobs(add=True)

    def _stopping(self) -> None:
        """Forget admitted updates and the jobs' actors."""
        self._admitted.clear()
        self._watch_jobs(add=False)

    def _watch_jobs(self, *, add: bool) -> None:
        """Listen to (or stop listening to) the application's job scheduler: a job added
        while a gated handler runs is remembered with that handler's actor."""
        with warnings.catch_warnings():
            # PTB warns when the application has no JobQueue; a bot that set none up (or
            # lacks the job-queue extra) asked for no jobs, and the gate must not warn for it.
            warnings.simplefilter("ignore", PTBUserWarning)
            job_queue = self.application.job_queue
        if job_queue is None:
            return
        if add:
            # Imported here: APScheduler is there only with PTB's job-queue extra.
            from apscheduler import events as ev

            mask = (
                ev.EVENT_JOB_ADDED
                | ev.EVENT_JOB_REMOVED
                | ev.EVENT_ALL_JOBS_REMOVED
                | ev.EVENT_JOB_SUBMITTED
                | ev.EVENT_JOB_EXECUTED
                | ev.EVENT_JOB_ERROR
                | ev.EVENT_JOB_MISSED
            )
            job_queue.scheduler.add_listener(self._on_job_event, mask)
        else:
            job_queue.scheduler.remove_listener(self._on_job_event)
            self._job_actors.clear()

    def _on_job_event(self, event: Any) -> None:
        """APScheduler's listener, called where the job is added (the handler's context).

        A job's actor lives while the job is scheduled and while a run of it is under way:
        APScheduler removes a job that will not run again (``run_once``, a ``date`` trigger)
        as it submits its last run, before that run starts, so a removed job's actor goes
        only once its submitted runs are over (executed, failed or missed).
        """
        from apscheduler import events as ev

        if event.code == ev.EVENT_JOB_ADDED:
            who = current_identity()
            if who is None:
                # Scheduled where no handler bound an identity; it may replace (same id,
                # ``replace_existing``) a job a writer scheduled: it does not inherit them.
                self._job_actors.pop(event.job_id, None)
            else:
                self._job_actors[event.job_id] = _JobActor(who, RunInfo.current())
            return
        if event.code == ev.EVENT_ALL_JOBS_REMOVED:
            for job_id in list(self._job_actors):
                self._removed(job_id)
            return
        entry = self._job_actors.get(event.job_id)
        if entry is None:
            return
        if event.code == ev.EVENT_JOB_SUBMITTED:
            entry.runs += len(event.scheduled_run_times)
        elif event.code == ev.EVENT_JOB_REMOVED:
            self._removed(event.job_id)
        else:  # one submitted run time is over: executed, raised or missed
            entry.runs = max(entry.runs - 1, 0)
            self._forget_if_over(event.job_id, entry)

    def _removed(self, job_id: str) -> None:
        """The job ``job_id`` is off the schedule: forget its actor once no run is due.

        Its last run's submission is announced only after the removal, in the same scheduler
        pass (on the event loop), so the check waits for the loop's next turn; a removal off
        the loop (no run can be pending for it there) forgets at once.
        """
        entry = self._job_actors.get(job_id)
        if entry is None:
            return
        entry.removed = True
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._forget_if_over(job_id, entry)
            return
        loop.call_soon(self._forget_if_over, job_id, entry)

    def _forget_if_over(self, job_id: str, entry: _JobActor) -> None:
        if entry.removed and entry.runs == 0 and self._job_actors.get(job_id) is entry:
            del self._job_actors[job_id]

    def job_actor(self, job: object) -> Identity | None:
        """The identity of the gated handler that scheduled ``job`` (a PTB ``Job``), else
        ``None`` (scheduled at start, or from a handler that bound no identity, or a job
        removed whose last run is over)."""
        found = self._job_entry(job)
        return None if found is None else found.identity

    def _job_entry(self, job: object) -> _JobActor | None:
        if not isinstance(job, Job):
            return None
        return self._job_actors.get(job.job.id)

    # -- what handlers use -----------------------------------------------------------------

    def prepared(self, update: object) -> Prepared | None:
        """The prepared run of ``update`` if the gate admitted it, else ``None``."""
        admitted = self._find(update)
        return None if admitted is None else admitted.prepared

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
        await TELEGRAM_PLATFORM.send_outbound(self.application.bot, msg)

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
        """Group -1: the pipeline for ``update``; stopped → ``ApplicationHandlerStop``."""
        judged = await self.judge(update, update, context.bot.username or None)
        if judged.refusal is not None:
            await _refuse_click(update, judged.refusal)
        if judged.answer is not None:
            await self.send(judged.answer)
        if judged.stopped:
            raise ApplicationHandlerStop
        if judged.writer is None and judged.prepared is None:
            return  # no identity to attach: it goes on, and ``requires`` denies it
        admitted = _Admitted(update, judged.prepared, judged.writer)
        self._remember(admitted)
        if admitted.prepared is None:
            return  # a writer command: answered by the writer CommandHandler
        if isinstance(context, ActorscopeContext):
            context.admit(admitted.prepared)
        for config_type in sorted(self._allow_filters):
            identity = admitted.prepared.identity
            admitted.decisions[config_type] = await self.check(config_type, identity)

    async def _writer_command(self, update: Update, context: AnyContext) -> None:
        """``/addwriter``, ``/removewriter``, ``/writers``: answer, then stop the update."""
        admitted = self._find(update)
        if admitted is None or admitted.writer is None or update.message is None:
            return  # the pipeline did not take it for a writer command (another bot's)
        chat_admin = functools.partial(TELEGRAM_PLATFORM.is_chat_admin, self.application.bot)
        await self.send(await self.writer_answer(admitted.writer, update.message, chat_admin))
        raise ApplicationHandlerStop


async def _refuse_click(update: Update, text: str) -> bool:
    """Answer the click ``update`` carries with ``text`` as an alert; False if it is none."""
    query = update.callback_query
    if query is None:
        return False
    try:
        await query.answer(text, show_alert=True)
    except TelegramError as exc:
        _log.warning("ptb.answer_callback_query failed: %s", exc)
    return True


class _GateHandler(TypeHandler[Update, Any, None]):
    """The gate's group -1 handler; :func:`gate` finds the gate through it."""

    __slots__ = ("gate",)

    def __init__(self, the_gate: Gate) -> None:
        # block=True whatever the application's Defaults: a non-blocking gate would run as a
        # task beside the handlers, and its stop would stop nothing.
        super().__init__(Update, the_gate._on_update, block=True)
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

    Use it with ``ApplicationBuilder().context_types(ActorscopeContext.types())``.
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

    @classmethod
    def types(
        cls,
    ) -> ContextTypes[ActorscopeContext, dict[Any, Any], dict[Any, Any], dict[Any, Any]]:
        """``ContextTypes`` with this context, for ``ApplicationBuilder().context_types(...)``."""
        return ContextTypes(context=cls)


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
    require_mention: bool | None = None,
    drop_non_persons: bool | None = None,
    links: str = "off",
) -> Gate:
    """Put actorscope into ``application`` (see the module documentation); return the gate.

    ``database``: a path, ``sqlite:///`` or ``postgresql://`` URL (opened at ``post_init``,
    closed at ``post_shutdown``) or an open :class:`~actorscope.store.Database` (left open).
    ``owners`` (sender ids) run with role ``owner`` and always manage writers; ``config`` is
    the channel configuration the pipeline admits by (policies, allowlists, group overrides);
    ``shared_dedup`` claims each update in the database (several workers); ``workspace`` is
    the root of the files :class:`~actorscope.bots.BotServices` hands out.

    The gate stops only duplicates and what these settings refuse. Two options, off unless
    given here (or set explicitly in ``config``): ``require_mention`` stops group messages
    not addressed to the bot (no ``@mention``, reply or command), as ``actorscope run`` does;
    ``drop_non_persons`` stops anonymous admins, channel posts, posts as a channel and bots.
    ``links`` (``"off"``, ``"dm"`` or ``"grants"``) is ``[identity] links``: what linked
    accounts change; with either mode the gate answers ``/link`` and ``/unlink`` itself.
    """
    if not isinstance(application, Application):
        raise ConfigError(
            f"install() takes a python-telegram-bot Application, got {type(application).__name__}"
        )
    if _installed(application) is not None:
        raise ConfigError("actorscope is already installed in this application")
    settings = gate_settings(
        "a PTB application",
        database=database,
        agent=agent,
        tenant=tenant,
        owners=owners,
        roles=roles,
        config=config,
        workspace=workspace,
        strict=strict,
        shared_dedup=shared_dedup,
        signer=signer,
        require_mention=require_mention,
        drop_non_persons=drop_non_persons,
        links=links,
    )
    if settings.links is not LinkMode.OFF:
        _refuse_own_link_handlers(application, settings.links)
    the_gate = Gate(application, settings)
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
    application.add_handler(_GateHandler(the_gate), group=Gate.GROUP)
    for command in WriterCommand:
        application.add_handler(
            CommandHandler(
                command.value,
                the_gate._writer_command,
                filters=filters.UpdateType.MESSAGE,
                block=True,  # its stop must hold under Defaults(block=False) too
            ),
            group=writer_commands_group,
        )
    return the_gate


def _refuse_own_link_handlers(application: PTBApp, links: LinkMode) -> None:
    """A ConfigError when the application has a CommandHandler for /link or /unlink: with links
    on the gate answers them, and the application's handler would never run. (A handler added
    after install() is not seen here: it never runs either.)"""
    for handlers in application.handlers.values():
        for handler in handlers:
            if not isinstance(handler, CommandHandler):
                continue
            for name in ("link", "unlink"):
                if name in handler.commands:
                    raise ConfigError(
                        f"install(links={links.value!r}) answers /{name} itself, but the "
                        f"application has a CommandHandler for /{name} of its own: rename it, "
                        "or keep links off"
                    )


# -- what handlers use -----------------------------------------------------------------------


def gate(context: AnyContext | PTBApp) -> Gate:
    """The :class:`Gate` :func:`install` put into the application of ``context``."""
    application = context if isinstance(context, Application) else context.application
    found = _installed(application)
    if found is None:
        raise ConfigError("actorscope is not installed in this application: call install(app)")
    return found


def _installed(application: PTBApp) -> Gate | None:
    for handler in application.handlers.get(Gate.GROUP, ()):
        if isinstance(handler, _GateHandler):
            return handler.gate
    return None


def _prepared(update: object, context: AnyContext) -> Prepared:
    prepared = gate(context).prepared(update)
    if prepared is None:
        raise ConfigError("this update was not admitted by actorscope: it has no identity")
    return prepared


def identity_of(update: object, context: AnyContext) -> Identity:
    """The identity of the admitted ``update`` (scope, actor, role ...)."""
    return _prepared(update, context).identity


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
        with RunStep.bound(prepared), the_gate.services.bind():
            return await callback(update, context)

    return run


class _Requires(Protocol):
    """What :func:`requires` returns: a decorator for handler and job callbacks."""

    @overload
    def __call__(self, callback: Callback[C, R]) -> Callback[C, Any]: ...

    @overload
    def __call__(self, callback: JobCallback[C, R]) -> JobCallback[C, Any]: ...


def requires(config_type: str, *, denied: Any = None) -> _Requires:
    """Check the actor for ``config_type`` before ``callback``; answer a denial with its reason.

    On a handler callback ``(update, context)``: the callback runs bound (see :func:`bound`)
    only when the policy allows; otherwise the chat gets ``denied: <reason>`` (a button click
    gets it as an alert) and the wrapper returns ``denied`` (for a ``ConversationHandler``
    state, e.g. ``ConversationHandler.END``). An update without an identity (the gate could
    name no person: an inline query, a member update ...) is denied too.

    On a ``JobQueue`` callback ``(context)``: the actor is whoever scheduled the job from a
    gated handler (``requires`` / ``bound``), judged again each time the job runs, so a job a
    revoked writer scheduled stops; a job scheduled elsewhere has no actor and is denied.
    A denied job run is logged at INFO and returns ``denied``.
    """
    if not isinstance(config_type, str) or not config_type.strip():
        raise ConfigError("requires() takes a permission name such as 'file_writer'")

    async def as_handler(callback: Callback[C, R], update: Update, context: C) -> Any:
        the_gate = gate(context)
        prepared = the_gate.prepared(update)
        decision = await the_gate.decide(config_type, prepared, f"update={update.update_id}")
        if decision is None or prepared is None:
            await _refuse_click(update, "denied: no identity")
            return denied
        with RunStep.bound(prepared), the_gate.services.bind():
            if not decision.allowed:
                text = f"denied: {decision.reason}"
                if not await _refuse_click(update, text):
                    await the_gate.send(OutboundMessage.reply_to(prepared.request, text))
                return denied
            return await callback(update, context)

    async def as_job(callback: JobCallback[C, R], context: C) -> Any:
        the_gate = gate(context)
        entry = the_gate._job_entry(context.job)
        name = (context.job.name if context.job is not None else None) or "?"
        if entry is None:
            _log.info(
                "ptb.denied job=%s %s: it has no actor (not scheduled from a gated handler)",
                name,
                config_type,
            )
            return denied
        who, info = entry.identity, entry.info
        with bind_identity(who), (info or RunInfo()).bind(), the_gate.services.bind():
            decision = await the_gate.check(config_type, who)
            if not decision.allowed:
                the_gate.log_denial(config_type, decision, job=name)
                return denied
            return await callback(context)

    def decorate(callback: Any) -> Any:
        @functools.wraps(callback)
        async def run(*args: Any) -> Any:
            if len(args) == 1:
                return await as_job(callback, args[0])
            update, context = args
            return await as_handler(callback, update, context)

        return run

    return decorate  # one function serves both overloads: it tells them apart by arity


# -- offline ---------------------------------------------------------------------------------


def run_sandbox(
    build: Callable[[ApplicationBuilder[Any, Any, Any, Any, Any, Any]], PTBApp],
    *,
    lines: AsyncIterator[str] | None = None,
    out: Callable[[str], None] = print,
) -> int:
    """Run the application ``build`` makes against a Bot API emulator on 127.0.0.1, with the
    sandbox prompt on stdin (or ``lines``), until ``/quit``, the end of the input or Ctrl-C.

    ``build`` gets an ``ApplicationBuilder`` pointed at the emulator (token set) and returns
    the application, :func:`install` done. Returns 0; Ctrl-C stops the bot as ``/quit`` does
    (``post_shutdown`` runs, the database is closed) and says ``stopped``.
    """
    # Imported here: only the sandbox needs the emulator.
    import sys

    from actorscope._aio import read_lines

    try:
        asyncio.run(_sandbox(build, lines if lines is not None else read_lines(sys.stdin), out))
    except KeyboardInterrupt:  # Ctrl-C: asyncio.run cancelled the sandbox, which cleaned up
        out("stopped")
    return 0


async def _sandbox(
    build: Callable[[ApplicationBuilder[Any, Any, Any, Any, Any, Any]], PTBApp],
    lines: AsyncIterator[str],
    out: Callable[[str], None],
) -> None:
    from actorscope.sandbox import BotApiEmulator, BotApiServer

    emulator = BotApiEmulator()
    emulator.populate()
    async with BotApiServer(emulator) as server:
        base = server.base_url
        builder = (
            ApplicationBuilder()
            .token(emulator.token)
            .base_url(base)
            .base_file_url(base.replace("/bot", "/file/bot"))
        )
        app = build(builder)
        console = server.console(out)
        the_gate = gate(app)
        the_gate.observe(ShowIgnored(the_gate, console.show_ignored))
        out("PTB sandbox: Telegram Bot API emulator (offline)")
        out(f"bot: @{emulator.bot.username}")
        out(console.help_text())
        await app.initialize()
        try:
            if app.post_init is not None:
                await app.post_init(app)
            updater = app.updater
            if updater is None:
                raise ConfigError("the application has no updater: build it with an Updater")
            await updater.start_polling(
                poll_interval=0.0,
                timeout=1,
                allowed_updates=list(TELEGRAM_PLATFORM.allowed_updates),
            )
            await app.start()
            await sandbox_wait(
                emulator.queue.first_poll(), "the bot has not polled the emulator", _log
            )
            await console.run(lines)
            await sandbox_wait(emulator.queue.fetched(), "the bot left updates unfetched", _log)
        finally:
            # Also when Ctrl-C cancelled the prompt: stop what runs before shutting down.
            if app.updater is not None and app.updater.running:
                await app.updater.stop()
            if app.running:
                await app.stop()
            if app.post_shutdown is not None:
                await app.post_shutdown(app)
            await app.shutdown()
            console.close()

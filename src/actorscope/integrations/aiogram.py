"""aiogram 3, natively: actorscope inside your own ``Dispatcher`` (extra ``aiogram``).

::

    dp = Dispatcher()
    install(dp, database="bot.db", agent="notes", owners=["42"])

    @router.message(Command("note"))
    @requires("file_writer")
    async def note(message: Message, identity: Identity) -> None:
        ...

    dp.include_router(router)
    await dp.start_polling(bot)

:func:`install` changes nothing your handlers received until it denies. It adds to the
dispatcher:

* an outer middleware on ``dp.update`` (after aiogram's own: errors, user context, FSM) that
  takes every update through the one ingress :class:`~actorscope.channels.Pipeline` (dedup,
  admission, shared claim) and the run step's :meth:`~actorscope.host.RunStep.prepare`, the
  same gate as python-telegram-bot's :func:`~actorscope.integrations.ptb.install`. Every
  update goes on to your routers, un-mentioned group text, channel posts and anonymous admins
  included, except duplicates and what your own settings refuse (a DM or group policy, and
  the options ``require_mention`` and ``drop_non_persons``); an update the gate cannot judge
  (its store failed) is stopped too. The handler data gets ``identity``
  (:class:`~actorscope.identity.Identity`, or ``None`` for an update that names no person:
  an inline query, a member update ...) and ``run_request``, so a handler may take
  ``identity: Identity``; while your handlers run the identity, the run info and the
  :class:`~actorscope.bots.BotServices` are bound (``current_identity()``,
  ``BotServices.current()``). Button clicks reach your handlers unanswered
  (``await callback.answer()`` works); the gate answers a click only when it stops it.
* a startup handler (first of the dispatcher's) that opens the database (or takes an open
  :class:`~actorscope.store.Database`, which stays open), gets or creates the agent and
  starts the change feed, so a grant revoked anywhere is seen within a second; at shutdown
  (after the dispatcher's own shutdown handlers) it closes what it opened. Inside
  :meth:`~actorscope.integrations.Adoption.bind` (the testing kit, ``actorscope probe``) it opens
  the adoption's database, agent and workspace instead (:attr:`Gate.opened`).
* a router of its own (``actorscope``) with ``/addwriter``, ``/removewriter`` and
  ``/writers``, running the same writer-command code as ``actorscope run``. A writer command
  goes straight to it, whatever catch-all handler your dispatcher has, and to no other
  handler.
* an inner middleware on each of the dispatcher's event observers, which reads the handler
  flag ``requires`` (see :func:`requires`); it reaches the handlers of every router below
  the dispatcher, nested ones included.

:func:`requires` gates a handler, as a decorator or as a handler flag
(``@router.message(Command("note"), flags={"requires": "file_writer"})``): the policy
decides the permission for the update's actor before the handler runs; a denied message is
answered ``denied: <reason>``, a denied click with the reason as an alert (fail-closed:
non-persons, empty and synthetic senders and updates without an identity are denied). It
works in nested routers and in FSM states alike.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, cast

from aiogram import Bot, Dispatcher, Router
from aiogram.dispatcher.event.bases import UNHANDLED, SkipHandler
from aiogram.dispatcher.event.handler import CallableObject, HandlerObject
from aiogram.dispatcher.flags import extract_flags_from_object
from aiogram.exceptions import AiogramError, TelegramAPIError
from aiogram.filters import Command
from aiogram.types import Message, ReplyParameters, TelegramObject, Update
from telegram import Update as ParsedUpdate

from actorscope.channels import ChannelConfig, WriterCommand
from actorscope.channels.telegram import PLATFORM as TELEGRAM_PLATFORM
from actorscope.errors import ConfigError, ReplyError
from actorscope.host import Prepared, RunStep
from actorscope.integrations._telegram_gate import (
    GateSettings,
    ShowIgnored,
    TelegramGate,
    WriterCall,
    gate_settings,
    sandbox_wait,
)
from actorscope.messages import OutboundMessage
from actorscope.permissions import ConfigType, Decision
from actorscope.propagation import OriginSigner
from actorscope.store import Database

__all__ = [
    "Gate",
    "gate",
    "install",
    "requires",
    "run_sandbox",
]

_log = logging.getLogger("actorscope.integrations.aiogram")

#: The handler flag :func:`requires` reads and sets: a permission name or a list of them.
_FLAG = "requires"
#: The permissions a handler may require.
_PERMISSIONS = tuple(sorted(str(c) for c in ConfigType if c is not ConfigType.ANY))
#: Where the gate keeps what it knows about the update in the handler data.
_TURN = "actorscope_turn"
#: The writer commands' router's name.
_ROUTER = "actorscope"
H = TypeVar("H")
_Next = Callable[[TelegramObject, dict[str, Any]], Awaitable[Any]]


@dataclass(slots=True)
class _Turn:
    """What the gate knows about one update it let through (in the handler data)."""

    gate: Gate
    update: Update
    parsed: ParsedUpdate
    prepared: Prepared | None
    writer: WriterCall | None
    decisions: dict[str, Decision | None] = field(default_factory=dict)


class Gate(TelegramGate[Update]):
    """actorscope installed in one aiogram ``Dispatcher`` (see :func:`install`)."""

    framework = "aiogram"
    not_open = "start it with dp.start_polling(bot) (or emit the dispatcher's startup) first"

    def __init__(self, dispatcher: Dispatcher, settings: GateSettings) -> None:
        super().__init__(settings, log=_log)
        self.dispatcher = dispatcher
        #: The router of the writer commands (included into the dispatcher by install()).
        self.router = Router(name=_ROUTER)
        for command in WriterCommand:
            self.router.message(Command(command.value))(self._writer_command)

    # -- lifecycle: the dispatcher's startup and shutdown ---------------------------------

    async def _on_startup(self) -> None:
        """Open the gate; close it at shutdown, after the dispatcher's own shutdown handlers."""
        await self.open()
        shutdown = self.dispatcher.shutdown
        if not any(h.callback == self._on_shutdown for h in shutdown.handlers):
            shutdown.register(self._on_shutdown)

    async def _on_shutdown(self) -> None:
        await self.close()

    # -- the update middleware -------------------------------------------------------------

    async def _on_update(self, handler: _Next, event: TelegramObject, data: dict[str, Any]) -> Any:
        """The outer middleware of ``dp.update``: the pipeline, then the routers or a stop."""
        if not isinstance(event, Update):
            return await handler(event, data)
        bot = data.get("bot")
        if not isinstance(bot, Bot):
            raise ConfigError("an aiogram update without its bot: feed it with dp.feed_update")
        if not self.is_open:
            _log.error("aiogram.update_dropped update=%s: actorscope is not open", event.update_id)
            return UNHANDLED
        found = await self._read(event, bot)
        if found is None:
            return UNHANDLED  # logged: what the gate cannot read it does not hand on
        parsed, username = found
        judged = await self.judge(event, parsed, username)
        if judged.refusal is not None:
            await _refuse_click(bot, event, judged.refusal)
        if judged.answer is not None:
            await _send(bot, judged.answer)
        if judged.stopped:
            return UNHANDLED
        turn = _Turn(self, event, parsed, judged.prepared, judged.writer)
        data[_TURN] = turn
        if turn.writer is not None and event.message is not None:
            # Straight to the writer router: no catch-all of the bot takes it first.
            return await self.router.propagate_event(
                update_type="message", event=event.message, **{**data, "event_update": event}
            )
        prepared = turn.prepared
        data["identity"] = None if prepared is None else prepared.identity
        data["run_request"] = None if prepared is None else prepared.request
        if prepared is None:
            return await handler(event, data)  # no identity: ``requires`` denies it
        with RunStep.bound(prepared), self.services.bind():
            return await handler(event, data)

    async def _read(self, event: Update, bot: Bot) -> tuple[ParsedUpdate, str | None] | None:
        """``event`` as the normaliser reads it (its JSON, what Telegram sent) and the bot's
        username; ``None`` (logged) when either cannot be had."""
        try:
            payload = event.model_dump(mode="json", by_alias=True, exclude_none=True)
            parsed = ParsedUpdate.de_json(payload, None)
            me = await bot.me()
        except Exception as exc:  # an update the gate cannot read never reaches a handler
            _log.error(
                "aiogram.update_stopped update=%s: the gate could not read it: %s: %s",
                event.update_id,
                type(exc).__name__,
                exc,
            )
            return None
        return parsed, me.username

    async def _flagged(self, handler: _Next, event: TelegramObject, data: dict[str, Any]) -> Any:
        """The inner middleware of the dispatcher's observers: a handler flagged ``requires``
        runs only when the actor is allowed each permission it names."""
        for config_type in _required(data.get("handler")):
            if not await _allowed(config_type, data):
                return None  # answered: the denied handler does not run
        return await handler(event, data)

    async def _writer_command(self, message: Message, bot: Bot, **data: Any) -> None:
        """``/addwriter``, ``/removewriter``, ``/writers``: the pipeline's writer command."""
        turn = data.get(_TURN)
        if not isinstance(turn, _Turn) or turn.writer is None or turn.parsed.message is None:
            raise SkipHandler  # not a writer command of this bot's (``/addwriter@other``)

        async def status_of(chat_id: int, user_id: int) -> str:
            return str((await bot.get_chat_member(chat_id, user_id)).status)

        # Unknown (the call failed, or its answer did not parse) means "not an admin".
        chat_admin = functools.partial(
            TELEGRAM_PLATFORM.asks_chat_admin, status_of, errors=(AiogramError,)
        )
        await _send(bot, await self.writer_answer(turn.writer, turn.parsed.message, chat_admin))

    # -- what tools use --------------------------------------------------------------------

    @classmethod
    def of(cls, dispatcher: Dispatcher) -> Gate | None:
        """The gate :func:`install` put into ``dispatcher``, or ``None``."""
        for middleware in dispatcher.update.outer_middleware:
            owner = getattr(middleware, "__self__", None)
            if isinstance(owner, cls) and owner.dispatcher is dispatcher:
                return owner
        return None


def gate(dispatcher: Dispatcher) -> Gate:
    """The :class:`Gate` :func:`install` put into ``dispatcher``."""
    found = Gate.of(dispatcher)
    if found is None:
        raise ConfigError("actorscope is not installed in this dispatcher: call install(dp)")
    return found


def install(
    dispatcher: Dispatcher,
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
    require_mention: bool | None = None,
    drop_non_persons: bool | None = None,
    links: str = "off",
) -> Gate:
    """Put actorscope into ``dispatcher`` (see the module documentation); return the gate.

    ``database``: a path, ``sqlite:///`` or ``postgresql://`` URL (opened at startup, closed
    at shutdown) or an open :class:`~actorscope.store.Database` (left open). ``owners``
    (sender ids) run with role ``owner`` and always manage writers; ``config`` is the channel
    configuration the pipeline admits by (policies, allowlists, group overrides);
    ``shared_dedup`` claims each update in the database (several workers); ``workspace`` is
    the root of the files :class:`~actorscope.bots.BotServices` hands out.

    The gate stops only duplicates and what these settings refuse. Two options, off unless
    given here (or set explicitly in ``config``): ``require_mention`` stops group messages
    not addressed to the bot (no ``@mention``, reply or command), as ``actorscope run`` does;
    ``drop_non_persons`` stops anonymous admins, channel posts, posts as a channel and bots.
    ``links`` (``"off"``, ``"dm"`` or ``"grants"``) is ``[identity] links``: what linked
    accounts change; with either mode the gate answers ``/link`` and ``/unlink`` itself.
    """
    if not isinstance(dispatcher, Dispatcher):
        raise ConfigError(f"install() takes an aiogram Dispatcher, got {type(dispatcher).__name__}")
    if Gate.of(dispatcher) is not None:
        raise ConfigError("actorscope is already installed in this dispatcher")
    settings = gate_settings(
        "an aiogram dispatcher",
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
    the_gate = Gate(dispatcher, settings)
    # First of the startup handlers: the dispatcher's and its routers' may use the services.
    dispatcher.startup.handlers.insert(0, HandlerObject(callback=the_gate._on_startup))
    dispatcher.update.outer_middleware(the_gate._on_update)
    for name, observer in dispatcher.observers.items():
        if name not in ("update", "error"):
            observer.middleware(the_gate._flagged)
    dispatcher.include_router(the_gate.router)
    return the_gate


# -- requires ----------------------------------------------------------------------------------


def _permission(value: object) -> str:
    if not isinstance(value, str) or value not in _PERMISSIONS:
        raise ConfigError(
            f"requires takes a permission name ({', '.join(_PERMISSIONS)}), got {value!r}"
        )
    return value


def _required(handler: object) -> tuple[str, ...]:
    """The permissions a handler's ``requires`` flag names: the flags aiogram read when it was
    registered, and its callback's own (``@requires`` put above the router's decorator)."""
    if not isinstance(handler, HandlerObject):
        return ()
    values: list[object] = []
    for flags in (handler.flags, extract_flags_from_object(inspect.unwrap(handler.callback))):
        value = flags.get(_FLAG)
        if value is None:
            continue
        if isinstance(value, str):
            values.append(value)
        elif isinstance(value, Sequence):
            values.extend(value)
        else:
            values.append(value)
    return tuple(dict.fromkeys(_permission(v) for v in values))


def _turn_of(data: Mapping[str, Any]) -> _Turn:
    turn = data.get(_TURN)
    if not isinstance(turn, _Turn):
        raise ConfigError(
            "requires: this update did not pass actorscope's gate: call install(dp) on the "
            "dispatcher that runs this router"
        )
    return turn


async def _allowed(config_type: str, data: Mapping[str, Any]) -> bool:
    """Whether the update's actor may ``config_type`` (decided once per update); a denial is
    answered: ``denied: <reason>`` as a reply, or as an alert for a click."""
    turn = _turn_of(data)
    if config_type in turn.decisions:
        decided = turn.decisions[config_type]
        return decided is not None and decided.allowed
    the_gate = turn.gate
    decision = await the_gate.decide(config_type, turn.prepared, f"update={turn.update.update_id}")
    turn.decisions[config_type] = decision
    bot = data.get("bot")
    if decision is None or turn.prepared is None:
        if isinstance(bot, Bot):
            await _refuse_click(bot, turn.update, "denied: no identity")
        return False
    if decision.allowed:
        return True
    text = f"denied: {decision.reason}"
    if isinstance(bot, Bot) and not await _refuse_click(bot, turn.update, text):
        await _send(bot, OutboundMessage.reply_to(turn.prepared.request, text))
    return False


class _Requires(Protocol):
    """What :func:`requires` returns: a decorator for handler functions."""

    def __call__(self, callback: H) -> H: ...


def requires(config_type: str) -> _Requires:
    """Gate a handler: ``config_type`` (``file_writer``, ``cron`` ...) is decided for the
    update's actor before the handler runs.

    Put it under the router's decorator (``@router.message(Command("note"))`` then
    ``@requires("file_writer")``); above it works too. The handler keeps its signature
    (aiogram still hands it the data it asks for, ``identity`` included) and gets the flag
    ``requires``, which the gate reads: ``flags={"requires": "file_writer"}`` on the
    router's decorator is the same gate. Denied, the chat gets ``denied: <reason>`` (a click
    gets it as an alert) and the handler does not run; in an FSM state the state stays as it
    was (the step did not happen). An update without an identity (an inline query, a member
    update ...) is denied too. In a dispatcher without
    :func:`install` a gated handler never runs: it raises :class:`ConfigError`.
    """
    _permission(config_type)

    def decorate(callback: H) -> H:
        flags = extract_flags_from_object(callback)
        before = flags.get(_FLAG)
        named = (before,) if isinstance(before, str) else tuple(before or ())
        marked = {**flags, _FLAG: (*named, config_type)}
        # The flag goes on the function itself too (as aiogram's ``flags.*`` decorators do):
        # registered before this decorator ran, it is still gated.
        cast(Any, callback).aiogram_flag = marked
        if inspect.isclass(callback):
            return callback  # a class-based handler: its flag is the gate
        inner = CallableObject(cast(Callable[..., Any], callback))

        async def gated(event: TelegramObject, **data: Any) -> Any:
            if not await _allowed(config_type, data):
                return None  # answered: the handler does not run
            return await inner.call(event, **data)

        for attribute in ("__module__", "__name__", "__qualname__", "__doc__"):
            setattr(gated, attribute, getattr(callback, attribute, None))
        cast(Any, gated).aiogram_flag = dict(marked)
        return cast(H, gated)

    return decorate


# -- sending -----------------------------------------------------------------------------------


async def _send(bot: Bot, msg: OutboundMessage) -> None:
    """Send the gate's own text answer (a denial, a writer command's answer) with ``bot``: to
    its chat and forum topic, replying when possible, in parts (as every Telegram sender of
    actorscope does: ``reply_route``, ``text_parts`` of Telegram's ``PLATFORM``)."""
    if msg.media or msg.buttons:
        raise ReplyError("the aiogram gate sends text answers only")
    route = TELEGRAM_PLATFORM.reply_route(msg)
    reply = None
    if route.reply_to is not None:
        reply = ReplyParameters(message_id=route.reply_to, allow_sending_without_reply=True)
    for index, part in enumerate(TELEGRAM_PLATFORM.text_parts(msg.content)):
        await bot.send_message(
            chat_id=route.chat,
            text=part,
            parse_mode=route.parse_mode,
            message_thread_id=route.thread,
            reply_parameters=reply if index == 0 else None,
        )


async def _refuse_click(bot: Bot, update: Update, text: str) -> bool:
    """Answer the click ``update`` carries with ``text`` as an alert; False if it is none."""
    query = update.callback_query
    if query is None:
        return False
    try:
        await bot.answer_callback_query(query.id, text=text, show_alert=True)
    except TelegramAPIError as exc:
        _log.warning("aiogram.answer_callback_query failed: %s", exc)
    return True


# -- offline -----------------------------------------------------------------------------------


def run_sandbox(
    build: Callable[[], Dispatcher],
    *,
    lines: AsyncIterator[str] | None = None,
    out: Callable[[str], None] = print,
) -> int:
    """Run the dispatcher ``build`` makes against a Bot API emulator on 127.0.0.1, with the
    sandbox prompt on stdin (or ``lines``), until ``/quit``, the end of the input or Ctrl-C.

    ``build()`` returns the dispatcher, :func:`install` done; the sandbox makes the ``Bot``
    (an aiogram session pointed at the emulator) and polls with it, one update at a time.
    Returns 0; Ctrl-C stops the bot as ``/quit`` does (the shutdown handlers run, the
    database is closed) and says ``stopped``.
    """
    # Imported here: only the sandbox needs the emulator.
    import sys

    from actorscope._aio import read_lines

    try:
        asyncio.run(_sandbox(build, lines if lines is not None else read_lines(sys.stdin), out))
    except KeyboardInterrupt:  # Ctrl-C: asyncio.run cancelled the sandbox, which cleaned up
        out("stopped")
    return 0


def _emulator_bot(token: str, root_url: str) -> Bot:
    """An aiogram ``Bot`` whose session talks to the Bot API emulator at ``root_url``."""
    # Imported here: the session only matters offline.
    from aiogram.client.session.aiohttp import AiohttpSession
    from aiogram.client.telegram import TelegramAPIServer

    return Bot(token, session=AiohttpSession(api=TelegramAPIServer.from_base(root_url)))


async def _sandbox(
    build: Callable[[], Dispatcher], lines: AsyncIterator[str], out: Callable[[str], None]
) -> None:
    from actorscope.sandbox import BotApiEmulator, BotApiServer

    emulator = BotApiEmulator()
    emulator.populate()
    async with BotApiServer(emulator) as server:
        dispatcher = build()
        if not isinstance(dispatcher, Dispatcher):
            raise ConfigError(
                f"run_sandbox(build): build() must return an aiogram Dispatcher, "
                f"got {type(dispatcher).__name__}"
            )
        console = server.console(out)
        the_gate = Gate.of(dispatcher)
        if the_gate is not None:
            the_gate.observe(ShowIgnored(the_gate, console.show_ignored))
        out("aiogram sandbox: Telegram Bot API emulator (offline)")
        out(f"bot: @{emulator.bot.username}")
        out(console.help_text())
        bot = _emulator_bot(emulator.token, server.root_url)
        polling = asyncio.create_task(
            dispatcher.start_polling(
                bot, polling_timeout=1, handle_as_tasks=False, handle_signals=False
            ),
            name="actorscope-aiogram-sandbox",
        )
        try:
            first = asyncio.ensure_future(emulator.queue.first_poll())
            await asyncio.wait({first, polling}, return_when=asyncio.FIRST_COMPLETED)
            first.cancel()
            if polling.done():
                polling.result()  # the dispatcher stopped at startup: its error, as it is
                raise ConfigError("the dispatcher stopped before it polled the emulator")
            await console.run(lines)
            await sandbox_wait(emulator.queue.fetched(), "the bot left updates unfetched", _log)
        finally:
            # Also when Ctrl-C cancelled the prompt: stop polling, run the shutdown handlers.
            if not polling.done():
                await dispatcher.stop_polling()
            await asyncio.gather(polling, return_exceptions=True)
            console.close()

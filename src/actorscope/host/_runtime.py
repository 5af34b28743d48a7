"""The run step, and a small agent-host runtime that consumes the bus with it.

:class:`RunStep` is the only copy of the turn: for an admitted message it builds the run
request (attributing a synthesised message to its verified origin, which it consumes: a
replayed carrier runs synthetic), gives the sender its role (:meth:`RunStep.role_for`), binds
the request's identity and run info once, awaits the user's handler and routes what it returns to
the sender registered for the reply's channel. What a handler returns (:data:`Reply`) becomes
outbound messages in one place: a ``str`` or a :class:`~actorscope.messages.RichReply` is a
reply to the request's chat (:meth:`~actorscope.messages.OutboundMessage.reply_to`). A
handler that raises is logged with the identity it ran as; the step returns no reply. A reply
its sender refuses (a :class:`~actorscope.errors.ReplyError`: a button or attachment the
platform cannot take) is logged as one line naming what is wrong. :class:`Host` runs the step
for each message on a :class:`~actorscope.host.MessageBus`, at most ``concurrency`` at once: on
its workers, or in the publisher's task (:meth:`~actorscope.host.MessageBus.run_from_channel`)
while a turn slot is free and nothing waits before the message; :meth:`Host.stop` drains the
bus and those turns (or not) and then cancels them, every wait bounded.
"""

from __future__ import annotations

import asyncio
import collections
import contextvars
import itertools
import logging
import secrets
from collections.abc import Awaitable, Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from actorscope.context import bind_identity
from actorscope.errors import ActorscopeError, ConfigError, ReplyError
from actorscope.host._bus import MessageBus
from actorscope.host._sender import OutboundSender
from actorscope.identity import Identity
from actorscope.messages import InboundMessage, OutboundMessage, RichReply, RunRequest
from actorscope.propagation import OriginSigner, RunInfo

__all__ = ["Handler", "Host", "Prepared", "Reply", "RunStep"]

Reply = str | RichReply | OutboundMessage | Sequence[OutboundMessage | RichReply] | None
"""What a handler may return (the type to annotate one with): text (``str``), text with a
format, buttons and media (a :class:`~actorscope.messages.RichReply`), both for the chat the
turn ran in; ready :class:`~actorscope.messages.OutboundMessage` s; a sequence of those,
sent in order; or ``None``, nothing."""

Handler = Callable[[RunRequest], Awaitable[Reply]]
"""The user's turn function: ``async def handle(request: RunRequest) -> Reply``, what
``bot.toml``'s ``handler`` names and :class:`RunStep` runs with the request's identity
bound."""

_log = logging.getLogger("actorscope.host")


def _who(request: RunRequest) -> str:
    return (
        f"sender={request.sender_id!r} scope={request.user_id!r} session={request.session_key!r} "
        f"agent={request.agent_id or ''!r} tenant={request.tenant_id or ''!r}"
    )


@dataclass(frozen=True, slots=True)
class Prepared:
    """An admitted message made ready to run: its request and the identity bound for it."""

    request: RunRequest
    identity: Identity
    info: RunInfo


class RunStep:
    """``OriginSigner.run_request`` → role → bind identity (once) → ``handler`` → reply.

    ``owners`` (sender ids) run with role ``owner``; ``roles`` maps sender ids to other roles
    and is read at each turn (it may change between turns). Replies go to the
    :class:`OutboundSender` registered for their channel (:meth:`add_sender`).
    """

    @staticmethod
    def role_for(
        sender_id: str,
        role: str = "",
        *,
        owners: Collection[str] = (),
        roles: Mapping[str, str] | None = None,
    ) -> str:
        """The role a turn runs with: the one the request carries, else the sender's configured
        role (``roles``), else ``owner`` for a configured owner, else ``""``.

        The only owner→role rule: the host, ``actorscope run`` and the testing kit all use it.
        """
        if role or not sender_id:
            return role
        configured = (roles or {}).get(sender_id, "")
        if configured:
            return configured
        return "owner" if sender_id in owners else ""

    def __init__(
        self,
        handler: Handler,
        *,
        signer: OriginSigner,
        senders: Mapping[str, OutboundSender] | None = None,
        agent_key: str = "main",
        agent_id: str | None = None,
        tenant_id: str | None = None,
        owners: Collection[str] = (),
        roles: Mapping[str, str] | None = None,
    ) -> None:
        self._handler = handler
        self._signer = signer
        self._senders: dict[str, OutboundSender] = dict(senders or {})
        self._agent_key = agent_key
        self._agent_id = agent_id
        self._tenant_id = tenant_id
        self._owners = frozenset(owners)
        self._roles: Mapping[str, str] = {} if roles is None else roles
        # A new trace id per run without a system call each (uuid4 reads os.urandom): a
        # random 64-bit prefix per step, then a counter; the same 32 hex digits as uuid4.hex.
        self._trace_prefix = secrets.token_hex(8)
        self._traces = itertools.count()

    def add_sender(self, channel: str, sender: OutboundSender) -> None:
        """Route outbound messages of ``channel`` to ``sender`` (replacing any earlier one)."""
        if not isinstance(sender, OutboundSender):
            raise ConfigError(f"a sender must be an OutboundSender, got {type(sender).__name__}")
        self._senders[channel] = sender

    def prepare(self, msg: InboundMessage, *, role: str = "") -> Prepared | None:
        """The run request and bound identity for an admitted message, or ``None`` (logged)
        when the message cannot run (e.g. an invalid carrier).

        This is the integration point for code that keeps its own handlers (the
        python-telegram-bot and discord.py integrations): call it with the message the
        :class:`~actorscope.channels.Pipeline` admitted and run your handler inside
        :meth:`bound`. It consumes a signed origin: call it once per message.

        ``role`` is the role the transport itself vouches for (the HTTP API's key role); it
        comes before the configured roles, as a signed origin's role does.
        """
        try:
            request = self._signer.run_request(
                msg,
                agent_key=self._agent_key,
                agent_id=self._agent_id,
                tenant_id=self._tenant_id,
                # Always: a run is about to act as the origin's human, so a second delivery of
                # the same signed carrier must not (the signer's replay guard, per process).
                consume=True,
            )
        except ActorscopeError as exc:
            _log.warning(
                "dropped a message from %r in chat %r: %s", msg.sender_id, msg.chat_id, exc
            )
            return None
        role = self.role_for(
            request.sender_id, role or request.role, owners=self._owners, roles=self._roles
        )
        if role != request.role:
            request = request.model_copy(update={"role": role})
        info = RunInfo.for_request(request, new_trace_id=self._new_trace_id)
        return Prepared(request, request.identity(), info)

    def _new_trace_id(self) -> str:
        return f"{self._trace_prefix}{next(self._traces):016x}"

    @staticmethod
    @contextmanager
    def bound(prepared: Prepared) -> Iterator[Prepared]:
        """Bind the prepared identity and run info for the block."""
        with bind_identity(prepared.identity), prepared.info.bind():
            yield prepared

    async def run(self, msg: InboundMessage, *, role: str = "") -> list[OutboundMessage]:
        """Run one message now: prepare, bind, handle, route; return what was routed.
        ``role``: as for :meth:`prepare`."""
        routed: list[OutboundMessage] = []
        await self._turn(msg, routed, role=role)
        return routed

    async def _turn(
        self, msg: InboundMessage, routed: list[OutboundMessage] | None = None, *, role: str = ""
    ) -> None:
        """Run one message now (prepare, bind, handle, route), appending what is routed to
        ``routed``; without a list, a plain-text reply goes to its sender's
        :meth:`~actorscope.host.OutboundSender.send_text` and no reply message is built."""
        prepared = self.prepare(msg, role=role)
        if prepared is None:
            return
        request = prepared.request
        with bind_identity(prepared.identity), prepared.info.bind():  # what bound() does
            try:
                reply = await self._handler(request)
            except Exception:
                _log.exception("handler failed (%s)", _who(request))
                return
        if routed is None and type(reply) is str:
            await self._route(request.channel, request.chat_id, reply, request)
            return
        outbound = self._outbound(request, reply)
        if routed is not None:
            routed.extend(outbound)
        for out in outbound:
            await self._route(out.channel, out.chat_id, out, request)

    def _outbound(self, request: RunRequest, reply: object) -> list[OutboundMessage]:
        if reply is None:
            return []
        if isinstance(reply, str | RichReply):
            return [OutboundMessage.reply_to(request, reply)]
        if isinstance(reply, OutboundMessage):
            return [reply]
        if isinstance(reply, Sequence) and all(
            isinstance(m, OutboundMessage | RichReply) for m in reply
        ):
            return [
                m if isinstance(m, OutboundMessage) else OutboundMessage.reply_to(request, m)
                for m in reply
            ]
        _log.error("handler returned %s, not a reply (%s)", type(reply).__name__, _who(request))
        return []

    async def _route(
        self, channel: str, chat_id: str, out: OutboundMessage | str, request: RunRequest
    ) -> None:
        # ``out`` is a reply message, or the text of a plain reply to ``request``.
        sender = self._senders.get(channel)
        if sender is None:
            _log.error("no sender for channel %r; dropped a reply to chat %r", channel, chat_id)
            return
        try:
            if isinstance(out, str):
                await sender.send_text(request, out)
            else:
                await sender.send(out)
        except ReplyError as exc:
            _log.error("refused a reply to %r chat %r: %s", channel, chat_id, exc)
        except Exception:
            _log.exception("sending to %r chat %r failed", channel, chat_id)


class Host:
    """Consumes ``bus`` with ``concurrency`` workers and runs ``step`` for each message.

    The workers share ``concurrency`` turn slots with the turns that
    :meth:`MessageBus.run_from_channel` runs in their publishers' tasks (no hop to a worker);
    either way turns start in the order their messages were published.

    ``step`` is the :class:`RunStep` every turn runs through (the agent's, from the composition
    root: ``assembly.host(handler, bus=...)`` makes both); the host only schedules it.
    ``on_done`` is awaited with each message whose turn is over (its handler ran and its
    replies were sent), not for a turn a stop cancelled; ``actorscope run`` marks the
    update's shared claim done there.
    """

    def __init__(
        self,
        step: RunStep,
        *,
        bus: MessageBus,
        concurrency: int = 4,
        on_done: Callable[[InboundMessage], Awaitable[None]] | None = None,
    ) -> None:
        if not isinstance(step, RunStep):
            raise ConfigError(
                "a Host runs a RunStep (assembly.host(handler, bus=...) makes both),"
                f" got {type(step).__name__}"
            )
        if type(concurrency) is not int or concurrency < 1:
            raise ConfigError(f"concurrency must be a positive integer, got {concurrency!r}")
        self._bus = bus
        self._on_done = on_done
        self.step = step
        self._concurrency = concurrency
        self._workers: list[asyncio.Task[None]] = []
        # Turn slots, shared by the workers and the turns run in a publisher's task
        # (MessageBus.run_from_channel): at most ``concurrency`` turns at once. A worker
        # holding a message waits for a slot in ``_waiting``, first come, first served.
        self._free = concurrency
        self._waiting: collections.deque[asyncio.Future[None]] = collections.deque()
        # The publishers' tasks in a turn, for stop() to wait for, then cancel.
        self._here: set[asyncio.Task[Any]] = set()
        self._none_here = asyncio.Event()
        self._none_here.set()

    @property
    def bus(self) -> MessageBus:
        """The bus this host consumes."""
        return self._bus

    @property
    def running(self) -> bool:
        """True between :meth:`start` and :meth:`stop`."""
        return bool(self._workers)

    def add_sender(self, channel: str, sender: OutboundSender) -> None:
        """Route outbound messages of ``channel`` to ``sender`` (replacing any earlier one)."""
        self.step.add_sender(channel, sender)

    async def process(self, msg: InboundMessage) -> list[OutboundMessage]:
        """Run one message now (no bus) through the :class:`RunStep`; return what was routed."""
        return await self.step.run(msg)

    async def _work(self) -> None:
        while True:
            msg = await self._bus.get()
            try:
                await self._take_slot()
                try:
                    await self.step._turn(msg)
                    if self._on_done is not None:
                        await self._done(self._on_done, msg)
                finally:
                    self._give_slot()
            finally:
                self._bus.task_done()

    async def _take_slot(self) -> None:
        """Take a turn slot: at once if one is free and no worker waits, else in turn.

        Only the first waiter is ever woken, and only while a slot is free, which nobody
        else may take while anyone waits: turns start in the order their messages left the
        bus, and a message run here never starts before one a worker holds.
        """
        if self._free and not self._waiting:
            self._free -= 1
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            self._waiting.remove(waiter)
            self._wake_first()  # had it been woken, its slot is still free: pass it on
            raise
        self._waiting.popleft()  # woken, so first
        self._free -= 1
        self._wake_first()

    def _give_slot(self) -> None:
        self._free += 1
        self._wake_first()

    def _wake_first(self) -> None:
        if self._free and self._waiting and not self._waiting[0].done():
            self._waiting[0].set_result(None)

    def _run_here(self, msg: InboundMessage) -> Awaitable[None] | None:
        """The turn of ``msg`` to run in the caller's task, or ``None`` to queue it: only
        while the host runs, a slot is free and no worker waits for one (the bus checks it
        holds nothing), so no turn starts before a message that was waiting."""
        if not self._workers or not self._free or self._waiting:
            return None
        return self._turn_here(msg)

    async def _turn_here(self, msg: InboundMessage) -> None:
        self._free -= 1  # synchronously after _run_here's test: nothing ran in between
        task = asyncio.current_task()
        if task is not None:
            self._here.add(task)
            self._none_here.clear()
        try:
            await self.step._turn(msg)
            if self._on_done is not None:
                await self._done(self._on_done, msg)
        finally:
            if task is not None:
                self._here.discard(task)
                if not self._here:
                    self._none_here.set()
            self._give_slot()

    @staticmethod
    async def _done(
        on_done: Callable[[InboundMessage], Awaitable[None]], msg: InboundMessage
    ) -> None:
        try:
            await on_done(msg)
        except Exception:
            _log.exception("on_done failed for a message in chat %r", msg.chat_id)

    async def start(self) -> None:
        """Start the workers; each begins with an empty context (no identity leaks in)."""
        if self._workers:
            raise ConfigError("the host is already running")
        self._workers = [
            asyncio.create_task(
                self._work(), name=f"actorscope-host-{i}", context=contextvars.Context()
            )
            for i in range(self._concurrency)
        ]
        self._bus._run_here = self._run_here

    async def stop(self, *, drain: bool = True, grace: float = 5.0) -> int:
        """Stop; with ``drain`` first wait (up to ``grace`` s) for the bus to empty and the
        turns running in publishers' tasks (:meth:`MessageBus.run_from_channel`) to end.

        Workers, and the publishers' tasks still in a turn, are then cancelled and awaited,
        again for at most ``grace`` seconds. Returns how many messages were left: on the bus,
        or taken by a worker still waiting for a turn slot.
        """
        workers, self._workers = self._workers, []
        if not workers:
            return self._bus.qsize()
        self._bus._run_here = None  # from now on every message waits on the bus
        if drain:
            try:
                async with asyncio.timeout(grace):
                    await self._bus.join()
                    await self._none_here.wait()
            except TimeoutError:
                _log.warning("drain timed out after %gs; cancelling in-flight runs", grace)
        held = len(self._waiting)  # messages taken off the bus, their turns not started
        here = self._here - {asyncio.current_task()}
        for task in (*workers, *here):
            task.cancel()
        done, pending = await asyncio.wait((*workers, *here), timeout=grace)
        for worker in done.intersection(workers):
            if not worker.cancelled() and worker.exception() is not None:
                _log.error("host worker %s died: %r", worker.get_name(), worker.exception())
        if pending:
            _log.error("%d host turns ignored cancellation for %gs", len(pending), grace)
        return self._bus.qsize() + held

    async def __aenter__(self) -> Host:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop(drain=exc is None)

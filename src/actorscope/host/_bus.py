"""A bounded asyncio queue of inbound messages between channels, wrappers and the host.

Bounded so a flood of messages slows its producers down (``publish`` waits) instead of growing
memory without limit. Messages from a channel go through :meth:`MessageBus.publish_from_channel`,
which strips every ``origin_*`` key: only wrappers put origins on the bus.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from actorscope.errors import ConfigError, PayloadError
from actorscope.messages import InboundMessage
from actorscope.propagation import Origin

__all__ = ["DEFAULT_BUS_SIZE", "MessageBus"]

DEFAULT_BUS_SIZE = 1024


def _checked(msg: object) -> InboundMessage:
    if not isinstance(msg, InboundMessage):
        raise PayloadError(f"the bus carries InboundMessage, got {type(msg).__name__}")
    return msg


# Set by the host consuming the bus while it runs: given a message, its turn to run in the
# caller's task when a turn slot is free and no worker waits for one; else ``None``.
_RunHere = Callable[[InboundMessage], Awaitable[None] | None]


class MessageBus:
    """A FIFO of at most ``maxsize`` inbound messages."""

    __slots__ = ("_queue", "_run_here")

    def __init__(self, maxsize: int = DEFAULT_BUS_SIZE) -> None:
        if type(maxsize) is not int or maxsize < 1:
            raise ConfigError(f"bus size must be a positive integer, got {maxsize!r}")
        self._queue: asyncio.Queue[InboundMessage] = asyncio.Queue(maxsize)
        self._run_here: _RunHere | None = None

    @property
    def maxsize(self) -> int:
        """The most messages the bus holds at once."""
        return self._queue.maxsize

    def qsize(self) -> int:
        """Messages waiting to be consumed."""
        return self._queue.qsize()

    async def publish(self, msg: InboundMessage) -> None:
        """Enqueue a message a wrapper built, waiting while the bus is full."""
        await self._queue.put(_checked(msg))

    async def publish_from_channel(self, msg: InboundMessage) -> None:
        """Enqueue a message that arrived from a channel, without any ``origin_*`` metadata."""
        await self._queue.put(Origin.strip(_checked(msg)))

    async def run_from_channel(self, msg: InboundMessage) -> None:
        """As :meth:`publish_from_channel`, but while nothing waits on the bus and its host
        has a turn slot free, the message's turn runs now, in the caller's task.

        For transports that give each event its own task (discord.py's events, webhook
        requests): the turn skips the hop to a worker. Not for one that feeds its events one
        after another (polling), where a long turn would hold up every chat.
        """
        checked = Origin.strip(_checked(msg))
        turn = None
        if self._run_here is not None and not self._queue.qsize():
            turn = self._run_here(checked)
        if turn is None:
            await self._queue.put(checked)
        else:
            await turn

    def try_publish(self, msg: InboundMessage) -> bool:
        """Enqueue without waiting; ``False`` (and nothing enqueued) when the bus is full."""
        checked = _checked(msg)
        if self._queue.full():
            return False
        self._queue.put_nowait(checked)
        return True

    async def get(self) -> InboundMessage:
        """The next message, waiting for one; call :meth:`task_done` when it is handled."""
        return await self._queue.get()

    def task_done(self) -> None:
        """Mark one message returned by :meth:`get` as handled."""
        self._queue.task_done()

    async def join(self) -> None:
        """Wait until every message published so far has been handled."""
        await self._queue.join()

"""A bounded asyncio queue of inbound messages between channels, wrappers and the host.

Bounded so a flood of messages slows its producers down (``publish`` waits) instead of growing
memory without limit. Messages from a channel go through :meth:`MessageBus.publish_from_channel`,
which strips every ``origin_*`` key: only wrappers put origins on the bus.
"""

from __future__ import annotations

import asyncio

from actorscope.errors import ConfigError, PayloadError
from actorscope.messages import InboundMessage
from actorscope.propagation import sanitize_inbound

__all__ = ["DEFAULT_BUS_SIZE", "MessageBus"]

DEFAULT_BUS_SIZE = 1024


def _checked(msg: object) -> InboundMessage:
    if not isinstance(msg, InboundMessage):
        raise PayloadError(f"the bus carries InboundMessage, got {type(msg).__name__}")
    return msg


class MessageBus:
    """A FIFO of at most ``maxsize`` inbound messages."""

    __slots__ = ("_queue",)

    def __init__(self, maxsize: int = DEFAULT_BUS_SIZE) -> None:
        if type(maxsize) is not int or maxsize < 1:
            raise ConfigError(f"bus size must be a positive integer, got {maxsize!r}")
        self._queue: asyncio.Queue[InboundMessage] = asyncio.Queue(maxsize)

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
        await self._queue.put(sanitize_inbound(_checked(msg)))

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

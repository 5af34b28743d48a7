"""One LISTEN connection per PostgreSQL database object: other workers' changes, pushed.

The grant triggers ``NOTIFY actorscope_grants, '<agent uuid>'`` when a change commits; this
feed hands each payload to the database's :class:`~actorscope.store.ChangeSubscribers`. While
the connection is down nothing can be heard, so subscribers are told to flush and stop caching
(``on_feed_lost``); the feed reconnects with bounded backoff, LISTENs again and only then tells
them to flush once more and cache again (``on_feed_restored``).

A connection can also stall without closing (notifications stop arriving). So the feed probes
itself: every ``probe_interval`` seconds it NOTIFYs a token on a channel only it LISTENs on
(so no other worker is woken) and must hear it back within ``probe_timeout`` on the same
connection; a missed probe counts as a lost connection. A change is
therefore never missed for longer than ``probe_interval + probe_timeout`` (under one second).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg

from actorscope.store._base import ChangeSubscribers

__all__ = ["CHANGE_CHANNEL", "ChangeFeed"]

_log = logging.getLogger("actorscope.store")

#: The NOTIFY channel of grant and agent changes (payload: the agent UUID).
CHANGE_CHANNEL = "actorscope_grants"

# ConnectionError is an OSError. InternalClientError: asyncpg's own state broke (the
# connection is useless, a new one works).
_FAILURES = (
    OSError,
    asyncpg.PostgresError,
    asyncpg.InterfaceError,
    asyncpg.InternalClientError,
    TimeoutError,
)


class ChangeFeed:
    """LISTEN on :data:`CHANGE_CHANNEL` over a dedicated connection, reconnecting on loss."""

    def __init__(
        self,
        connect: Callable[[], Awaitable[Any]],
        subscribers: ChangeSubscribers,
        *,
        min_backoff: float = 0.05,
        max_backoff: float = 2.0,
        probe_interval: float = 0.3,
        probe_timeout: float = 0.5,
    ) -> None:
        self._connect = connect
        self._subscribers = subscribers
        self._min_backoff = min_backoff
        self._max_backoff = max_backoff
        self._probe_interval = probe_interval
        self._probe_timeout = probe_timeout
        self._conn: Any = None
        self._lost = asyncio.Event()
        self._closing = False
        self._task: asyncio.Task[None] | None = None
        # A channel of this feed's own: its probes wake no other worker's feed.
        self._probe_channel = f"{CHANGE_CHANNEL}_probe_{uuid.uuid4().hex}"
        self._probes = 0
        self._probe_token = ""
        self._probe_heard = asyncio.Event()

    @property
    def live(self) -> bool:
        """True while LISTEN is active on an open connection that answers its probes."""
        return self._subscribers.live

    @property
    def server_pid(self) -> int | None:
        """The backend process id of the listening connection (for operators and tests)."""
        return int(self._conn.get_server_pid()) if self.live and self._conn is not None else None

    async def start(self) -> None:
        """Try to listen now (a failure is retried in the background), then keep it up."""
        await self._discard()  # a start cancelled half-way may have left a connection behind
        await self._try_attach(self._min_backoff)
        self._task = asyncio.create_task(self._run(), name="actorscope-change-feed")

    async def close(self) -> None:
        """Stop listening and close the connection; listeners cache nothing from now on."""
        self._closing = True
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        self._subscribers.lost()
        await self._discard()

    async def _try_attach(self, backoff: float) -> bool:
        try:
            await self._attach()
        # Whatever stops LISTEN is retried: a feed that gave up would keep caches off for good.
        except Exception as exc:
            _log.debug("store.listen_retry in=%.2fs error=%r", backoff, exc)
            return False
        return True

    async def _attach(self) -> None:
        conn = await self._connect()
        try:
            await conn.add_listener(CHANGE_CHANNEL, self._notified)
            await conn.add_listener(self._probe_channel, self._probe_answered)
        except BaseException:
            conn.terminate()
            raise
        self._conn = conn
        conn.add_termination_listener(self._terminated)
        if conn.is_closed():  # it died before the termination listener was in place
            raise ConnectionError("the LISTEN connection closed while starting")
        await self._probe()  # a connection that cannot hear itself is not live
        self._lost.clear()
        # Flush after LISTEN is active: anything committed while deaf is re-read from now on.
        self._subscribers.restored()

    async def _probe(self) -> None:
        """NOTIFY a fresh token and hear it back; TimeoutError past ``probe_timeout``."""
        self._probes += 1
        self._probe_token = str(self._probes)
        self._probe_heard.clear()
        async with asyncio.timeout(self._probe_timeout):
            await self._conn.execute(
                "SELECT pg_notify($1, $2)", self._probe_channel, self._probe_token
            )
            await self._probe_heard.wait()

    def _notified(self, conn: Any, pid: int, channel: str, payload: str) -> None:
        self._subscribers.changed(payload)

    def _probe_answered(self, conn: Any, pid: int, channel: str, payload: str) -> None:
        if payload == self._probe_token:
            self._probe_heard.set()

    def _terminated(self, conn: Any) -> None:
        if conn is self._conn:
            self._drop("connection closed")

    def _drop(self, why: str) -> None:
        if not self.live:
            return
        self._lost.set()
        if not self._closing:
            _log.warning("store.listen_lost reason=%s; permission caches bypassed", why)
        self._subscribers.lost()

    async def _discard(self) -> None:
        conn, self._conn = self._conn, None
        if conn is None or conn.is_closed():
            return
        try:
            await asyncio.wait_for(conn.close(), timeout=2.0)
        except _FAILURES:
            conn.terminate()
        except asyncio.CancelledError:
            conn.terminate()
            raise

    async def _run(self) -> None:
        backoff = self._min_backoff
        while not self._closing:
            if self.live:
                await self._watch()
                continue
            await self._discard()
            if await self._try_attach(backoff):
                _log.info("store.listen_restored")
                backoff = self._min_backoff
            else:
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, self._max_backoff)

    async def _watch(self) -> None:
        """Wait for a drop; probe now and then to notice a connection that stalled or died."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._lost.wait(), timeout=self._probe_interval)
            return
        try:
            await self._probe()
        except TimeoutError:
            self._drop(f"no probe answer within {self._probe_timeout}s")
        # Any other failure is a lost connection too: the feed reconnects rather than dies.
        except Exception as exc:
            self._drop(f"probe failed: {exc!r}")

"""Cross-process freshness for the decision cache: the explicit way to run the change feed.

The database owns its change feed and starts it with the first cached check, so every process
that opened the store (``actorscope run``, a PTB app using the integration, a plain script)
hears other processes' grant changes within a second, with or without this class: PostgreSQL
pushes them (LISTEN/NOTIFY, probed), SQLite polls the ``grant_epoch`` counter that triggers
move on every grant or agent change. While the feed is down nothing is cached.

:meth:`GrantStore.watch` returns a :class:`GrantChangeWatcher`, for those who want the feed
running before the first check (``async with store.watch()``) or a faster poll on SQLite
(``interval``); :meth:`GrantChangeWatcher.apoll` checks for changes at once.
"""

from __future__ import annotations

import asyncio
import contextlib
from types import TracebackType

from actorscope.errors import ConfigError
from actorscope.store import Database

__all__ = ["DEFAULT_WATCH_INTERVAL", "GrantChangeWatcher"]

DEFAULT_WATCH_INTERVAL = 0.5


class GrantChangeWatcher:
    """Starts ``db``'s change feed now; on SQLite also polls every ``interval``.

    The database's own feed keeps running after the block (until the database closes); the
    extra poll task stops with it. A failed poll suspends caching until a poll succeeds.
    """

    def __init__(self, db: Database, *, interval: float = DEFAULT_WATCH_INTERVAL) -> None:
        if interval <= 0:
            raise ConfigError(f"the grant watch interval must be positive, got {interval}")
        self._db = db
        self._interval = interval
        self._task: asyncio.Task[None] | None = None

    async def apoll(self) -> bool:
        """Check for changes now; True if cached decisions were dropped.

        On SQLite: the epoch moved, or could not be read. On PostgreSQL: the feed is down.
        """
        await self._db.watch_changes()
        return await self._db.poll_changes()

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self._interval)
            await self.apoll()

    async def __aenter__(self) -> GrantChangeWatcher:
        await self._db.watch_changes()
        if not self._db.pushes_changes:
            self._task = asyncio.create_task(self._run(), name="actorscope-grant-watch")
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

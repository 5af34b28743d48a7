"""Cross-process freshness for the decision cache: one entry point for both backends.

On PostgreSQL, other workers' grant changes are pushed: the database's LISTEN connection
invalidates the changed agent's decisions in every :class:`GrantStore` on it as soon as the
NOTIFY arrives, and while that connection is down nothing is cached (checks read the database).
The watcher then polls nothing; ``async with GrantChangeWatcher(store)`` is the same call on
both backends.

On SQLite:
Changes made through this process's :class:`GrantStore` invalidate its cache exactly. A grant
changed by *another* process (``actorscope grants remove`` while a bot runs) is noticed by
polling the ``grant_epoch`` counter that triggers move on every grant or agent change: when it
moves, every cached decision is dropped. The staleness window for such changes is therefore at
most ``interval`` seconds; warm checks themselves still never touch the database.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from types import TracebackType

from actorscope.errors import ConfigError, StoreError
from actorscope.permissions.grants import GrantStore

__all__ = ["DEFAULT_WATCH_INTERVAL", "GrantChangeWatcher"]

_log = logging.getLogger("actorscope.permissions")

DEFAULT_WATCH_INTERVAL = 0.5


class GrantChangeWatcher:
    """Polls the grant epoch and flushes ``store``'s cache when it moves.

    Use ``async with GrantChangeWatcher(store):`` around a long-running process, or call
    :meth:`apoll` yourself. A failed poll flushes too: when in doubt, re-read. On a database
    that pushes changes (PostgreSQL) no polling task runs: the push feed does the work.
    """

    def __init__(self, store: GrantStore, *, interval: float = DEFAULT_WATCH_INTERVAL) -> None:
        if interval <= 0:
            raise ConfigError(f"the grant watch interval must be positive, got {interval}")
        self._store = store
        self._interval = interval
        self._epoch: int | None = None
        self._task: asyncio.Task[None] | None = None

    async def apoll(self) -> bool:
        """Read the epoch once; flush the cache and return True if it moved (or was unreadable).

        On a pushing database: flush and return True only if its change feed is down.
        """
        db = self._store.db
        if db.pushes_changes:
            if db.listening:
                return False
            self._store.invalidate()
            return True
        try:
            row = await self._store.db.fetchone("SELECT epoch FROM grant_epoch WHERE id = 1")
        except StoreError as exc:
            _log.warning("permissions.watch_failed error=%s; flushing cached decisions", exc)
            self._store.invalidate()
            self._epoch = None
            return True
        epoch = int(row["epoch"]) if row is not None else -1
        changed = self._epoch is not None and epoch != self._epoch
        if changed:
            self._store.invalidate()
        self._epoch = epoch
        return changed

    async def _run(self) -> None:
        while True:
            await self.apoll()
            await asyncio.sleep(self._interval)

    async def __aenter__(self) -> GrantChangeWatcher:
        if self._store.db.pushes_changes:
            return self
        await self.apoll()
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

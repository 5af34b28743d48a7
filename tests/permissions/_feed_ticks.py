"""The freshness bound counted in a change feed's own ticks, which a loaded machine cannot fail.

A cached decision never outlives a change committed elsewhere by more than a second
(docs/design.md). Each database's change feed keeps that promise by construction: SQLite's
reads the grant epoch every ``EPOCH_POLL_INTERVAL`` seconds; PostgreSQL's hears each change
pushed (NOTIFY, delivered in commit order) on a connection it probes every ``probe_interval``
seconds and gives up on after ``probe_timeout``. So a change is heard no later than the feed's
first tick (an epoch read, a probe) that starts after the change committed, and the ticks come
often enough for that to be within the second (:attr:`FeedTicks.within_bound`).

A test counts ticks rather than wall-clock seconds: a process starved of CPU stretches the
seconds, not the count. It marks the tick count once the change has committed, waits (bounded)
for the change to be seen, then asks how many ticks it took to be heard.
"""

from __future__ import annotations

import pytest

from actorscope.store import Database, Row
from actorscope.store._postgres import PostgresDatabase
from actorscope.store._sqlite import EPOCH_POLL_INTERVAL

#: Seconds a cached decision may outlive a change committed elsewhere (the product's promise).
FRESHNESS_BOUND = 1.0


class FeedTicks:
    """The ticks of ``db``'s change feed, and the tick at which each change was heard.

    Subscribed to ``db``'s changes as a decision cache is (held weakly there: keep it).
    """

    def __init__(self, db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
        self._db = db
        self._reads = 0
        #: The tick count at each change, loss or restore the feed reported, in order.
        self.heard: list[int] = []
        if not isinstance(db, PostgresDatabase):
            real = db.fetchone

            async def fetchone(sql: str, params: tuple[object, ...] = ()) -> Row | None:
                if "grant_epoch" in sql:
                    self._reads += 1  # only the epoch feed reads the epoch
                return await real(sql, params)

            monkeypatch.setattr(db, "fetchone", fetchone)
        db.subscribe_changes(self)

    @property
    def count(self) -> int:
        """Ticks so far: epoch reads (SQLite) or probes sent (PostgreSQL)."""
        if isinstance(self._db, PostgresDatabase):
            return self._db._feed._probes
        return self._reads

    @property
    def within_bound(self) -> bool:
        """True if a change heard by the first tick after it is heard within the bound: an
        epoch poll (twice its interval, for a read in flight) or a probe and its timeout."""
        if isinstance(self._db, PostgresDatabase):
            feed = self._db._feed
            return feed._probe_interval + feed._probe_timeout <= FRESHNESS_BOUND
        return 2 * EPOCH_POLL_INTERVAL <= FRESHNESS_BOUND

    def mark(self) -> tuple[int, int]:
        """Now, for :meth:`ticks_to_hear`: (ticks so far, changes heard so far)."""
        return self.count, len(self.heard)

    def ticks_to_hear(self, mark: tuple[int, int]) -> int:
        """The ticks after ``mark`` until the feed first reported a change (0: it had before)."""
        ticks, seen = mark
        return self.heard[seen] - ticks if len(self.heard) > seen else 0

    def on_remote_change(self, key: str) -> None:
        """A change was pushed (PostgreSQL)."""
        self.heard.append(self.count)

    def on_feed_lost(self) -> None:
        """The feed is down: caches flush."""
        self.heard.append(self.count)

    def on_feed_restored(self) -> None:
        """The epoch moved (SQLite) or the feed is back: caches flush."""
        self.heard.append(self.count)

"""Dropping duplicate deliveries across workers: a unique row per (channel, chat, message).

Several bot workers behind one Telegram webhook URL, or a Discord gateway resume, can deliver
the same update to two processes; the in-memory :class:`~actorscope.channels._dedup.DedupCache`
only sees its own. :class:`SharedDedup` claims the key in the ``processed_updates`` table of
the shared store with ``INSERT ... ON CONFLICT DO NOTHING``: the one insert that changes a row
wins, every other worker's claim changes nothing and loses. Rows older than ``ttl`` (Telegram
keeps an undelivered update for 24 hours) are deleted in bounded batches every
``cleanup_every`` claims or ``cleanup_interval`` seconds, whichever comes first, so the table
stays small and no single claim pays for a long delete.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime

from actorscope.channels._dedup import dedup_key
from actorscope.errors import ConfigError, StoreError
from actorscope.messages import InboundMessage
from actorscope.store import Database

__all__ = ["DEFAULT_DEDUP_TTL", "SharedDedup", "shared_dedup_default"]

_log = logging.getLogger("actorscope.channels.dedup")

#: Seconds a claim is kept: as long as Telegram keeps an undelivered update.
DEFAULT_DEDUP_TTL = 24 * 3600.0

_CLAIM = (
    "INSERT INTO processed_updates (channel, chat_id, message_id, seen_at) VALUES (?, ?, ?, ?) "
    "ON CONFLICT (channel, chat_id, message_id) DO NOTHING"
)
# A row-value IN with LIMIT: portable to SQLite and PostgreSQL, and bounded either way.
_CLEANUP = (
    "DELETE FROM processed_updates WHERE (channel, chat_id, message_id) IN ("
    " SELECT channel, chat_id, message_id FROM processed_updates"
    " WHERE seen_at < ? ORDER BY seen_at LIMIT ?)"
)


def shared_dedup_default(db: Database) -> bool:
    """Whether shared dedup is on when the configuration does not say: on PostgreSQL only.

    Several workers share a PostgreSQL database; an SQLite file usually has one process.
    """
    return db.dialect == "postgresql"


class SharedDedup:
    """Claims update keys in the shared store; only the first claimer of a key wins.

    ``clock`` returns seconds since the epoch (``time.time`` by default) and can be injected by
    tests.
    """

    def __init__(
        self,
        db: Database,
        *,
        ttl: float = DEFAULT_DEDUP_TTL,
        cleanup_every: int = 1000,
        cleanup_interval: float = 300.0,
        cleanup_batch: int = 1000,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if ttl <= 0 or cleanup_interval <= 0:
            raise ConfigError(
                f"shared dedup ttl and cleanup interval must be positive, "
                f"got {ttl}, {cleanup_interval}"
            )
        if cleanup_every < 1 or cleanup_batch < 1:
            raise ConfigError(
                f"shared dedup cleanup_every and cleanup_batch must be at least 1, "
                f"got {cleanup_every}, {cleanup_batch}"
            )
        self._db = db
        self._ttl = ttl
        self._every = cleanup_every
        self._interval = cleanup_interval
        self._batch = cleanup_batch
        self._clock = clock
        self._claims = 0
        self._last_cleanup = clock()

    @property
    def ttl(self) -> float:
        """Seconds a claim is remembered."""
        return self._ttl

    @staticmethod
    def _stamp(seconds: float) -> str:
        # ISO 8601 UTC text, as utc_now() writes every timestamp: it sorts as text.
        return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="microseconds")

    async def claim(self, channel: str, chat_id: str, message_id: str) -> bool:
        """True for the first claim of this key (within ``ttl``), False for every later one.

        Raises :class:`~actorscope.errors.StoreError` when the store cannot be reached.
        """
        now = self._clock()
        changed = await self._db.execute(_CLAIM, (channel, chat_id, message_id, self._stamp(now)))
        self._claims += 1
        if self._claims >= self._every or now - self._last_cleanup >= self._interval:
            await self._cleanup_quietly(now)
        return changed > 0

    async def claim_message(self, message: InboundMessage) -> bool:
        """:meth:`claim` for a normalised message (keyed by :func:`dedup_key`).

        A message without an id is never a duplicate. When the store fails the message is
        processed (a logged possible duplicate beats a silently lost message).
        """
        if not message.message_id:
            return True
        try:
            return await self.claim(*dedup_key(message))
        except StoreError as exc:
            _log.warning("dedup.shared_claim_failed, processing anyway: %s", exc)
            return True

    async def cleanup(self, now: float | None = None) -> int:
        """Delete at most one batch of claims older than ``ttl``; return how many went."""
        moment = self._clock() if now is None else now
        self._claims = 0
        self._last_cleanup = moment
        cutoff = self._stamp(moment - self._ttl)
        return await self._db.execute(_CLEANUP, (cutoff, self._batch))

    async def _cleanup_quietly(self, now: float) -> None:
        try:
            deleted = await self.cleanup(now)
        except StoreError as exc:
            _log.warning("dedup.cleanup_failed: %s", exc)
            return
        if deleted:
            _log.debug("dedup.cleanup deleted=%d", deleted)

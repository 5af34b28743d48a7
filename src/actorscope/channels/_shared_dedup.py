"""Dropping duplicate deliveries across workers: a unique row per (channel, chat, message).

Several bot workers behind one Telegram webhook URL, or a Discord gateway resume, can deliver
the same update to two processes; the in-memory :class:`~actorscope.channels._dedup.DedupCache`
only sees its own. :class:`SharedDedup` claims the key in the ``processed_updates`` table of
the shared store with one ``INSERT ... ON CONFLICT``: the one insert that changes a row wins,
every other worker's claim changes nothing and loses.

A claim is either done at once (:meth:`SharedDedup.claim`: whoever wins handles it, and a
worker that dies meanwhile loses the update) or a **lease** until the turn is over
(``take(..., lease=True)`` then :meth:`SharedDedup.finish`): the claiming worker renews it
while the turn runs (:meth:`SharedDedup.renew`), and a lease nobody renewed for ``lease``
seconds belongs to a worker that died, so a redelivery takes it over and the update is handled
after all. A redelivery of a leased update still running elsewhere learns that it is held
(:attr:`Claim.HELD`: a webhook answers "busy", and Telegram delivers it again later).

Rows older than ``ttl`` (Telegram keeps an undelivered update for 24 hours) are deleted in
bounded batches every ``cleanup_every`` claims or ``cleanup_interval`` seconds, whichever comes
first, so the table stays small and no single claim pays for a long delete.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from enum import StrEnum

from actorscope.channels._dedup import DedupKey, dedup_key
from actorscope.errors import ConfigError, StoreError
from actorscope.messages import InboundMessage
from actorscope.store import Database

__all__ = [
    "DEFAULT_DEDUP_TTL",
    "DEFAULT_LEASE",
    "Claim",
    "SharedDedup",
    "shared_dedup_default",
]

_log = logging.getLogger("actorscope.channels.dedup")

#: Seconds a claim is kept: as long as Telegram keeps an undelivered update.
DEFAULT_DEDUP_TTL = 24 * 3600.0
#: Seconds a leased claim lives without a renewal before another worker may take it over.
DEFAULT_LEASE = 10.0

# A new key is inserted; a key whose lease ran out (not done, not renewed since the cut-off)
# is taken over; anything else changes nothing (the claim is lost).
_TAKE = (
    "INSERT INTO processed_updates (channel, chat_id, message_id, seen_at, owner, done_at)"
    " VALUES (?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (channel, chat_id, message_id) DO UPDATE SET"
    " seen_at = excluded.seen_at, owner = excluded.owner, done_at = excluded.done_at"
    " WHERE processed_updates.done_at IS NULL AND processed_updates.seen_at < ?"
)
_KEY = "channel = ? AND chat_id = ? AND message_id = ?"
_STATE = f"SELECT done_at, owner FROM processed_updates WHERE {_KEY}"
_FINISH = f"UPDATE processed_updates SET done_at = ? WHERE {_KEY} AND owner = ?"
_RENEW = "UPDATE processed_updates SET seen_at = ? WHERE owner = ? AND done_at IS NULL"
#: Leases renewed by one statement at most.
_RENEW_BATCH = 200
# A row-value IN with LIMIT: portable to SQLite and PostgreSQL, and bounded either way.
_CLEANUP = (
    "DELETE FROM processed_updates WHERE (channel, chat_id, message_id) IN ("
    " SELECT channel, chat_id, message_id FROM processed_updates"
    " WHERE seen_at < ? ORDER BY seen_at LIMIT ?)"
)


class Claim(StrEnum):
    """What a claim found."""

    WON = "won"  # this worker handles the update
    DONE = "done"  # another worker handled it (a duplicate)
    HELD = "held"  # another worker is handling it now (its lease is live): ask again later


def shared_dedup_default(db: Database) -> bool:
    """Whether shared dedup is on when the configuration does not say: on PostgreSQL only.

    Several workers share a PostgreSQL database; an SQLite file usually has one process.
    """
    return db.dialect == "postgresql"


def _stamp(seconds: float) -> str:
    # ISO 8601 UTC text, as Database.utc_now() writes every timestamp: it sorts as text.
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="microseconds")


class SharedDedup:
    """Claims update keys in the shared store; only the first claimer of a key wins.

    ``lease`` is how long a leased claim lives without a renewal. ``clock`` returns seconds
    since the epoch (``time.time`` by default) and can be injected by tests.
    """

    def __init__(
        self,
        db: Database,
        *,
        ttl: float = DEFAULT_DEDUP_TTL,
        lease: float = DEFAULT_LEASE,
        cleanup_every: int = 1000,
        cleanup_interval: float = 300.0,
        cleanup_batch: int = 1000,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if ttl <= 0 or cleanup_interval <= 0 or lease <= 0:
            raise ConfigError(
                f"shared dedup ttl, lease and cleanup interval must be positive, "
                f"got {ttl}, {lease}, {cleanup_interval}"
            )
        if cleanup_every < 1 or cleanup_batch < 1:
            raise ConfigError(
                f"shared dedup cleanup_every and cleanup_batch must be at least 1, "
                f"got {cleanup_every}, {cleanup_batch}"
            )
        self._db = db
        self._ttl = ttl
        self._lease = lease
        self._every = cleanup_every
        self._interval = cleanup_interval
        self._batch = cleanup_batch
        self._clock = clock
        self._claims = 0
        self._last_cleanup = clock()
        #: Who this worker is in the claims it leases (one per process and database).
        self.owner = secrets.token_hex(8)

    @property
    def ttl(self) -> float:
        """Seconds a claim is remembered."""
        return self._ttl

    @property
    def lease(self) -> float:
        """Seconds a leased claim lives without a renewal."""
        return self._lease

    async def take(
        self, channel: str, chat_id: str, message_id: str, *, lease: bool = False
    ) -> Claim:
        """Claim a key: :attr:`Claim.WON` for the first claim (or a takeover of a lease that
        ran out), :attr:`Claim.DONE` or :attr:`Claim.HELD` when another worker has it.

        With ``lease`` the claim stays open until :meth:`finish`; without, it is done at once.
        Raises :class:`~actorscope.errors.StoreError` when the store cannot be reached.
        """
        now = self._clock()
        stamp = _stamp(now)
        changed = await self._db.execute_atomic(
            _TAKE,
            (
                channel,
                chat_id,
                message_id,
                stamp,
                self.owner,
                None if lease else stamp,
                _stamp(now - self._lease),
            ),
        )
        self._claims += 1
        if self._claims >= self._every or now - self._last_cleanup >= self._interval:
            await self._cleanup_quietly(now)
        if changed > 0:
            return Claim.WON
        row = await self._db.fetchone(_STATE, (channel, chat_id, message_id))
        # A row gone meanwhile was cleaned up: it was done long ago.
        return Claim.HELD if row is not None and row["done_at"] is None else Claim.DONE

    async def claim(self, channel: str, chat_id: str, message_id: str) -> bool:
        """True for the first claim of this key (within ``ttl``), False for every later one.

        The claim is done at once (no lease). Raises
        :class:`~actorscope.errors.StoreError` when the store cannot be reached.
        """
        return await self.take(channel, chat_id, message_id) is Claim.WON

    async def take_message(self, message: InboundMessage, *, lease: bool = False) -> Claim:
        """:meth:`take` for a normalised message (keyed by :func:`dedup_key`).

        A message without an id is never a duplicate. When the store fails the message is
        processed (a logged possible duplicate beats a silently lost message).
        """
        if not message.message_id:
            return Claim.WON
        try:
            return await self.take(*dedup_key(message), lease=lease)
        except StoreError as exc:
            _log.warning("dedup.shared_claim_failed, processing anyway: %s", exc)
            return Claim.WON

    async def claim_message(self, message: InboundMessage) -> bool:
        """:meth:`take_message` without a lease: True unless another worker has it."""
        return await self.take_message(message) is Claim.WON

    async def finish(self, key: DedupKey) -> bool:
        """Mark this worker's leased claim of ``key`` done; False if it is not (or no longer)
        this worker's: the lease ran out and another worker took the update over.

        Raises :class:`~actorscope.errors.StoreError` when the store cannot be reached.
        """
        changed = await self._db.execute_atomic(_FINISH, (_stamp(self._clock()), *key, self.owner))
        return changed > 0

    async def holder(self, key: DedupKey) -> str | None:
        """The owner of ``key``'s claim (``None``: no claim was recorded, e.g. the store failed
        when it was taken and the update was handled anyway)."""
        row = await self._db.fetchone(_STATE, key)
        return None if row is None else str(row["owner"])

    async def renew(self, keys: Iterable[DedupKey]) -> None:
        """Extend this worker's leases of ``keys`` (turns still running) by another ``lease``.

        Raises :class:`~actorscope.errors.StoreError` when the store cannot be reached.
        """
        stamp = _stamp(self._clock())
        pending = list(keys)
        for start in range(0, len(pending), _RENEW_BATCH):
            batch = pending[start : start + _RENEW_BATCH]
            marks = ", ".join(["(?, ?, ?)"] * len(batch))
            await self._db.execute_atomic(
                f"{_RENEW} AND (channel, chat_id, message_id) IN ({marks})",
                (stamp, self.owner, *(part for key in batch for part in key)),
            )

    async def cleanup(self, now: float | None = None) -> int:
        """Delete at most one batch of claims older than ``ttl``; return how many went."""
        moment = self._clock() if now is None else now
        self._claims = 0
        self._last_cleanup = moment
        cutoff = _stamp(moment - self._ttl)
        return await self._db.execute(_CLEANUP, (cutoff, self._batch))

    async def _cleanup_quietly(self, now: float) -> None:
        try:
            deleted = await self.cleanup(now)
        except StoreError as exc:
            _log.warning("dedup.cleanup_failed: %s", exc)
            return
        if deleted:
            _log.debug("dedup.cleanup deleted=%d", deleted)

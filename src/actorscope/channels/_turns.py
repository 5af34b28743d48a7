"""The turns a worker has started and not finished: what makes a crash lose nothing.

The pipeline opens a turn for each message it publishes (after its shared claim, taken as a
lease) and the host finishes it once the handler has run and its replies went out. While a
turn is open its lease is renewed in the shared store; when it finishes the claim is marked
done. A webhook request waits for its update's turn before it answers 200, so an update
accepted by a worker that is then killed was never acknowledged: Telegram delivers it again,
and the next worker takes the lease over once it has run out (see
:mod:`~actorscope.channels._shared_dedup`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from actorscope.channels._dedup import DedupKey, dedup_key
from actorscope.channels._shared_dedup import SharedDedup
from actorscope.errors import StoreError
from actorscope.messages import InboundMessage
from actorscope.store import Database

__all__ = ["MAX_OPEN_TURNS", "TurnLedger"]

_log = logging.getLogger("actorscope.channels.dedup")

#: Turns tracked at once; past this the oldest are forgotten (their leases then run out).
MAX_OPEN_TURNS = 10_000


class TurnLedger:
    """Open turns by dedup key; ``shared`` (when given) holds their leased claims.

    Use it as an async context manager: the lease renewal runs inside the block.
    """

    def __init__(self, shared: SharedDedup | None = None) -> None:
        self._shared = shared
        self._open: dict[DedupKey, asyncio.Future[None]] = {}
        # Finished turns whose claim could not be marked done yet (the store was away).
        self._unfinished: set[DedupKey] = set()
        self._renewal: asyncio.Task[None] | None = None

    @classmethod
    def on(cls, db: Database | None) -> TurnLedger:
        """A ledger whose claims are leases in ``db``'s shared claim store (``processed_updates``,
        for several workers on one database); ``None``: no shared store, no claims."""
        return cls(SharedDedup(db) if db is not None else None)

    @property
    def shared_dedup(self) -> SharedDedup | None:
        """The shared claim store the channels' pipelines claim updates in (``None``: none)."""
        return self._shared

    @property
    def leases(self) -> bool:
        """Whether claims are taken as leases (a shared store is there)."""
        return self._shared is not None

    def __len__(self) -> int:
        return len(self._open)

    async def __aenter__(self) -> TurnLedger:
        if self._shared is not None:
            self._renewal = asyncio.create_task(
                self._renew(self._shared), name="actorscope-turn-leases"
            )
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._renewal is not None:
            self._renewal.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._renewal
            self._renewal = None

    def open(self, message: InboundMessage) -> None:
        """A turn for ``message`` starts (call before publishing it)."""
        if not message.message_id:
            return
        key = dedup_key(message)
        if key not in self._open:
            if len(self._open) >= MAX_OPEN_TURNS:
                oldest = next(iter(self._open))
                self._open.pop(oldest).cancel()
                _log.warning("turns.too_many_open: forgot %s (its lease will run out)", oldest)
            self._open[key] = asyncio.get_running_loop().create_future()

    async def finish(self, message: InboundMessage) -> None:
        """The turn of ``message`` is over: mark its claim done, wake whoever waits for it.

        A message this ledger did not open (a propagated one, a wrapper's) is ignored.
        """
        if not message.message_id:
            return
        key = dedup_key(message)
        waiter = self._open.pop(key, None)
        if waiter is None:
            return
        await self._mark_done(key)
        if not waiter.done():
            waiter.set_result(None)

    async def finish_now(self, message: InboundMessage) -> None:
        """Mark the claim of a message answered without a turn (a writer command) done."""
        self.open(message)
        await self.finish(message)

    async def wait(self, message: InboundMessage, within: float) -> bool:
        """Wait (at most ``within`` s) until the turn of ``message`` is over; True if it is."""
        waiter = self._open.get(dedup_key(message)) if message.message_id else None
        if waiter is None:
            return True
        done, _ = await asyncio.wait({waiter}, timeout=within)
        return bool(done)

    async def _mark_done(self, key: DedupKey) -> None:
        if self._shared is None:
            return
        try:
            if await self._shared.finish(key):
                return
            holder = await self._shared.holder(key)
            if holder is None:  # the claim failed (the store was away): nothing to mark
                _log.debug("dedup.finish_unclaimed %s", key)
            elif holder != self._shared.owner:
                _log.warning(
                    "dedup.lease_lost %s: its lease ran out and another worker took the update "
                    "over (it may have been handled twice)",
                    key,
                )
        except StoreError as exc:
            _log.warning("dedup.finish_failed %s, retried with the next renewal: %s", key, exc)
            self._unfinished.add(key)

    async def _renew(self, shared: SharedDedup) -> None:
        """Renew every open turn's lease a few times per lease; retry finishing the rest."""
        while True:
            await asyncio.sleep(shared.lease / 4)
            try:
                await shared.renew([*self._open, *self._unfinished])
            except StoreError as exc:
                _log.warning("dedup.renew_failed (%d open turns): %s", len(self._open), exc)
                continue
            for key in list(self._unfinished):
                self._unfinished.discard(key)
                await self._mark_done(key)

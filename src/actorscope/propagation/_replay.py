"""The replay guard: a signed origin becomes a run's identity at most once.

A signature covers the whole carrier and its timestamp, so two deliveries of one signed carrier
carry the same signature and a second one is a replay. :class:`ReplayGuard` remembers each
signature it accepted until the signature would fail the signer's age check anyway, so the
record only ever holds what could still be replayed; past ``capacity`` live entries it refuses
new ones (fail closed: the run stays synthetic) rather than forget one that is still replayable.

The record is kept in memory, per guard and therefore per process: a second process with the
same key keeps its own. When origins cross processes, deliver each carrier to one consumer
(a work queue, not a broadcast), or deduplicate on the signature before the host sees it.
"""

from __future__ import annotations

import heapq
import logging
import threading

from actorscope.errors import ConfigError

__all__ = ["DEFAULT_REPLAY_CAPACITY", "ReplayGuard"]

#: Live signatures a guard holds by default: at the default max age of 600 s that is more than
#: 100 attributed carriers a second, in a few tens of megabytes at most.
DEFAULT_REPLAY_CAPACITY = 65_536

_log = logging.getLogger("actorscope.propagation")


class ReplayGuard:
    """Signatures seen and not yet expired; thread-safe, and never awaits (so asyncio-safe)."""

    __slots__ = ("_capacity", "_expiries", "_lock", "_saturated", "_seen")

    def __init__(self, capacity: int = DEFAULT_REPLAY_CAPACITY) -> None:
        if type(capacity) is not int or capacity < 1:
            raise ConfigError(f"replay capacity must be a positive integer, got {capacity!r}")
        self._capacity = capacity
        self._seen: set[str] = set()
        # A heap, not insertion order: a carrier signed long ago may arrive after a fresh one.
        self._expiries: list[tuple[int, str]] = []
        self._lock = threading.Lock()
        self._saturated = False

    def __repr__(self) -> str:
        return f"ReplayGuard({len(self._seen)}/{self._capacity} live)"

    def __len__(self) -> int:
        return len(self._seen)

    @property
    def capacity(self) -> int:
        """The most live signatures the guard holds before it refuses new ones."""
        return self._capacity

    def first_use(self, signature: str, expires_ms: int, now_ms: int) -> bool:
        """Record ``signature`` until ``expires_ms``; ``False`` if seen before or the guard is full.

        Times are integer milliseconds on the signer's clock. An entry is dropped once
        ``now_ms`` has passed its expiry, when the signature no longer verifies anyway.
        """
        with self._lock:
            expiries, seen = self._expiries, self._seen
            while expiries and expiries[0][0] < now_ms:
                seen.discard(heapq.heappop(expiries)[1])
            if signature in seen:
                return False
            if len(seen) >= self._capacity:
                if not self._saturated:
                    self._saturated = True
                    _log.warning(
                        "replay guard full (%d live origins): new origins are ignored until "
                        "old ones expire; raise replay_capacity or lower max_age",
                        self._capacity,
                    )
                return False
            self._saturated = False
            seen.add(signature)
            heapq.heappush(expiries, (expires_ms, signature))
            return True

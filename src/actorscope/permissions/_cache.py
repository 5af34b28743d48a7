"""The decision cache: a warm check is one dict lookup; a grant change drops the agent's entries.

No TTL: correctness comes from exact invalidation. A cold check records the agent's
generation before it reads the store and stores its answer only if no change happened
meanwhile, so a read that raced a grant or revoke can never be cached. A full flush moves every
agent's generation on, including agents that have no entry yet. While the cache is suspended
(its invalidation feed is down) it holds nothing and refuses every put, so checks go to the
store; the warm path itself is unchanged (an empty dict simply misses).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Generic, TypeVar

__all__ = ["DEFAULT_MAX_ENTRIES", "DecisionCache"]

V = TypeVar("V")

DEFAULT_MAX_ENTRIES = 100_000


class DecisionCache(Generic[V]):
    """Values keyed by ``(agent_id, ...)``, invalidated per agent."""

    __slots__ = ("_by_agent", "_entries", "_flushes", "_generation", "_max_entries", "_suspended")

    def __init__(self, max_entries: int = DEFAULT_MAX_ENTRIES) -> None:
        self._entries: dict[tuple[Hashable, ...], V] = {}
        self._by_agent: dict[str, set[tuple[Hashable, ...]]] = {}
        self._generation: dict[str, int] = {}
        self._flushes = 0
        self._max_entries = max_entries
        self._suspended = False

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: tuple[Hashable, ...]) -> V | None:
        """The cached value for ``key`` (whose first element is the agent UUID), or ``None``."""
        return self._entries.get(key)

    @property
    def suspended(self) -> bool:
        """True while nothing is cached (see :meth:`suspend`)."""
        return self._suspended

    def generation(self, agent_id: str) -> int:
        """A counter that changes on every invalidation of ``agent_id`` and every flush."""
        return self._flushes + self._generation.get(agent_id, 0)

    def put(self, key: tuple[Hashable, ...], value: V, generation: int) -> bool:
        """Store ``value`` unless the agent changed since ``generation`` was read."""
        agent_id = str(key[0])
        if self._suspended or self._flushes + self._generation.get(agent_id, 0) != generation:
            return False
        if len(self._entries) >= self._max_entries and key not in self._entries:
            # A full cache starts over rather than tracking recency on the warm path.
            self.clear()
        self._entries[key] = value
        self._by_agent.setdefault(agent_id, set()).add(key)
        return True

    def invalidate(self, agent_id: str) -> None:
        """Drop every entry of ``agent_id`` and refuse puts from reads that started earlier."""
        self._generation[agent_id] = self._generation.get(agent_id, 0) + 1
        for key in self._by_agent.pop(agent_id, ()):
            self._entries.pop(key, None)

    def clear(self) -> None:
        """Drop every entry of every agent (every agent's generation moves on too)."""
        self._flushes += 1
        self._entries.clear()
        self._by_agent.clear()

    def suspend(self) -> None:
        """Drop everything and cache nothing until :meth:`resume`."""
        self._suspended = True
        self.clear()

    def resume(self) -> None:
        """Drop everything (reads begun while suspended must not be kept) and cache again."""
        self.clear()
        self._suspended = False

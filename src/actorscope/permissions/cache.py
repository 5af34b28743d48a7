"""The decision cache: a warm check is one dict lookup; a grant change drops the agent's entries.

No TTL: correctness comes from exact invalidation. A cold check records the agent's
generation before it reads the store and stores its answer only if no change happened
meanwhile, so a read that raced a grant or revoke can never be cached.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Generic, TypeVar

__all__ = ["DEFAULT_MAX_ENTRIES", "DecisionCache"]

V = TypeVar("V")

DEFAULT_MAX_ENTRIES = 100_000


class DecisionCache(Generic[V]):
    """Values keyed by ``(agent_id, ...)``, invalidated per agent."""

    __slots__ = ("_by_agent", "_entries", "_generation", "_max_entries")

    def __init__(self, max_entries: int = DEFAULT_MAX_ENTRIES) -> None:
        self._entries: dict[tuple[Hashable, ...], V] = {}
        self._by_agent: dict[str, set[tuple[Hashable, ...]]] = {}
        self._generation: dict[str, int] = {}
        self._max_entries = max_entries

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: tuple[Hashable, ...]) -> V | None:
        """The cached value for ``key`` (whose first element is the agent UUID), or ``None``."""
        return self._entries.get(key)

    def generation(self, agent_id: str) -> int:
        """A counter that changes on every invalidation of ``agent_id``."""
        return self._generation.get(agent_id, 0)

    def put(self, key: tuple[Hashable, ...], value: V, generation: int) -> bool:
        """Store ``value`` unless the agent changed since ``generation`` was read."""
        agent_id = str(key[0])
        if self._generation.get(agent_id, 0) != generation:
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
        """Drop every entry of every agent (each agent's generation moves on too)."""
        for agent_id in set(self._by_agent) | set(self._generation):
            self._generation[agent_id] = self._generation.get(agent_id, 0) + 1
        self._entries.clear()
        self._by_agent.clear()

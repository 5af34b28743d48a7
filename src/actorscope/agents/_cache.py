"""The resolver cache behind :class:`~actorscope.agents.AgentRegistry`, one per ``Database``.

Shared by every registry on the same open database, so a rename or remove made through any
of them (the CLI's, a grant store's) invalidates what all the others cached and
reaches every subscribed listener. Changes made by another process are not seen here; each
reader bounds that staleness with its own maximum age.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TypeVar

from actorscope.agents._models import Agent, AgentListener, Tenant
from actorscope.store import Database

__all__ = ["AgentCache", "cache_for"]

_V = TypeVar("_V")
_Stamped = tuple[float, _V]


def _fresh(found: tuple[float, _V] | None, now: float, max_age: float) -> _V | None:
    if found is None or now - found[0] >= max_age:
        return None
    return found[1]


class AgentCache:
    """Tenants by slug and id, live agents by id and by (tenant id, key), with stamps."""

    def __init__(self) -> None:
        self._tenants: dict[str, _Stamped[Tenant]] = {}
        self._by_id: dict[str, _Stamped[Agent]] = {}
        self._by_key: dict[tuple[str, str], _Stamped[Agent]] = {}
        # Weak for bound methods: a discarded subscriber must not be kept alive (or called).
        self._listeners: list[Callable[[], AgentListener | None]] = []

    def subscribe(self, listener: AgentListener) -> None:
        """Call ``listener(before, after)`` after every rename or remove on this database."""
        if hasattr(listener, "__self__") and hasattr(listener, "__func__"):
            self._listeners.append(weakref.WeakMethod(listener))
        else:
            self._listeners.append(lambda: listener)

    def clear(self) -> None:
        """Forget everything cached (listeners stay)."""
        self._tenants.clear()
        self._by_id.clear()
        self._by_key.clear()

    def tenant(self, ref: str, now: float, max_age: float) -> Tenant | None:
        """The tenant cached under slug or id ``ref``, if younger than ``max_age`` seconds."""
        return _fresh(self._tenants.get(ref), now, max_age)

    def put_tenant(self, tenant: Tenant, now: float) -> None:
        """Cache ``tenant`` under its slug and its id."""
        self._tenants[tenant.id] = self._tenants[tenant.slug] = (now, tenant)

    def by_id(self, agent_id: str, now: float, max_age: float) -> Agent | None:
        """The live agent cached under ``agent_id``, if fresh."""
        return _fresh(self._by_id.get(agent_id), now, max_age)

    def by_key(self, tenant_id: str, key: str, now: float, max_age: float) -> Agent | None:
        """The live agent cached under (``tenant_id``, ``key``), if fresh."""
        return _fresh(self._by_key.get((tenant_id, key)), now, max_age)

    def put(self, agent: Agent, now: float) -> Agent:
        """Cache a live agent under its id and its (tenant, key); return it."""
        self._by_id[agent.id] = self._by_key[(agent.tenant_id, agent.key)] = (now, agent)
        return agent

    def changed(self, before: Agent, after: Agent | None, now: float) -> None:
        """Record a committed rename (``after``) or remove (``None``) and tell the listeners."""
        self._by_id.pop(before.id, None)
        self._by_key.pop((before.tenant_id, before.key), None)
        if after is not None:
            self.put(after, now)
        alive: list[Callable[[], AgentListener | None]] = []
        for ref in self._listeners:
            listener = ref()
            if listener is not None:
                alive.append(ref)
                listener(before, after)
        self._listeners = alive


_CACHES: weakref.WeakKeyDictionary[Database, AgentCache] = weakref.WeakKeyDictionary()


def cache_for(db: Database) -> AgentCache:
    """The cache of ``db``, created on first use and dropped with the ``Database`` object."""
    cache = _CACHES.get(db)
    if cache is None:
        cache = _CACHES[db] = AgentCache()
    return cache

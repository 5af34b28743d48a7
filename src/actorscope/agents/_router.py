"""The agent router: one cached entry per agent, keyed ``<tenantID>:<agentKey>``.

A caller may name an agent by UUID or by key; either way the entry lands under the same
cache key, and a UUID→key index lets the next UUID lookup hit it too. Every method needs a
tenant: there is no global lookup, because the same key names different agents in
different tenants.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from actorscope._input import is_uuid, parse_uuid
from actorscope.agents._models import Agent, Tenant
from actorscope.agents._registry import DEFAULT_CACHE_TTL, AgentRegistry
from actorscope.agents._types import AgentKey, TenantUUID, parse_agent_key
from actorscope.errors import IdentityError

__all__ = ["AgentRouter", "RouterEntry", "cache_key"]


def cache_key(tenant_id: TenantUUID, agent_key: AgentKey) -> str:
    """The router's cache key: ``<tenantID>:<agentKey>``."""
    return f"{tenant_id}:{agent_key}"


@dataclass(frozen=True, slots=True)
class RouterEntry:
    """A routed agent: the agent, its tenant, and the cache key it lives under."""

    agent: Agent
    tenant: Tenant

    @property
    def key(self) -> str:
        """``<tenantID>:<agentKey>``."""
        return cache_key(self.tenant.id, self.agent.key)


def _require_tenant(tenant: object) -> str:
    if not isinstance(tenant, str) or not tenant:
        raise IdentityError(f"the router needs a tenant (slug or UUID), got {tenant!r}")
    return tenant


class AgentRouter:
    """Routes (tenant, UUID or key) to one cached :class:`RouterEntry` and tracks running agents.

    Subscribes to the registry's database, so a rename or remove made in this process drops
    (or re-keys) the entry at once; one made by another process is picked up when the entry
    is older than ``ttl`` seconds and is read again.
    """

    def __init__(self, registry: AgentRegistry, *, ttl: float = DEFAULT_CACHE_TTL) -> None:
        self._registry = registry
        self._ttl = ttl
        self._entries: dict[str, tuple[float, RouterEntry]] = {}
        self._key_of_uuid: dict[str, str] = {}
        # Slugs and UUIDs of tenants seen by get(), so the synchronous methods accept both.
        self._tenant_ids: dict[str, TenantUUID] = {}
        self._running: dict[str, RouterEntry] = {}
        registry.subscribe(self._agent_changed)

    def __len__(self) -> int:
        return len(self._entries)

    def cache_keys(self) -> list[str]:
        """Every cached ``<tenantID>:<agentKey>``, sorted."""
        return sorted(self._entries)

    async def get(self, tenant: str, uuid_or_key: str) -> RouterEntry:
        """The entry of the agent named by UUID or key in ``tenant`` (slug or UUID)."""
        owner = await self._registry.tenant(_require_tenant(tenant))
        self._tenant_ids[owner.slug] = self._tenant_ids[owner.id] = owner.id
        known = self._cached_key(owner.id, uuid_or_key)
        found = self._entries.get(known) if known is not None else None
        if found is not None:
            stamp, entry = found
            if time.monotonic() - stamp < self._ttl:
                return entry
            self._drop(entry.key)
        agent = await self._registry.resolve(uuid_or_key, owner.id)
        entry = RouterEntry(agent=agent, tenant=owner)
        # Renamed since it was cached (by another process): one entry, under the new key.
        previous = self._key_of_uuid.get(agent.id)
        if previous is not None and previous != entry.key:
            self._drop(previous)
        for old in [k for k, e in self._running.items() if e.agent.id == agent.id]:
            del self._running[old]
            self._running[entry.key] = entry
        self._entries[entry.key] = (time.monotonic(), entry)
        self._key_of_uuid[agent.id] = entry.key
        return entry

    def _cached_key(self, tenant_id: str, uuid_or_key: str) -> str | None:
        """The cache key (tenant, UUID or key) maps to, if known without the database."""
        if not is_uuid(uuid_or_key, canonical=False):
            return cache_key(TenantUUID(tenant_id), parse_agent_key(uuid_or_key))
        agent_id = parse_uuid(uuid_or_key, "agent id")
        known = self._key_of_uuid.get(agent_id)
        if known is None:
            known = next((k for k, e in self._running.items() if e.agent.id == agent_id), None)
        # Cache keys start with the tenant UUID, which has no ':' in it: an exact segment test.
        return known if known is not None and known.split(":", 1)[0] == tenant_id else None

    def _key(self, tenant: str, uuid_or_key: str) -> str | None:
        tenant_ref = _require_tenant(tenant)
        tenant_id = self._tenant_ids.get(
            parse_uuid(tenant_ref, "tenant") if is_uuid(tenant_ref, canonical=False) else tenant_ref
        )
        return None if tenant_id is None else self._cached_key(tenant_id, uuid_or_key)

    def _drop(self, key: str) -> bool:
        found = self._entries.pop(key, None)
        if found is None:
            return False
        if self._key_of_uuid.get(found[1].agent.id) == key:
            del self._key_of_uuid[found[1].agent.id]
        return True

    def invalidate(self, tenant: str, uuid_or_key: str) -> bool:
        """Drop exactly this agent's entry (never one whose key merely ends the same).

        Whether the agent is running is not touched: that is the agent's state, not cache.
        """
        known = self._key(tenant, uuid_or_key)
        return known is not None and self._drop(known)

    def _agent_changed(self, before: Agent, after: Agent | None) -> None:
        old = cache_key(before.tenant_id, before.key)
        found = self._entries.get(old)
        self._drop(old)
        running = self._running.pop(old, None)
        if after is None:
            return
        tenant = running.tenant if running is not None else found[1].tenant if found else None
        if tenant is not None:
            entry = RouterEntry(agent=after, tenant=tenant)
            self._entries[entry.key] = (time.monotonic(), entry)
            self._key_of_uuid[after.id] = entry.key
            if running is not None:
                # A renamed agent keeps running, now under its new key.
                self._running[entry.key] = entry

    async def mark_running(self, tenant: str, uuid_or_key: str) -> RouterEntry:
        """Route to the agent (as :meth:`get`) and record that it is running in ``tenant``."""
        entry = await self.get(tenant, uuid_or_key)
        self._running[entry.key] = entry
        return entry

    def mark_stopped(self, tenant: str, uuid_or_key: str) -> bool:
        """Record that the agent is no longer running in ``tenant``; False if it was not."""
        known = self._key(tenant, uuid_or_key)
        return known is not None and self._running.pop(known, None) is not None

    def is_running(self, tenant: str, uuid_or_key: str) -> bool:
        """Whether the agent is running in ``tenant``; the same key elsewhere does not count."""
        known = self._key(tenant, uuid_or_key)
        return known is not None and known in self._running

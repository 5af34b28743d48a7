"""The agent router: one entry per agent under ``<tenantID>:<agentKey>``, tenant-scoped."""

from __future__ import annotations

import gc

import pytest

from actorscope.agents import AgentRegistry
from actorscope.agents._registry import AgentNotFoundError
from actorscope.agents._router import AgentRouter, cache_key
from actorscope.errors import IdentityError
from actorscope.store import Database


@pytest.fixture
def registry(db: Database) -> AgentRegistry:
    """A registry over the fresh database."""
    return AgentRegistry(db)


@pytest.fixture
def router(registry: AgentRegistry) -> AgentRouter:
    """A router over the registry."""
    return AgentRouter(registry)


async def test_uuid_then_key_leaves_one_entry(registry: AgentRegistry, router: AgentRouter) -> None:
    """Asking by UUID and then by key (and back) yields one entry under tenantID:agentKey."""
    bot = await registry.create("bot")
    by_uuid = await router.get("default", bot.id)
    by_key = await router.get("default", "bot")
    by_upper_uuid = await router.get(bot.tenant_id, bot.id.upper())
    assert by_uuid is by_key is by_upper_uuid
    assert router.cache_keys() == [f"{bot.tenant_id}:bot"]
    assert by_key.key == cache_key(bot.tenant_id, bot.key)
    assert len(router) == 1


async def test_key_then_uuid_is_served_from_the_entry(
    db: Database, registry: AgentRegistry, router: AgentRouter
) -> None:
    """After a lookup by key, a lookup by UUID hits the same entry without the database."""
    bot = await registry.create("bot")
    first = await router.get("default", "bot")
    registry.clear_cache()
    await db.execute("UPDATE agents SET display_name = 'changed' WHERE id = ?", (bot.id,))
    assert await router.get("default", bot.id) is first
    assert len(router) == 1


async def test_invalidate_matches_the_exact_key_only(
    registry: AgentRegistry, router: AgentRouter
) -> None:
    """Invalidating `bot` drops bot's entry and never `support-bot` or `bot2`."""
    for key in ("bot", "support-bot", "bot2", "mybot"):
        await registry.create(key)
        await router.get("default", key)
    assert router.invalidate("default", "bot") is True
    assert [k.split(":", 1)[1] for k in router.cache_keys()] == ["bot2", "mybot", "support-bot"]
    assert router.invalidate("default", "bot") is False


async def test_invalidate_by_uuid_and_in_another_tenant(
    registry: AgentRegistry, router: AgentRouter
) -> None:
    """Invalidation by UUID works; the same key in another tenant keeps its entry."""
    await registry.create_tenant("acme")
    here = await registry.create("bot")
    there = await registry.create("bot", "acme")
    await router.get("default", "bot")
    await router.get("acme", "bot")
    assert router.invalidate("acme", here.id) is False
    assert router.invalidate("acme", there.id) is True
    assert router.cache_keys() == [f"{here.tenant_id}:bot"]


async def test_is_running_is_tenant_scoped(registry: AgentRegistry, router: AgentRouter) -> None:
    """A running `bot` in one tenant does not make `bot` in another tenant running."""
    acme = await registry.create_tenant("acme")
    await registry.create("bot")
    there = await registry.create("bot", "acme")
    await router.get("default", "bot")
    await router.mark_running("acme", "bot")
    assert router.is_running("acme", "bot")
    assert router.is_running(acme.id, there.id)
    assert not router.is_running("default", "bot")
    assert not router.is_running("never-seen", "bot")
    router.invalidate("acme", "bot")
    assert router.is_running("acme", there.id)
    assert router.mark_stopped("acme", there.id) is True
    assert not router.is_running("acme", "bot")
    assert router.mark_stopped("acme", "bot") is False


@pytest.mark.parametrize("tenant", ["", None])
async def test_a_call_without_tenant_is_an_error(
    registry: AgentRegistry, router: AgentRouter, tenant: str
) -> None:
    """Every router method refuses a missing or empty tenant instead of looking globally."""
    await registry.create("bot")
    with pytest.raises(IdentityError, match="tenant"):
        await router.get(tenant, "bot")
    with pytest.raises(IdentityError, match="tenant"):
        router.invalidate(tenant, "bot")
    with pytest.raises(IdentityError, match="tenant"):
        router.is_running(tenant, "bot")
    with pytest.raises(IdentityError, match="tenant"):
        await router.mark_running(tenant, "bot")
    with pytest.raises(IdentityError, match="tenant"):
        router.mark_stopped(tenant, "bot")


async def test_same_key_two_tenants_two_entries(
    registry: AgentRegistry, router: AgentRouter
) -> None:
    """The same key routed in two tenants gives two entries for two agents."""
    await registry.create_tenant("acme")
    here = await registry.create("bot")
    there = await registry.create("bot", "acme")
    assert (await router.get("default", "bot")).agent.id == here.id
    assert (await router.get("acme", "bot")).agent.id == there.id
    assert len(router) == 2
    with pytest.raises(AgentNotFoundError):
        await router.get("acme", here.id)


async def test_rename_through_any_registry_rekeys_the_entry(
    db: Database, registry: AgentRegistry, router: AgentRouter
) -> None:
    """A rename drops the old key's entry; a running agent keeps running under its new key."""
    bot = await registry.create("bot")
    await router.mark_running("default", "bot")
    await AgentRegistry(db).rename("bot", "helper")
    assert router.cache_keys() == [f"{bot.tenant_id}:helper"]
    assert router.is_running("default", "helper")
    assert not router.is_running("default", "bot")
    with pytest.raises(AgentNotFoundError):
        await router.get("default", "bot")
    await AgentRegistry(db).remove(bot.id)
    assert len(router) == 0
    assert not router.is_running("default", bot.id)


async def test_stale_entries_are_refreshed_after_the_ttl(db: Database) -> None:
    """With ttl 0, a rename by another process is seen and leaves one entry, still running."""
    registry = AgentRegistry(db, cache_ttl=0)
    router = AgentRouter(registry, ttl=0)
    bot = await registry.create("bot")
    await router.mark_running("default", bot.id)
    await db.execute("UPDATE agents SET agent_key = 'moved' WHERE id = ?", (bot.id,))
    assert (await router.get("default", bot.id)).agent.key == "moved"
    assert router.cache_keys() == [f"{bot.tenant_id}:moved"]
    assert router.is_running("default", "moved")
    assert not router.is_running("default", "bot")


async def test_a_discarded_router_is_not_kept_alive(registry: AgentRegistry) -> None:
    """The registry holds a router's listener weakly: renames after it is gone still work."""
    await registry.create("bot")
    router = AgentRouter(registry)
    await router.get("default", "bot")
    del router
    gc.collect()
    assert (await registry.rename("bot", "helper")).key == "helper"

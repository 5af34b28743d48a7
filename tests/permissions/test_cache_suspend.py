"""The decision cache's flush and suspension: what the PostgreSQL change feed relies on."""

from __future__ import annotations

from actorscope.permissions import GrantStore
from actorscope.permissions._cache import DecisionCache
from actorscope.store import Database


def test_flush_refuses_a_put_for_an_agent_never_seen_before() -> None:
    """A read that began before a full flush is not cached, even for a brand-new agent."""
    cache: DecisionCache[str] = DecisionCache()
    generation = cache.generation("a")
    cache.clear()
    assert not cache.put(("a", "x"), "allow", generation)
    assert cache.put(("a", "x"), "allow", cache.generation("a"))


def test_suspended_cache_holds_nothing_until_resumed() -> None:
    """Suspend drops every entry and refuses puts; resume refuses reads begun while suspended."""
    cache: DecisionCache[str] = DecisionCache()
    assert cache.put(("a", "x"), "allow", cache.generation("a"))
    cache.suspend()
    assert cache.suspended
    assert len(cache) == 0
    during = cache.generation("a")
    assert not cache.put(("a", "x"), "allow", during)
    cache.resume()
    assert not cache.suspended
    assert not cache.put(("a", "x"), "allow", during)
    assert cache.put(("a", "x"), "allow", cache.generation("a"))
    assert cache.get(("a", "x")) == "allow"


async def test_feed_callbacks_drive_the_stores_cache(store: GrantStore) -> None:
    """Feed lost: the cache is suspended; restored: resumed; a remote change drops one agent."""
    assert store.cache.suspended  # no change feed runs yet: nothing may be cached
    await store.db.watch_changes()
    assert not store.cache.suspended
    store.cache.put(("a", 1), "allow", store.cache.generation("a"))
    store.cache.put(("b", 1), "allow", store.cache.generation("b"))
    store.on_remote_change("a")
    assert (store.cache.get(("a", 1)), store.cache.get(("b", 1))) == (None, "allow")
    store.on_feed_lost()
    assert store.cache.suspended
    assert len(store.cache) == 0
    store.on_feed_restored()
    assert not store.cache.suspended


async def test_watcher_is_one_entry_point_on_both_backends(db: Database, store: GrantStore) -> None:
    """The watcher starts the database's feed: an epoch poll on SQLite, LISTEN on PostgreSQL."""
    assert not db.listening  # the feed starts with the first cached check, or the watcher
    async with store.watch(interval=0.01) as watcher:
        assert not await watcher.apoll()
    assert db.pushes_changes is (db.dialect == "postgresql")
    assert db.listening  # the database's own feed outlives the watcher
    assert not store.cache.suspended

"""DecisionCache: per-agent invalidation, the generation guard against racing reads, the bound."""

from __future__ import annotations

from actorscope.permissions import DecisionCache


def test_put_get_and_invalidate_one_agent() -> None:
    """Invalidating an agent drops its entries only."""
    cache: DecisionCache[str] = DecisionCache()
    assert cache.put(("a", "k1"), "x", cache.generation("a"))
    assert cache.put(("b", "k1"), "y", cache.generation("b"))
    cache.invalidate("a")
    assert cache.get(("a", "k1")) is None
    assert cache.get(("b", "k1")) == "y"
    assert len(cache) == 1


def test_a_read_that_raced_a_change_is_not_stored() -> None:
    """A value read before an invalidation of its agent is refused."""
    cache: DecisionCache[str] = DecisionCache()
    generation = cache.generation("a")
    cache.invalidate("a")
    assert cache.put(("a", "k"), "stale", generation) is False
    assert cache.get(("a", "k")) is None


def test_full_cache_starts_over() -> None:
    """Reaching the bound clears everything before the new entry goes in."""
    cache: DecisionCache[int] = DecisionCache(max_entries=2)
    for i in range(2):
        cache.put(("a", str(i)), i, cache.generation("a"))
    assert cache.put(("a", "new"), 9, cache.generation("a"))
    assert len(cache) == 1
    assert cache.get(("a", "new")) == 9


def test_clear_moves_every_generation_on() -> None:
    """clear() empties the cache and refuses puts from reads that started before it."""
    cache: DecisionCache[str] = DecisionCache()
    generation = cache.generation("a")
    cache.put(("a", "k"), "x", generation)
    cache.clear()
    assert len(cache) == 0
    assert cache.put(("a", "k"), "x", generation) is False

"""DecisionCache: per-agent invalidation, the generation guard against racing reads, the bound."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from actorscope.agents import AgentRegistry
from actorscope.identity import Identity, PeerKind
from actorscope.permissions import GrantStore, PermissionPolicy
from actorscope.permissions._cache import DecisionCache
from actorscope.permissions._records import GrantLookup
from actorscope.store import Database, Transaction


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


# --- a flush during a cold read, through the policy --------------------------------------------

GROUP = "group:telegram:-100200"


class _RevokedDuringRead(GrantStore):
    """A store whose first lookup is overtaken by a revoke made elsewhere plus a flush.

    This is the interleaving of a running bot (cold check in flight) with
    ``actorscope grants remove`` in another shell and the change watcher's flush
    (``GrantStore.invalidate()`` with no agent).
    """

    def __init__(self, db: Database, elsewhere: GrantStore, agent_id: str) -> None:
        super().__init__(db)
        self._elsewhere = elsewhere
        self._agent_id = agent_id
        self._raced = False

    async def check(
        self,
        *,
        agent_id: str,
        scopes: Sequence[str],
        config_types: Sequence[str],
        sender_id: str,
        tenant_id: str | None = None,
        tx: Transaction | None = None,
        person: str = "",
    ) -> GrantLookup:
        answer = await super().check(
            agent_id=agent_id,
            scopes=scopes,
            config_types=config_types,
            sender_id=sender_id,
            tenant_id=tenant_id,
            tx=tx,
            person=person,
        )
        if not self._raced:
            self._raced = True
            await self._elsewhere.revoke(
                agent_id=self._agent_id, scope=GROUP, config_type="file_writer", sender_id="42"
            )
            self.invalidate()  # what store.watch().apoll() does when the epoch moves
        return answer


async def test_flush_during_cold_read_does_not_let_stale_allow_be_cached(tmp_path: Path) -> None:
    """A full flush (invalidate()) while a cold check reads must stop its allow being cached."""
    async with Database.open(tmp_path / "t.db") as db:
        agent = await AgentRegistry(db).create("main")
        elsewhere = GrantStore(db)  # stands in for another process on the same file
        await elsewhere.grant(
            agent_id=agent.id, scope=GROUP, config_type="file_writer", sender_id="42"
        )
        store = _RevokedDuringRead(db, elsewhere, agent.id)
        policy = PermissionPolicy(store)
        member = Identity(
            user_id=GROUP, sender_id="42", peer_kind=PeerKind.GROUP, agent_id=agent.id
        )
        # The lookup read the grant before the revoke: that one answer is still an allow.
        assert (await policy.check_file_writer(member)).allowed
        assert await elsewhere.list(agent_id=agent.id) == []
        after = await policy.check_file_writer(member)
        assert not after.allowed, f"revoked grant still honoured from cache: {after}"

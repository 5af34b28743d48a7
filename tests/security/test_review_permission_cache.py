"""Security review: the decision cache must never keep an allow that raced a revoke."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from actorscope.agents import AgentRegistry
from actorscope.identity import Identity, PeerKind
from actorscope.permissions import GrantStore, PermissionPolicy
from actorscope.permissions._records import GrantLookup
from actorscope.store import Database, Transaction

GROUP = "group:telegram:-100200"


class _RevokedDuringRead(GrantStore):
    """A store whose first lookup is overtaken by a revoke made elsewhere plus a flush.

    This is the interleaving of a running bot (cold check in flight) with
    ``actorscope grants remove`` in another shell and the GrantChangeWatcher's flush
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
    ) -> GrantLookup:
        answer = await super().check(
            agent_id=agent_id,
            scopes=scopes,
            config_types=config_types,
            sender_id=sender_id,
            tenant_id=tenant_id,
            tx=tx,
        )
        if not self._raced:
            self._raced = True
            await self._elsewhere.revoke(
                agent_id=self._agent_id, scope=GROUP, config_type="file_writer", sender_id="42"
            )
            self.invalidate()  # what GrantChangeWatcher.apoll() does when the epoch moves
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
        await policy.check_file_writer(member)  # raced: may answer either way
        assert await elsewhere.list(agent_id=agent.id) == []
        after = await policy.check_file_writer(member)
        assert not after.allowed, f"revoked grant still honoured from cache: {after}"

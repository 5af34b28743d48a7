"""The last-writer rule holds across workers: it is decided inside the database transaction."""

from __future__ import annotations

import asyncio

from actorscope.agents import AgentRegistry
from actorscope.identity import Identity, PeerKind
from actorscope.permissions import GrantStore, Reason, WriterManager
from actorscope.store import Database

GROUP = "group:telegram:-100200"
TRIALS = 8


def writer(agent_id: str, sender: str) -> Identity:
    """Group member ``sender`` acting for the agent."""
    return Identity(user_id=GROUP, sender_id=sender, peer_kind=PeerKind.GROUP, agent_id=agent_id)


async def test_two_workers_removing_the_two_last_writers_leave_one(db_target: str) -> None:
    """Two connections each removing the other of two writers: exactly one removal succeeds."""
    async with Database.open(db_target) as first, Database.open(db_target) as second:
        agent = await AgentRegistry(first).create("main")
        stores = GrantStore(first), GrantStore(second)
        managers = WriterManager(stores[0]), WriterManager(stores[1])
        for trial in range(TRIALS):
            for sender in ("42", "43"):
                await stores[0].grant(
                    agent_id=agent.id, scope=GROUP, config_type="file_writer", sender_id=sender
                )
            assert await managers[0].writers(writer(agent.id, "42")) == ["42", "43"]
            outcomes = await asyncio.gather(
                managers[0].remove_writer("43", writer(agent.id, "42")),
                managers[1].remove_writer("42", writer(agent.id, "43")),
            )
            assert sorted(d.ok for d in outcomes) == [False, True], (trial, outcomes)
            refused = next(d for d in outcomes if not d.ok)
            assert refused.reason in (Reason.LAST_WRITER, Reason.NOT_AUTHORIZED)
            remaining = await managers[0].writers(writer(agent.id, "42"))
            assert len(remaining) == 1, (trial, remaining)

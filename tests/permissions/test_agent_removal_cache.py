"""Agents in grant APIs: removal drops cached decisions; a key names the agent like its UUID."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from actorscope.agents import AgentRegistry
from actorscope.identity import Identity
from actorscope.permissions import GrantStore, PermissionPolicy, Reason
from actorscope.store import Database


async def test_removed_agent_loses_its_warm_allow(tmp_path: Path) -> None:
    """A warm allow is not served after the agent is removed through another registry."""
    async with Database.open(tmp_path / "t.db") as db:
        agent = await AgentRegistry(db).create("main")
        store = GrantStore(db)
        await store.grant(
            agent_id=agent.id,
            scope="group:telegram:-100",
            config_type="file_writer",
            sender_id="42",
        )
        policy = PermissionPolicy(store)
        member = Identity.chat("telegram", -100, 42, group=True)
        bound = replace(member, agent_id=agent.id)
        first = await policy.check_file_writer(bound)
        assert first.allowed
        assert first.reason is Reason.GRANTED
        await AgentRegistry(db).remove(agent.id)
        after = await policy.check_file_writer(bound)
        assert not after.allowed


async def test_grant_and_revoke_accept_the_agent_key(tmp_path: Path) -> None:
    """GrantStore takes an agent's key as well as its UUID; both name the same grants."""
    async with Database.open(tmp_path / "t.db") as db:
        agent = await AgentRegistry(db).create("helper")
        store = GrantStore(db)
        stored = await store.grant(
            agent_id="helper", scope="group:telegram:-100", config_type="cron", sender_id="42"
        )
        assert stored.agent_id == agent.id
        assert await store.revoke(
            agent_id="helper", scope="group:telegram:-100", config_type="cron", sender_id="42"
        )
        assert await store.list(agent_id=agent.id) == []

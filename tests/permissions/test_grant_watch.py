"""GrantStore.watch(): grant changes made by another connection reach this process's cache."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from tests._wait import wait_until

from actorscope.agents import AgentRegistry
from actorscope.errors import ConfigError
from actorscope.identity import Identity
from actorscope.permissions import GrantStore, PermissionPolicy, Reason
from actorscope.store import Database

SCOPE = "group:telegram:-100"


async def _member(db: Database) -> Identity:
    agent = await AgentRegistry(db).create("main")
    return replace(Identity.chat("telegram", -100, 42, group=True), agent_id=agent.id)


async def denied(policy: PermissionPolicy, member: Identity) -> bool:
    """Whether ``member``'s file_writer check is denied now."""
    return not (await policy.check_file_writer(member)).allowed


async def test_revoke_by_another_connection_is_seen_after_one_poll(tmp_path: Path) -> None:
    """After a foreign grant or revoke, one poll is enough for the next check to see it."""
    path = tmp_path / "t.db"
    async with Database.open(path) as ours, Database.open(path) as theirs:
        member = await _member(ours)
        assert member.agent_id is not None
        store = GrantStore(ours)
        policy = PermissionPolicy(store)
        watcher = store.watch()
        await watcher.apoll()
        await GrantStore(theirs).grant(
            agent_id=member.agent_id, scope=SCOPE, config_type="file_writer", sender_id="42"
        )
        # The database's own feed polls too and may have seen the move first: True or False.
        await watcher.apoll()
        assert (await policy.check_file_writer(member)).allowed
        await GrantStore(theirs).revoke(
            agent_id=member.agent_id, scope=SCOPE, config_type="file_writer", sender_id="42"
        )
        await watcher.apoll()
        after = await policy.check_file_writer(member)
        assert not after.allowed
        assert after.reason is Reason.NO_GRANT


async def test_unchanged_epoch_keeps_the_cache(tmp_path: Path) -> None:
    """Polling without a change reports no change and flushes nothing."""
    async with Database.open(tmp_path / "t.db") as db:
        store = GrantStore(db)
        watcher = store.watch()
        assert await watcher.apoll() is False
        assert await watcher.apoll() is False


async def test_running_watcher_flushes_within_its_interval(tmp_path: Path) -> None:
    """As a context manager the watcher polls on its own; a foreign revoke lands in time."""
    path = tmp_path / "t.db"
    async with Database.open(path) as ours, Database.open(path) as theirs:
        member = await _member(ours)
        assert member.agent_id is not None
        store = GrantStore(ours)
        policy = PermissionPolicy(store)
        await GrantStore(theirs).grant(
            agent_id=member.agent_id, scope=SCOPE, config_type="file_writer", sender_id="42"
        )
        async with store.watch(interval=0.01):
            assert (await policy.check_file_writer(member)).allowed
            await GrantStore(theirs).revoke(
                agent_id=member.agent_id, scope=SCOPE, config_type="file_writer", sender_id="42"
            )
            await wait_until(lambda: denied(policy, member))


async def test_interval_must_be_positive(tmp_path: Path) -> None:
    """A zero or negative interval is a configuration error."""
    async with Database.open(tmp_path / "t.db") as db:
        with pytest.raises(ConfigError, match="positive"):
            GrantStore(db).watch(interval=0)

"""WriterManager under sender denies: only holders the policy allows are writers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from actorscope.agents import Agent, AgentRegistry
from actorscope.identity import Identity, PeerKind
from actorscope.permissions import GrantStore, PermissionPolicy, Reason, WriterManager
from actorscope.store import Database

GROUP = "group:telegram:-100200"
GID = "81234567890123456"
MakeIdentity = Callable[..., Identity]


def _member(agent: Agent, sender: str) -> Identity:
    return Identity(
        user_id=f"guild:{GID}:user:{sender}",
        sender_id=sender,
        peer_kind=PeerKind.GROUP,
        agent_id=agent.id,
    )


async def _writer(store: GrantStore, agent: Agent, scope: str, *senders: str) -> None:
    for sender in senders:
        await store.grant(
            agent_id=agent.id, scope=scope, config_type="file_writer", sender_id=sender
        )


async def _deny(store: GrantStore, agent: Agent, scope: str, sender: str) -> None:
    await store.grant(
        agent_id=agent.id, scope=scope, config_type="*", sender_id=sender, permission="deny"
    )


async def test_listing_leaves_out_a_member_denied_at_a_broader_scope(
    store: GrantStore, agent: Agent, ident: MakeIdentity
) -> None:
    """/writers lists only holders check_file_writer allows; a group:* deny hides member 2."""
    await _writer(store, agent, GROUP, "1", "2")
    await _deny(store, agent, "group:*", "2")
    manager = WriterManager(store)
    assert await manager.writers(ident("1")) == ["1"]
    assert not (await PermissionPolicy(store).check_file_writer(ident("2"))).allowed


async def test_last_allowed_writer_is_kept_but_a_denied_holder_may_be_removed(
    store: GrantStore, agent: Agent, ident: MakeIdentity
) -> None:
    """A denied holder does not count for the last-writer rule, and their stale row may go."""
    await _writer(store, agent, GROUP, "1", "2")
    await _deny(store, agent, "*", "2")
    manager = WriterManager(store)
    last = await manager.remove_writer("1", ident("1"))
    assert (last.ok, last.reason) == (False, Reason.LAST_WRITER)
    stale = await manager.remove_writer("2", ident("1"))
    assert (stale.ok, stale.reason) == (True, Reason.WRITER_REMOVED)
    assert {g.sender_id for g in await store.list(config_type="file_writer")} == {"1"}


async def test_denied_holders_still_block_the_admin_bootstrap(
    store: GrantStore, agent: Agent, ident: MakeIdentity
) -> None:
    """A group whose only holder is denied is not reopened to platform admins."""
    await _writer(store, agent, GROUP, "2")
    await _deny(store, agent, "*", "2")
    manager = WriterManager(store)
    assert await manager.writers(ident("7")) == []
    refused = await manager.add_writer("8", ident("7"), platform_admin=True)
    assert (refused.ok, refused.reason) == (False, Reason.NOT_AUTHORIZED)


async def test_discord_guild_deny_outranks_a_member_scoped_writer(
    store: GrantStore, agent: Agent
) -> None:
    """A guild:<gid>:* sender deny stops a writer whose allow is guild-wide or member-scoped."""
    await _writer(store, agent, f"guild:{GID}:*", "1", "2")
    await _writer(store, agent, f"guild:{GID}:user:3", "3")
    await _deny(store, agent, f"guild:{GID}:*", "2")
    await _deny(store, agent, f"guild:{GID}:*", "3")
    manager = WriterManager(store)
    assert await manager.writers(_member(agent, "1")) == ["1"]
    for denied in ("2", "3"):
        refused = await manager.add_writer("4", _member(agent, denied))
        assert (refused.ok, refused.reason) == (False, Reason.NOT_AUTHORIZED)
    assert (await manager.add_writer("4", _member(agent, "1"))).ok


async def test_sender_denied_by_grant_is_not_a_writer_who_may_manage(tmp_path: Path) -> None:
    """A member whose file_writer is denied (sender deny beats allow) must not manage writers."""
    async with Database.open(tmp_path / "t.db") as db:
        agent = await AgentRegistry(db).create("main")
        store = GrantStore(db)
        for writer in ("1", "2"):
            await store.grant(
                agent_id=agent.id, scope=GROUP, config_type="file_writer", sender_id=writer
            )
        # The operator shuts member 2 out everywhere; their old allow row is still there.
        await store.grant(
            agent_id=agent.id, scope="*", config_type="*", sender_id="2", permission="deny"
        )
        denied = Identity(
            user_id=GROUP,
            sender_id="2",
            channel="telegram",
            chat_id="-100200",
            peer_kind=PeerKind.GROUP,
            agent_id=agent.id,
        )
        check = await PermissionPolicy(store).check_file_writer(denied)
        assert not check.allowed
        added = await WriterManager(store).add_writer("3", denied)
        assert not added.ok, f"denied member added a writer ({added.manager.value})"
        removed = await WriterManager(store).remove_writer("1", denied)
        assert not removed.ok, f"denied member removed a writer ({removed.manager.value})"

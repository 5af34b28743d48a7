"""Security review: writer management must not fall back to admin bootstrap while writers exist."""

from __future__ import annotations

from pathlib import Path

from actorscope.agents import AgentRegistry
from actorscope.identity import Identity, PeerKind
from actorscope.permissions import GrantStore, PermissionPolicy, WriterManager
from actorscope.store import Database

GROUP = "group:telegram:-100200"


async def test_uppercase_agent_uuid_does_not_reopen_admin_bootstrap(tmp_path: Path) -> None:
    """An agent UUID in upper case (is_uuid accepts it) must still see the group's writers."""
    async with Database.open(tmp_path / "t.db") as db:
        agent = await AgentRegistry(db).create("main")
        store = GrantStore(db)
        await store.grant(agent_id=agent.id, scope=GROUP, config_type="file_writer", sender_id="42")
        manager = WriterManager(store)
        admin = Identity(
            user_id=GROUP,
            sender_id="7",
            channel="telegram",
            chat_id="-100200",
            peer_kind=PeerKind.GROUP,
            agent_id=agent.id.upper(),
        )
        assert await manager.writers(admin) == ["42"]
        decision = await manager.add_writer("8", admin, platform_admin=True)
        assert not decision.ok, f"admin managed writers of a group that has one: {decision}"


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

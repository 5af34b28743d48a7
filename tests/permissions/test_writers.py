"""WriterManager: who may manage writers, the last-writer rule, and Discord guild-wide grants."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from actorscope.agents import Agent, AgentRegistry
from actorscope.context import bind_identity
from actorscope.identity import Identity, PeerKind
from actorscope.permissions import (
    GrantStore,
    PermissionPolicy,
    Reason,
    WriterDecision,
    WriterManager,
)
from actorscope.permissions._writers import WriterRole
from actorscope.store import Database

GROUP = "group:telegram:-100200"
GID = "81234567890123456"
MakeIdentity = Callable[..., Identity]


def member(agent: Agent, sender: str) -> Identity:
    """A Discord guild member's identity for ``agent``."""
    return Identity(
        user_id=f"guild:{GID}:user:{sender}",
        sender_id=sender,
        peer_kind=PeerKind.GROUP,
        agent_id=agent.id,
    )


def test_writer_scope_per_platform() -> None:
    """Telegram writers live at the group scope, Discord writers at guild:<gid>:*; DMs have none."""
    assert WriterManager.scope_of(GROUP) == GROUP
    assert WriterManager.scope_of(f"guild:{GID}:user:42") == f"guild:{GID}:*"
    assert WriterManager.scope_of("42") is None


async def test_owner_adds_and_lists_writers(store: GrantStore, ident: MakeIdentity) -> None:
    """A configured owner adds a writer; the grant is file_writer at the group scope."""
    manager = WriterManager(store, owners=["1"])
    decision = await manager.add_writer("42", ident("1"))
    assert decision == WriterDecision(True, Reason.WRITER_ADDED, GROUP, "42", WriterRole.OWNER)
    assert await manager.writers(ident("1")) == ["42"]
    (grant,) = await store.list()
    assert (grant.scope, grant.config_type, grant.sender_id, grant.granted_by) == (
        GROUP,
        "file_writer",
        "42",
        "1",
    )
    assert (await PermissionPolicy(store).check_file_writer(ident("42"))).allowed


async def test_existing_writer_may_add_and_stranger_may_not(
    store: GrantStore, ident: MakeIdentity
) -> None:
    """A writer adds another writer; a non-writer is refused (not_authorized) and audited."""
    manager = WriterManager(store, owners=["1"])
    await manager.add_writer("42", ident("1"))
    added = await manager.add_writer("43", ident("42"))
    assert (added.ok, added.manager) == (True, WriterRole.WRITER)
    refused = await manager.add_writer("44", ident("99"))
    assert (refused.ok, refused.reason) == (False, Reason.NOT_AUTHORIZED)
    assert await manager.writers(ident("1")) == ["42", "43"]
    entry = (await store.audit.list(actor="99"))[0]
    assert (entry.action, entry.reason, entry.sender_id) == (
        "writer.refused",
        "not_authorized",
        "44",
    )


async def test_platform_admin_only_for_the_first_writer(
    store: GrantStore, ident: MakeIdentity
) -> None:
    """A platform admin (platform_admin=True) may add the first writer only, a non-admin none."""
    manager = WriterManager(store)
    refused_stranger = await manager.add_writer("42", ident("8"), platform_admin=False)
    assert refused_stranger.reason is Reason.NOT_AUTHORIZED
    assert await store.list() == []
    first = await manager.add_writer("42", ident("7"), platform_admin=True)
    assert (first.ok, first.manager) == (True, WriterRole.PLATFORM_ADMIN)
    assert await manager.writers(ident("7")) == ["42"]
    second = await manager.add_writer("43", ident("7"), platform_admin=True)
    assert (second.ok, second.reason) == (False, Reason.NOT_AUTHORIZED)
    assert await manager.writers(ident("7")) == ["42"]


async def test_the_platform_is_asked_only_while_the_group_has_no_writer(
    store: GrantStore, ident: MakeIdentity
) -> None:
    """needs_platform_admin: a stranger in an empty group only; never an owner or a writer."""
    manager = WriterManager(store, owners=["1"])
    assert await manager.needs_platform_admin(ident("8"))
    assert not await manager.needs_platform_admin(ident("1"))
    assert (await manager.add_writer("42", ident("1"))).ok
    assert not await manager.needs_platform_admin(ident("8"))
    assert not await manager.needs_platform_admin(ident("42"))


async def test_a_platform_admin_removing_in_an_empty_group_finds_no_writer(
    store: GrantStore, ident: MakeIdentity
) -> None:
    """remove_writer takes platform_admin too: an admin learns not_a_writer, others no more."""
    manager = WriterManager(store)
    admin = await manager.remove_writer("42", ident("7"), platform_admin=True)
    assert (admin.reason, admin.manager) == (Reason.NOT_A_WRITER, WriterRole.PLATFORM_ADMIN)
    stranger = await manager.remove_writer("42", ident("8"))
    assert stranger.reason is Reason.NOT_AUTHORIZED


async def test_last_writer_cannot_be_removed(store: GrantStore, ident: MakeIdentity) -> None:
    """Removing the only writer is refused (last_writer); with two, one may go."""
    manager = WriterManager(store, owners=["1"])
    await manager.add_writer("42", ident("1"))
    last = await manager.remove_writer("42", ident("1"))
    assert (last.ok, last.reason) == (False, Reason.LAST_WRITER)
    await manager.add_writer("43", ident("42"))
    removed = await manager.remove_writer("42", ident("43"))
    assert (removed.ok, removed.reason) == (True, Reason.WRITER_REMOVED)
    assert await manager.writers(ident("1")) == ["43"]
    denied = await PermissionPolicy(store).check_file_writer(ident("42"))
    assert denied.reason is Reason.NO_GRANT


async def test_add_existing_and_remove_missing(store: GrantStore, ident: MakeIdentity) -> None:
    """Adding a writer twice says already_writer; removing a non-writer says not_a_writer."""
    manager = WriterManager(store, owners=["1"])
    await manager.add_writer("42", ident("1"))
    assert (await manager.add_writer("42", ident("1"))).reason is Reason.ALREADY_WRITER
    assert (await manager.remove_writer("77", ident("1"))).reason is Reason.NOT_A_WRITER


async def test_refusals_for_context_agent_requester_and_target(
    store: GrantStore, ident: MakeIdentity
) -> None:
    """DMs, no agent, non-person requesters and bad targets are refused with their reason."""
    manager = WriterManager(store, owners=["1", "subagent:x"])
    assert (await manager.add_writer("42", ident("1", user_id="1"))).reason is (
        Reason.NOT_GROUP_CONTEXT
    )
    assert (await manager.add_writer("42")).reason is Reason.NOT_GROUP_CONTEXT
    assert (await manager.add_writer("42", ident("1", agent_id=None))).reason is (Reason.NO_AGENT)
    for requester in ("", "subagent:x", "1087968824"):
        refused = await manager.add_writer("42", ident(requester))
        assert refused.reason is Reason.MANAGER_NOT_A_PERSON
    for target in ("", "*", "subagent:abc", "136817688", "a b"):
        refused = await manager.add_writer(target, ident("1"))
        assert refused.reason is Reason.INVALID_TARGET
    assert await store.list() == []


async def test_bound_identity_is_the_default(store: GrantStore, ident: MakeIdentity) -> None:
    """Without an identity argument the manager uses the bound one."""
    manager = WriterManager(store, owners=["1"])
    with bind_identity(ident("1")):
        assert (await manager.add_writer("42|bob")).target == "42"
        assert await manager.writers() == ["42"]


async def test_discord_writers_are_guild_wide(store: GrantStore, agent: Agent) -> None:
    """A Discord writer is granted at guild:<gid>:* and so may write in every member scope."""
    manager = WriterManager(store, owners=["1"])
    decision = await manager.add_writer("42", member(agent, "1"))
    assert decision.scope == f"guild:{GID}:*"
    policy = PermissionPolicy(store)
    assert (await policy.check_file_writer(member(agent, "42"))).allowed
    assert not (await policy.check_file_writer(member(agent, "43"))).allowed


async def test_discord_removal_revokes_member_scoped_grants(
    store: GrantStore, agent: Agent
) -> None:
    """Removing a Discord writer also revokes guild:<gid>:user:<uid> file_writer grants."""
    manager = WriterManager(store, owners=["1"])
    await manager.add_writer("43", member(agent, "1"))
    await store.grant(
        agent_id=agent.id, scope=f"guild:{GID}:user:42", config_type="file_writer", sender_id="42"
    )
    await store.grant(
        agent_id=agent.id, scope=f"guild:{GID}:user:42", config_type="file_writer", sender_id="*"
    )
    await store.grant(
        agent_id=agent.id, scope=f"guild:{GID}:user:42", config_type="cron", sender_id="42"
    )
    assert await manager.writers(member(agent, "1")) == ["42", "43"]
    await manager.add_writer("42", member(agent, "1"))  # already a writer via the member grant
    removed = await manager.remove_writer("42", member(agent, "43"))
    assert removed.ok
    remaining = {(g.scope, g.config_type, g.sender_id) for g in await store.list()}
    assert remaining == {
        (f"guild:{GID}:*", "file_writer", "43"),
        (f"guild:{GID}:user:42", "cron", "42"),
    }
    assert not (await PermissionPolicy(store).check_file_writer(member(agent, "42"))).allowed


async def test_member_scoped_writer_counts_for_the_last_writer_rule(
    store: GrantStore, agent: Agent
) -> None:
    """A guild whose only writer holds a member-scoped grant keeps that writer."""
    await store.grant(
        agent_id=agent.id, scope=f"guild:{GID}:user:42", config_type="file_writer", sender_id="42"
    )
    manager = WriterManager(store)
    last = await manager.remove_writer("42", member(agent, "42"))
    assert last.reason is Reason.LAST_WRITER
    assert len(await store.list()) == 1


async def test_a_look_alike_sender_cannot_manage_writers(
    store: GrantStore, ident: MakeIdentity
) -> None:
    """A platform saying "042" is an admin does not make it a manager: it is no person."""
    manager = WriterManager(store, owners=["1"])
    for sender in ("042", "42\u200b"):
        refused = await manager.add_writer("43", ident(sender), platform_admin=True)
        assert (refused.ok, refused.reason) == (False, Reason.MANAGER_NOT_A_PERSON)
    assert await store.list() == []


async def test_a_look_alike_target_is_refused(store: GrantStore, ident: MakeIdentity) -> None:
    """An owner cannot make "042", "42\u200b" or full-width digits a writer of a Telegram group."""
    manager = WriterManager(store, owners=["1"])
    for target in ("042", "42\u200b", "\uff14\uff12", "+42"):
        refused = await manager.add_writer(target, ident("1"))
        assert (refused.ok, refused.reason) == (False, Reason.INVALID_TARGET), target
    assert await store.list() == []


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

"""Memory tools in groups: only people add, only owners (or file_writer) change; all audited."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

import pytest

from actorscope.agents import Agent
from actorscope.context import bind_identity
from actorscope.identity import Identity, PeerKind, SenderKind
from actorscope.permissions import AuditLog, GrantStore, PermissionPolicy
from actorscope.store import Database
from actorscope.tools import ToolRegistry
from actorscope.tools._memory import DatabaseMemory, MemoryKey

pytestmark = pytest.mark.sqlite_only(
    "the tools' subject is the boundary, not the dialect: test_cron_keys.py and tests/store "
    "run the tools' tables on both"
)

GrantWriter = Callable[[str, str], Awaitable[None]]
CHAT = -100200300
OWNER, OTHER = "5151", "6161"
SCOPE = f"group:telegram:{CHAT}"


def member(sender: str, **changes: Any) -> Identity:
    """A Telegram supergroup member."""
    return replace(Identity.chat("telegram", CHAT, sender, group=True), **changes)


SUBAGENT = Identity(
    user_id=SCOPE, sender_id="subagent:task-1", channel="telegram", chat_id=str(CHAT),
    sender_kind=SenderKind.SYNTHETIC,
)  # fmt: skip
NOBODY = Identity.chat("telegram", CHAT, None, group=True)


async def reflect(tools: ToolRegistry, who: Identity, **args: Any) -> dict[str, Any]:
    """memory_reflect in namespace p as ``who`` (bound, as a host would)."""
    with bind_identity(who):
        result = await tools.call("memory_reflect", {"agent_id": "p", **args})
    return {"is_error": result.is_error, **result.payload}


async def _owned_entry(registry: ToolRegistry) -> int:
    added = await reflect(registry, member(OWNER), action="add", text="owner's note")
    assert not added["is_error"], added
    entry: int = added["entry"]["id"]
    return entry


CHANGES: list[dict[str, Any]] = [
    {"action": "update", "text": "rewritten"},
    {"action": "forget"},
    {"action": "pin"},
    {"action": "unpin"},
]


@pytest.mark.parametrize("change", CHANGES, ids=lambda c: c["action"])
@pytest.mark.parametrize(
    "who", [member(OTHER), SUBAGENT, NOBODY], ids=["other-member", "subagent", "empty-sender"]
)
async def test_only_the_owner_changes_or_deletes_an_entry(
    registry: ToolRegistry, who: Identity, change: dict[str, Any]
) -> None:
    """Another member, a subagent run or an empty sender cannot change the owner's entry."""
    entry = await _owned_entry(registry)
    refused = await reflect(registry, who, target=entry, **change)
    assert refused["error"]["code"] == "permission_denied", refused
    with bind_identity(member(OWNER)):
        found = await registry.call("memory_search", {"agent_id": "p"})
    (kept,) = found.payload["entries"]
    assert (kept["id"], kept["text"], kept["pinned"]) == (entry, "owner's note", False)


@pytest.mark.parametrize("change", CHANGES, ids=lambda c: c["action"])
async def test_the_owner_changes_their_own_entry(
    registry: ToolRegistry, change: dict[str, Any]
) -> None:
    """The member who added an entry may update, pin, unpin and forget it."""
    entry = await _owned_entry(registry)
    done = await reflect(registry, member(OWNER), target=entry, **change)
    assert not done["is_error"], done


async def test_a_file_writer_or_an_admin_may_change_anyones_entry(
    registry: ToolRegistry, grant_writer: GrantWriter
) -> None:
    """A file_writer grant or a bypass role overrides ownership."""
    entry = await _owned_entry(registry)
    await grant_writer(SCOPE, OTHER)
    updated = await reflect(registry, member(OTHER), action="update", target=entry, text="ok")
    assert not updated["is_error"], updated
    admin = member("7171", role="admin")
    forgot = await reflect(registry, admin, action="forget", target=entry)
    assert not forgot["is_error"], forgot


@pytest.mark.parametrize(
    ("who", "reason"),
    [(SUBAGENT, "synthetic_sender"), (NOBODY, "empty_sender")],
    ids=["subagent", "empty-sender"],
)
async def test_adding_in_a_group_needs_a_person(
    db: Database, agent: Agent, registry: ToolRegistry, who: Identity, reason: str
) -> None:
    """A subagent run or an empty sender cannot add; the refusal is audited with its reason."""
    refused = await reflect(registry, who, action="add", text="planted")
    assert refused["error"]["code"] == "permission_denied"
    assert refused["error"]["reason"] == reason
    (row,) = await AuditLog(db).list(agent_id=agent.id)
    assert (row.action, row.reason, row.config_type) == ("check.deny", reason, "memory")


async def test_memory_changes_are_audited_with_actor_scope_and_entry(
    db: Database, agent: Agent, registry: ToolRegistry
) -> None:
    """add, update and forget each leave a memory.<action> row naming the actor and entry."""
    entry = await _owned_entry(registry)
    await reflect(registry, member(OWNER), action="update", target=entry, text="v2")
    await reflect(registry, member(OWNER), action="forget", target=entry)
    rows = await AuditLog(db).list(agent_id=agent.id)
    assert [r.action for r in rows] == ["memory.forget", "memory.update", "memory.add"]
    for row in rows:
        assert (row.sender_id, row.actor, row.scope, row.reason) == (OWNER, OWNER, SCOPE, "owner")
        assert row.detail["entry_id"] == entry
        assert row.detail["namespace"] == "p"


async def test_a_refused_change_by_another_member_is_audited(
    db: Database, agent: Agent, store: GrantStore, registry: ToolRegistry
) -> None:
    """The file_writer check that refuses another member writes its denial row."""
    entry = await _owned_entry(registry)
    await reflect(registry, member(OTHER), action="forget", target=entry)
    newest = (await AuditLog(db).list(agent_id=agent.id))[0]
    assert (newest.action, newest.sender_id, newest.reason) == ("check.deny", OTHER, "no_grant")


async def test_an_http_user_cannot_read_the_telegram_dm_memory_of_the_same_id(
    registry: ToolRegistry,
) -> None:
    """HTTP user "4242" and Telegram user 4242 have separate memory."""
    telegram = Identity.chat("telegram", 4242, 4242, group=False)
    http_user = Identity(user_id="4242", sender_id="", channel="http")
    await reflect(registry, telegram, action="add", text="telegram secret")
    with bind_identity(http_user):
        found = await registry.call("memory_search", {"agent_id": "p"})
    assert found.payload["entries"] == []


async def test_telegram_dm_rows_stored_under_the_bare_id_stay_readable(
    db: Database, agent: Agent, registry: ToolRegistry
) -> None:
    """A row written before channels were in the key (scope "4242") is still the Telegram user's."""
    await DatabaseMemory(db).add(MemoryKey(agent.id, "p", "4242"), "old note", created_by="4242")
    with bind_identity(Identity.chat("telegram", 4242, 4242, group=False)):
        found = await registry.call("memory_search", {"agent_id": "p"})
    assert [e["text"] for e in found.payload["entries"]] == ["old note"]


LOOK_ALIKES: list[tuple[str, str]] = [
    ("042", "invalid_identity"),  # leading zero: would escape a deny on 42
    ("42\u200b", "invalid_identity"),  # zero-width space
    ("\uff14\uff12", "invalid_identity"),  # full-width digits
    ("+42", "invalid_identity"),
    ("SUBAGENT:x", "synthetic_sender"),
    ("\u200bsubagent:x", "synthetic_sender"),
    ("0777000", "placeholder_sender"),
]


@pytest.mark.parametrize(("sender", "reason"), LOOK_ALIKES, ids=[s for s, _ in LOOK_ALIKES])
async def test_a_look_alike_sender_cannot_add_memory_in_a_group(
    db: Database, agent: Agent, registry: ToolRegistry, sender: str, reason: str
) -> None:
    """A look-alike sender id in a Telegram group is no person: add is refused with its reason."""
    refused = await reflect(registry, member(OWNER, sender_id=sender), action="add", text="x")
    assert refused["error"]["code"] == "permission_denied", refused
    assert refused["error"]["reason"] == reason
    (row,) = await AuditLog(db).list(agent_id=agent.id)
    assert (row.action, row.reason, row.config_type) == ("check.deny", reason, "memory")


async def test_a_look_alike_discord_member_cannot_add_memory(registry: ToolRegistry) -> None:
    """In a Discord guild scope a sender id with a leading zero is refused as invalid_identity."""
    who = Identity(
        user_id="guild:81234567890123456:user:042", sender_id="042", channel="discord",
        peer_kind=PeerKind.GROUP,
    )  # fmt: skip
    refused = await reflect(registry, who, action="add", text="x")
    assert refused["error"]["reason"] == "invalid_identity", refused


@pytest.mark.parametrize(
    "sender", ["", "subagent:t", "777000", "042", "42\u200b", "\uff14\uff12", "42"]
)
async def test_memory_refuses_exactly_when_the_policy_denies_a_non_person(
    agent: Agent, store: GrantStore, registry: ToolRegistry, sender: str
) -> None:
    """Adding memory and the file_writer check judge a sender alike, with the same reason word."""
    who = member(OWNER, sender_id=sender, agent_id=agent.id, tenant_id=agent.tenant_id)
    policy = await PermissionPolicy(store).check_file_writer(who)
    added = await reflect(registry, who, action="add", text="x")
    if policy.reason == "no_grant":  # a person: the policy looked the grant up
        assert not added["is_error"], added
    else:
        assert added["error"]["reason"] == policy.reason, (added, policy)


async def test_a_look_alike_of_the_owner_cannot_change_the_entry(registry: ToolRegistry) -> None:
    """05151 is not the owner 5151: its change goes to the file_writer check, which refuses it."""
    entry = await _owned_entry(registry)
    refused = await reflect(registry, member(OWNER, sender_id="0" + OWNER), action="forget",
                            target=entry)  # fmt: skip
    assert refused["error"]["code"] == "permission_denied"
    assert refused["error"]["reason"] == "invalid_identity"

"""Security review: identity builders and the identity step of a group check.

Builders must never hand a non-group caller a group scope; a check must deny an identity no
store can hold, and any look-alike of a person id, before the lookup (issue 13, items 2, 10).
"""

from __future__ import annotations

import json

import pytest

from actorscope.agents import AgentRegistry
from actorscope.errors import IdentityError
from actorscope.identity import Identity, PeerKind, discord_identity, http_identity
from actorscope.permissions import GrantStore, PermissionPolicy, Reason
from actorscope.store import Database


@pytest.mark.parametrize("user", ["group:telegram:-100200", "guild:81234567890123456:user:42"])
def test_http_identity_refuses_a_group_shaped_user_id(user: str) -> None:
    """An HTTP user id shaped like a group scope must not become that group's scope."""
    try:
        identity = http_identity(user)
    except IdentityError:
        return
    assert not identity.is_group, (
        f"HTTP user {user!r} got the group's scope (peer_kind={identity.peer_kind.value}, "
        "so it shares that group's memory and files)"
    )


@pytest.mark.parametrize("placeholder", ["1087968824", "136817688", "777000"])
def test_discord_identity_never_gives_a_placeholder_a_sender_id(placeholder: str) -> None:
    """docs/design.md: Telegram placeholder ids are never identities (Discord builder too)."""
    try:
        identity = discord_identity(placeholder, chat_id=5, guild_id=9)
    except IdentityError:
        return
    assert identity.sender_id == "", f"placeholder {placeholder} became sender_id"


# --- issue 13 item 2: text no store can hold is invalid_identity on every backend ---------

GROUP = "group:telegram:-100200"
GUILD = "guild:81234567890123456"

UNSTORABLE: list[tuple[str, str, str, str]] = [
    # (scope, sender, scope as audited, sender as audited)
    (GROUP, "4\x002", GROUP, "4\\x002"),
    (GROUP, "42\x00", GROUP, "42\\x00"),
    ("group:telegram:-100\x00200", "42", "group:telegram:-100\\x00200", "42"),
    (GROUP, "42\ud800", GROUP, "42\\ud800"),
    (GROUP, "\x1b42", GROUP, "\\x1b42"),
    (GROUP, "4\x7f2", GROUP, "4\\x7f2"),
    (GROUP, "4\x852", GROUP, "4\\x852"),
    (GUILD + ":user:\x0042", "42", GUILD + ":user:\\x0042", "42"),
]


async def _policy_with_everyone_allowed(db: Database) -> tuple[PermissionPolicy, str]:
    agent = await AgentRegistry(db).create("main")
    store = GrantStore(db)
    # A wildcard allow: a check that reached the lookup (or failed open) would allow.
    await store.grant(agent_id=agent.id, scope="*", config_type="*", sender_id="*")
    return PermissionPolicy(store), agent.id


@pytest.mark.parametrize(("scope", "sender", "audited_scope", "audited_sender"), UNSTORABLE)
async def test_unstorable_identity_is_denied_and_audited_on_every_backend(
    backend: str,
    db: Database,
    scope: str,
    sender: str,
    audited_scope: str,
    audited_sender: str,
) -> None:
    """NUL, controls or a lone surrogate: invalid_identity, with an escaped audit row (both DBs)."""
    policy, agent_id = await _policy_with_everyone_allowed(db)
    member = Identity(user_id=scope, sender_id=sender, peer_kind=PeerKind.GROUP, agent_id=agent_id)
    decision = await policy.check_file_writer(member)
    assert (decision.allowed, decision.reason) == (False, Reason.INVALID_IDENTITY), backend
    await policy.store.audit.settle()  # the denial commits with its group
    rows = await db.fetchall(
        "SELECT actor_id, user_id, reason, detail FROM audit_log WHERE action = 'check.deny'"
    )
    assert [(r["actor_id"], r["user_id"], r["reason"]) for r in rows] == [
        (audited_sender, audited_scope, "invalid_identity")
    ]
    # The detail is JSON: its own escapes round-trip the exact sender.
    assert json.loads(rows[0]["detail"]) == {"sender_id": sender}


async def test_unstorable_tenant_is_denied_on_every_backend(backend: str, db: Database) -> None:
    """A NUL in the tenant id never reaches the lookup (PostgreSQL would fail it, then open)."""
    policy, agent_id = await _policy_with_everyone_allowed(db)
    member = Identity(
        user_id=GROUP, sender_id="42", peer_kind=PeerKind.GROUP, agent_id=agent_id,
        tenant_id="t\x00",
    )  # fmt: skip
    decision = await policy.check_file_writer(member)
    assert (decision.allowed, decision.reason) == (False, Reason.INVALID_IDENTITY), backend
    await policy.store.audit.settle()  # the denial commits with its group
    row = await db.fetchone("SELECT tenant_id FROM audit_log WHERE reason = 'invalid_identity'")
    assert row is not None
    assert row["tenant_id"] == "t\\x00"


# --- issue 13 item 10: look-alike senders are not people ------------------------------------

LOOKALIKES: list[tuple[str, str, str, Reason]] = [
    # (scope, Identity.channel, sender, reason)
    (GROUP, "telegram", "SUBAGENT:x", Reason.SYNTHETIC_SENDER),
    (GROUP, "telegram", "\u200bsubagent:x", Reason.SYNTHETIC_SENDER),
    (GROUP, "telegram", "Session_Send_Tool", Reason.SYNTHETIC_SENDER),
    # Look-alikes of a placeholder are placeholders (the reason names what they imitate).
    (GROUP, "telegram", "0777000", Reason.PLACEHOLDER_SENDER),
    (GROUP, "telegram", "\uff17\uff17\uff17\uff10\uff10\uff10", Reason.PLACEHOLDER_SENDER),
    (GROUP, "telegram", "\uff14\uff12", Reason.INVALID_IDENTITY),  # full-width 42
    (GROUP, "telegram", "042", Reason.INVALID_IDENTITY),
    (GROUP, "telegram", "42\u200b", Reason.INVALID_IDENTITY),
    (GROUP, "telegram", "+42", Reason.INVALID_IDENTITY),
    (GROUP, "telegram", "-42", Reason.INVALID_IDENTITY),
    (GROUP, "telegram", "\u0664\u0662", Reason.INVALID_IDENTITY),  # Arabic-Indic 42
    (GROUP, "telegram", "bob", Reason.INVALID_IDENTITY),
    (GROUP, "telegram", "042|bob", Reason.INVALID_IDENTITY),
    (GROUP, "", "042", Reason.INVALID_IDENTITY),  # the scope names Telegram
    ("group:-100200", "", "042", Reason.INVALID_IDENTITY),  # legacy scope: Telegram
    (f"{GUILD}:user:42", "", "042", Reason.INVALID_IDENTITY),  # guild: Discord
    ("group:discord:5", "", "042", Reason.INVALID_IDENTITY),
    ("group:matrix:5", "telegram", "042", Reason.INVALID_IDENTITY),  # the channel names it
    ("group:matrix:5", "matrix", "alice\u200b", Reason.INVALID_IDENTITY),
    ("group:matrix:5", "matrix", "\uff41lice", Reason.INVALID_IDENTITY),  # full-width a
    ("group:matrix:5", "matrix", "0777000", Reason.PLACEHOLDER_SENDER),
    ("group:matrix:5", "matrix", "\uff17\uff17\uff17\uff10\uff10\uff10", Reason.PLACEHOLDER_SENDER),
    ("group:matrix:5", "matrix", "TICKER:x", Reason.SYNTHETIC_SENDER),
]


@pytest.mark.parametrize(("scope", "channel", "sender", "reason"), LOOKALIKES)
async def test_lookalike_sender_is_denied_even_under_a_wildcard_allow(
    db: Database, scope: str, channel: str, sender: str, reason: Reason
) -> None:
    """A look-alike of a person, placeholder or synthetic id is never checked as a person."""
    policy, agent_id = await _policy_with_everyone_allowed(db)
    member = Identity(
        user_id=scope, sender_id=sender, channel=channel, peer_kind=PeerKind.GROUP,
        agent_id=agent_id,
    )  # fmt: skip
    decision = await policy.check_file_writer(member)
    assert (decision.allowed, decision.reason) == (False, reason)


async def test_leading_zero_no_longer_escapes_a_deny(db: Database) -> None:
    """``042`` was looked up as another sender and escaped a deny on 42 under a ``*`` allow."""
    policy, agent_id = await _policy_with_everyone_allowed(db)
    await policy.store.grant(
        agent_id=agent_id, scope=GROUP, config_type="file_writer", sender_id="42", permission="deny"
    )
    for sender, reason in (("42", Reason.DENIED_BY_GRANT), ("042", Reason.INVALID_IDENTITY)):
        member = Identity(user_id=GROUP, sender_id=sender, peer_kind=PeerKind.GROUP,
                          agent_id=agent_id)  # fmt: skip
        assert (await policy.check_file_writer(member)).reason is reason


@pytest.mark.parametrize(
    ("scope", "channel", "sender"),
    [
        (GROUP, "telegram", "42"),
        (GROUP, "telegram", "42|bob"),  # legacy: split on | first
        (GROUP, "telegram", " 42 "),
        (f"{GUILD}:user:81234567890123457", "discord", "81234567890123457"),
        ("group:matrix:5", "matrix", "@alice:example.org"),  # custom channels: opaque ids
        ("group:matrix:5", "matrix", "josé"),
    ],
)
async def test_well_formed_senders_still_reach_the_lookup(
    db: Database, scope: str, channel: str, sender: str
) -> None:
    """Canonical Telegram/Discord ids, legacy ``id|name`` and custom-channel ids are granted."""
    policy, agent_id = await _policy_with_everyone_allowed(db)
    member = Identity(
        user_id=scope, sender_id=sender, channel=channel, peer_kind=PeerKind.GROUP,
        agent_id=agent_id,
    )  # fmt: skip
    assert (await policy.check_file_writer(member)).reason is Reason.GRANTED

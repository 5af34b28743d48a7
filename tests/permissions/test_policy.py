"""PermissionPolicy: docs/design.md's decision order row by row, precedence, caching, failure."""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from actorscope.agents import Agent, AgentRegistry
from actorscope.context import bind_identity
from actorscope.errors import GrantError, StoreError
from actorscope.identity import (
    ANONYMOUS_ADMIN_ID,
    CHANNEL_BOT_ID,
    SERVICE_ID,
    Identity,
    PeerKind,
    SenderKind,
)
from actorscope.permissions import (
    Decision,
    GrantStore,
    PermissionPolicy,
    Reason,
)
from actorscope.store import Database

GROUP = "group:telegram:-100200"
GUILD = "guild:81234567890123456"
MakeIdentity = Callable[..., Identity]


async def grant(store: GrantStore, agent: Agent, **kw: Any) -> None:
    """Grant with defaults: file_writer allow for sender 42 in GROUP."""
    args: dict[str, Any] = {
        "agent_id": agent.id,
        "scope": GROUP,
        "config_type": "file_writer",
        "sender_id": "42",
    }
    args.update(kw)
    await store.grant(**args)


async def audit_count(db: Database, action: str | None = None) -> int:
    """How many audit rows (of one action) exist."""
    if action is None:
        row = await db.fetchone("SELECT COUNT(*) FROM audit_log")
    else:
        row = await db.fetchone("SELECT COUNT(*) FROM audit_log WHERE action = ?", (action,))
    assert row is not None
    return int(row[0])


# --- the decision table -------------------------------------------------------------------


async def test_granted_sender_is_allowed(
    store: GrantStore, agent: Agent, policy: PermissionPolicy, ident: MakeIdentity
) -> None:
    """A sender with a file_writer allow in the group is allowed (granted)."""
    await grant(store, agent)
    decision = await policy.check_file_writer(ident("42"))
    assert decision == Decision(True, Reason.GRANTED, GROUP, "42", "file_writer")


async def test_ungranted_sender_is_denied(policy: PermissionPolicy, ident: MakeIdentity) -> None:
    """A sender without any grant is denied (no_grant)."""
    decision = await policy.check_file_writer(ident("43"))
    assert (decision.allowed, decision.reason) == (False, Reason.NO_GRANT)


@pytest.mark.parametrize("sender", ["42", ""])
async def test_direct_chat_is_always_allowed(
    policy: PermissionPolicy, ident: MakeIdentity, sender: str
) -> None:
    """Outside a group every check allows (not_group_context), even with an empty sender."""
    for check in (policy.check_file_writer, policy.check_cron, policy.check_context_files):
        decision = await check(ident(sender, user_id="42"))
        assert (decision.allowed, decision.reason) == (True, Reason.NOT_GROUP_CONTEXT)


async def test_legacy_sender_is_split_and_allowed(
    store: GrantStore, agent: Agent, policy: PermissionPolicy, ident: MakeIdentity
) -> None:
    """A legacy "42|displayname" sender is split to 42 before the lookup."""
    await grant(store, agent)
    decision = await policy.check_file_writer(ident("42|displayname"))
    assert (decision.allowed, decision.reason, decision.sender_id) == (True, Reason.GRANTED, "42")


@pytest.mark.parametrize("sender", ["", "|bob", "  "])
async def test_empty_sender_is_denied_in_a_group(
    store: GrantStore, agent: Agent, policy: PermissionPolicy, ident: MakeIdentity, sender: str
) -> None:
    """An empty sender in a group is denied even when '*' is granted."""
    await grant(store, agent, sender_id="*")
    decision = await policy.check_file_writer(ident(sender))
    assert (decision.allowed, decision.reason) == (False, Reason.EMPTY_SENDER)


@pytest.mark.parametrize(
    "sender",
    [
        "subagent:abc-123",
        "subagent:delegate:xyz",
        "notification:system",
        "teammate:dashboard",
        "system:escalation",
        "ticker:heartbeat",
        "session_send_tool",
    ],
)
async def test_synthetic_senders_are_denied(
    store: GrantStore, agent: Agent, policy: PermissionPolicy, ident: MakeIdentity, sender: str
) -> None:
    """Every synthetic sender is denied in a group, even with a '*' allow."""
    await grant(store, agent, sender_id="*")
    for check in (policy.check_file_writer, policy.check_cron, policy.check_context_files):
        decision = await check(ident(sender))
        assert (decision.allowed, decision.reason) == (False, Reason.SYNTHETIC_SENDER)


@pytest.mark.parametrize("sender", [ANONYMOUS_ADMIN_ID, CHANNEL_BOT_ID, SERVICE_ID])
async def test_placeholder_ids_are_denied(
    store: GrantStore, agent: Agent, policy: PermissionPolicy, ident: MakeIdentity, sender: str
) -> None:
    """Telegram placeholder ids are denied in a group, even with a '*' allow."""
    await grant(store, agent, sender_id="*")
    decision = await policy.check_file_writer(ident(sender))
    assert (decision.allowed, decision.reason) == (False, Reason.PLACEHOLDER_SENDER)


@pytest.mark.parametrize("role", ["owner", "admin", "operator"])
@pytest.mark.parametrize("sender", ["", "43", "subagent:x"])
async def test_bypass_roles_allow_file_and_cron_checks(
    policy: PermissionPolicy, ident: MakeIdentity, role: str, sender: str
) -> None:
    """owner, admin and operator bypass file and cron checks, even with no (or no real) sender."""
    identity = ident(sender, role=role, agent_id=None)
    for check in (policy.check_file_writer, policy.check_cron):
        decision = await check(identity)
        assert (decision.allowed, decision.reason) == (True, Reason.ROLE_BYPASS)


@pytest.mark.parametrize("role", ["viewer", "", "Owner", "member"])
async def test_other_roles_do_not_bypass(
    policy: PermissionPolicy, ident: MakeIdentity, role: str
) -> None:
    """viewer, no role and unknown roles get the normal group decision."""
    for check in (policy.check_file_writer, policy.check_cron):
        decision = await check(ident("43", role=role))
        assert (decision.allowed, decision.reason) == (False, Reason.NO_GRANT)


async def test_no_agent_is_denied(
    store: GrantStore, agent: Agent, policy: PermissionPolicy, ident: MakeIdentity
) -> None:
    """A group check without an agent is denied (no_agent), before the sender is looked at."""
    await grant(store, agent)
    assert (await policy.check_file_writer(ident("42", agent_id=None))).reason is Reason.NO_AGENT
    assert (await policy.check_file_writer(ident("", agent_id=None))).reason is Reason.NO_AGENT


async def test_agent_id_that_is_not_a_uuid_is_denied(
    policy: PermissionPolicy, ident: MakeIdentity
) -> None:
    """An agent id that is not a UUID (a key, say) is treated as no agent."""
    decision = await policy.check_file_writer(ident("42", agent_id="main"))
    assert (decision.allowed, decision.reason) == (False, Reason.NO_AGENT)


async def test_bound_identity_is_the_default(
    store: GrantStore, agent: Agent, policy: PermissionPolicy, ident: MakeIdentity
) -> None:
    """Without an identity argument the check uses the bound one."""
    await grant(store, agent)
    with bind_identity(ident("42")):
        assert (await policy.check_file_writer()).reason is Reason.GRANTED
    with bind_identity(ident("43")):
        assert (await policy.check_file_writer()).reason is Reason.NO_GRANT


async def test_no_identity_at_all_is_denied(policy: PermissionPolicy) -> None:
    """With nothing bound and no identity given, the check denies instead of passing for a DM."""
    decision = await policy.check_file_writer()
    assert (decision.allowed, decision.reason) == (False, Reason.EMPTY_SENDER)


async def test_unknown_config_type_is_one_clear_error(
    policy: PermissionPolicy, ident: MakeIdentity
) -> None:
    """check() refuses a type it does not know, and '*', with a GrantError naming it."""
    with pytest.raises(GrantError, match="'writer'"):
        await policy.check("writer", ident())
    with pytest.raises(GrantError, match="'\\*'"):
        await policy.check("*", ident())


# --- precedence and wildcards -------------------------------------------------------------

# (grants as (scope, type, user, permission), expected reason for sender 42 in GROUP, file_writer)
MATRIX: list[tuple[list[tuple[str, str, str, str]], Reason]] = [
    ([], Reason.NO_GRANT),
    ([(GROUP, "file_writer", "42", "allow")], Reason.GRANTED),
    ([(GROUP, "file_writer", "42", "deny")], Reason.DENIED_BY_GRANT),
    ([(GROUP, "file_writer", "*", "allow")], Reason.GRANTED),
    ([(GROUP, "file_writer", "*", "deny")], Reason.DENIED_BY_GRANT),
    ([(GROUP, "*", "42", "allow")], Reason.GRANTED),
    (
        [(GROUP, "file_writer", "42", "deny"), (GROUP, "file_writer", "*", "allow")],
        Reason.DENIED_BY_GRANT,
    ),
    (
        [(GROUP, "file_writer", "42", "allow"), (GROUP, "file_writer", "*", "deny")],
        Reason.GRANTED,
    ),
    ([(GROUP, "file_writer", "*", "deny"), ("*", "*", "*", "allow")], Reason.DENIED_BY_GRANT),
    (
        [("*", "file_writer", "42", "deny"), (GROUP, "file_writer", "42", "allow")],
        Reason.DENIED_BY_GRANT,
    ),
    ([("*", "file_writer", "42", "allow")], Reason.GRANTED),
    ([("group:*", "file_writer", "42", "allow")], Reason.GRANTED),
    ([("group:telegram:*", "file_writer", "42", "allow")], Reason.GRANTED),
    ([("group:discord:*", "file_writer", "42", "allow")], Reason.NO_GRANT),
    ([("guild:*", "file_writer", "42", "allow")], Reason.NO_GRANT),
    ([("group:telegram:-1002", "file_writer", "42", "allow")], Reason.NO_GRANT),
    ([(GROUP, "file_writer", "43", "allow")], Reason.NO_GRANT),
    ([(GROUP, "cron", "42", "allow")], Reason.NO_GRANT),
    ([(GROUP, "context_files", "42", "allow")], Reason.NO_GRANT),
    ([(GROUP, "cron", "42", "deny")], Reason.NO_GRANT),
]


@pytest.mark.parametrize(("grants", "expected"), MATRIX)
async def test_precedence_and_wildcard_matrix(
    store: GrantStore,
    agent: Agent,
    policy: PermissionPolicy,
    ident: MakeIdentity,
    grants: list[tuple[str, str, str, str]],
    expected: Reason,
) -> None:
    """Sender deny > sender allow > '*' deny > '*' allow > none, over exact/prefix/'*' scopes."""
    for scope, config_type, user, permission in grants:
        await grant(
            store,
            agent,
            scope=scope,
            config_type=config_type,
            sender_id=user,
            permission=permission,
        )
    decision = await policy.check_file_writer(ident("42"))
    assert decision.reason is expected
    assert decision.allowed is (expected is Reason.GRANTED)


@pytest.mark.parametrize(
    ("grant_scope", "expected"),
    [
        (f"{GUILD}:*", Reason.GRANTED),
        (f"{GUILD}:user:*", Reason.GRANTED),
        (f"{GUILD}:user:42", Reason.GRANTED),
        ("guild:*", Reason.GRANTED),
        (f"{GUILD}:user:43", Reason.NO_GRANT),
        ("guild:999:*", Reason.NO_GRANT),
    ],
)
async def test_guild_prefix_grants_match_member_scopes(
    store: GrantStore,
    agent: Agent,
    policy: PermissionPolicy,
    ident: MakeIdentity,
    grant_scope: str,
    expected: Reason,
) -> None:
    """guild:<gid>:* (and the other prefixes) match a member scope guild:<gid>:user:<uid>."""
    await grant(store, agent, scope=grant_scope)
    decision = await policy.check_file_writer(ident("42", user_id=f"{GUILD}:user:42"))
    assert decision.reason is expected


@pytest.mark.parametrize("granted_type", ["cron", "file_writer", "*"])
async def test_cron_accepts_cron_or_file_writer(
    store: GrantStore,
    agent: Agent,
    policy: PermissionPolicy,
    ident: MakeIdentity,
    granted_type: str,
) -> None:
    """check_cron accepts a cron, a file_writer or a '*' allow."""
    await grant(store, agent, config_type=granted_type)
    assert (await policy.check_cron(ident("42"))).reason is Reason.GRANTED


@pytest.mark.parametrize("granted_type", ["context_files", "file_writer"])
async def test_context_files_accepts_context_files_or_file_writer(
    store: GrantStore,
    agent: Agent,
    policy: PermissionPolicy,
    ident: MakeIdentity,
    granted_type: str,
) -> None:
    """check_context_files accepts a context_files or a file_writer allow."""
    await grant(store, agent, config_type=granted_type)
    assert (await policy.check_context_files(ident("42"))).reason is Reason.GRANTED


async def test_file_writer_does_not_accept_weaker_grants(
    store: GrantStore, agent: Agent, policy: PermissionPolicy, ident: MakeIdentity
) -> None:
    """cron, heartbeat and context_files grants do not make a file writer; heartbeat is its own."""
    for config_type in ("cron", "heartbeat", "context_files"):
        await grant(store, agent, config_type=config_type)
    assert (await policy.check_file_writer(ident("42"))).reason is Reason.NO_GRANT
    assert (await policy.check("heartbeat", ident("42"))).reason is Reason.GRANTED


async def test_file_writer_deny_beats_cron_allow_for_cron(
    store: GrantStore, agent: Agent, policy: PermissionPolicy, ident: MakeIdentity
) -> None:
    """A sender deny on any accepted type wins over a sender allow on another accepted type."""
    await grant(store, agent, config_type="cron")
    await grant(store, agent, config_type="file_writer", permission="deny")
    assert (await policy.check_cron(ident("42"))).reason is Reason.DENIED_BY_GRANT


async def test_grants_are_per_agent_and_tenant(
    db: Database, store: GrantStore, agent: Agent, policy: PermissionPolicy, ident: MakeIdentity
) -> None:
    """Another agent's grant, or a check naming another tenant, does not match."""
    registry = AgentRegistry(db)
    other_tenant = await registry.create_tenant("acme")
    other = await registry.create("main", tenant="acme")
    await grant(store, agent, config_type="file_writer")
    assert (await policy.check_file_writer(ident("42", agent_id=other.id))).reason is (
        Reason.NO_GRANT
    )
    assert (await policy.check_file_writer(ident("42", tenant_id=agent.tenant_id))).allowed
    wrong = ident("42", tenant_id=other_tenant.id)
    assert (await policy.check_file_writer(wrong)).reason is Reason.NO_GRANT


# --- audit -----------------------------------------------------------------------------------


async def test_every_deny_is_audited_and_warm_allows_write_nothing(
    db: Database, store: GrantStore, agent: Agent, policy: PermissionPolicy, ident: MakeIdentity
) -> None:
    """Denials (cold and warm, pre-lookup too) write audit rows; allowed checks write none."""
    await grant(store, agent)
    before = await audit_count(db)
    for _ in range(3):
        assert (await policy.check_file_writer(ident("42"))).allowed
    assert await audit_count(db) == before
    for _ in range(2):
        assert not (await policy.check_file_writer(ident("43"))).allowed
    assert not (await policy.check_file_writer(ident("subagent:x"))).allowed
    await db.settle_audit()  # denials commit in groups
    assert await audit_count(db, "check.deny") == 3
    entries = await store.audit.list(sender_id="43")
    assert [e.reason for e in entries] == ["no_grant", "no_grant"]
    assert (entries[0].scope, entries[0].actor) == (GROUP, "")
    assert entries[0].agent_id == agent.id
    assert entries[0].tenant_id == agent.tenant_id
    assert entries[0].config_type == "file_writer"
    assert entries[0].created_at


async def test_no_agent_deny_is_audited_with_null_agent(
    store: GrantStore, policy: PermissionPolicy, ident: MakeIdentity
) -> None:
    """A no_agent denial is audited with agent_id NULL."""
    await policy.check_file_writer(ident("42", agent_id=None))
    (entry,) = await store.audit.list()
    assert (entry.action, entry.reason, entry.agent_id) == ("check.deny", "no_agent", None)


# --- cache -----------------------------------------------------------------------------------


async def test_warm_check_does_not_touch_the_database(
    db: Database,
    store: GrantStore,
    agent: Agent,
    policy: PermissionPolicy,
    ident: MakeIdentity,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Once a check is cached, answering it again needs no database read at all."""
    await grant(store, agent)
    cold = await policy.check_file_writer(ident("42"))

    async def poisoned(*args: object, **kwargs: object) -> None:
        raise AssertionError("the warm path read the database")

    monkeypatch.setattr(db, "fetchall", poisoned)
    monkeypatch.setattr(db, "lookup", poisoned)
    monkeypatch.setattr(db, "fetchone", poisoned)
    warm = await policy.check_file_writer(ident("42"))
    assert warm is cold
    assert warm.reason is Reason.GRANTED


async def test_grant_and_revoke_are_visible_to_the_very_next_check(
    store: GrantStore, agent: Agent, policy: PermissionPolicy, ident: MakeIdentity
) -> None:
    """Cached answers are dropped on every change: allow, deny, revoke, each seen at once."""
    assert (await policy.check_file_writer(ident("42"))).reason is Reason.NO_GRANT
    await grant(store, agent)
    assert (await policy.check_file_writer(ident("42"))).reason is Reason.GRANTED
    await grant(store, agent, permission="deny")
    assert (await policy.check_file_writer(ident("42"))).reason is Reason.DENIED_BY_GRANT
    await store.revoke(agent_id=agent.id, scope=GROUP, config_type="file_writer", sender_id="42")
    assert (await policy.check_file_writer(ident("42"))).reason is Reason.NO_GRANT


async def test_policies_over_one_store_share_invalidation(
    store: GrantStore, agent: Agent, ident: MakeIdentity
) -> None:
    """Two policies over the same store both see a change made through it at once."""
    first, strict = PermissionPolicy(store), PermissionPolicy(store, strict=True)
    assert not (await first.check_file_writer(ident("42"))).allowed
    assert not (await strict.check_file_writer(ident("42"))).allowed
    await grant(store, agent)
    assert (await first.check_file_writer(ident("42"))).allowed
    assert (await strict.check_file_writer(ident("42"))).allowed


async def test_the_cache_keeps_channels_apart(agent: Agent, policy: PermissionPolicy) -> None:
    """A decision cached for one channel never answers for another that judges the sender."""

    def who(channel: str) -> Identity:
        return Identity(
            "group:custom:1", "042", channel, peer_kind=PeerKind.GROUP, agent_id=agent.id
        )

    assert (await policy.check_file_writer(who("telegram"))).reason is Reason.INVALID_IDENTITY
    assert (await policy.check_file_writer(who(""))).reason is Reason.NO_GRANT  # opaque id: cached
    assert (await policy.check_file_writer(who("telegram"))).reason is Reason.INVALID_IDENTITY


# --- store failure ----------------------------------------------------------------------------


async def test_store_failure_fails_open_with_warning_and_audit(
    db: Database,
    store: GrantStore,
    policy: PermissionPolicy,
    ident: MakeIdentity,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A failing lookup allows (store_error_fail_open), logs a WARNING and writes an audit row."""

    async def broken(*args: object, **kwargs: object) -> None:
        raise StoreError("database read failed: disk I/O error")

    monkeypatch.setattr(db, "fetchall", broken)
    monkeypatch.setattr(db, "lookup", broken)
    with caplog.at_level(logging.WARNING, logger="actorscope.permissions"):
        decision = await policy.check_file_writer(ident("42"))
    assert (decision.allowed, decision.reason) == (True, Reason.STORE_ERROR_FAIL_OPEN)
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert any("disk I/O error" in r.getMessage() for r in warnings)
    monkeypatch.undo()
    (entry,) = await store.audit.list()
    assert (entry.action, entry.reason, entry.sender_id) == (
        "check.fail_open",
        "store_error_fail_open",
        "42",
    )
    assert "disk I/O error" in entry.detail["error"]


async def test_fail_open_is_never_cached(
    db: Database, policy: PermissionPolicy, ident: MakeIdentity, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After the store recovers the next check asks it again instead of reusing the fail-open."""

    async def broken(*args: object, **kwargs: object) -> None:
        raise StoreError("database read failed")

    monkeypatch.setattr(db, "fetchall", broken)
    monkeypatch.setattr(db, "lookup", broken)
    assert (await policy.check_file_writer(ident("42"))).reason is Reason.STORE_ERROR_FAIL_OPEN
    monkeypatch.undo()
    assert (await policy.check_file_writer(ident("42"))).reason is Reason.NO_GRANT


async def test_strict_policy_denies_on_store_failure(
    db: Database, store: GrantStore, ident: MakeIdentity, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With strict=True a failing lookup denies (store_error_fail_closed) and is audited."""

    async def broken(*args: object, **kwargs: object) -> None:
        raise StoreError("database read failed")

    monkeypatch.setattr(db, "fetchall", broken)
    monkeypatch.setattr(db, "lookup", broken)
    decision = await PermissionPolicy(store, strict=True).check_cron(ident("42"))
    assert (decision.allowed, decision.reason) == (False, Reason.STORE_ERROR_FAIL_CLOSED)
    monkeypatch.undo()
    (entry,) = await store.audit.list()
    assert (entry.action, entry.reason) == ("check.deny", "store_error_fail_closed")


async def test_closed_database_fails_open_and_never_raises(
    tmp_path: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """When the database is gone entirely (audit write fails too) the check still returns."""
    async with Database.open(tmp_path / "gone.db") as database:
        agent = await AgentRegistry(database).create("main")
        policy = PermissionPolicy(GrantStore(database))
    identity = Identity(user_id=GROUP, sender_id="42", agent_id=agent.id)
    with caplog.at_level(logging.WARNING):
        decision = await policy.check_file_writer(identity)
        strict = await PermissionPolicy(policy.store, strict=True).check_file_writer(identity)
    assert decision.reason is Reason.STORE_ERROR_FAIL_OPEN
    assert strict.reason is Reason.STORE_ERROR_FAIL_CLOSED
    assert any("audit write failed" in r.getMessage() for r in caplog.records)


# --- what-if checks (audit=False) ---------------------------------------------------------


async def test_a_what_if_policy_decides_alike_and_audits_nothing(
    db: Database, store: GrantStore, agent: Agent, ident: MakeIdentity
) -> None:
    """audit=False gives the same decisions (cold and cached) and writes no audit row."""
    await grant(store, agent)
    audited, what_if = PermissionPolicy(store), PermissionPolicy(store, audit=False)
    identities = [ident("42"), ident("43"), ident(""), ident("42", agent_id=None)]
    for identity in identities * 2:  # the second round hits the cache
        expected = await audited.check_file_writer(identity)
        await db.settle_audit()  # its denial's row, written before counting
        before = await audit_count(db)
        assert await what_if.check_file_writer(identity) == expected
        assert await audit_count(db) == before
    assert await audit_count(db, "check.deny") == 6  # the audited policy's denials only


async def test_a_what_if_policy_does_not_audit_a_fail_open(
    db: Database, ident: MakeIdentity, store: GrantStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store failure under audit=False still fails open, without an audit row."""

    async def broken(*args: object, **kwargs: object) -> None:
        raise StoreError("database read failed: disk I/O error")

    monkeypatch.setattr(db, "fetchall", broken)
    monkeypatch.setattr(db, "lookup", broken)
    decision = await PermissionPolicy(store, audit=False).check_file_writer(ident("42"))
    assert decision.reason is Reason.STORE_ERROR_FAIL_OPEN
    monkeypatch.undo()
    assert await audit_count(db) == 0


# --- issue 13 item 2: text no store can hold is invalid_identity on every backend ---------

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
    await db.settle_audit()  # the denial commits with its group
    rows = await db.fetchall(
        "SELECT sender_id, scope, reason, detail FROM audit_log WHERE action = 'check.deny'"
    )
    assert [(r["sender_id"], r["scope"], r["reason"]) for r in rows] == [
        (audited_sender, audited_scope, "invalid_identity")
    ]
    # The detail is JSON: its own escapes round-trip the exact sender and scope escaped above.
    exact = {"sender_id": sender, "scope": scope}
    assert json.loads(rows[0]["detail"]) == {
        name: value for name, value in exact.items() if rows[0][name] != value
    }


async def test_unstorable_tenant_is_denied_on_every_backend(backend: str, db: Database) -> None:
    """A NUL in the tenant id never reaches the lookup (PostgreSQL would fail it, then open)."""
    policy, agent_id = await _policy_with_everyone_allowed(db)
    member = Identity(
        user_id=GROUP, sender_id="42", peer_kind=PeerKind.GROUP, agent_id=agent_id,
        tenant_id="t\x00",
    )  # fmt: skip
    decision = await policy.check_file_writer(member)
    assert (decision.allowed, decision.reason) == (False, Reason.INVALID_IDENTITY), backend
    await db.settle_audit()  # the denial commits with its group
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


def _group_member(scope: str, sender: str, channel: str, agent_id: str) -> Identity:
    """``sender`` in the group ``scope`` on ``channel``, for ``agent_id``."""
    return Identity(
        user_id=scope, sender_id=sender, channel=channel, peer_kind=PeerKind.GROUP,
        agent_id=agent_id,
    )  # fmt: skip


@pytest.mark.parametrize(("scope", "channel", "sender", "reason"), LOOKALIKES)
async def test_lookalike_sender_is_denied_even_under_a_wildcard_allow(
    db: Database, scope: str, channel: str, sender: str, reason: Reason
) -> None:
    """A look-alike of a person, placeholder or synthetic id is never checked as a person."""
    policy, agent_id = await _policy_with_everyone_allowed(db)
    member = _group_member(scope, sender, channel, agent_id)
    decision = await policy.check_file_writer(member)
    assert (decision.allowed, decision.reason) == (False, reason)


def test_non_person_rules_run_once_per_scope_sender_and_channel(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A repeated non_person_reason is answered from its bounded cache, a look-alike is not."""
    folds: list[str] = []
    real = SenderKind.is_synthetic

    def counting(sender: str) -> bool:
        folds.append(sender)
        return real(sender)

    monkeypatch.setattr(SenderKind, "is_synthetic", staticmethod(counting))
    # A sender no earlier test (or earlier run in this process) asked about: the cache is cold.
    sender = str(4_000_000_000 + secrets.randbelow(10**9))
    person = Identity(user_id=GROUP, sender_id=sender, channel="telegram")
    assert [PermissionPolicy.non_person_reason(person) for _ in range(3)] == [None] * 3
    assert folds == [sender]  # the rules ran once
    lookalike = Identity(user_id=GROUP, sender_id="\uff14" + sender[1:], channel="telegram")
    assert PermissionPolicy.non_person_reason(lookalike) is Reason.INVALID_IDENTITY


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
    member = _group_member(scope, sender, channel, agent_id)
    assert (await policy.check_file_writer(member)).reason is Reason.GRANTED


# --- malformed identity text never turns a group check into a fail-open allow ---------------


@pytest.mark.parametrize(
    ("scope", "sender"),
    [(GROUP, "42\ud800"), ("group:telegram:\udc00", "42")],
)
async def test_unencodable_sender_or_scope_is_denied_not_failed_open(
    tmp_path: Path, scope: str, sender: str
) -> None:
    """A lone surrogate in sender or scope must deny, not raise inside the lookup and fail open."""
    async with Database.open(tmp_path / "t.db") as db:
        agent = await AgentRegistry(db).create("main")
        store = GrantStore(db)
        # Everyone is explicitly denied here; nothing may let this member write.
        await store.grant(
            agent_id=agent.id, scope=GROUP, config_type="*", sender_id="*", permission="deny"
        )
        identity = Identity(
            user_id=scope, sender_id=sender, peer_kind=PeerKind.GROUP, agent_id=agent.id
        )
        decision = await PermissionPolicy(store).check_file_writer(identity)
        assert not decision.allowed, f"allowed via {decision.reason.value} despite a '*' deny"

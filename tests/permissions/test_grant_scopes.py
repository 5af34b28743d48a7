"""Grant scopes and types: the candidate scopes a check asks for, and the accepted types."""

from __future__ import annotations

import pytest

from actorscope.errors import GrantError
from actorscope.permissions._scopes import (
    accepted_types,
    candidate_scopes,
    grantee_problem,
    parse_check_type,
    parse_grant,
    parse_grant_scope,
    parse_grantee,
)


def test_candidate_scopes_of_a_group() -> None:
    """A group scope is matched by itself, each ':*' prefix and '*'."""
    assert candidate_scopes("group:telegram:-100") == (
        "group:telegram:-100",
        "group:*",
        "group:telegram:*",
        "*",
    )


def test_candidate_scopes_of_a_guild_member() -> None:
    """A guild member scope is matched by guild:<gid>:* and guild:<gid>:user:* among others."""
    assert candidate_scopes("guild:1:user:2") == (
        "guild:1:user:2",
        "guild:*",
        "guild:1:*",
        "guild:1:user:*",
        "*",
    )


def test_candidate_scopes_are_computed_once_per_scope() -> None:
    """A repeated scope gets the very tuple computed for it before (a bounded cache)."""
    scope = "group:telegram:-100987654"
    assert candidate_scopes(scope) is candidate_scopes(scope)
    assert candidate_scopes(scope)[0] == scope


def test_accepted_types_are_plain_strings() -> None:
    """The types a check binds are plain str (a str subclass costs the driver an adapter lookup)."""
    for check in ("file_writer", "cron", "heartbeat", "context_files"):
        assert {type(found) for found in accepted_types(check)} == {str}


def test_accepted_types() -> None:
    """cron and context_files accept file_writer; every type accepts '*'."""
    assert accepted_types("cron") == ("cron", "file_writer", "*")
    assert accepted_types("context_files") == ("context_files", "file_writer", "*")
    assert accepted_types("file_writer") == ("file_writer", "*")
    assert accepted_types("heartbeat") == ("heartbeat", "*")


def test_check_scopes_must_be_concrete() -> None:
    """A check's scope cannot be '*' or a prefix pattern."""
    assert parse_grant_scope("group:telegram:-1", pattern=False) == "group:telegram:-1"
    for pattern in ("*", "group:*"):
        with pytest.raises(GrantError, match="concrete scope"):
            parse_grant_scope(pattern, pattern=False)
    with pytest.raises(GrantError, match="config type"):
        parse_check_type("*")


def test_grantee_rules() -> None:
    """Grantees are '*' or one person id; the problem text names the value."""
    assert parse_grantee(" 42|bob ") == "42"
    assert parse_grantee("*") == "*"
    assert grantee_problem("42") == ""
    assert "ticker:x" in grantee_problem("ticker:x")
    assert "777000" in grantee_problem("777000")
    assert grantee_problem(42) != ""


PLATFORM_GROUP_SCOPES = [
    "group:telegram:-100",
    "group:discord:-100",
    "guild:1:user:2",
    "group:telegram:*",
    "guild:1:*",
    "guild:*",
    "group:*",
]
LOOK_ALIKE_GRANTEES = ["042", "42\u200b", "\uff14\uff12", "+42"]


@pytest.mark.parametrize("scope", PLATFORM_GROUP_SCOPES)
@pytest.mark.parametrize("grantee", LOOK_ALIKE_GRANTEES)
def test_a_telegram_or_discord_group_grant_needs_a_canonical_sender(
    scope: str, grantee: str
) -> None:
    """In a Telegram/Discord group scope (or its prefix) a look-alike grantee is a clear error."""
    with pytest.raises(GrantError, match="positive integer in ASCII digits") as caught:
        parse_grantee(grantee, scope)
    assert repr(grantee) in str(caught.value)
    assert repr(scope) in str(caught.value)
    assert parse_grantee("42", scope) == "42"
    assert parse_grantee("*", scope) == "*"


@pytest.mark.parametrize("grantee", ["042", "alice", "user-7"])
def test_opaque_ids_stay_valid_outside_telegram_and_discord(grantee: str) -> None:
    """Direct scopes, '*' and custom channels' groups keep opaque ids (the identity table)."""
    for scope in ("*", "api-user", "group:mychan:-100", ""):
        assert parse_grantee(grantee, scope) == grantee


def test_a_custom_channel_group_refuses_invisible_characters() -> None:
    """In any group scope an id with a format character cannot be a grantee."""
    assert "format" in grantee_problem("bob\u200b", "group:mychan:-100")


def test_parse_grant_checks_scope_type_grantee_and_permission_in_order() -> None:
    """parse_grant returns the canonical grantee and names the first bad part, scope first."""
    assert parse_grant("group:telegram:-100", "file_writer", "42|alice", "deny") == "42"
    assert parse_grant("guild:1:*", "*", "*") == "*"
    with pytest.raises(GrantError, match="scope"):
        parse_grant("group:telegram:-0100", "nope", "x y")
    with pytest.raises(GrantError, match="config type"):
        parse_grant("group:telegram:-100", "nope", "x y")
    with pytest.raises(GrantError, match="grant sender"):
        parse_grant("group:telegram:-100", "cron", "042")
    with pytest.raises(GrantError, match="'allow' or 'deny'"):
        parse_grant("group:telegram:-100", "cron", "42", "maybe")


def test_parse_check_type_with_a_scope_wants_a_concrete_scope_first() -> None:
    """With a scope, a pattern is refused before the type is looked at; a good pair passes."""
    assert parse_check_type("cron", scope="group:telegram:-100") == "cron"
    with pytest.raises(GrantError, match="concrete scope"):
        parse_check_type("*", scope="guild:1:*")
    with pytest.raises(GrantError, match="config type"):
        parse_check_type("*", scope="group:telegram:-100")

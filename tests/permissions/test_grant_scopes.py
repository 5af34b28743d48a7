"""Grant scopes and types: the candidate scopes a check asks for, and the accepted types."""

from __future__ import annotations

import pytest

from actorscope.errors import GrantError
from actorscope.permissions.scopes import (
    accepted_types,
    candidate_scopes,
    grantee_problem,
    parse_check_type,
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

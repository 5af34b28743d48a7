"""Workspace paths: ``agents/<key>/`` under the root; unsafe keys are refused."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from actorscope.errors import IdentityError
from actorscope.tools._paths import (
    AGENTS_DIR,
    UnsafeKeyError,
    archived_workspace_path,
    sanitise_key,
    tenant_workspace_path,
    workspace_path,
)


@pytest.mark.parametrize(
    ("key", "why"),
    [
        ("", "empty"),
        ("..", r"'\.\.'"),
        ("a..b", r"'\.\.'"),
        ("../etc", "separator"),
        ("a/b", "separator"),
        ("a\\b", "separator"),
        ("/abs", "separator"),
        ("bot\x00", "NUL"),
        (".", "path segment"),
        (".hidden", "path segment"),
        ("bot.", "path segment"),
        ("a b", "path segment"),
        ("bot\n", "path segment"),
        ("x" * 65, "path segment"),
        ("con", "reserved"),
        ("NUL.txt", "reserved"),
        ("com1", "reserved"),
    ],
)
def test_unsafe_keys_are_refused(key: str, why: str) -> None:
    """Empty, `..`, separators, NUL and other unsafe segments raise UnsafeKeyError."""
    with pytest.raises(UnsafeKeyError, match=why):
        sanitise_key(key)


def test_unsafe_key_error_is_an_identity_error() -> None:
    """UnsafeKeyError is caught by handlers of IdentityError (and a non-string is refused)."""
    with pytest.raises(IdentityError):
        sanitise_key(None)


@pytest.mark.parametrize("key", ["bot", "support-bot", "Bot_2", "v1.2", "a", "x" * 64])
def test_safe_keys_make_a_workspace_under_agents(tmp_path: Path, key: str) -> None:
    """A safe key gives <root>/agents/<key>, unchanged and directly under agents/."""
    path = workspace_path(tmp_path, key)
    assert path == tmp_path / AGENTS_DIR / key
    assert path.parent == tmp_path / "agents"
    assert not path.exists()


def test_workspace_path_refuses_traversal(tmp_path: Path) -> None:
    """`../x` never becomes a path outside the root."""
    with pytest.raises(UnsafeKeyError):
        workspace_path(tmp_path, "../x")


def test_tenant_workspace_path_names_the_tenant_and_archives_name_the_agent(
    tmp_path: Path,
) -> None:
    """tenants/<tenant UUID>/agents/<key>; an archive is <key>~<agent UUID> beside it."""
    tenant, agent = str(uuid.uuid4()), str(uuid.uuid4())
    live = tenant_workspace_path(tmp_path, tenant, "main")
    assert live == tmp_path / "tenants" / tenant / "agents" / "main"
    assert archived_workspace_path(tmp_path, tenant, "main", agent) == live.with_name(
        f"main~{agent}"
    )


@pytest.mark.parametrize("tenant", ["", "..", "default", "A" * 36, "../../etc"])
def test_tenant_workspace_path_refuses_a_tenant_that_is_not_a_uuid(
    tmp_path: Path, tenant: str
) -> None:
    """Only a canonical tenant UUID names a tenant directory."""
    with pytest.raises(UnsafeKeyError, match="tenant id"):
        tenant_workspace_path(tmp_path, tenant, "main")

"""Workspace paths: ``agents/<key>/`` under the root; unsafe keys are refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from actorscope.agents import AGENTS_DIR, sanitise_key, workspace_path
from actorscope.errors import IdentityError, UnsafeKeyError


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

"""Workspace: one directory per agent and scope, and no way out of it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from actorscope.errors import ToolError
from actorscope.tools import Workspace, scope_segment
from actorscope.tools.workspace import MAX_FILE_BYTES

SCOPE = "group:telegram:-100200300"


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    """A workspace rooted in a fresh directory."""
    return Workspace(tmp_path / "root")


def _code(exc: pytest.ExceptionInfo[ToolError]) -> str:
    return exc.value.code


def test_scope_directory_is_agents_key_scope(ws: Workspace) -> None:
    """Files land under <root>/agents/<agent key>/<encoded scope>/."""
    ws.write("main", SCOPE, "notes/today.md", "hello")
    expected = ws.root / "agents" / "main" / "group%3Atelegram%3A-100200300" / "notes" / "today.md"
    assert expected.read_text(encoding="utf-8") == "hello"
    assert ws.read("main", SCOPE, "notes/today.md") == "hello"


@pytest.mark.parametrize(
    ("scope", "segment"),
    [
        ("4242", "4242"),
        ("group:telegram:-1", "group%3Atelegram%3A-1"),
        ("a/b", "a%2Fb"),
        ("..", "%2E%2E"),
        (".hidden", "%2Ehidden"),
        ("con", "%63on"),
        ("50%", "50%25"),
        ("東", "%E6%9D%B1"),
    ],
)
def test_scope_segment_is_one_safe_segment(scope: str, segment: str) -> None:
    """Unsafe characters, dots at the ends and device names are escaped."""
    assert scope_segment(scope) == segment


@given(st.text(min_size=1, max_size=300), st.text(min_size=1, max_size=300))
def test_scope_segment_is_injective_and_portable(first: str, second: str) -> None:
    """Different scopes never share a directory, and every name is one portable segment."""
    a, b = scope_segment(first), scope_segment(second)
    assert (a == b) == (first == second)
    assert "/" not in a
    assert "\\" not in a
    assert "\x00" not in a
    assert a not in (".", "..")
    assert len(a) <= 255


def test_empty_scope_has_no_workspace(ws: Workspace) -> None:
    """No scope, no directory: the call is refused as no_scope."""
    with pytest.raises(ToolError) as exc:
        ws.write("main", "", "a.txt", "x")
    assert _code(exc) == "no_scope"


@pytest.mark.parametrize(
    "path",
    [
        "../escape.txt",
        "notes/../../escape.txt",
        "..",
        "/etc/passwd",
        "//server/share",
        "C:/Windows/win.ini",
        "c:relative.txt",
        "notes\\..\\x",
        "",
        "   ",
        ".",
        "./",
        "a\x00b",
    ],
)
def test_traversal_absolute_and_empty_paths_are_rejected(ws: Workspace, path: str) -> None:
    """'..', absolute or drive paths, backslashes, NUL and empty paths never touch the disk."""
    with pytest.raises(ToolError) as exc:
        ws.write("main", SCOPE, path, "x")
    assert _code(exc) == "path_rejected"
    assert not (ws.root.parent / "escape.txt").exists()


def test_symlinked_file_pointing_out_is_rejected(ws: Workspace, tmp_path: Path) -> None:
    """A symlink inside the workspace that leads outside can be neither read nor written."""
    outside = tmp_path / "secret.txt"
    outside.write_text("secret", encoding="utf-8")
    ws.write("main", SCOPE, "placeholder.txt", "x")
    link = ws.directory("main", SCOPE) / "link.txt"
    link.symlink_to(outside)
    with pytest.raises(ToolError) as read:
        ws.read("main", SCOPE, "link.txt")
    with pytest.raises(ToolError) as write:
        ws.write("main", SCOPE, "link.txt", "overwritten")
    assert _code(read) == _code(write) == "path_rejected"
    assert outside.read_text(encoding="utf-8") == "secret"


def test_symlinked_directory_pointing_out_is_rejected(ws: Workspace, tmp_path: Path) -> None:
    """A linked directory that leads outside cannot be written through, even to a new file."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    base = ws.directory("main", SCOPE)
    base.mkdir(parents=True)
    (base / "dir").symlink_to(outside, target_is_directory=True)
    with pytest.raises(ToolError) as exc:
        ws.write("main", SCOPE, "dir/new.txt", "x")
    assert _code(exc) == "path_rejected"
    assert list(outside.iterdir()) == []


def test_dangling_symlink_out_is_rejected(ws: Workspace, tmp_path: Path) -> None:
    """A link to a file that does not exist yet outside the workspace is refused too."""
    base = ws.directory("main", SCOPE)
    base.mkdir(parents=True)
    (base / "later.txt").symlink_to(tmp_path / "not-yet.txt")
    with pytest.raises(ToolError):
        ws.write("main", SCOPE, "later.txt", "x")
    assert not (tmp_path / "not-yet.txt").exists()


def test_symlink_inside_the_workspace_is_followed(ws: Workspace) -> None:
    """A link that stays inside the workspace is an ordinary path."""
    ws.write("main", SCOPE, "real.txt", "one")
    (ws.directory("main", SCOPE) / "alias.txt").symlink_to("real.txt")
    ws.write("main", SCOPE, "alias.txt", "two")
    assert ws.read("main", SCOPE, "real.txt") == "two"


def test_scope_directory_linked_out_of_the_root_is_rejected(ws: Workspace, tmp_path: Path) -> None:
    """If the scope's own directory is a link out of the root, nothing is written there."""
    outside = tmp_path / "other"
    outside.mkdir()
    agent_dir = ws.root / "agents" / "main"
    agent_dir.mkdir(parents=True)
    (agent_dir / scope_segment(SCOPE)).symlink_to(outside, target_is_directory=True)
    with pytest.raises(ToolError):
        ws.write("main", SCOPE, "a.txt", "x")
    assert list(outside.iterdir()) == []


def test_scopes_and_agents_are_isolated(ws: Workspace) -> None:
    """The same path in another scope or for another agent is another file."""
    ws.write("main", SCOPE, "a.txt", "group")
    ws.write("main", "4242", "a.txt", "dm")
    ws.write("other", SCOPE, "a.txt", "other agent")
    assert ws.read("main", SCOPE, "a.txt") == "group"
    assert ws.read("main", "4242", "a.txt") == "dm"
    assert ws.read("other", SCOPE, "a.txt") == "other agent"


def test_write_is_atomic_and_leaves_no_temporary_file(ws: Workspace) -> None:
    """A replaced file holds the new content whole, with no temporary file left beside it."""
    ws.write("main", SCOPE, "a.txt", "old")
    assert ws.write("main", SCOPE, "a.txt", "new ✓") == len("new ✓".encode())
    assert sorted(os.listdir(ws.directory("main", SCOPE))) == ["a.txt"]
    assert ws.read("main", SCOPE, "a.txt") == "new ✓"


def test_failed_write_keeps_the_old_file_and_no_temporary(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """If the final rename fails, the old content stays and the temporary file is removed."""
    ws.write("main", SCOPE, "a.txt", "old")

    def refuse(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="No space"):
        ws.write("main", SCOPE, "a.txt", "new")
    monkeypatch.undo()
    assert ws.read("main", SCOPE, "a.txt") == "old"
    assert sorted(os.listdir(ws.directory("main", SCOPE))) == ["a.txt"]


def test_writing_over_a_directory_is_rejected(ws: Workspace) -> None:
    """A path that names a directory cannot be written as a file."""
    ws.write("main", SCOPE, "dir/a.txt", "x")
    with pytest.raises(ToolError) as exc:
        ws.write("main", SCOPE, "dir", "x")
    assert _code(exc) == "path_rejected"


def test_reads_of_missing_large_and_binary_files_are_errors(ws: Workspace) -> None:
    """Missing files are not_found, oversized ones too_large, non-UTF-8 ones not_text."""
    with pytest.raises(ToolError) as missing:
        ws.read("main", SCOPE, "nope.txt")
    assert _code(missing) == "not_found"
    base = ws.directory("main", SCOPE)
    base.mkdir(parents=True)
    (base / "big.bin").write_bytes(b"x" * (MAX_FILE_BYTES + 1))
    (base / "bad.bin").write_bytes(b"\xff\xfe")
    with pytest.raises(ToolError) as big:
        ws.read("main", SCOPE, "big.bin")
    with pytest.raises(ToolError) as bad:
        ws.read("main", SCOPE, "bad.bin")
    assert (_code(big), _code(bad)) == ("too_large", "not_text")


def test_oversized_or_unencodable_content_is_rejected(ws: Workspace) -> None:
    """Content over the size limit, or with lone surrogates, is refused before any write."""
    with pytest.raises(ToolError) as big:
        ws.write("main", SCOPE, "a.txt", "x" * (MAX_FILE_BYTES + 1))
    with pytest.raises(ToolError) as bad:
        ws.write("main", SCOPE, "a.txt", "\ud800")
    assert (_code(big), _code(bad)) == ("too_large", "not_text")
    assert not ws.directory("main", SCOPE).exists()

"""Security review: malformed tool input must get a clean tool error, never an exception."""

from __future__ import annotations

from pathlib import Path

import pytest

from actorscope.errors import ToolError
from actorscope.tools.workspace import Workspace

GROUP = "group:telegram:-100200"


@pytest.mark.parametrize("path", ["\ud800", "notes/\ud83d.txt"])
def test_workspace_write_rejects_unencodable_path_cleanly(tmp_path: Path, path: str) -> None:
    """A path with a lone surrogate (valid in MCP JSON) must be path_rejected, not a crash."""
    workspace = Workspace(tmp_path / "ws")
    with pytest.raises(ToolError) as refused:
        workspace.write("main", GROUP, path, "content")
    assert refused.value.code == "path_rejected"


@pytest.mark.parametrize("path", ["\ud800", "notes/\ud83d.txt"])
def test_workspace_read_rejects_unencodable_path_cleanly(tmp_path: Path, path: str) -> None:
    """Reading a lone-surrogate path must give a ToolError, not UnicodeEncodeError."""
    workspace = Workspace(tmp_path / "ws")
    workspace.write("main", GROUP, "seed.txt", "x")  # the scope directory exists
    with pytest.raises(ToolError):
        workspace.read("main", GROUP, path)

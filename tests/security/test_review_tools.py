"""Security review: malformed tool input must get a clean tool error, never an exception."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from actorscope.agents import Agent
from actorscope.agents._types import AgentKey, AgentUUID, TenantUUID
from actorscope.errors import ToolError
from actorscope.identity import telegram_identity
from actorscope.tools._workspace import Workspace

GROUP = telegram_identity(-100200, "supergroup", 42)
MAIN = Agent(AgentUUID(str(uuid.uuid4())), AgentKey("main"), TenantUUID(str(uuid.uuid4())))


@pytest.mark.parametrize("path", ["\ud800", "notes/\ud83d.txt"])
def test_workspace_write_rejects_unencodable_path_cleanly(tmp_path: Path, path: str) -> None:
    """A path with a lone surrogate (valid in MCP JSON) must be path_rejected, not a crash."""
    workspace = Workspace(tmp_path / "ws")
    with pytest.raises(ToolError) as refused:
        workspace.write(MAIN, GROUP, path, "content")
    assert refused.value.code == "path_rejected"


@pytest.mark.parametrize("path", ["\ud800", "notes/\ud83d.txt"])
def test_workspace_read_rejects_unencodable_path_cleanly(tmp_path: Path, path: str) -> None:
    """Reading a lone-surrogate path must give a ToolError, not UnicodeEncodeError."""
    workspace = Workspace(tmp_path / "ws")
    workspace.write(MAIN, GROUP, "seed.txt", "x")  # the scope directory exists
    with pytest.raises(ToolError):
        workspace.read(MAIN, GROUP, path)

"""Fixtures for the built-in tool tests: a database with an agent, grants, a toolbox."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from actorscope.agents import Agent
from actorscope.permissions import GrantStore, PermissionPolicy
from actorscope.store import Database
from actorscope.tools import (
    Toolbox,
    ToolRegistry,
    builtin_tools,
)


@pytest.fixture
def toolbox(db: Database, agent: Agent, store: GrantStore, tmp_path: Path) -> Toolbox:
    """A toolbox over the database (SQLite memory), serving ``main`` by default."""
    return Toolbox.create(
        db,
        policy=PermissionPolicy(store),
        workspace_root=tmp_path / "ws",
        default_agent=agent,
    )


@pytest.fixture
def registry(toolbox: Toolbox) -> ToolRegistry:
    """Every built-in tool over ``toolbox``."""
    return builtin_tools(toolbox)


GrantWriter = Callable[[str, str], Awaitable[None]]


@pytest.fixture
def grant_writer(store: GrantStore, agent: Agent) -> GrantWriter:
    """Grant ``file_writer`` (which covers cron) to a sender in a scope, for ``main``."""

    async def grant(scope: str, sender: str) -> None:
        await store.grant(
            agent_id=agent.id, scope=scope, config_type="file_writer", sender_id=sender
        )

    return grant

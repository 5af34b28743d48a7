"""Cron jobs are keyed by the storage key: direct scopes of different channels never meet.

On both backends (the project-wide ``db``), including a database migrated from before the
key existed.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from actorscope.agents import Agent, AgentRegistry
from actorscope.context import bind_identity
from actorscope.identity import Identity
from actorscope.permissions import GrantStore, PermissionPolicy
from actorscope.store import Database
from actorscope.store._migrations import Migration, load_migrations
from actorscope.tools import Toolbox, ToolRegistry, builtin_tools

TELEGRAM_USER = Identity.chat("telegram", 4242, 4242, group=False)
HTTP_USER = Identity.http("4242")
DISCORD_DM = Identity(user_id="4242", sender_id="4242", channel="discord")
KEY_MIGRATION = "cron_storage_key"


def tools_over(db: Database, agent: Agent, root: Path) -> ToolRegistry:
    """The built-in tools over ``db``, serving ``agent``."""
    toolbox = Toolbox.create(
        db, policy=PermissionPolicy(GrantStore(db)), workspace_root=root, default_agent=agent
    )
    return builtin_tools(toolbox)


async def call(tools: ToolRegistry, who: Identity, tool: str, **args: Any) -> dict[str, Any]:
    """Call ``tool`` as ``who`` (bound, as a host would); the payload with its error flag."""
    with bind_identity(who):
        result = await tools.call(tool, args)
    return {"is_error": result.is_error, **result.payload}


async def names(tools: ToolRegistry, who: Identity) -> list[str]:
    """The names of the jobs ``who`` lists."""
    listed = await call(tools, who, "cron_list")
    return [job["name"] for job in listed["jobs"]]


async def test_direct_users_of_one_id_on_two_channels_never_see_each_others_jobs(
    db: Database, agent: Agent, tmp_path: Path
) -> None:
    """HTTP user "4242", Telegram user 4242 and Discord user 4242 each keep their own jobs."""
    tools = tools_over(db, agent, tmp_path / "ws")
    for who, name in ((TELEGRAM_USER, "tg"), (HTTP_USER, "http"), (DISCORD_DM, "dc")):
        added = await call(tools, who, "cron_add", name=name, schedule="@daily")
        assert not added["is_error"], added
    # One name in each: no conflict across channels.
    for who in (TELEGRAM_USER, HTTP_USER, DISCORD_DM):
        assert not (await call(tools, who, "cron_add", name="same", schedule="@hourly"))["is_error"]
    assert await names(tools, TELEGRAM_USER) == ["tg", "same"]
    assert await names(tools, HTTP_USER) == ["http", "same"]
    assert await names(tools, DISCORD_DM) == ["dc", "same"]
    refused = await call(tools, HTTP_USER, "cron_remove", name="tg")
    assert refused["error"]["code"] == "not_found"
    assert (await call(tools, HTTP_USER, "cron_remove", name="same"))["removed"]["name"] == "same"
    assert await names(tools, TELEGRAM_USER) == ["tg", "same"]


async def test_a_job_keeps_the_runs_real_scope(db: Database, agent: Agent, tmp_path: Path) -> None:
    """The stored row has the key the tools look it up by and the scope the run had."""
    tools = tools_over(db, agent, tmp_path / "ws")
    await call(tools, HTTP_USER, "cron_add", name="d", schedule="@daily")
    row = await db.fetchone("SELECT scope, storage_key FROM cron_jobs WHERE name = ?", ("d",))
    assert row is not None
    assert (row["scope"], row["storage_key"]) == ("4242", "direct:http:4242")


def _before_the_key(real: Callable[..., tuple[Migration, ...]]) -> Callable[..., Any]:
    def load(*args: Any, **kwargs: Any) -> tuple[Migration, ...]:
        # Every migration before the key, none after: the database is at the previous version.
        found = real(*args, **kwargs)
        (key,) = (m.version for m in found if m.name == KEY_MIGRATION)
        return tuple(m for m in found if m.version < key)

    return load


async def test_jobs_stored_before_the_key_stay_the_telegram_users(
    db_target: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A job under the bare id from before the migration is the Telegram user's, not HTTP's."""
    assert KEY_MIGRATION in [m.name for m in load_migrations()]
    older = _before_the_key(load_migrations)
    monkeypatch.setattr("actorscope.store._sqlite.load_migrations", older)
    monkeypatch.setattr("actorscope.store._postgres.load_migrations", older)
    async with Database.open(db_target) as old:
        agent = await AgentRegistry(old).create("main")
        await old.execute(
            "INSERT INTO cron_jobs (agent_id, scope, name, schedule, message, created_by, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (agent.id, "4242", "legacy", "@daily", "", "4242", "2026-01-01T00:00:00Z"),
        )
    monkeypatch.undo()
    async with Database.open(db_target) as db:
        tools = tools_over(db, agent, tmp_path / "ws")
        assert await names(tools, TELEGRAM_USER) == ["legacy"]
        assert await names(tools, HTTP_USER) == []
        added = await call(tools, HTTP_USER, "cron_add", name="legacy", schedule="@daily")
        assert not added["is_error"], added
        assert (await call(tools, TELEGRAM_USER, "cron_remove", name="legacy"))["removed"]
        assert await names(tools, HTTP_USER) == ["legacy"]

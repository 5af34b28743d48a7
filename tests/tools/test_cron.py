"""Cron jobs: schedules are checked, and a job belongs to exactly one scope."""

from __future__ import annotations

import pytest

from actorscope.agents import Agent, AgentRegistry
from actorscope.errors import ConflictError, NotFoundError, ToolError
from actorscope.store import Database
from actorscope.tools._cron import CronStore, parse_job_name, parse_schedule

pytestmark = pytest.mark.sqlite_only(
    "the tools' subject is the boundary, not the dialect: test_cron_keys.py and tests/store "
    "run the tools' tables on both"
)

GROUP = "group:telegram:-100200300"
OTHER = "group:telegram:-100999"


@pytest.mark.parametrize(
    ("schedule", "normalised"),
    [
        ("0 9 * * mon-fri", "0 9 * * mon-fri"),
        ("*/15  *\t* * *", "*/15 * * * *"),
        ("0,30 8-18/2 1 JAN-jun 0-7", "0,30 8-18/2 1 jan-jun 0-7"),
        ("@Daily", "@daily"),
        ("@hourly", "@hourly"),
    ],
)
def test_valid_schedules_are_normalised(schedule: str, normalised: str) -> None:
    """Five fields or a macro; whitespace collapses and names are lowercased."""
    assert parse_schedule(schedule) == normalised


@pytest.mark.parametrize(
    "schedule",
    [
        "",
        "* * * *",
        "* * * * * *",
        "60 * * * *",
        "* 24 * * *",
        "* * 0 * *",
        "* * * 13 *",
        "* * * * 8",
        "*/0 * * * *",
        "5-1 * * * *",
        "a * * * *",
        "@reboot",
        "1;rm * * * *",
    ],
)
def test_invalid_schedules_are_rejected(schedule: str) -> None:
    """Out-of-range values, wrong field counts, zero steps and junk are invalid_schedule."""
    with pytest.raises(ToolError) as exc:
        parse_schedule(schedule)
    assert exc.value.code == "invalid_schedule"


@pytest.mark.parametrize("name", ["", "   ", "x" * 65, "tab\there"])
def test_invalid_job_names_are_rejected(name: str) -> None:
    """Blank, overlong and control-character names are refused."""
    with pytest.raises(ToolError):
        parse_job_name(name)


def test_job_names_are_kept_exactly() -> None:
    """A valid name is used as given, spaces and Unicode included."""
    assert parse_job_name(" daily digest 東京 ") == " daily digest 東京 "


async def test_jobs_belong_to_their_scope(db: Database, agent: Agent) -> None:
    """Listing and removing see only the given scope's jobs; created_by is stored as given."""
    crons = CronStore(db)
    job = await crons.add(
        agent_id=agent.id,
        scope=GROUP,
        key=GROUP,
        name="d",
        schedule="@daily",
        message="m",
        created_by="42",
    )
    await crons.add(
        agent_id=agent.id,
        scope=OTHER,
        key=OTHER,
        name="d",
        schedule="@daily",
        message="",
        created_by="7",
    )
    assert [j.id for j in await crons.list(agent_id=agent.id, key=GROUP)] == [job.id]
    assert job.created_by == "42"
    assert job.to_json()["name"] == "d"
    with pytest.raises(NotFoundError):
        await crons.remove(agent_id=agent.id, key="group:telegram:-1", name="d")
    removed = await crons.remove(agent_id=agent.id, key=GROUP, name="d")
    assert removed.id == job.id
    assert await crons.list(agent_id=agent.id, key=GROUP) == []
    assert len(await crons.list(agent_id=agent.id, key=OTHER)) == 1


async def test_duplicate_name_in_one_scope_is_a_conflict(db: Database, agent: Agent) -> None:
    """A scope cannot have two jobs with one name."""
    crons = CronStore(db)
    await crons.add(
        agent_id=agent.id,
        scope=GROUP,
        key=GROUP,
        name="d",
        schedule="@daily",
        message="",
        created_by="42",
    )
    with pytest.raises(ConflictError):
        await crons.add(
            agent_id=agent.id,
            scope=GROUP,
            key=GROUP,
            name="d",
            schedule="@hourly",
            message="",
            created_by="1",
        )


async def test_jobs_go_with_their_agent(db: Database, agent: Agent) -> None:
    """Purging the agent deletes its jobs (foreign key, ON DELETE CASCADE)."""
    crons = CronStore(db)
    await crons.add(
        agent_id=agent.id,
        scope=GROUP,
        key=GROUP,
        name="d",
        schedule="@daily",
        message="",
        created_by="42",
    )
    await AgentRegistry(db).remove(agent.id, purge=True)
    row = await db.fetchone("SELECT COUNT(*) FROM cron_jobs")
    assert row is not None
    assert row[0] == 0


async def test_a_job_needs_a_scope_and_an_actor(db: Database, agent: Agent) -> None:
    """No scope or no actor: nothing is stored."""
    crons = CronStore(db)
    for scope, actor in (("", "42"), (GROUP, "")):
        with pytest.raises(ToolError):
            await crons.add(
                agent_id=agent.id,
                scope=scope,
                key=scope,
                name="d",
                schedule="@daily",
                message="",
                created_by=actor,
            )
    row = await db.fetchone("SELECT COUNT(*) FROM cron_jobs")
    assert row is not None
    assert row[0] == 0

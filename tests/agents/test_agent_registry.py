"""The agent registry: tenants, keys vs UUIDs, rename, remove, teams, the cache, batch import."""

from __future__ import annotations

import uuid

import pytest

from actorscope._input import InvalidUUIDError
from actorscope.agents import AgentRegistry
from actorscope.agents._registry import AgentNotFoundError
from actorscope.errors import ConflictError, IdentityError, NotFoundError
from actorscope.store import Database


@pytest.fixture
def registry(db: Database) -> AgentRegistry:
    """A registry over the fresh database."""
    return AgentRegistry(db)


async def _snapshot(db: Database) -> dict[str, list[tuple[object, ...]]]:
    tables = ("tenants", "agents", "teams", "team_members")
    return {
        table: [tuple(row) for row in await db.fetchall(f"SELECT * FROM {table} ORDER BY 1, 2")]
        for table in tables
    }


async def test_rename_keeps_the_uuid_and_every_foreign_key(
    db: Database, registry: AgentRegistry
) -> None:
    """Renaming changes only the key: the UUID and the team_members rows pointing at it stay."""
    bot = await registry.create("bot")
    team = await registry.create_team("ops")
    await registry.add_member(team.id, bot.id, role="lead")
    before = await db.fetchall("SELECT team_id, agent_id, role, added_at FROM team_members")

    renamed = await registry.rename("bot", "helper")

    assert renamed.id == bot.id
    assert renamed.key == "helper"
    after = await db.fetchall("SELECT team_id, agent_id, role, added_at FROM team_members")
    assert [tuple(r) for r in after] == [tuple(r) for r in before]
    assert [(m.agent.id, m.agent.key, m.role) for m in await registry.members(team.id)] == [
        (bot.id, "helper", "lead")
    ]
    assert (await registry.resolve(bot.id)).key == "helper"
    with pytest.raises(AgentNotFoundError):
        await registry.resolve("bot")


async def test_rename_by_uuid_and_to_a_taken_key(registry: AgentRegistry) -> None:
    """Rename accepts a UUID; a key already live in the tenant is a conflict, nothing changes."""
    bot = await registry.create("bot")
    await registry.create("other")
    assert (await registry.rename(bot.id, "bot2")).key == "bot2"
    with pytest.raises(ConflictError, match="other"):
        await registry.rename("bot2", "other")
    assert (await registry.resolve(bot.id)).key == "bot2"
    assert (await registry.rename("bot2", "bot2")).id == bot.id


async def test_same_key_in_two_tenants_is_two_agents(registry: AgentRegistry) -> None:
    """One key in two tenants resolves to two different agents, each only in its own tenant."""
    acme = await registry.create_tenant("acme")
    here = await registry.create("bot")
    there = await registry.create("bot", "acme")
    assert here.id != there.id
    assert (await registry.resolve("bot")).id == here.id
    assert (await registry.resolve("bot", "acme")).id == there.id
    assert (await registry.resolve("bot", acme.id)).id == there.id
    with pytest.raises(AgentNotFoundError):
        await registry.resolve(there.id, "default")
    assert [a.id for a in await registry.list("acme")] == [there.id]


async def test_resolve_needs_a_valid_existing_tenant(registry: AgentRegistry) -> None:
    """An empty, malformed or unknown tenant is an error, never a lookup across tenants."""
    await registry.create("bot")
    with pytest.raises(IdentityError):
        await registry.resolve("bot", "")
    with pytest.raises(NotFoundError, match="no tenant"):
        await registry.resolve("bot", "nope")
    with pytest.raises(NotFoundError):
        await registry.resolve("bot", str(uuid.uuid4()))


async def test_remove_soft_deletes_and_frees_the_key(db: Database, registry: AgentRegistry) -> None:
    """A removed agent no longer resolves, keeps its row, and its key can be reused."""
    bot = await registry.create("bot")
    team = await registry.create_team()
    await registry.add_member(team.id, bot.id)
    gone = await registry.remove("bot")
    assert gone.id == bot.id
    with pytest.raises(AgentNotFoundError):
        await registry.get(bot.id)
    row = await db.fetchone("SELECT deleted_at FROM agents WHERE id = ?", (bot.id,))
    assert row is not None
    assert row["deleted_at"] is not None
    assert await registry.members(team.id) == []
    again = await registry.create("bot")
    assert again.id != bot.id
    with pytest.raises(AgentNotFoundError):
        await registry.remove(bot.id)


async def test_purge_cascades_to_team_members(db: Database, registry: AgentRegistry) -> None:
    """remove(purge=True) deletes the row, and the foreign keys delete what referenced it."""
    bot = await registry.create("bot")
    team = await registry.create_team()
    await registry.add_member(team.id, bot.id)
    await registry.remove(bot.id, purge=True)
    assert await db.fetchone("SELECT 1 FROM agents WHERE id = ?", (bot.id,)) is None
    assert await db.fetchall("SELECT * FROM team_members") == []


async def test_teams_take_uuids_and_stay_in_their_tenant(registry: AgentRegistry) -> None:
    """Members are added by agent UUID only, and only from the team's own tenant."""
    await registry.create_tenant("acme")
    bot = await registry.create("bot")
    foreign = await registry.create("bot", "acme")
    team = await registry.create_team("ops")
    assert (await registry.team(team.id)).name == "ops"
    with pytest.raises(InvalidUUIDError):
        await registry.add_member(team.id, "bot")
    with pytest.raises(ConflictError, match="different tenants"):
        await registry.add_member(team.id, foreign.id)
    with pytest.raises(NotFoundError):
        await registry.team(str(uuid.uuid4()))
    await registry.add_member(team.id, bot.id)
    await registry.add_member(team.id, bot.id, role="lead")
    assert [(m.agent.id, m.role) for m in await registry.members(team.id)] == [(bot.id, "lead")]


async def test_cache_serves_reads_and_rename_invalidates_it(
    db: Database, registry: AgentRegistry
) -> None:
    """A resolved agent is served from the cache; a rename through any registry invalidates it."""
    bot = await registry.create("bot")
    assert (await registry.resolve("bot")).id == bot.id
    # Change the row behind the cache's back: the fast path still answers from memory.
    await db.execute("UPDATE agents SET display_name = 'changed' WHERE id = ?", (bot.id,))
    assert (await registry.resolve("bot")).display_name == ""
    assert (await AgentRegistry(db, cache_ttl=0).resolve("bot")).display_name == "changed"

    await AgentRegistry(db).rename(bot.id, "helper")
    with pytest.raises(AgentNotFoundError):
        await registry.resolve("bot")
    assert (await registry.resolve("helper")).id == bot.id


async def test_remove_invalidates_the_cache_of_every_registry(
    db: Database, registry: AgentRegistry
) -> None:
    """After a remove through one registry, another on the same database cannot get the agent."""
    bot = await registry.create("bot")
    assert (await registry.get(bot.id)).key == "bot"
    await AgentRegistry(db).remove("bot")
    with pytest.raises(AgentNotFoundError):
        await registry.get(bot.id)
    with pytest.raises(AgentNotFoundError):
        await registry.resolve(bot.id)


async def test_cache_entries_expire_after_the_ttl(db: Database) -> None:
    """An entry older than cache_ttl is read again from the database (another process's write)."""
    registry = AgentRegistry(db, cache_ttl=0.0)
    bot = await registry.create("bot")
    await db.execute("UPDATE agents SET agent_key = 'moved' WHERE id = ?", (bot.id,))
    with pytest.raises(AgentNotFoundError):
        await registry.resolve("bot")
    assert (await registry.get(bot.id)).key == "moved"


async def test_import_agents_writes_every_row(registry: AgentRegistry) -> None:
    """A valid batch is written whole, with the given UUIDs, tenants and display names."""
    await registry.create_tenant("acme")
    ids = [str(uuid.uuid4()) for _ in range(3)]
    agents = await registry.import_agents(
        [
            {"id": ids[0], "key": "a"},
            {"id": ids[1].upper(), "key": "b", "tenant": "acme", "display_name": "B"},
            {"id": ids[2], "key": "a", "tenant": "acme"},
        ]
    )
    assert [a.id for a in agents] == ids
    assert (await registry.resolve("b", "acme")).display_name == "B"
    assert (await registry.resolve(ids[2], "acme")).key == "a"


async def test_import_batch_with_one_bad_uuid_leaves_the_database_unchanged(
    db: Database, registry: AgentRegistry
) -> None:
    """One bad UUID anywhere in a batch fails it before any write, naming the row."""
    await registry.create("existing")
    before = await _snapshot(db)
    rows: list[dict[str, object]] = [{"id": str(uuid.uuid4()), "key": f"k{i}"} for i in range(5)]
    rows[3]["id"] = "not-a-uuid"
    with pytest.raises(InvalidUUIDError, match="#3"):
        await registry.import_agents(rows)
    assert await _snapshot(db) == before


@pytest.mark.parametrize(
    ("bad_row", "error"),
    [
        ({"key": "x"}, InvalidUUIDError),
        ({"id": "KEEP", "key": "../x"}, IdentityError),
        ({"id": "KEEP", "key": "x", "tenant": "nope"}, NotFoundError),
        ({"id": "KEEP", "key": "x", "display_name": 3}, IdentityError),
        ({"id": "KEEP", "key": "k0"}, ConflictError),
        ({"id": "EXISTING", "key": "fresh"}, ConflictError),
        ({"id": "KEEP", "key": "existing"}, ConflictError),
    ],
)
async def test_import_failures_write_nothing(
    db: Database, registry: AgentRegistry, bad_row: dict[str, object], error: type[Exception]
) -> None:
    """Bad keys, tenants, duplicates in the batch or clashes with the database write nothing."""
    existing = await registry.create("existing")
    before = await _snapshot(db)
    row = dict(bad_row)
    if row.get("id") == "KEEP":
        row["id"] = str(uuid.uuid4())
    elif row.get("id") == "EXISTING":
        row["id"] = existing.id
    rows: list[dict[str, object]] = [
        {"id": str(uuid.uuid4()), "key": "k0"},
        {"id": str(uuid.uuid4()), "key": "k1"},
        row,
    ]
    with pytest.raises(error):
        await registry.import_agents(rows)
    assert await _snapshot(db) == before


async def test_create_rejects_bad_keys_and_duplicates(registry: AgentRegistry) -> None:
    """Malformed and UUID-shaped keys are refused; a live duplicate key is a conflict."""
    for bad in ("", "../x", "a b", str(uuid.uuid4()), "x" * 65):
        with pytest.raises(IdentityError):
            await registry.create(bad)
    await registry.create("bot")
    with pytest.raises(ConflictError):
        await registry.create("bot")
    assert [a.key for a in await registry.list()] == ["bot"]


async def test_ensure_creates_once_then_resolves(registry: AgentRegistry) -> None:
    """ensure() creates a missing agent by key, then returns that same agent by key or UUID."""
    created = await registry.ensure("notes")
    assert await registry.ensure("notes") == created
    assert await registry.ensure(created.id) == created
    assert [agent.key for agent in await registry.list()] == ["notes"]


async def test_ensure_of_a_missing_uuid_is_not_found(registry: AgentRegistry) -> None:
    """ensure() of a UUID no live agent has (a removed one) says not found, and creates nothing."""
    created = await registry.ensure("notes")
    await registry.remove(created.id)
    with pytest.raises(AgentNotFoundError, match=created.id):
        await registry.ensure(created.id)
    with pytest.raises(AgentNotFoundError):
        await registry.ensure(str(uuid.uuid4()))
    assert await registry.list() == []

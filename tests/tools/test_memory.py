"""Database memory: entries keyed by agent, namespace and scope; simple ranked search."""

from __future__ import annotations

import pytest

import actorscope.tools
import actorscope.tools._memory
from actorscope.agents import Agent, AgentRegistry
from actorscope.errors import NotFoundError
from actorscope.store import Database
from actorscope.tools._memory import DatabaseMemory, MemoryEntry, MemoryKey, rank_entries

pytestmark = pytest.mark.sqlite_only(
    "the tools' subject is the boundary, not the dialect: test_cron_keys.py and tests/store "
    "run the tools' tables on both"
)

GROUP = "group:telegram:-100200300"


def _key(agent: Agent, namespace: str = "project", scope: str = GROUP) -> MemoryKey:
    return MemoryKey(agent.id, namespace, scope)


async def test_add_update_pin_forget_round_trip(db: Database, agent: Agent) -> None:
    """Each action changes the one entry and returns it as stored."""
    memory = DatabaseMemory(db)
    key = _key(agent)
    added = await memory.add(key, "likes tea", created_by="42")
    assert (added.key, added.text, added.pinned, added.created_by) == (
        key,
        "likes tea",
        False,
        "42",
    )
    updated = await memory.update(key, added.id, "likes coffee")
    assert updated.text == "likes coffee"
    assert updated.updated_at >= added.updated_at
    assert (await memory.set_pinned(key, added.id, True)).pinned is True
    assert (await memory.set_pinned(key, added.id, False)).pinned is False
    forgotten = await memory.forget(key, added.id)
    assert forgotten.id == added.id
    assert await memory.search(key, "", 10) == []


@pytest.mark.parametrize(
    ("namespace", "scope"),
    [("project ", GROUP), (" project", GROUP), ("Project", GROUP), ("project", "4242")],
)
async def test_other_keys_cannot_see_or_touch_an_entry(
    db: Database, agent: Agent, namespace: str, scope: str
) -> None:
    """Namespaces match byte for byte and scopes exactly: another key finds nothing."""
    memory = DatabaseMemory(db)
    entry = await memory.add(_key(agent), "secret", created_by="42")
    other = _key(agent, namespace, scope)
    assert await memory.search(other, "secret", 10) == []
    with pytest.raises(NotFoundError):
        await memory.update(other, entry.id, "x")
    with pytest.raises(NotFoundError):
        await memory.set_pinned(other, entry.id, True)
    with pytest.raises(NotFoundError):
        await memory.forget(other, entry.id)
    assert [e.text for e in await memory.search(_key(agent), "", 10)] == ["secret"]


async def test_unicode_and_shared_namespaces_are_stored_as_given(
    db: Database, agent: Agent
) -> None:
    """'__shared__' and non-ASCII namespaces round-trip exactly."""
    memory = DatabaseMemory(db)
    for namespace in ("__shared__", "proyecto-東京-🧠"):
        await memory.add(_key(agent, namespace), f"in {namespace}", created_by="42")
        found = await memory.search(_key(agent, namespace), "", 10)
        assert [e.key.namespace for e in found] == [namespace]


async def test_search_ranks_phrase_then_terms_then_pinned(db: Database, agent: Agent) -> None:
    """The whole phrase beats more terms, more terms beat fewer; non-matches are left out."""
    memory = DatabaseMemory(db)
    key = _key(agent)
    one_term = await memory.add(key, "Tea in the morning", created_by="42")
    both_apart = await memory.add(key, "green leaves, and tea", created_by="42")
    phrase = await memory.add(key, "Green   TEA please", created_by="42")
    await memory.add(key, "coffee only", created_by="42")
    await memory.set_pinned(key, one_term.id, True)
    found = await memory.search(key, "green tea", 10)
    assert [e.id for e in found] == [phrase.id, both_apart.id, one_term.id]
    assert len(await memory.search(key, "green tea", 2)) == 2


async def test_empty_query_lists_pinned_then_recent(db: Database, agent: Agent) -> None:
    """Without a query, pinned entries come first, then the most recently updated."""
    memory = DatabaseMemory(db)
    key = _key(agent)
    first = await memory.add(key, "first", created_by="42")
    second = await memory.add(key, "second", created_by="42")
    third = await memory.add(key, "third", created_by="42")
    await memory.set_pinned(key, first.id, True)
    assert [e.id for e in await memory.search(key, "  ", 10)] == [first.id, third.id, second.id]


async def test_entries_go_with_their_agent(db: Database, agent: Agent) -> None:
    """Purging the agent deletes its memory (foreign key, ON DELETE CASCADE)."""
    await DatabaseMemory(db).add(_key(agent), "x", created_by="42")
    await AgentRegistry(db).remove(agent.id, purge=True)
    row = await db.fetchone("SELECT COUNT(*) FROM memory_entries")
    assert row is not None
    assert row[0] == 0


def test_rank_entries_is_case_insensitive() -> None:
    """Matching folds case (including non-ASCII) on both sides."""
    key = MemoryKey("a", "n", "s")
    entries = [MemoryEntry(1, key, "STRASSE", False, "", "t", "t")]
    assert rank_entries(entries, "straße", 5) == entries
    assert rank_entries(entries, "strasse", 5) == entries
    assert rank_entries(entries, "street", 5) == []


def test_the_memory_backend_is_named_for_the_database_not_sqlite() -> None:
    """DatabaseMemory runs on either backend; the old SqliteMemory name is gone (no alias)."""
    assert DatabaseMemory.__name__ == "DatabaseMemory"
    assert not hasattr(actorscope.tools, "SqliteMemory")
    assert not hasattr(actorscope.tools._memory, "SqliteMemory")

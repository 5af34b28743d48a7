"""The memory tools at the boundary: the agent_id / agent matrix against a spy backend."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from actorscope.agents import Agent, AgentRegistry
from actorscope.context import bind_identity
from actorscope.identity import Identity
from actorscope.permissions import GrantStore, PermissionPolicy
from actorscope.store import Database
from actorscope.tools import Toolbox, ToolRegistry, builtin_tools
from actorscope.tools._memory import MemoryEntry, MemoryKey

INVALID: list[Any] = [None, 0, True, {}, [], "", " \t\r\n", "\u2003\u00a0"]
VALID = ["__shared__", "proyecto-東京-🧠", " project ", "project"]
SPELLINGS = ["agent_id", "agent"]
GROUP = Identity.chat("telegram", -100200300, 4242, group=True)

# Every memory operation, with arguments that are valid apart from the namespace.
OPERATIONS: dict[str, tuple[str, dict[str, Any]]] = {
    "add": ("memory_reflect", {"action": "add", "text": "likes tea"}),
    "update": ("memory_reflect", {"action": "update", "target": 3, "text": "likes coffee"}),
    "forget": ("memory_reflect", {"action": "forget", "target": 3}),
    "pin": ("memory_reflect", {"action": "pin", "target": 3}),
    "unpin": ("memory_reflect", {"action": "unpin", "target": 3}),
    "search": ("memory_search", {"query": "tea"}),
}
BACKEND_METHOD = {
    "add": "add",
    "update": "update",
    "forget": "forget",
    "pin": "set_pinned",
    "unpin": "set_pinned",
    "search": "search",
}


class SpyMemory:
    """A memory backend that records every call and answers with a fixed entry."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, MemoryKey, tuple[object, ...]]] = []

    @staticmethod
    def _entry(key: MemoryKey, text: str = "remembered") -> MemoryEntry:
        return MemoryEntry(3, key, text, False, "spy", "t0", "t0")

    async def add(self, key: MemoryKey, text: str, *, created_by: str) -> MemoryEntry:
        """Record an add."""
        self.calls.append(("add", key, (text, created_by)))
        return self._entry(key, text)

    async def get(self, key: MemoryKey, entry_id: int) -> MemoryEntry:
        """The entry (owned by the GROUP sender, so changes pass); reads are not recorded."""
        return MemoryEntry(entry_id, key, "remembered", False, "4242", "t0", "t0")

    async def update(self, key: MemoryKey, entry_id: int, text: str) -> MemoryEntry:
        """Record an update."""
        self.calls.append(("update", key, (entry_id, text)))
        return self._entry(key, text)

    async def forget(self, key: MemoryKey, entry_id: int) -> MemoryEntry:
        """Record a forget."""
        self.calls.append(("forget", key, (entry_id,)))
        return self._entry(key)

    async def set_pinned(self, key: MemoryKey, entry_id: int, pinned: bool) -> MemoryEntry:
        """Record a pin or unpin."""
        self.calls.append(("set_pinned", key, (entry_id, pinned)))
        return self._entry(key)

    async def search(self, key: MemoryKey, query: str, limit: int) -> list[MemoryEntry]:
        """Record a search."""
        self.calls.append(("search", key, (query, limit)))
        return [self._entry(key)]


@pytest.fixture
async def memory_db() -> AsyncIterator[Database]:
    """An in-memory SQLite database, not the suite's ``db``: memory goes to the spy, and this
    module's hundreds of cases need neither a file nor a second dialect."""
    async with Database.open(":memory:") as database:
        yield database


@pytest.fixture
async def memory_agent(memory_db: Database) -> Agent:
    """The agent ``main`` on ``memory_db``."""
    return await AgentRegistry(memory_db).create("main")


@pytest.fixture
def spy() -> SpyMemory:
    """A fresh spy backend."""
    return SpyMemory()


@pytest.fixture
def tools(memory_db: Database, memory_agent: Agent, tmp_path: Path, spy: SpyMemory) -> ToolRegistry:
    """Every built-in tool, with memory going to the spy."""
    box = Toolbox.create(
        memory_db,
        policy=PermissionPolicy(GrantStore(memory_db)),
        workspace_root=tmp_path / "ws",
        default_agent=memory_agent,
        memory=spy,
    )
    return builtin_tools(box)


def _other(field: str) -> str:
    return "agent" if field == "agent_id" else "agent_id"


async def _call(tools: ToolRegistry, op: str, identity_args: dict[str, Any]) -> dict[str, Any]:
    name, args = OPERATIONS[op]
    with bind_identity(GROUP):
        result = await tools.call(name, {**args, **identity_args})
    return {"is_error": result.is_error, **result.payload}


@pytest.mark.parametrize("op", list(OPERATIONS))
@pytest.mark.parametrize("field", SPELLINGS)
async def test_invalid_value_is_an_error_with_no_backend_call(
    tools: ToolRegistry, spy: SpyMemory, op: str, field: str
) -> None:
    """Every invalid value, alone or beside a valid other spelling, fails naming its field.

    No case reaches the backend: a valid other spelling never rescues an invalid one.
    """
    for value in INVALID:
        for extra in ({}, {_other(field): "project"}):
            result = await _call(tools, op, {field: value, **extra})
            case = f"{field}={value!r} beside {extra}"
            assert result["is_error"] is True, case
            assert result["error"]["code"] == "invalid_identity", case
            assert result["error"]["field"] == field, case
    assert spy.calls == []


@pytest.mark.parametrize("op", list(OPERATIONS))
async def test_missing_namespace_is_an_error_with_no_backend_call(
    tools: ToolRegistry, spy: SpyMemory, op: str
) -> None:
    """Neither spelling given: an error that names agent_id, and no backend call."""
    result = await _call(tools, op, {})
    assert result["is_error"] is True
    assert result["error"]["code"] == "invalid_identity"
    assert "agent_id" in result["error"]["message"]
    assert spy.calls == []


@pytest.mark.parametrize("op", list(OPERATIONS))
@pytest.mark.parametrize("field", SPELLINGS)
async def test_valid_namespace_reaches_the_backend_byte_for_byte(
    tools: ToolRegistry, spy: SpyMemory, memory_agent: Agent, op: str, field: str
) -> None:
    """The namespace the backend sees is exactly the argument; scope and agent are the run's."""
    for value in VALID:
        spy.calls.clear()
        result = await _call(tools, op, {field: value})
        assert result["is_error"] is False, result
        assert len(spy.calls) == 1
        method, key, _ = spy.calls[0]
        assert method == BACKEND_METHOD[op]
        assert key.namespace.encode("utf-8") == value.encode("utf-8")
        assert key == MemoryKey(memory_agent.id, value, GROUP.user_id)
        assert result["namespace"] == value


@pytest.mark.parametrize("op", list(OPERATIONS))
@pytest.mark.parametrize(
    ("canonical", "alias"), [("alpha", "beta"), (" project ", "project"), ("__shared__", "x")]
)
async def test_agent_id_wins_when_both_are_valid(
    tools: ToolRegistry, spy: SpyMemory, op: str, canonical: str, alias: str
) -> None:
    """With both spellings valid, the canonical agent_id is the namespace, even if they differ."""
    result = await _call(tools, op, {"agent_id": canonical, "agent": alias})
    assert result["is_error"] is False
    assert [key.namespace for _, key, _ in spy.calls] == [canonical]


async def test_pin_and_unpin_pass_the_flag(tools: ToolRegistry, spy: SpyMemory) -> None:
    """pin sets pinned, unpin clears it, on the target entry."""
    await _call(tools, "pin", {"agent_id": "p"})
    await _call(tools, "unpin", {"agent_id": "p"})
    assert [args for _, _, args in spy.calls] == [(3, True), (3, False)]


async def test_add_records_the_bound_actor_not_an_argument(
    tools: ToolRegistry, spy: SpyMemory
) -> None:
    """created_by is the run's actor; an actor-ish argument is refused before the backend."""
    await _call(tools, "add", {"agent_id": "p"})
    assert spy.calls[0][2] == ("likes tea", "4242")
    spy.calls.clear()
    refused = await _call(tools, "add", {"agent_id": "p", "sender_id": "1"})
    assert refused["is_error"] is True
    assert refused["error"]["code"] == "invalid_arguments"
    assert spy.calls == []


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({"action": "add"}, "text"),
        ({"action": "add", "text": "  "}, "text"),
        ({"action": "add", "text": "x", "target": 3}, "target"),
        ({"action": "update", "text": "x"}, "target"),
        ({"action": "update", "target": 3}, "text"),
        ({"action": "forget"}, "target"),
        ({"action": "pin", "target": 3, "text": "x"}, "text"),
        ({"action": "drop", "target": 3}, "action"),
        ({"action": "forget", "target": 0}, "target"),
    ],
)
async def test_bad_action_arguments_are_errors_with_no_backend_call(
    tools: ToolRegistry, spy: SpyMemory, args: dict[str, Any], field: str
) -> None:
    """Each action's own arguments are checked before the backend, naming the field."""
    with bind_identity(GROUP):
        result = await tools.call("memory_reflect", {"agent_id": "p", **args})
    assert result.is_error
    assert result.payload["error"]["field"] == field
    assert spy.calls == []


async def test_no_bound_identity_means_no_scope_and_no_backend_call(
    tools: ToolRegistry, spy: SpyMemory
) -> None:
    """Outside any run there is no scope: memory refuses before the backend."""
    result = await tools.call("memory_reflect", {"action": "add", "agent_id": "p", "text": "x"})
    assert result.is_error
    assert result.payload["error"]["code"] == "no_scope"
    assert spy.calls == []

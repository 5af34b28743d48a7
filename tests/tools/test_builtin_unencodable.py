"""Lone surrogates (legal in MCP JSON, not UTF-8 encodable) get a clean tool error, not a crash."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from actorscope.context import bind_identity
from actorscope.identity import Identity
from actorscope.tools import ToolRegistry
from actorscope.tools.mcp_server import _call_result

pytestmark = pytest.mark.sqlite_only(
    "the tools' subject is the boundary, not the dialect: test_cron_keys.py and tests/store "
    "run the tools' tables on both"
)

GrantWriter = Callable[[str, str], Awaitable[None]]

CHAT = -100200300
WRITER = "4242"
GROUP_SCOPE = f"group:telegram:{CHAT}"
LONE = "note \ud800 here"


def _writer() -> Identity:
    return Identity.chat("telegram", CHAT, WRITER, group=True)


async def _call(tools: ToolRegistry, tool: str, /, **args: Any) -> dict[str, Any]:
    with bind_identity(_writer()):
        result = await tools.call(tool, args)
    # The error must also survive being sent: MCP writes the payload as UTF-8 JSON.
    json.dumps(result.payload, ensure_ascii=False).encode("utf-8")
    _call_result(result)
    assert result.is_error, result.payload
    error: dict[str, Any] = result.payload["error"]
    return error


@pytest.mark.parametrize(
    ("action", "extra"),
    [("add", {}), ("update", {"target": 1})],
)
async def test_memory_text_with_a_lone_surrogate_is_invalid_arguments(
    registry: ToolRegistry, action: str, extra: dict[str, Any]
) -> None:
    """memory_reflect add/update with unencodable text: invalid_arguments on field text."""
    error = await _call(
        registry, "memory_reflect", action=action, agent_id="main", text=LONE, **extra
    )
    assert (error["code"], error["field"]) == ("invalid_arguments", "text")


async def test_memory_search_query_with_a_lone_surrogate_is_invalid_arguments(
    registry: ToolRegistry,
) -> None:
    """memory_search with an unencodable query: invalid_arguments on field query."""
    error = await _call(registry, "memory_search", agent_id="main", query=LONE)
    assert (error["code"], error["field"]) == ("invalid_arguments", "query")


@pytest.mark.parametrize("tool", ["memory_reflect", "memory_search"])
@pytest.mark.parametrize("field", ["agent_id", "agent"])
async def test_memory_namespace_with_a_lone_surrogate_is_invalid_identity(
    registry: ToolRegistry, tool: str, field: str
) -> None:
    """An unencodable agent_id / agent namespace is refused at the boundary (invalid_identity)."""
    args: dict[str, Any] = {field: "ma\udc80in"}
    if tool == "memory_reflect":
        args |= {"action": "add", "text": "fine"}
    error = await _call(registry, tool, **args)
    assert (error["code"], error["field"]) == ("invalid_identity", field)


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({"name": LONE, "schedule": "@daily"}, "name"),
        ({"name": "job", "schedule": "0 9 * * \ud83d"}, "schedule"),
        ({"name": "job", "schedule": "@daily", "message": LONE}, "message"),
    ],
)
async def test_cron_add_fields_with_a_lone_surrogate_are_refused(
    registry: ToolRegistry, grant_writer: GrantWriter, args: dict[str, Any], field: str
) -> None:
    """cron_add with an unencodable name, schedule or message gets a tool error for that field."""
    await grant_writer(GROUP_SCOPE, WRITER)
    error = await _call(registry, "cron_add", **args)
    assert error["code"] in ("invalid_arguments", "invalid_schedule")
    assert error.get("field", field) == field
    listed = await registry.call("cron_list", {}, _writer())
    assert listed.payload == {"jobs": []}


async def test_cron_remove_name_with_a_lone_surrogate_is_invalid_arguments(
    registry: ToolRegistry, grant_writer: GrantWriter
) -> None:
    """cron_remove with an unencodable name: invalid_arguments on field name."""
    await grant_writer(GROUP_SCOPE, WRITER)
    error = await _call(registry, "cron_remove", name=LONE)
    assert (error["code"], error["field"]) == ("invalid_arguments", "name")


async def test_workspace_path_error_is_sendable(registry: ToolRegistry) -> None:
    """workspace_read of a lone-surrogate path: path_rejected, echoed escaped so it can be sent."""
    error = await _call(registry, "workspace_read", path="notes/\ud83d.txt")
    assert error["code"] == "path_rejected"
    assert error["path"] == "notes/\\ud83d.txt"

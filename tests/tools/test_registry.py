"""The tool boundary: every failure is a structured result, the actor comes from the context."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field

from actorscope.context import bind_identity
from actorscope.errors import ConflictError, NotFoundError, StoreError
from actorscope.identity import Identity
from actorscope.tools import Tool, ToolRegistry, ToolResult
from actorscope.tools._registry import EMPTY_IDENTITY, ToolCall

pytestmark = pytest.mark.sqlite_only(
    "the tools' subject is the boundary, not the dialect: test_cron_keys.py and tests/store "
    "run the tools' tables on both"
)


class Echo(BaseModel):
    """Echo the caller."""

    model_config = ConfigDict(extra="forbid")
    count: int = Field(default=1, ge=1)


class Namespaced(BaseModel):
    """Takes a namespace."""

    model_config = ConfigDict(extra="forbid")
    agent_id: str | None = None
    agent: str | None = None


async def _echo(call: ToolCall, args: Echo) -> Mapping[str, Any]:
    return {"sender": call.identity.sender_id, "scope": call.identity.user_id, "n": args.count}


def _raising(exc: Exception) -> Tool[Echo]:
    async def handler(call: ToolCall, args: Echo) -> Mapping[str, Any]:
        raise exc

    return Tool("boom", "Fails.", Echo, handler)


ALICE = Identity.chat("telegram", -1001, 42, group=True)


@pytest.fixture
def tools() -> ToolRegistry:
    """A registry with the echo tool."""
    return ToolRegistry((Tool("echo", "Echo the caller.", Echo, _echo),))


async def test_identity_comes_from_the_bound_context(tools: ToolRegistry) -> None:
    """The handler sees the bound identity; without one, the empty identity."""
    with bind_identity(ALICE):
        inside = await tools.call("echo", {})
    outside = await tools.call("echo", None)
    assert inside.payload == {"sender": "42", "scope": ALICE.user_id, "n": 1}
    assert outside.payload == {"sender": "", "scope": "", "n": 1}


async def test_explicit_identity_wins_over_the_context(tools: ToolRegistry) -> None:
    """A caller (the MCP server) may pass the identity it verified."""
    other = Identity(user_id="7", sender_id="7")
    with bind_identity(ALICE):
        result = await tools.call("echo", {}, other)
    assert result.payload["sender"] == "7"


@pytest.mark.parametrize(
    ("name", "arguments", "code"),
    [
        ("nope", {}, "unknown_tool"),
        ("echo", ["not", "an", "object"], "invalid_arguments"),
        ("echo", {"count": 0}, "invalid_arguments"),
        ("echo", {"sender_id": "42"}, "invalid_arguments"),
    ],
)
async def test_bad_calls_are_error_results(
    tools: ToolRegistry, name: str, arguments: Any, code: str
) -> None:
    """Unknown tools, non-object arguments, invalid and extra fields: is_error, with a code."""
    result = await tools.call(name, arguments)
    assert result.is_error is True
    assert result.payload["error"]["code"] == code


@pytest.mark.parametrize(
    ("exc", "code"),
    [
        (NotFoundError("gone"), "not_found"),
        (ConflictError("taken"), "conflict"),
        (StoreError("disk I/O error at /secret/path"), "store_error"),
        (RuntimeError("bug"), "internal_error"),
    ],
)
async def test_handler_exceptions_never_leak(
    exc: Exception, code: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Library errors map to codes; store details and bugs stay in the log, not the result."""
    tools = ToolRegistry((_raising(exc),))
    with caplog.at_level(logging.ERROR):
        result = await tools.call("boom", {})
    assert result.is_error is True
    assert result.payload["error"]["code"] == code
    assert "/secret/path" not in str(result.payload)
    assert ("tools.handler_failed" in caplog.text) == (code == "internal_error")


async def test_namespace_is_validated_before_the_model_and_handler() -> None:
    """A namespaced tool reports the identity rule, naming the field, and never runs."""
    ran: list[str] = []

    async def handler(call: ToolCall, args: Namespaced) -> Mapping[str, Any]:
        ran.append(call.namespace)
        return {}

    tools = ToolRegistry((Tool("ns", "Namespaced.", Namespaced, handler, agent_namespace=True),))
    bad = await tools.call("ns", {"agent_id": 5, "agent": "ok"})
    good = await tools.call("ns", {"agent": " ok "})
    assert bad.payload["error"] == {
        "code": "invalid_identity",
        "message": "agent_id must be a string, got int",
        "field": "agent_id",
    }
    assert good.is_error is False
    assert ran == [" ok "]


def test_duplicate_tool_names_are_refused(tools: ToolRegistry) -> None:
    """Two tools cannot share a name."""
    with pytest.raises(ValueError, match="already registered"):
        tools.add(Tool("echo", "Again.", Echo, _echo))
    assert len(tools) == 1
    assert tools.get("echo") is not None
    assert tools.get("nope") is None


def test_tool_schema_is_flat_and_results_are_json_objects() -> None:
    """A tool advertises its flat schema; ok and error results have fixed shapes."""
    tool = Tool("echo", "Echo.", Echo, _echo)
    assert tool.input_schema["type"] == "object"
    assert tool.input_schema["additionalProperties"] is False
    assert ToolResult.ok({"a": 1}) == ToolResult({"a": 1}, is_error=False)
    assert ToolResult.error("x", "y", field="f").payload == {
        "error": {"code": "x", "message": "y", "field": "f"}
    }
    assert EMPTY_IDENTITY.user_id == EMPTY_IDENTITY.sender_id == ""

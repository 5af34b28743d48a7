"""OpenAI strict form of the built-in tools: what a strict model sends passes the boundary."""

from __future__ import annotations

import json
from typing import Any

import pytest

from actorscope.cli._lint import lint_tool_schema
from actorscope.context import bind_identity
from actorscope.identity import Identity
from actorscope.tools import ToolRegistry
from actorscope.tools._builtin import BUILTIN_TOOL_NAMES
from actorscope.tools._identity_args import (
    CANONICAL_FIELD,
    DEPRECATED_FIELD,
    resolve_agent_identity,
)

pytestmark = pytest.mark.sqlite_only(
    "the tools' subject is the boundary, not the dialect: test_cron_keys.py and tests/store "
    "run the tools' tables on both"
)

DM = Identity.chat("telegram", 4242, 4242, group=False)


def _sample(node: dict[str, Any]) -> Any:
    """A value a model would send for a non-null schema node."""
    kinds = node["type"] if isinstance(node["type"], list) else [node["type"]]
    if "null" in kinds:
        return None  # an optional property: strict models send null for "not given"
    if "enum" in node:
        return node["enum"][0]
    kind = kinds[0]
    if kind == "integer":
        return node.get("minimum", 1)
    if kind == "boolean":
        return True
    if kind == "object":
        return {name: _sample(sub) for name, sub in node.get("properties", {}).items()}
    return "p"


def strict_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """The arguments a strict model produces: every property present, optional ones null."""
    assert schema["required"] == list(schema["properties"])
    return {name: _sample(sub) for name, sub in schema["properties"].items()}


@pytest.mark.parametrize("name", BUILTIN_TOOL_NAMES)
def test_what_a_strict_model_sends_passes_identity_and_argument_validation(
    registry: ToolRegistry, name: str
) -> None:
    """For every built-in tool the strict form lints clean and its full argument object parses."""
    tool = registry.get(name)
    assert tool is not None
    strict = tool.openai_strict_schema()
    assert lint_tool_schema(strict, "openai-strict") == []
    arguments = strict_arguments(strict)
    if tool.agent_namespace:
        assert resolve_agent_identity(arguments) == "p"
    namespace, model = tool.parse_arguments(arguments)
    assert namespace == ("p" if tool.agent_namespace else "")
    assert isinstance(model, tool.input_model)


@pytest.mark.parametrize("name", ["memory_reflect", "memory_search"])
def test_the_strict_form_requires_agent_id_and_has_no_alias(
    registry: ToolRegistry, name: str
) -> None:
    """agent_id is a required non-null string; agent is gone; the descriptions say so."""
    tool = registry.get(name)
    assert tool is not None
    strict = tool.openai_strict_schema()
    assert DEPRECATED_FIELD not in strict["properties"]
    assert DEPRECATED_FIELD not in strict["required"]
    agent_id = strict["properties"][CANONICAL_FIELD]
    assert agent_id["type"] == "string"
    assert CANONICAL_FIELD in strict["required"]
    assert "no alias" in agent_id["description"]
    assert "deprecated" not in agent_id["description"]
    assert "no deprecated agent alias" in strict["description"]
    assert strict["description"].startswith(tool.input_schema["description"].split("\n\n")[0])
    # The flat form (for old clients) keeps both spellings.
    assert DEPRECATED_FIELD in tool.input_schema["properties"]


async def test_a_strict_call_runs_end_to_end(registry: ToolRegistry) -> None:
    """A null optional property is "not given": a strict client adds, searches and schedules."""
    with bind_identity(DM):
        added = await registry.call(
            "memory_reflect", {"action": "add", "agent_id": "p", "text": "milk", "target": None}
        )
        found = await registry.call(
            "memory_search", {"agent_id": "p", "query": None, "limit": None}
        )
        job = await registry.call("cron_add", {"name": "d", "schedule": "@daily", "message": None})
    assert not added.is_error, added.payload
    assert [e["text"] for e in found.payload["entries"]] == ["milk"]
    assert job.payload["job"]["message"] == ""


async def test_a_null_identity_or_required_property_is_still_an_error(
    registry: ToolRegistry,
) -> None:
    """Null stays an error for agent_id, agent and required properties (docs/design.md)."""
    with bind_identity(DM):
        alias = await registry.call("memory_search", {"agent_id": "p", "agent": None})
        canonical = await registry.call("memory_search", {"agent_id": None, "agent": "p"})
        required = await registry.call("cron_add", {"name": None, "schedule": "@daily"})
    assert (
        alias.payload["error"]["code"] == canonical.payload["error"]["code"] == "invalid_identity"
    )
    assert required.payload["error"] == {
        "code": "invalid_arguments",
        "message": "name: Input should be a valid string",
        "field": "name",
    }


def test_the_strict_form_is_a_new_dict_and_leaves_the_flat_schema_alone(
    registry: ToolRegistry,
) -> None:
    """openai_strict_schema() builds a fresh dict each call; input_schema stays flat."""
    tool = registry.get("memory_reflect")
    assert tool is not None
    flat = json.dumps(tool.input_schema, sort_keys=True)
    first = tool.openai_strict_schema()
    first["properties"].clear()
    assert tool.openai_strict_schema()["properties"]
    assert json.dumps(tool.input_schema, sort_keys=True) == flat
    assert DEPRECATED_FIELD in tool.input_schema["properties"]

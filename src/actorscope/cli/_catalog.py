"""Reading tool definitions from the shapes clients exchange them in."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from actorscope.errors import SchemaError

__all__ = ["ToolDefinition", "tools_from_json"]

# MCP says inputSchema, Anthropic input_schema, OpenAI function-calling parameters.
_SCHEMA_KEYS = ("inputSchema", "input_schema", "parameters")


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    """A tool's name and its input schema."""

    name: str
    input_schema: Any


def _tool(item: Any, index: int) -> ToolDefinition:
    if not isinstance(item, dict):
        raise SchemaError(f"tool #{index} is not an object")
    if item.get("type") == "function" and isinstance(item.get("function"), dict):
        item = item["function"]
    name = item.get("name")
    if not isinstance(name, str) or not name:
        raise SchemaError(f"tool #{index} has no name")
    for key in _SCHEMA_KEYS:
        if key in item:
            return ToolDefinition(name=name, input_schema=item[key])
    raise SchemaError(f"tool {name!r} has no inputSchema")


def tools_from_json(document: Any) -> list[ToolDefinition]:
    """The tools in an MCP ``tools/list`` result (bare, or inside a JSON-RPC response) or a list."""
    if isinstance(document, dict) and isinstance(document.get("result"), dict):
        document = document["result"]
    if isinstance(document, dict) and "tools" in document:
        document = document["tools"]
    if not isinstance(document, list):
        raise SchemaError("expected a tools/list result or a list of tools")
    return [_tool(item, i) for i, item in enumerate(document)]

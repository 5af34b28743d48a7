"""flat_schema builds flat tool schemas; lint_tool_schema finds what clients reject."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field

from actorscope.cli import main
from actorscope.errors import SchemaError
from actorscope.tools import (
    AGENT_ALIAS_DESCRIPTION,
    AGENT_ID_DESCRIPTION,
    TARGETS,
    flat_schema,
    lint_tool_schema,
)


class Place(BaseModel):
    """A nested model, reached through a $ref."""

    path: str
    line: int | None = None


class MemoryArgs(BaseModel):
    """A tool input with the identity pair, an enum, a nested optional model."""

    agent_id: str | None = Field(None, description=AGENT_ID_DESCRIPTION)
    agent: str | None = Field(None, description=AGENT_ALIAS_DESCRIPTION)
    action: Literal["add", "update", "forget"]
    text: str = ""
    place: Place | None = None


class Unflattenable(BaseModel):
    """A real union cannot be flattened without a combinator."""

    value: int | str


def _walk(node: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    if isinstance(node, dict):
        found.append(node)
        for value in node.values():
            found.extend(_walk(value))
    elif isinstance(node, list):
        for item in node:
            found.extend(_walk(item))
    return found


def test_flat_schema_has_object_root_and_no_combinators_or_refs() -> None:
    """The schema is type object with no anyOf/oneOf/allOf/$ref anywhere."""
    schema = flat_schema(MemoryArgs)
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    for node in _walk(schema):
        assert not {"anyOf", "oneOf", "allOf", "$ref", "$defs", "title"} & node.keys()


def test_flat_schema_requires_only_what_is_required() -> None:
    """Optional fields (with defaults or X | None) are left out of required."""
    schema = flat_schema(MemoryArgs)
    assert schema["required"] == ["action"]
    assert schema["properties"]["agent_id"] == {
        "type": "string",
        "description": AGENT_ID_DESCRIPTION,
    }
    assert schema["properties"]["place"]["additionalProperties"] is False
    assert schema["properties"]["place"]["required"] == ["path"]


def test_flat_schema_descriptions_state_identity_rules() -> None:
    """Descriptions say precedence, deprecation and the whitespace rule at discovery time."""
    props = flat_schema(MemoryArgs)["properties"]
    assert "agent_id wins" in props["agent_id"]["description"]
    assert "Deprecated" in props["agent"]["description"]
    assert "non-whitespace" in props["agent"]["description"]


def test_flat_schema_refuses_a_real_union() -> None:
    """A union of two types is an error, never an emitted combinator."""
    with pytest.raises(SchemaError, match="anyOf"):
        flat_schema(Unflattenable)


@pytest.mark.parametrize("target", TARGETS)
def test_flat_schema_is_lint_clean_for_every_target(target: str) -> None:
    """What flat_schema builds passes the linter for Claude, OpenAI strict and Gemini."""
    assert lint_tool_schema(flat_schema(MemoryArgs), target) == []


BAD_CASES: list[tuple[str, dict[str, Any], str, str]] = [
    ("claude", {"anyOf": [{"type": "object"}], "type": "object"}, "/anyOf", "root-combinator"),
    ("claude", {"type": "array"}, "/type", "root-type-object"),
    (
        "claude",
        {"type": "object", "properties": {"a": {"type": ["string", "null"]}}},
        "/properties/a",
        "null-union",
    ),
    (
        "claude",
        {"type": "object", "properties": {}, "required": ["ghost"]},
        "/required/0",
        "required-undeclared",
    ),
    (
        "openai-strict",
        {"type": "object", "properties": {"a": {"type": "string"}}},
        "/additionalProperties",
        "additional-properties-false",
    ),
    (
        "openai-strict",
        {
            "type": "object",
            "additionalProperties": False,
            "properties": {"o": {"type": "object", "properties": {}}},
        },
        "/properties/o/additionalProperties",
        "additional-properties-false",
    ),
    (
        "openai-strict",
        {"type": "object", "additionalProperties": False, "patternProperties": {}},
        "/patternProperties",
        "unsupported-keyword",
    ),
    (
        "gemini",
        {"type": "object", "properties": {"a": {"oneOf": [{"type": "string"}]}}},
        "/properties/a/oneOf",
        "combinator",
    ),
    (
        "gemini",
        {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}},
        "/properties/a/$ref",
        "unsupported-keyword",
    ),
    (
        "gemini",
        {"type": "object", "properties": {"n": {"type": "integer", "enum": [1, 2]}}},
        "/properties/n/enum",
        "enum-strings",
    ),
]


@pytest.mark.parametrize(("target", "schema", "pointer", "rule"), BAD_CASES)
def test_known_bad_schemas_produce_the_expected_violation(
    target: str, schema: dict[str, Any], pointer: str, rule: str
) -> None:
    """Each known-bad schema yields a violation with the right JSON pointer and rule."""
    found = {(v.pointer, v.rule) for v in lint_tool_schema(schema, target)}
    assert (pointer, rule) in found


def test_unknown_target_is_a_clear_error() -> None:
    """Linting for an unknown client names the valid targets."""
    with pytest.raises(SchemaError, match="openai-strict"):
        lint_tool_schema({"type": "object"}, "llama")


def _write(tmp_path: Path, document: Any) -> str:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return str(path)


def test_cli_lint_clean_tools_list_exits_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A clean tools/list result passes with exit status 0."""
    doc = {"tools": [{"name": "memory", "inputSchema": flat_schema(MemoryArgs)}]}
    assert main(["schema", "lint", _write(tmp_path, doc), "--target", "gemini"]) == 0
    assert "ok: 1 tool(s) clean for gemini" in capsys.readouterr().out


def test_cli_lint_violations_exit_one_with_a_line_each(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each violation is one line naming tool, pointer and rule; exit status 1."""
    bad = {"type": "object", "anyOf": [{}], "properties": {"a": {"type": ["string", "null"]}}}
    doc = {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "bad", "inputSchema": bad}]}}
    assert main(["schema", "lint", _write(tmp_path, doc), "--target", "claude"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        "bad: /anyOf: root-combinator: a root anyOf makes clients drop the tool",
        "bad: /properties/a: null-union: optional means left out of required, not null",
    ]


def test_cli_lint_accepts_a_plain_list_of_openai_style_tools(tmp_path: Path) -> None:
    """A list of OpenAI function tools (parameters) is read too."""
    doc = [{"type": "function", "function": {"name": "m", "parameters": flat_schema(Place)}}]
    assert main(["schema", "lint", _write(tmp_path, doc), "--target", "openai-strict"]) == 0


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not valid JSON"),
        ('{"tools": 3}', "expected a tools/list result"),
        ('[{"inputSchema": {}}]', "has no name"),
    ],
)
def test_cli_lint_bad_input_is_one_line_exit_two(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    """Malformed files give one clear error line and exit status 2."""
    path = tmp_path / "tools.json"
    path.write_text(content, encoding="utf-8")
    assert main(["schema", "lint", str(path), "--target", "claude"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert message in err[0]

"""flat_schema builds flat tool schemas; lint_tool_schema finds what clients reject."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field

from actorscope.cli import main
from actorscope.cli._lint import lint_tool_schema
from actorscope.errors import SchemaError
from actorscope.tools._builtin import (
    BUILTIN_TOOL_NAMES,
    CronAddInput,
    CronListInput,
    CronRemoveInput,
    MemoryReflectInput,
    MemorySearchInput,
    WhoamiInput,
    WorkspaceReadInput,
    WorkspaceWriteInput,
)
from actorscope.tools._identity_args import AGENT_ALIAS_DESCRIPTION, AGENT_ID_DESCRIPTION
from actorscope.tools._schema import flat_schema
from actorscope.tools._strict import to_openai_strict


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


@pytest.mark.parametrize("target", ["claude", "gemini"])
def test_flat_schema_is_lint_clean_for_flat_targets(target: str) -> None:
    """What flat_schema builds passes the linter for Claude and Gemini."""
    assert lint_tool_schema(flat_schema(MemoryArgs), target) == []


_BUILTIN_INPUTS: dict[str, type[BaseModel]] = {
    "workspace_write": WorkspaceWriteInput,
    "workspace_read": WorkspaceReadInput,
    "cron_add": CronAddInput,
    "cron_list": CronListInput,
    "cron_remove": CronRemoveInput,
    "memory_reflect": MemoryReflectInput,
    "memory_search": MemorySearchInput,
    "whoami": WhoamiInput,
}


def _builtin_schemas() -> dict[str, dict[str, Any]]:
    assert tuple(_BUILTIN_INPUTS) == BUILTIN_TOOL_NAMES  # a new tool must be added here
    return {name: flat_schema(model) for name, model in _BUILTIN_INPUTS.items()}


STRICT_IDIOM: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {"a": {"type": "string"}, "b": {"type": ["string", "null"]}},
    "required": ["a", "b"],
}


def test_openai_strict_rejects_a_property_missing_from_required() -> None:
    """OpenAI strict mode refuses an optional-by-omission property: the linter says so."""
    violations = lint_tool_schema(flat_schema(MemoryArgs), "openai-strict")
    found = {(v.pointer, v.rule) for v in violations}
    assert ("/properties/agent_id", "required-all") in found
    assert ("/properties/place", "required-all") in found
    assert ("/properties/action", "required-all") not in found


def test_openai_strict_accepts_the_strict_nullable_idiom() -> None:
    """Every property required, optional ones ["string", "null"]: clean for OpenAI strict."""
    assert lint_tool_schema(STRICT_IDIOM, "openai-strict") == []


@pytest.mark.parametrize("target", ["claude", "gemini"])
def test_flat_targets_still_reject_the_null_union(target: str) -> None:
    """Claude and Gemini keep the flat contract: a nullable type is a null-union violation."""
    rules = {v.rule for v in lint_tool_schema(STRICT_IDIOM, target)}
    assert "null-union" in rules


def test_to_openai_strict_makes_optional_properties_required_and_nullable() -> None:
    """Optional properties become required and nullable, nested objects too; input unchanged."""
    flat = flat_schema(MemoryArgs)
    before = json.dumps(flat, sort_keys=True)
    strict = to_openai_strict(flat)
    assert json.dumps(flat, sort_keys=True) == before
    assert strict["required"] == list(strict["properties"])
    assert strict["properties"]["agent_id"]["type"] == "string"  # identity: required, no null
    assert "agent" not in strict["properties"]
    assert strict["properties"]["action"]["type"] == "string"
    assert "default" not in strict["properties"]["text"]
    place = strict["properties"]["place"]
    assert place["type"] == ["object", "null"]
    assert place["required"] == ["path", "line"]
    assert place["properties"]["line"]["type"] == ["integer", "null"]
    assert lint_tool_schema(strict, "openai-strict") == []


def test_to_openai_strict_adds_null_to_an_optional_enum() -> None:
    """An optional enum property accepts null in its enum too, as strict mode checks values."""
    schema = {
        "type": "object",
        "properties": {"mode": {"type": "string", "enum": ["a", "b"]}},
    }
    strict = to_openai_strict(schema)
    assert strict["properties"]["mode"]["enum"] == ["a", "b", None]
    assert strict["additionalProperties"] is False


@pytest.mark.parametrize("tool", BUILTIN_TOOL_NAMES)
def test_every_builtin_tool_schema_converts_to_a_clean_openai_strict_schema(tool: str) -> None:
    """to_openai_strict of every built-in tool's schema lints clean for openai-strict."""
    schema = _builtin_schemas()[tool]
    assert lint_tool_schema(to_openai_strict(schema), "openai-strict") == []
    assert lint_tool_schema(schema, "claude") == []


def test_to_openai_strict_refuses_a_non_object() -> None:
    """A schema that is not a JSON object is one clear SchemaError."""
    with pytest.raises(SchemaError, match="JSON object"):
        to_openai_strict([])  # type: ignore[arg-type]  # the wrong type on purpose


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
    strict = to_openai_strict(flat_schema(Place))
    doc = [{"type": "function", "function": {"name": "m", "parameters": strict}}]
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

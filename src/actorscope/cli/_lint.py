"""A linter for tool input schemas against what Claude, OpenAI strict mode and Gemini accept.

Each :class:`Violation` carries a JSON pointer into the schema and the rule it breaks. Every
target shares the structural rules (an object root, no root combinator, known types,
``required`` naming declared properties); beyond those each target is judged by its own rules:

- ``claude`` and ``gemini``: actorscope's flat contract, where optional means left out of
  ``required`` (no null unions); Gemini also refuses type lists, references and more;
- ``openai-strict``: OpenAI's strict mode, where every property of every object is in
  ``required``, an optional one is nullable (``["string", "null"]``), and every object has
  ``additionalProperties: false``. ``Tool.openai_strict_schema()`` gives a tool's schema in
  that form.

``actorscope schema lint FILE --target T`` is its one user.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

from actorscope.errors import SchemaError

__all__ = ["TARGETS", "Target", "Violation", "lint_tool_schema"]

Target = Literal["claude", "openai-strict", "gemini"]
TARGETS: tuple[str, ...] = get_args(Target)

_COMBINATORS = ("anyOf", "oneOf", "allOf")
_JSON_TYPES = frozenset({"object", "array", "string", "number", "integer", "boolean", "null"})
# Keywords OpenAI's strict mode refuses (structured outputs' supported subset excludes them).
_OPENAI_UNSUPPORTED = frozenset(
    {
        "patternProperties",
        "unevaluatedProperties",
        "propertyNames",
        "minProperties",
        "maxProperties",
        "contains",
        "if",
        "then",
        "else",
        "not",
        "dependentRequired",
        "dependentSchemas",
    }
)
# Gemini function declarations take an OpenAPI 3.0 subset: no references, no type lists,
# no const, no conditional or negating keywords.
_GEMINI_UNSUPPORTED = frozenset(
    {
        "$ref",
        "$defs",
        "definitions",
        "const",
        "patternProperties",
        "unevaluatedProperties",
        "propertyNames",
        "if",
        "then",
        "else",
        "not",
        "dependentRequired",
        "dependentSchemas",
    }
)


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken rule: where (a JSON pointer), which rule, and what is wrong."""

    pointer: str
    rule: str
    message: str

    def __str__(self) -> str:
        return f"{self.pointer or '/'}: {self.rule}: {self.message}"


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def _walk(node: Any, pointer: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every sub-schema with its pointer (properties, items, combinator branches, defs)."""
    if not isinstance(node, dict):
        return
    yield pointer, node
    for key in ("properties", "$defs", "definitions", "patternProperties"):
        children = node.get(key)
        if isinstance(children, dict):
            for name, child in children.items():
                yield from _walk(child, f"{pointer}/{key}/{_escape(name)}")
    for key in ("items", "additionalProperties", "not", "if", "then", "else", "contains"):
        child = node.get(key)
        if isinstance(child, dict):
            yield from _walk(child, f"{pointer}/{key}")
    for key in (*_COMBINATORS, "prefixItems"):
        branches = node.get(key)
        if isinstance(branches, list):
            for i, child in enumerate(branches):
                yield from _walk(child, f"{pointer}/{key}/{i}")


def _is_null_union(node: Mapping[str, Any]) -> bool:
    for combinator in _COMBINATORS:
        branches = node.get(combinator)
        if isinstance(branches, list) and any(
            isinstance(b, dict) and b.get("type") == "null" for b in branches
        ):
            return True
    kind = node.get("type")
    return isinstance(kind, list) and "null" in kind


def _common(schema: Any) -> Iterator[Violation]:
    if not isinstance(schema, dict):
        yield Violation("", "root-object", "the input schema must be a JSON object")
        return
    if schema.get("type") != "object":
        yield Violation("/type", "root-type-object", "the root schema must have type: object")
    for combinator in _COMBINATORS:
        if combinator in schema:
            yield Violation(
                f"/{combinator}",
                "root-combinator",
                f"a root {combinator} makes clients drop the tool",
            )
    for pointer, node in _walk(schema):
        kind = node.get("type")
        kinds = kind if isinstance(kind, list) else [kind] if kind is not None else []
        for k in kinds:
            if k not in _JSON_TYPES:
                yield Violation(f"{pointer}/type", "unknown-type", f"{k!r} is not a JSON type")
        properties = node.get("properties")
        if properties is not None and not isinstance(properties, dict):
            yield Violation(f"{pointer}/properties", "properties-object", "must be an object")
        required = node.get("required")
        if required is not None:
            names = properties if isinstance(properties, dict) else {}
            if not isinstance(required, list):
                yield Violation(f"{pointer}/required", "required-list", "must be a list")
            else:
                for i, name in enumerate(required):
                    if name not in names:
                        yield Violation(
                            f"{pointer}/required/{i}",
                            "required-undeclared",
                            f"{name!r} is required but not a property",
                        )


def _flat(schema: dict[str, Any]) -> Iterator[Violation]:
    """actorscope's flat contract (Claude, Gemini): optional is left out of required."""
    for pointer, node in _walk(schema):
        if _is_null_union(node):
            yield Violation(pointer, "null-union", "optional means left out of required, not null")


def _openai(schema: dict[str, Any]) -> Iterator[Violation]:
    for pointer, node in _walk(schema):
        properties = node.get("properties")
        if isinstance(properties, dict):
            required = node.get("required")
            listed = set(required) if isinstance(required, list) else set()
            for name in properties:
                if name not in listed:
                    yield Violation(
                        f"{pointer}/properties/{_escape(name)}",
                        "required-all",
                        f"strict mode needs every property in required; make {name!r} "
                        'required and nullable (["string", "null"]) if it is optional',
                    )
        if node.get("type") == "object" and node.get("additionalProperties") is not False:
            yield Violation(
                f"{pointer}/additionalProperties",
                "additional-properties-false",
                "strict mode needs additionalProperties: false on every object",
            )
        for keyword in sorted(_OPENAI_UNSUPPORTED & node.keys()):
            yield Violation(
                f"{pointer}/{keyword}", "unsupported-keyword", f"strict mode rejects {keyword}"
            )


def _gemini(schema: dict[str, Any]) -> Iterator[Violation]:
    for pointer, node in _walk(schema):
        for combinator in _COMBINATORS:
            if combinator in node and pointer:
                yield Violation(
                    f"{pointer}/{combinator}",
                    "combinator",
                    f"Gemini function declarations do not take {combinator}",
                )
        if isinstance(node.get("type"), list):
            yield Violation(f"{pointer}/type", "type-list", "Gemini takes one type per schema")
        for keyword in sorted(_GEMINI_UNSUPPORTED & node.keys()):
            yield Violation(
                f"{pointer}/{keyword}", "unsupported-keyword", f"Gemini rejects {keyword}"
            )
        enum = node.get("enum")
        if isinstance(enum, list) and not all(isinstance(v, str) for v in enum):
            yield Violation(f"{pointer}/enum", "enum-strings", "Gemini enums must be strings")


def lint_tool_schema(schema: Any, target: str) -> list[Violation]:
    """Every violation of ``schema`` (a tool's input schema) for ``target``, in schema order."""
    if target not in TARGETS:
        raise SchemaError(f"unknown target {target!r}; choose one of {', '.join(TARGETS)}")
    violations = list(_common(schema))
    if isinstance(schema, dict):
        if target == "openai-strict":
            violations.extend(_openai(schema))
        else:
            violations.extend(_flat(schema))
            if target == "gemini":
                violations.extend(_gemini(schema))
    return violations

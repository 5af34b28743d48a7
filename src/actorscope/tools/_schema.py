"""Flat input schemas for LLM tools, built from pydantic models.

Clients drop tools whose input schema has a root ``anyOf``/``oneOf``/``allOf``, OpenAI strict
mode wants ``additionalProperties: false``, and Gemini reads neither ``$ref`` nor null unions.
:func:`flat_schema` therefore inlines every ``$ref``, turns ``X | None`` into plain ``X``
(optional by leaving it out of ``required``), removes pydantic's titles, and refuses any
union it cannot flatten instead of emitting a combinator.
"""

from __future__ import annotations

import copy
from typing import Any

from pydantic import BaseModel

from actorscope.errors import SchemaError

__all__ = ["flat_schema"]

_COMBINATORS = ("anyOf", "oneOf", "allOf")


def _resolve(node: Any, defs: dict[str, Any], pointer: str, seen: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_resolve(item, defs, f"{pointer}/{i}", seen) for i, item in enumerate(node)]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        ref = node["$ref"]
        name = ref.rsplit("/", 1)[-1]
        if not ref.startswith("#/$defs/") or name not in defs:
            raise SchemaError(f"{pointer}: cannot inline reference {ref!r}")
        if name in seen:
            raise SchemaError(f"{pointer}: recursive model {name!r} cannot be flattened")
        merged = {**copy.deepcopy(defs[name]), **{k: v for k, v in node.items() if k != "$ref"}}
        return _resolve(merged, defs, pointer, (*seen, name))
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("title", "$defs"):
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {
                name: _resolve(sub, defs, f"{pointer}/properties/{name}", seen)
                for name, sub in value.items()
            }
        else:
            out[key] = _resolve(value, defs, f"{pointer}/{key}", seen)
    return _flatten_optional(out, pointer)


def _flatten_optional(node: dict[str, Any], pointer: str) -> dict[str, Any]:
    """``anyOf: [X, {type: null}]`` → ``X``; any other combinator is an error."""
    for combinator in _COMBINATORS:
        if combinator not in node:
            continue
        branches = [b for b in node[combinator] if b != {"type": "null"}]
        if combinator == "anyOf" and len(branches) == 1 and len(node[combinator]) == 2:
            rest = {k: v for k, v in node.items() if k != combinator}
            if "default" in rest and rest["default"] is None:
                del rest["default"]  # null is no longer a valid value of the flattened type
            return {**branches[0], **rest}
        raise SchemaError(f"{pointer or '/'}: a {combinator} union cannot be flattened")
    if node.get("type") == "object" and "properties" in node:
        node.setdefault("additionalProperties", False)
    return node


def flat_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema as a flat tool input schema (``type: object``, no combinators).

    Optional fields (``X | None = None``) become plain ``X`` left out of ``required``;
    nested objects get ``additionalProperties: false`` too.
    """
    raw = model.model_json_schema()
    defs = raw.get("$defs", {})
    schema = _resolve(raw, defs, "", ())
    if schema.get("type") != "object":
        raise SchemaError(f"{model.__name__}: a tool input schema must be an object")
    schema["additionalProperties"] = False
    schema.setdefault("properties", {})
    if not schema.get("required"):
        schema.pop("required", None)
    return dict(schema)

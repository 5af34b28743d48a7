"""A flat tool schema in OpenAI strict form (what ``Tool.openai_strict_schema()`` gives).

OpenAI's strict mode wants every property of every object in ``required``, an optional one
nullable (``["string", "null"]``), and ``additionalProperties: false`` on every object; the
identity argument stays a required, non-null ``agent_id`` (docs/design.md, "Tool boundary").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from actorscope.errors import SchemaError
from actorscope.tools._identity_args import (
    AGENT_ID_STRICT_DESCRIPTION,
    CANONICAL_FIELD,
    DEPRECATED_FIELD,
    STRICT_IDENTITY_NOTE,
)

__all__ = ["to_openai_strict"]


def _nullable(node: dict[str, Any]) -> dict[str, Any]:
    """``node`` accepting null too: ``type`` gains ``"null"`` (and a closed ``enum`` gains null)."""
    kind = node.get("type")
    if kind is None:
        return {"anyOf": [node, {"type": "null"}]}
    kinds = list(kind) if isinstance(kind, list) else [kind]
    out = {**node, "type": kinds if "null" in kinds else [*kinds, "null"]}
    enum = out.get("enum")
    if isinstance(enum, list) and None not in enum:
        out["enum"] = [*enum, None]
    # The default described leaving the property out; in strict form null says that.
    out.pop("default", None)
    return out


def _strict(node: Any) -> Any:
    if isinstance(node, list):
        return [_strict(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _strict(value) for key, value in node.items() if key != "properties"}
    properties = node.get("properties")
    if isinstance(properties, dict):
        required = node.get("required")
        listed = set(required) if isinstance(required, list) else set()
        out["properties"] = {
            name: _strict(sub) if name in listed else _nullable(_strict(sub))
            for name, sub in properties.items()
        }
        out["required"] = list(properties)
    if out.get("type") == "object" or isinstance(properties, dict):
        out["additionalProperties"] = False
    return out


def _strict_identity(converted: dict[str, Any], flat: Mapping[str, Any]) -> None:
    """Make a strict schema's identity argument usable: ``agent_id`` required, never null.

    A strict model sends every property, so it would send ``null`` for whichever of
    ``agent_id`` / ``agent`` it skips, and that null is an error at the tool boundary. The
    strict form therefore drops the deprecated alias (old clients use the flat form) and
    keeps ``agent_id`` as a plain required string; the descriptions say so.
    """
    properties = converted.get("properties")
    flat_properties = flat.get("properties")
    if not isinstance(properties, dict) or not isinstance(flat_properties, Mapping):
        return
    original = flat_properties.get(CANONICAL_FIELD)
    if not isinstance(original, Mapping):
        return
    properties.pop(DEPRECATED_FIELD, None)
    agent_id = {key: _strict(value) for key, value in original.items() if key != "default"}
    agent_id.update(type="string", description=AGENT_ID_STRICT_DESCRIPTION)
    properties[CANONICAL_FIELD] = agent_id
    converted["required"] = list(properties)
    description = converted.get("description")
    summary = description.split("\n\n", 1)[0].strip() if isinstance(description, str) else ""
    parts = (summary, STRICT_IDENTITY_NOTE) if summary else (STRICT_IDENTITY_NOTE,)
    converted["description"] = "\n\n".join(parts)


def to_openai_strict(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A flat tool schema in OpenAI strict form (a new dict; ``schema`` is not changed).

    Every object lists all its properties in ``required`` and has ``additionalProperties:
    false``; a property that was optional becomes nullable (``["string", "null"]``, ``null``
    added to its ``enum``, its ``default`` dropped), so the model sends ``null`` for "not given"
    (the tool boundary reads that null as absent, except for the identity argument).

    A tool that takes an identity argument (a root ``agent_id``) gets ``agent_id`` as a
    required, non-null string and no deprecated ``agent`` alias: a null there is an error,
    and strict clients are new. Its description keeps its first paragraph (the summary) and
    states that rule instead of the alias rules.
    """
    if not isinstance(schema, Mapping):
        raise SchemaError("the input schema must be a JSON object")
    # _strict rebuilds every object and list, so nothing of ``schema`` is shared.
    converted: dict[str, Any] = _strict(dict(schema))
    _strict_identity(converted, schema)
    return converted

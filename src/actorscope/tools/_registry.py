"""A small registry of LLM tools, and the one boundary every tool call goes through.

A :class:`Tool` is a name, a description, a pydantic input model (advertised as its flat
schema, ``Tool.input_schema``, or in OpenAI strict form) and an async handler.
:meth:`ToolRegistry.call` is the boundary: it takes the identity from the bound run (never
from the arguments), validates the ``agent_id`` / ``agent`` namespace of tools that take one
*before* anything else runs, validates the rest of the arguments, runs the handler, and turns
every failure into a structured error :class:`ToolResult`, so no exception reaches the model.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from actorscope.context import current_identity
from actorscope.errors import (
    ActorscopeError,
    ConflictError,
    NotFoundError,
    StoreError,
    ToolError,
)
from actorscope.identity import Identity, SenderKind
from actorscope.tools._identity_args import (
    IDENTITY_FIELDS,
    IdentityValidationError,
    resolve_agent_identity,
)
from actorscope.tools._schema import flat_schema
from actorscope.tools._strict import to_openai_strict
from actorscope.tools._toolbox import PermissionDeniedError

__all__ = [
    "EMPTY_IDENTITY",
    "Tool",
    "ToolCall",
    "ToolRegistry",
    "ToolResult",
]

logger = logging.getLogger("actorscope.tools.registry")

#: The identity of a call with no bound run: no scope, no sender. Every group write is denied
#: to it, and tools that need a scope refuse it.
EMPTY_IDENTITY = Identity(user_id="", sender_id="", sender_kind=SenderKind.NONE)

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool call returns to the model: a JSON object, flagged when it is an error."""

    payload: dict[str, Any]
    is_error: bool = False

    @classmethod
    def ok(cls, payload: Mapping[str, Any]) -> ToolResult:
        """A successful result."""
        return cls(dict(payload))

    @classmethod
    def error(cls, code: str, message: str, **detail: str) -> ToolResult:
        """An error result: ``{"error": {"code": ..., "message": ..., **detail}}``."""
        return cls({"error": {"code": code, "message": message, **detail}}, is_error=True)


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call as its handler sees it: the bound identity and the validated namespace.

    ``namespace`` is the ``agent_id`` / ``agent`` argument byte for byte, or ``""`` for a
    tool that takes none.
    """

    identity: Identity
    namespace: str = ""


Handler = Callable[[ToolCall, M], Awaitable[Mapping[str, Any]]]


@dataclass(frozen=True, slots=True)
class Tool(Generic[M]):
    """An LLM tool. ``agent_namespace`` tools take ``agent_id`` / ``agent`` (see identity_args)."""

    name: str
    description: str
    input_model: type[M]
    handler: Handler[M]
    agent_namespace: bool = False
    input_schema: dict[str, Any] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "input_schema", flat_schema(self.input_model))

    def openai_strict_schema(self) -> dict[str, Any]:
        """:attr:`input_schema` in OpenAI strict form (a new dict each call).

        Every object lists all its properties in ``required`` and has ``additionalProperties:
        false``; a property that was optional becomes nullable (``["string", "null"]``,
        ``null`` added to its ``enum``, its ``default`` dropped), so the model sends ``null``
        for "not given", which :meth:`parse_arguments` reads as absent. A tool that takes an
        identity argument gets ``agent_id`` as a required, non-null string and no deprecated
        ``agent`` alias (strict clients are new), and its description says so.
        """
        return to_openai_strict(self.input_schema)

    def parse_arguments(self, arguments: Mapping[str, object]) -> tuple[str, M]:
        """The validated namespace (``""`` if the tool takes none) and input model.

        Raises :class:`IdentityValidationError` or pydantic's ``ValidationError``. A ``null``
        for an optional property means "not given" (the OpenAI strict form sends every
        property: :meth:`openai_strict_schema`), except for the identity
        arguments, whose null is always an error (docs/design.md, "Tool boundary").
        """
        namespace = ""
        if self.agent_namespace:
            # Before the model and before any backend: the identity rules are the boundary.
            namespace = resolve_agent_identity(arguments)
        required = self.input_schema.get("required", ())
        given = {
            name: value
            for name, value in arguments.items()
            if value is not None or name in required or name in IDENTITY_FIELDS
        }
        return namespace, self.input_model.model_validate(given)

    async def invoke(self, identity: Identity, arguments: Mapping[str, object]) -> ToolResult:
        """Validate ``arguments`` and run the handler; any refusal becomes an error result."""
        namespace, model = self.parse_arguments(arguments)
        return ToolResult.ok(await self.handler(ToolCall(identity, namespace), model))


def _validation_error(exc: ValidationError) -> ToolResult:
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    return ToolResult.error(
        "invalid_arguments", f"{where or 'arguments'}: {first['msg']}", field=where
    )


def _error_result(exc: ActorscopeError) -> ToolResult:
    if isinstance(exc, ToolError):
        return ToolResult.error(exc.code, str(exc), **exc.detail)
    if isinstance(exc, IdentityValidationError):
        return ToolResult.error("invalid_identity", str(exc), field=exc.field)
    if isinstance(exc, PermissionDeniedError):
        reason = str(getattr(exc.decision, "reason", ""))
        return ToolResult.error("permission_denied", str(exc), reason=reason)
    if isinstance(exc, NotFoundError):
        return ToolResult.error("not_found", str(exc))
    if isinstance(exc, ConflictError):
        return ToolResult.error("conflict", str(exc))
    if isinstance(exc, StoreError):
        return ToolResult.error("store_error", "the tool's storage failed; try again later")
    return ToolResult.error("invalid_arguments", str(exc))


class ToolRegistry:
    """Tools by name, in registration order."""

    def __init__(self, tools: tuple[Tool[Any], ...] = ()) -> None:
        self._tools: dict[str, Tool[Any]] = {}
        for tool in tools:
            self.add(tool)

    def add(self, tool: Tool[Any]) -> None:
        """Register ``tool``; a second tool with the same name is an error."""
        if tool.name in self._tools:
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        self._tools[tool.name] = tool

    def __iter__(self) -> Iterator[Tool[Any]]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def get(self, name: str) -> Tool[Any] | None:
        """The tool named ``name``, or ``None``."""
        return self._tools.get(name)

    async def call(
        self, name: str, arguments: Mapping[str, object] | None, identity: Identity | None = None
    ) -> ToolResult:
        """Run one tool call as ``identity`` (default: the bound run's, else no one).

        The actor is never read from ``arguments``; an ``agent_id`` there is a namespace.
        """
        tool = self._tools.get(name)
        if tool is None:
            return ToolResult.error("unknown_tool", f"no tool named {name!r}")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, Mapping):
            return ToolResult.error("invalid_arguments", "tool arguments must be an object")
        who = identity or current_identity() or EMPTY_IDENTITY
        try:
            return await tool.invoke(who, arguments)
        except ValidationError as exc:
            return _validation_error(exc)
        except ActorscopeError as exc:
            return _error_result(exc)
        except Exception:
            # The tool boundary: a bug in a handler must reach the log, not the model.
            logger.exception("tools.handler_failed tool=%s", name)
            return ToolResult.error("internal_error", f"tool {name!r} failed unexpectedly")

"""Distinct id types: a UUID for what the database or the system needs unique, a key for people.

``AgentUUID``, ``TenantUUID`` and ``TeamUUID`` are canonical lowercase UUID strings;
``AgentKey`` is the per-tenant name (prompt text, paths, logs, the bot's @name). mypy keeps
them apart; ``parse_uuid`` (``actorscope._input``) is the only way to make a UUID-typed value from
outside text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NewType

from actorscope._input import AGENT_KEY_PATTERN, NIL_UUID, InvalidUUIDError, is_uuid, parse_uuid
from actorscope.errors import IdentityError

__all__ = [
    "AgentKey",
    "AgentUUID",
    "TeamUUID",
    "TenantUUID",
    "parse_agent_key",
    "parse_tenant_slug",
    "uuid_or_null",
    "validate_uuids",
]


AgentUUID = NewType("AgentUUID", str)
"""An agent's id: a canonical lowercase UUID string, for what the database or the system
needs unique (foreign keys, events, tracing, API parameters)."""

TenantUUID = NewType("TenantUUID", str)
TeamUUID = NewType("TeamUUID", str)

AgentKey = NewType("AgentKey", str)
"""An agent's name within its tenant (``notes``): what people read, in prompts, paths, logs
and the bot's @name; never a UUID (``AgentRegistry.parse_key`` checks one)."""

_TENANT_SLUG = re.compile(r"[a-z0-9][a-z0-9-]{0,62}")


def validate_uuids(values: Iterable[object], what: str = "id") -> list[str]:
    """Every value as a canonical UUID, or :class:`InvalidUUIDError` at the first bad one.

    For batches (agent import, grant import): call it on the whole batch before the first
    write, so one bad row fails the batch with nothing written. The error names the row's
    position, counted from 0.
    """
    checked: list[str] = []
    for index, value in enumerate(values):
        if not is_uuid(value, canonical=False):
            raise InvalidUUIDError(f"{what} #{index} must be a UUID, got {value!r}")
        checked.append(str(value).lower())
    return checked


def uuid_or_null(value: object, what: str = "id") -> str | None:
    """A telemetry column's value: ``None`` for ``None``, ``""`` or the nil UUID.

    Anything else must be a UUID (returned canonical); a non-UUID raises
    :class:`InvalidUUIDError` rather than being stored as a row that points nowhere.
    """
    if value is None or value == "":
        return None
    canonical = parse_uuid(value, what)
    return None if canonical == NIL_UUID else canonical


def parse_agent_key(value: object) -> AgentKey:
    """Validate an agent key: 1-64 of ``A-Z a-z 0-9 _ -``, starting with a letter or digit."""
    if not isinstance(value, str) or AGENT_KEY_PATTERN.fullmatch(value) is None:
        raise IdentityError(
            f"agent key must be 1-64 letters, digits, '_' or '-' (starting with a letter "
            f"or digit), got {value!r}"
        )
    if is_uuid(value, canonical=False):
        raise IdentityError(f"agent key must not look like a UUID: {value!r}")
    return AgentKey(value)


def parse_tenant_slug(value: object) -> str:
    """Validate a tenant slug: 1-63 of ``a-z 0-9 -``, starting with a letter or digit."""
    if not isinstance(value, str) or _TENANT_SLUG.fullmatch(value) is None:
        raise IdentityError(
            f"tenant slug must be 1-63 lowercase letters, digits or '-', got {value!r}"
        )
    return value

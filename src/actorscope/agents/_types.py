"""Distinct id types: a UUID for what the database or the system needs unique, a key for people.

``AgentUUID``, ``TenantUUID`` and ``TeamUUID`` are canonical lowercase UUID strings;
``AgentKey`` is the per-tenant name (prompt text, paths, logs, the bot's @name). mypy keeps
them apart; :func:`parse_uuid` is the only way to make a UUID-typed value from outside text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NewType

from actorscope.errors import IdentityError
from actorscope.identity import AGENT_KEY_PATTERN

__all__ = [
    "NIL_UUID",
    "AgentKey",
    "AgentUUID",
    "InvalidUUIDError",
    "TeamUUID",
    "TenantUUID",
    "is_uuid",
    "looks_like_uuid",
    "parse_agent_key",
    "parse_tenant_slug",
    "parse_uuid",
    "parse_uuid_or_nil",
    "uuid_or_null",
    "validate_uuids",
]


class InvalidUUIDError(IdentityError):
    """A string that must be a UUID is not one (an :class:`~actorscope.errors.IdentityError`)."""


AgentUUID = NewType("AgentUUID", str)
TenantUUID = NewType("TenantUUID", str)
TeamUUID = NewType("TeamUUID", str)
AgentKey = NewType("AgentKey", str)

#: The nil UUID: "no match" on read paths; stored as NULL, never as a row id.
NIL_UUID = "00000000-0000-0000-0000-000000000000"

_UUID_ANY_CASE = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
)
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_TENANT_SLUG = re.compile(r"[a-z0-9][a-z0-9-]{0,62}")


def is_uuid(value: object, *, canonical: bool = True) -> bool:
    """True iff ``value`` is a UUID in canonical form: 8-4-4-4-12 **lowercase** hex; with
    ``canonical=False``, a hyphenated UUID in either case (a UUID, not an agent key).

    Canonical by default: stored ids are lowercase, so an uppercase spelling compared as text
    would silently match nothing (no grant, no writer); callers with outside text use
    :func:`parse_uuid`, which lowercases.
    """
    if not canonical:
        return looks_like_uuid(value)
    return isinstance(value, str) and _UUID.fullmatch(value) is not None


def looks_like_uuid(value: object) -> bool:
    """True iff ``value`` is a hyphenated UUID in either case: a UUID, not an agent key."""
    return isinstance(value, str) and _UUID_ANY_CASE.fullmatch(value) is not None


def parse_uuid(value: object, what: str = "id") -> str:
    """Return ``value`` as a canonical lowercase UUID string, or raise naming ``what``.

    Only the hyphenated 36-character form is accepted (either case): braces, URNs and bare
    hex are spellings a typo can produce, and a typo must not become a different id.
    """
    if not looks_like_uuid(value):
        raise InvalidUUIDError(f"{what} must be a UUID, got {value!r}")
    return str(value).lower()


def parse_uuid_or_nil(value: object) -> str:
    """Like :func:`parse_uuid`, but ``NIL_UUID`` for anything invalid: for "no match" reads only."""
    return str(value).lower() if looks_like_uuid(value) else NIL_UUID


def validate_uuids(values: Iterable[object], what: str = "id") -> list[str]:
    """Every value as a canonical UUID, or :class:`InvalidUUIDError` at the first bad one.

    For batches (agent import, grant import): call it on the whole batch before the first
    write, so one bad row fails the batch with nothing written. The error names the row's
    position, counted from 0.
    """
    checked: list[str] = []
    for index, value in enumerate(values):
        if not looks_like_uuid(value):
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
    if looks_like_uuid(value):
        raise IdentityError(f"agent key must not look like a UUID: {value!r}")
    return AgentKey(value)


def parse_tenant_slug(value: object) -> str:
    """Validate a tenant slug: 1-63 of ``a-z 0-9 -``, starting with a letter or digit."""
    if not isinstance(value, str) or _TENANT_SLUG.fullmatch(value) is None:
        raise IdentityError(
            f"tenant slug must be 1-63 lowercase letters, digits or '-', got {value!r}"
        )
    return value

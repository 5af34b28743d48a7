"""Grant records: the row type, its key, the lookup answer, and the precedence rule."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from actorscope._input import parse_uuid
from actorscope.errors import GrantError
from actorscope.permissions._scopes import (
    ANY,
    Permission,
    parse_config_type,
    parse_grant_scope,
    parse_grantee,
)
from actorscope.store import Row

__all__ = [
    "Grant",
    "GrantKey",
    "GrantLookup",
    "grant_from_row",
    "grant_key",
    "metadata_json",
    "precedence",
]


class GrantLookup(StrEnum):
    """What the grants say about one sender: allowed, denied, or nothing."""

    ALLOW = "allow"
    DENY = "deny"
    NONE = "none"


@dataclass(frozen=True, slots=True)
class GrantKey:
    """The identity of a grant within its agent (the agent fixes the tenant)."""

    agent_id: str
    scope: str
    config_type: str
    sender_id: str


@dataclass(frozen=True, slots=True)
class Grant:
    """One row of ``config_permissions``."""

    tenant_id: str
    agent_id: str
    scope: str
    config_type: str
    sender_id: str
    permission: str
    granted_by: str = ""
    metadata: Mapping[str, Any] = field(default_factory=dict)
    created_at: str = ""
    updated_at: str = ""

    def as_dict(self) -> dict[str, Any]:
        """The grant as plain JSON-ready data."""
        return {
            "tenant_id": self.tenant_id,
            "agent_id": self.agent_id,
            "scope": self.scope,
            "config_type": self.config_type,
            "sender_id": self.sender_id,
            "permission": self.permission,
            "granted_by": self.granted_by,
            "metadata": dict(self.metadata),
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        }


def grant_from_row(row: Row) -> Grant:
    """A :class:`Grant` from a ``config_permissions`` row."""
    return Grant(
        tenant_id=row["tenant_id"],
        agent_id=row["agent_id"],
        scope=row["scope"],
        config_type=row["config_type"],
        sender_id=row["sender_id"],
        permission=row["permission"],
        granted_by=row["granted_by"],
        metadata=json.loads(row["metadata"]),
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


def grant_key(agent_id: object, scope: object, config_type: object, sender_id: object) -> GrantKey:
    """Validate the four parts of a grant's key (agent UUID first)."""
    agent = parse_uuid(agent_id, "agent id")
    valid_scope = parse_grant_scope(scope)
    return GrantKey(
        agent_id=agent,
        scope=valid_scope,
        config_type=parse_config_type(config_type),
        sender_id=parse_grantee(sender_id, valid_scope),
    )


def metadata_json(metadata: Mapping[str, Any] | None) -> str:
    """Grant metadata as canonical JSON text; :class:`GrantError` if it cannot be."""
    if metadata is None:
        return "{}"
    if not isinstance(metadata, Mapping):
        raise GrantError(f"grant metadata must be a mapping, got {type(metadata).__name__}")
    try:
        return json.dumps(dict(metadata), sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise GrantError(f"grant metadata must be JSON-serialisable: {exc}") from exc


def precedence(rows: Iterable[Row]) -> GrantLookup:
    """Sender deny, sender allow, ``*`` deny, ``*`` allow, none (rows of one sender and ``*``)."""
    sender_allow = any_deny = any_allow = False
    for row in rows:
        deny = row["permission"] == Permission.DENY
        if row["sender_id"] != ANY:
            if deny:
                return GrantLookup.DENY
            sender_allow = True
        elif deny:
            any_deny = True
        else:
            any_allow = True
    if sender_allow:
        return GrantLookup.ALLOW
    if any_deny:
        return GrantLookup.DENY
    return GrantLookup.ALLOW if any_allow else GrantLookup.NONE

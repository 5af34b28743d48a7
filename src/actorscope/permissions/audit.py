"""The audit trail: grant changes, denials and fail-open allows, one row each in ``audit_log``.

Grant changes are written inside the transaction of the change (they commit together);
decisions are written in their own transaction, best effort: a failing audit write is logged
and never turns a decision into an exception.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from actorscope._text import escape_unstorable
from actorscope.agents.types import NIL_UUID
from actorscope.errors import StoreError
from actorscope.store import Database, Row, Transaction, utc_now

__all__ = ["AuditAction", "AuditEntry", "AuditLog"]

_log = logging.getLogger("actorscope.permissions.audit")

_COLUMNS = (
    "id, created_at, tenant_id, agent_id, actor_id, user_id, config_type, action, reason, detail"
)
_INSERT = (
    "INSERT INTO audit_log (created_at, tenant_id, agent_id, actor_id, user_id, config_type,"
    " action, reason, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


class AuditAction(StrEnum):
    """What an audit row records."""

    GRANT_ADD = "grant.add"
    GRANT_UPDATE = "grant.update"
    GRANT_REMOVE = "grant.remove"
    CHECK_DENY = "check.deny"
    CHECK_FAIL_OPEN = "check.fail_open"
    WRITER_REFUSED = "writer.refused"


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One audit row. ``actor_id`` is who acted; ``user_id`` is the scope it happened in."""

    action: str
    actor_id: str = ""
    user_id: str = ""
    agent_id: str | None = None
    tenant_id: str | None = None
    config_type: str = ""
    reason: str = ""
    detail: Mapping[str, Any] = field(default_factory=dict)
    created_at: str = ""
    id: int = 0

    def as_dict(self) -> dict[str, Any]:
        """The entry as plain JSON-ready data."""
        return {
            "id": self.id,
            "created_at": self.created_at,
            "action": self.action,
            "actor_id": self.actor_id,
            "user_id": self.user_id,
            "agent_id": self.agent_id,
            "tenant_id": self.tenant_id,
            "config_type": self.config_type,
            "reason": self.reason,
            "detail": dict(self.detail),
        }


def _storable(text: str | None) -> str | None:
    # An attacker-supplied id no store can hold (NUL, lone surrogate) must still leave its row.
    return None if text is None else escape_unstorable(text)


def _params(entry: AuditEntry) -> tuple[Any, ...]:
    return (
        entry.created_at or utc_now(),
        _storable(entry.tenant_id),
        # Telemetry rows never point at the nil UUID: "no agent" is NULL.
        None if entry.agent_id in (None, "", NIL_UUID) else _storable(entry.agent_id),
        _storable(entry.actor_id),
        _storable(entry.user_id),
        _storable(entry.config_type),
        str(entry.action),
        str(entry.reason),
        # ensure_ascii (the default) escapes lone surrogates, so detail always stores.
        json.dumps(dict(entry.detail), sort_keys=True, default=str),
    )


def _entry(row: Row) -> AuditEntry:
    return AuditEntry(
        id=int(row["id"]),
        created_at=row["created_at"],
        tenant_id=row["tenant_id"],
        agent_id=row["agent_id"],
        actor_id=row["actor_id"],
        user_id=row["user_id"],
        config_type=row["config_type"],
        action=row["action"],
        reason=row["reason"],
        detail=json.loads(row["detail"]),
    )


class AuditLog:
    """Writes and reads ``audit_log``."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def write(self, entry: AuditEntry, tx: Transaction | None = None) -> None:
        """Append one row, inside ``tx`` when given (so it commits with the change it records)."""
        if tx is not None:
            await tx.execute(_INSERT, _params(entry))
        else:
            await self._db.execute(_INSERT, _params(entry))

    async def record(self, entry: AuditEntry) -> bool:
        """Append one row in its own transaction; on a store failure log it and return False."""
        try:
            await self._db.execute(_INSERT, _params(entry))
        except (StoreError, ValueError) as exc:
            # ValueError: aiosqlite's "no active connection" once the database is closed.
            _log.warning(
                "audit write failed (%s for %s in %s): %s",
                entry.action,
                entry.actor_id,
                entry.user_id,
                exc,
            )
            return False
        return True

    async def list(
        self, *, agent_id: str | None = None, actor_id: str | None = None, limit: int = 100
    ) -> list[AuditEntry]:
        """The newest entries first, optionally for one agent UUID or one actor."""
        where: list[str] = []
        params: list[Any] = []
        if agent_id is not None:
            where.append("agent_id = ?")
            params.append(agent_id)
        if actor_id is not None:
            where.append("actor_id = ?")
            params.append(actor_id)
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        rows = await self._db.fetchall(
            f"SELECT {_COLUMNS} FROM audit_log{clause} ORDER BY id DESC LIMIT ?",
            (*params, max(0, limit)),
        )
        return [_entry(row) for row in rows]

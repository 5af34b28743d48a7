"""Cron jobs of the built-in tools: each belongs to one agent and one storage key.

The key is the run's :func:`~actorscope.tools._storage.storage_scope`, as for memory and files:
a direct scope's key names its channel, so HTTP user ``"4242"`` and Telegram user 4242 never
see each other's jobs. A job also keeps the run's real ``scope`` (``user_id``), for whatever
runs it. A job's ``created_by`` is the person who added it (never the scope, never a tool
argument). Listing and removing only ever see the jobs of the caller's own key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from actorscope.errors import ConflictError, NotFoundError, StoreError, ToolError
from actorscope.store import Database, Row

__all__ = [
    "MAX_JOB_MESSAGE_CHARS",
    "MAX_JOB_NAME_CHARS",
    "CronJob",
    "CronStore",
    "parse_job_name",
    "parse_schedule",
]

MAX_JOB_NAME_CHARS = 64
MAX_JOB_MESSAGE_CHARS = 4000

_MACROS = frozenset(
    {"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}
)
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
# (field name, lowest, highest, names that stand for lowest + index)
_FIELDS: tuple[tuple[str, int, int, tuple[str, ...]], ...] = (
    ("minute", 0, 59, ()),
    ("hour", 0, 23, ()),
    ("day of month", 1, 31, ()),
    ("month", 1, 12, _MONTHS),
    ("day of week", 0, 7, _DAYS),
)
_ITEM = re.compile(r"(?P<range>\*|[0-9a-z]+(?:-[0-9a-z]+)?)(?:/(?P<step>[0-9]+))?")
_COLUMNS = "id, agent_id, scope, name, schedule, message, created_by, created_at, storage_key"
_KEY = "agent_id = ? AND storage_key = ?"


def _value(token: str, name: str, low: int, high: int, names: tuple[str, ...]) -> int:
    if token in names:
        return low + names.index(token)
    if not token.isdigit() or not low <= int(token) <= high:
        raise ToolError("invalid_schedule", f"{name} must be {low}-{high}, got {token!r}")
    return int(token)


def _check_field(text: str, name: str, low: int, high: int, names: tuple[str, ...]) -> None:
    for item in text.split(","):
        match = _ITEM.fullmatch(item)
        if match is None:
            raise ToolError("invalid_schedule", f"{name}: {item!r} is not a cron field item")
        if match["step"] is not None and int(match["step"]) == 0:
            raise ToolError("invalid_schedule", f"{name}: a step must be at least 1")
        if match["range"] == "*":
            continue
        bounds = [_value(t, name, low, high, names) for t in match["range"].split("-")]
        if bounds != sorted(bounds):
            raise ToolError("invalid_schedule", f"{name}: range {match['range']!r} runs backwards")


def parse_schedule(schedule: str) -> str:
    """A 5-field cron expression (or ``@daily`` ...), normalised to single spaces, lowercase."""
    fields = schedule.lower().split()
    if len(fields) == 1 and fields[0] in _MACROS:
        return fields[0]
    if len(fields) != 5:
        raise ToolError(
            "invalid_schedule",
            "schedule must be 5 fields (minute hour day-of-month month day-of-week) or a macro "
            f"such as @daily, got {schedule!r}",
        )
    for text, (name, low, high, names) in zip(fields, _FIELDS, strict=True):
        _check_field(text, name, low, high, names)
    return " ".join(fields)


def parse_job_name(name: str) -> str:
    """A job name: 1-64 printable characters with a visible one, used exactly as given."""
    if not name.strip():
        raise ToolError("invalid_arguments", "name must not be empty", field="name")
    if len(name) > MAX_JOB_NAME_CHARS:
        raise ToolError(
            "invalid_arguments", f"name is longer than {MAX_JOB_NAME_CHARS}", field="name"
        )
    if not name.isprintable():
        raise ToolError("invalid_arguments", "name has control characters", field="name")
    return name


@dataclass(frozen=True, slots=True)
class CronJob:
    """One job: where it belongs (agent, storage key; the run's scope), who made it, when it
    runs and what it says."""

    id: int
    agent_id: str
    scope: str
    name: str
    schedule: str
    message: str
    created_by: str
    created_at: str
    storage_key: str

    def to_json(self) -> dict[str, object]:
        """The job as the tools show it."""
        return {
            "id": self.id,
            "name": self.name,
            "schedule": self.schedule,
            "message": self.message,
            "created_by": self.created_by,
            "created_at": self.created_at,
        }


def _job(row: Row) -> CronJob:
    return CronJob(*(row[i] for i in range(9)))


class CronStore:
    """Cron jobs in the project database (table ``cron_jobs``)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def add(
        self,
        *,
        agent_id: str,
        scope: str,
        key: str,
        name: str,
        schedule: str,
        message: str,
        created_by: str,
    ) -> CronJob:
        """Add a job under ``key`` for ``scope``; :class:`ConflictError` if the key has the name."""
        if not scope or not key:
            raise ToolError("no_scope", "a cron job needs a scope and its storage key")
        if not created_by:
            # owner_for_new_row gives "" for a run that is no person in a group (a role bypass).
            raise ToolError(
                "no_actor", "a cron job needs the person who adds it; this run has none"
            )
        now = Database.utc_now()
        async with self._db.transaction() as tx:
            if await tx.fetchone(
                f"SELECT 1 FROM cron_jobs WHERE {_KEY} AND name = ?", (agent_id, key, name)
            ):
                raise ConflictError(f"this scope already has a cron job named {name!r}")
            await tx.execute(
                "INSERT INTO cron_jobs (agent_id, storage_key, scope, name, schedule, message, "
                "created_by, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (agent_id, key, scope, name, schedule, message, created_by, now),
            )
            row = await tx.fetchone(
                f"SELECT {_COLUMNS} FROM cron_jobs WHERE {_KEY} AND name = ?", (agent_id, key, name)
            )
        if row is None:  # unreachable: the insert above is in this transaction
            raise StoreError("the new cron job could not be read back")
        return _job(row)

    async def list(self, *, agent_id: str, key: str) -> list[CronJob]:
        """The jobs of one storage key (and agent), oldest first."""
        rows = await self._db.fetchall(
            f"SELECT {_COLUMNS} FROM cron_jobs WHERE {_KEY} ORDER BY id", (agent_id, key)
        )
        return [_job(row) for row in rows]

    async def remove(self, *, agent_id: str, key: str, name: str) -> CronJob:
        """Remove a job of this storage key by name; :class:`NotFoundError` if it has none."""
        async with self._db.transaction() as tx:
            row = await tx.fetchone(
                f"SELECT {_COLUMNS} FROM cron_jobs WHERE {_KEY} AND name = ?", (agent_id, key, name)
            )
            if row is None:
                raise NotFoundError(f"this scope has no cron job named {name!r}")
            await tx.execute("DELETE FROM cron_jobs WHERE id = ?", (row["id"],))
        return _job(row)

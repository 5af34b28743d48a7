"""The audit trail: grant changes, denials and fail-open allows, one row each in ``audit_log``.

Grant changes are written inside the transaction of the change (they commit together).
Decisions are recorded through a bounded in-memory queue that one background task writes, in
order and in groups: rows queued within :data:`GROUP_DELAY` seconds of each other (up to
:data:`BATCH` of them) commit in one transaction, so a flood of denials costs a few writes, not
one each. A denial does not wait for its row: :meth:`AuditLog.deny_later` queues the few values
it needs (the time, the identity, the type, the reason) and the writer builds the rows, so a
denied check pays for an append, not a row. A fail-open allow waits for its row at most
:data:`RECORD_WAIT` seconds (and is written at once, without the group delay), so a locked or
unreachable store never holds a check up. Rows that could not be written yet are retried until
the store answers again; :meth:`Database.settle_audit` writes the queues of every log on the
database now, and closing the database flushes them. Rows that do not fit in the
queue, or are still queued when the database closes, are counted and logged at ERROR. A failing
audit write never turns a decision into an exception.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from actorscope._input import NIL_UUID, is_uuid, shown_path
from actorscope._text import escape_unstorable
from actorscope.errors import ConfigError, ConflictError, RowRefusedError, StoreError
from actorscope.identity import Identity, Scope
from actorscope.store import Database, Row, Transaction

__all__ = [
    "BATCH",
    "GROUP_DELAY",
    "MAX_QUEUED",
    "PRUNE_BATCH",
    "RECORD_WAIT",
    "AuditAction",
    "AuditEntry",
    "AuditLog",
]

_log = logging.getLogger("actorscope.permissions.audit")

_COLUMNS = (
    "id, created_at, tenant_id, agent_id, action, sender_id, permission, reason, scope,"
    " config_type, actor, detail"
)
_INSERT = (
    "INSERT INTO audit_log (created_at, tenant_id, agent_id, action, sender_id, permission,"
    " reason, scope, config_type, actor, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
# A decision's row: a missing tenant is the agent's, looked up by the insert itself, so the
# decision path never reads the store for it.
_INSERT_DECISION = (
    "INSERT INTO audit_log (created_at, tenant_id, agent_id, action, sender_id, permission,"
    " reason, scope, config_type, actor, detail)"
    " VALUES (?, COALESCE(?, (SELECT tenant_id FROM agents WHERE id = ?)),"
    " ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)

#: Seconds a decision waits for its audit row before leaving it to the queue.
RECORD_WAIT = 0.1
#: Decision rows an :class:`AuditLog` keeps while the store does not answer; more are dropped.
MAX_QUEUED = 1000
#: Rows :meth:`AuditLog.prune` deletes in one transaction at most.
PRUNE_BATCH = 1000
#: Seconds :meth:`AuditLog.settle` waits for this log's queued rows to be written.
SETTLE_WAIT = 1.0
#: Seconds the writer gathers decision rows before committing them together (<= 100 ms).
GROUP_DELAY = 0.05
#: Decision rows committed in one transaction at most; a full group is written at once.
BATCH = 100
_RETRY_FIRST = 0.05
_RETRY_MAX = 1.0


class AuditAction(StrEnum):
    """What an audit row records."""

    GRANT_ADD = "grant.add"
    GRANT_UPDATE = "grant.update"
    GRANT_REMOVE = "grant.remove"
    CHECK_DENY = "check.deny"
    CHECK_FAIL_OPEN = "check.fail_open"
    WRITER_REFUSED = "writer.refused"
    LINK_ADD = "link.add"
    LINK_REMOVE = "link.remove"
    LINK_CODE = "link.code"
    LINK_REFUSED = "link.refused"


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One audit row, in the words of grants and decisions.

    ``sender_id`` is the person the row is about: the actor a check judged (``""`` for no
    person), the grantee of a grant change (an id or ``*``), the target of a writer change,
    the user of an API key. ``actor`` is who made a change: a grant's ``granted_by``, who
    sent a writer command or created a key (``""`` for a check: nothing changed). ``scope``
    is where (a grant's scope, a check's ``user_id``), ``permission`` the allow or deny a
    grant change set, ``reason`` why a check or a refusal decided as it did.
    """

    action: str
    sender_id: str = ""
    actor: str = ""
    scope: str = ""
    agent_id: str | None = None
    tenant_id: str | None = None
    config_type: str = ""
    permission: str = ""
    reason: str = ""
    detail: Mapping[str, Any] = field(default_factory=dict)
    created_at: str = ""
    id: int = 0

    def as_dict(self) -> dict[str, Any]:
        """The entry as plain JSON-ready data (the keys are the column names)."""
        return {
            "id": self.id,
            "created_at": self.created_at,
            "action": self.action,
            "sender_id": self.sender_id,
            "permission": self.permission,
            "reason": self.reason,
            "scope": self.scope,
            "config_type": self.config_type,
            "actor": self.actor,
            "agent_id": self.agent_id,
            "tenant_id": self.tenant_id,
            "detail": dict(self.detail),
        }


#: A denial as :meth:`AuditLog.deny_later` queues it: ``time.time()`` when it was decided, the
#: identity checked, the config type, the reason, the (normalized) sender checked and the
#: person it is linked to (``""``: none, or links do not count).
_Denial = tuple[float, Identity, str, str, str, str]


def _built(row: AuditEntry | _Denial) -> AuditEntry:
    """The row a queued denial stands for (an entry queued whole is returned as it is)."""
    if isinstance(row, AuditEntry):
        return row
    decided, identity, config_type, reason, sender_id, person = row
    return AuditEntry(
        action=AuditAction.CHECK_DENY,
        sender_id=sender_id,
        scope=identity.user_id,
        agent_id=identity.agent_id if is_uuid(identity.agent_id) else None,
        # No tenant given: the insert takes the agent's (no read on the decision path).
        tenant_id=identity.tenant_id or None,
        config_type=config_type,
        reason=reason,
        created_at=Database.utc_at(decided),
        detail={"person": person} if person else {},
    )


def _storable(text: str | None) -> str | None:
    # An attacker-supplied id no store can hold (NUL, lone surrogate) must still leave its
    # audit row; a row no store can take would also block the retry queue behind it.
    # An over-long one (refused as invalid_identity) is cut to fit PostgreSQL's index rows
    # (Scope.MAX_CHARS characters of at most 4 bytes stay under its ~2.7 KB), saying so.
    if text is None:
        return None
    if len(text) > Scope.MAX_CHARS:
        text = f"{text[: Scope.MAX_CHARS]}…({len(text)} characters)"
    return escape_unstorable(text)


def _exact(entry: AuditEntry) -> dict[str, Any]:
    """``detail``, plus the exact value of each person or scope column that had to be escaped
    to store (JSON escapes hold any text, so the row still names exactly who and where)."""
    people = {"sender_id": entry.sender_id, "scope": entry.scope, "actor": entry.actor}
    escaped = {k: v for k, v in people.items() if escape_unstorable(v) != v}
    return {**entry.detail, **escaped}


def _params(entry: AuditEntry) -> tuple[Any, ...]:
    return (
        entry.created_at or Database.utc_now(),
        _storable(entry.tenant_id),
        # Telemetry rows never point at the nil UUID: "no agent" is NULL.
        None if entry.agent_id in (None, "", NIL_UUID) else _storable(entry.agent_id),
        str(entry.action),
        _storable(entry.sender_id),
        str(entry.permission),
        str(entry.reason),
        _storable(entry.scope),
        _storable(entry.config_type),
        _storable(entry.actor),
        # ensure_ascii (the default) escapes lone surrogates, so detail always stores.
        json.dumps(_exact(entry), sort_keys=True, default=str),
    )


def _decision_params(entry: AuditEntry) -> tuple[Any, ...]:
    created_at, tenant_id, agent_id, *rest = _params(entry)
    return (created_at, tenant_id, agent_id, agent_id, *rest)


def _entry(row: Row) -> AuditEntry:
    return AuditEntry(
        id=int(row["id"]),
        created_at=row["created_at"],
        tenant_id=row["tenant_id"],
        agent_id=row["agent_id"],
        action=row["action"],
        sender_id=row["sender_id"],
        permission=row["permission"],
        reason=row["reason"],
        scope=row["scope"],
        config_type=row["config_type"],
        actor=row["actor"],
        detail=json.loads(row["detail"]),
    )


class AuditLog:
    """Writes and reads ``audit_log``; decision rows go through a bounded retry queue."""

    def __init__(
        self, db: Database, *, max_queued: int = MAX_QUEUED, wait: float = RECORD_WAIT
    ) -> None:
        self._db = db
        self._max_queued = max_queued
        self._wait = wait
        # Each row (or the denial it is built from) with the future its caller waits on
        # (None: nobody waits for it).
        self._queue: deque[tuple[AuditEntry | _Denial, asyncio.Future[bool] | None]] = deque()
        self._dropped = 0
        # Rows ever queued, and rows the writer is through with (written, dropped or lost):
        # a settle waits for the second to reach what the first was when it began.
        self._appended = 0
        self._through = 0
        self._progress = asyncio.Event()
        self._writer: asyncio.Task[None] | None = None
        self._closing = asyncio.Event()
        # Set when the writer must stop gathering: a full group, a waiting caller, closing.
        self._wake = asyncio.Event()

    @property
    def queued(self) -> int:
        """Decision rows waiting to be written."""
        return len(self._queue)

    async def write(self, entry: AuditEntry, tx: Transaction | None = None) -> None:
        """Append one row, inside ``tx`` when given (so it commits with the change it records)."""
        if tx is not None:
            await tx.execute(_INSERT, _params(entry))
        else:
            await self._db.execute(_INSERT, _params(entry))

    async def record(self, entry: AuditEntry, *, wait: bool = True) -> bool:
        """Queue one decision row; with ``wait``, wait for it at most :data:`RECORD_WAIT` s.

        True if written (with ``wait``) or queued (without: the row is committed with its group
        within :data:`GROUP_DELAY` s). A row not written in time stays queued and is written as
        soon as the store answers; a full queue drops it (counted, logged at ERROR). Never
        raises for a store failure.
        """
        if not wait:
            return self._append(entry)
        if self._full():
            return False
        written: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._queue.append((entry, written))
        self._appended += 1
        self._start_writer()
        self._wake.set()
        done, _ = await asyncio.wait({written}, timeout=self._wait)
        return written in done and written.result()

    def deny_later(
        self, identity: Identity, config_type: str, reason: str, sender_id: str, person: str = ""
    ) -> bool:
        """Queue one ``check.deny`` row for ``identity``; the writer builds and commits it.

        The row's time is now; it is committed with its group within :data:`GROUP_DELAY` s.
        ``person``: the person the sender is linked to, kept in the row's ``detail``. False if
        the queue is full (the row is dropped, counted, logged at ERROR).
        """
        return self._append((time.time(), identity, config_type, reason, sender_id, person))

    def _append(self, row: AuditEntry | _Denial) -> bool:
        """Queue a row nobody waits for; a full group wakes the writer."""
        if self._full():
            return False
        self._queue.append((row, None))
        self._appended += 1
        self._start_writer()
        if len(self._queue) >= BATCH:
            self._wake.set()
        return True

    def _full(self) -> bool:
        """True (and the row counted as dropped) when the queue holds ``max_queued`` rows."""
        if len(self._queue) < self._max_queued:
            return False
        if self._dropped == 0:
            _log.error(
                "audit queue full (%d rows): dropping new audit rows until the store answers",
                self._max_queued,
            )
        self._dropped += 1
        return True

    async def flush(self) -> None:
        """Write every queued row now, waiting for the store once more; drop (and log) the rest.

        Run when the database closes; each attempt is bounded by the store's own timeouts.
        """
        self._closing.set()
        self._wake.set()
        if self._writer is not None:
            await asyncio.wait({self._writer})

    def _start_writer(self) -> None:
        if self._writer is None or self._writer.done():
            self._closing.clear()
            self._wake.clear()
            self._writer = asyncio.get_running_loop().create_task(self._write_queued())
            # Known to the database while rows wait: it settles them, and writes them on close.
            self._db.add_queued_writer(self)

    async def _write_queued(self) -> None:
        """Write queued rows in order, in groups, retrying with backoff while the store fails."""
        delay = _RETRY_FIRST
        failed = written = 0
        batch_size = BATCH
        try:
            while self._queue:
                if not (self._wake.is_set() or self._closing.is_set()):
                    # Gather the group: rows queued meanwhile commit with this one.
                    await self._pause(GROUP_DELAY, self._wake)
                self._wake.clear()
                batch = [_built(row) for row, _ in itertools.islice(self._queue, batch_size)]
                try:
                    async with self._db.transaction() as tx:
                        await tx.executemany(_INSERT_DECISION, [_decision_params(e) for e in batch])
                except (ConflictError, RowRefusedError) as exc:
                    # A row the table refuses (not the store failing): find it, drop it alone.
                    if len(batch) == 1:
                        self._drop_head(f"refused by the table: {exc}")
                    batch_size = 1
                    self._wake.set()  # these rows waited for their group already
                    continue
                except StoreError as exc:  # also a database closed under the statement
                    failed += 1
                    if failed == 1:
                        _log.warning(
                            "audit write failed (%d rows queued, first %s for %s in %s): %s",
                            len(self._queue),
                            batch[0].action,
                            shown_path(batch[0].sender_id),
                            shown_path(batch[0].scope),
                            exc,
                        )
                    if self._closing.is_set() or self._db.closed:
                        break
                    await self._pause(delay, self._closing)
                    delay = min(delay * 2, _RETRY_MAX)
                    continue
                for _ in batch:
                    _, done = self._queue.popleft()
                    if done is not None and not done.done():
                        done.set_result(True)
                written += len(batch)
                self._advance(len(batch))
                delay, batch_size = _RETRY_FIRST, BATCH
                if len(self._queue) >= BATCH:
                    self._wake.set()  # a full group is written without delay
        finally:
            # Also when cancelled (the event loop shutting down): what is left is lost; say so.
            self._finish(failed, written)

    def _advance(self, rows: int) -> None:
        """``rows`` more queued rows are through (written or given up): wake the settlers."""
        self._through += rows
        progress, self._progress = self._progress, asyncio.Event()
        progress.set()

    def _drop_head(self, why: str) -> None:
        row, done = self._queue.popleft()
        if done is not None and not done.done():
            done.set_result(False)
        self._dropped += 1
        self._advance(1)
        entry = _built(row)
        _log.error(
            "audit row dropped (%s for %s in %s): %s",
            entry.action,
            shown_path(entry.sender_id),
            shown_path(entry.scope),
            why,
        )

    def _finish(self, failed: int, written: int) -> None:
        """Report how the queue ended: written after failures, rows dropped, rows lost."""
        lost = len(self._queue)
        while self._queue:
            _, done = self._queue.popleft()
            if done is not None and not done.done():
                done.set_result(False)
        self._advance(lost)
        if failed and not lost:
            _log.warning("audit store answers again: %d queued rows written", written)
        dropped, self._dropped = self._dropped + lost, 0
        if dropped:
            _log.error(
                "%d audit rows could not be written and are lost (%d dropped: queue full or row"
                " refused; %d still queued when the database closed)",
                dropped,
                dropped - lost,
                lost,
            )
        self._db.remove_queued_writer(self)

    async def _pause(self, seconds: float, until: asyncio.Event) -> None:
        """Wait ``seconds``, cut short by ``until`` (a full group, a waiting caller, closing)."""
        wake = asyncio.ensure_future(until.wait())
        await asyncio.wait({wake}, timeout=seconds)
        wake.cancel()

    async def settle(self, wait: float = SETTLE_WAIT) -> None:
        """Give the rows queued so far up to ``wait`` s to be written, at once.

        For a reader that wants to see this log's decisions just made (their groups are
        committed now, without the group delay), or a turn whose reply must not go out before
        its denials are on record; :meth:`Database.settle_audit` settles every log. Rows
        queued meanwhile (by other turns) are not waited for.
        """
        target = self._appended
        if self._through >= target or self._writer is None or self._writer.done():
            return
        self._wake.set()
        deadline = asyncio.get_running_loop().time() + wait
        while self._through < target:
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0:
                return
            progress = self._progress
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(progress.wait(), remaining)

    async def list(
        self,
        *,
        agent_id: str | None = None,
        tenant_id: str | None = None,
        sender_id: str | None = None,
        actor: str | None = None,
        scope: str | None = None,
        action: str | None = None,
        reason: str | None = None,
        since: str | None = None,
        before_id: int | None = None,
        limit: int = 100,
    ) -> list[AuditEntry]:
        """The newest entries first, matching every filter given (each compared exactly).

        ``agent_id``/``tenant_id`` are UUIDs; ``sender_id``, ``actor`` and ``scope`` are as
        in :class:`AuditEntry`; ``since`` keeps rows created at or after that ISO time;
        ``before_id`` keeps rows older than that id (a cursor: the last id of the previous
        page). Rows queued in this process on this database (by any audit log) are written
        first (:meth:`Database.settle_audit`).
        """
        await self._db.settle_audit()
        clause, params = _where(
            agent_id=agent_id,
            tenant_id=tenant_id,
            sender_id=sender_id,
            actor=actor,
            scope=scope,
            action=action,
            reason=reason,
            since=since,
            before_id=before_id,
        )
        rows = await self._db.fetchall(
            f"SELECT {_COLUMNS} FROM audit_log{clause} ORDER BY id DESC LIMIT ?",
            (*params, max(0, limit)),
        )
        return [_entry(row) for row in rows]

    async def prune(
        self,
        before: str,
        *,
        batch: int = PRUNE_BATCH,
        export: Callable[[Sequence[AuditEntry]], None] | None = None,
    ) -> int:
        """Delete the rows created before ``before`` (ISO 8601 UTC), oldest first, at most
        ``batch`` a transaction; how many went.

        With ``export``, each batch is handed to it before it is deleted, in the transaction
        that deletes it: a row is never gone without having been exported (a failed commit
        may export a batch twice). Retention (``[audit] keep``, ``actorscope audit prune``).
        """
        if batch < 1:
            raise ConfigError(f"the prune batch must be at least 1, got {batch}")
        pruned = 0
        while True:
            async with self._db.transaction() as tx:
                rows = await tx.fetchall(
                    f"SELECT {_COLUMNS} FROM audit_log WHERE created_at < ?"
                    " ORDER BY created_at, id LIMIT ?",
                    (before, batch),
                )
                entries = [_entry(row) for row in rows]
                if export is not None and entries:
                    export(entries)
                if entries:
                    marks = ", ".join("?" * len(entries))
                    await tx.execute(
                        f"DELETE FROM audit_log WHERE id IN ({marks})", [e.id for e in entries]
                    )
            pruned += len(entries)
            if len(entries) < batch:
                return pruned

    async def count_by_reason(
        self,
        *,
        since: str,
        tenant_id: str | None = None,
        agent_id: str | None = None,
        actions: Sequence[str] = (),
    ) -> dict[str, int]:
        """How many rows each reason has since ``since`` (ISO time), of ``actions`` only if
        given: e.g. the day's denials by reason; rows queued in this process are written first."""
        await self._db.settle_audit()
        clause, params = _where(tenant_id=tenant_id, agent_id=agent_id, since=since)
        if actions:
            marks = ", ".join("?" * len(actions))
            clause += f" {'AND' if clause else 'WHERE'} action IN ({marks})"
            params += [str(action) for action in actions]
        rows = await self._db.fetchall(
            f"SELECT reason, COUNT(*) AS n FROM audit_log{clause} GROUP BY reason ORDER BY reason",
            params,
        )
        return {str(row["reason"]): int(row["n"]) for row in rows}


def _where(**filters: str | int | None) -> tuple[str, list[Any]]:
    """The WHERE clause and parameters of the filters given (column = value; two ranges)."""
    where: list[str] = []
    params: list[Any] = []
    for column, value in filters.items():
        if value is None:
            continue
        if column == "since":
            where.append("created_at >= ?")
        elif column == "before_id":
            where.append("id < ?")
        else:
            where.append(f"{column} = ?")
        params.append(value)
    return (f" WHERE {' AND '.join(where)}" if where else ""), params

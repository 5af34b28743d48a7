"""The project database interface: SQLite (the embedded default) or PostgreSQL behind it.

``Database.open(target)`` takes a plain path or ``sqlite:///path`` (SQLite, through aiosqlite)
or ``postgresql://user@host:port/db`` (PostgreSQL, through asyncpg; the ``postgres`` extra).
This module names no backend: a backend is a subclass of :class:`Database` that says which
targets it opens (``_opens``), and :meth:`Database.connect` asks each one the package's face
imported. Both backends have the same public API and the same schema; SQL in the code base is
written once with ``?`` placeholders and portable syntax, and rows are read by column name or
index.
"""

from __future__ import annotations

import abc
import asyncio
import os
import re
import time
import weakref
from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import UTC, datetime
from typing import Any, ClassVar, Protocol

from actorscope.errors import DatabaseOpenError, StoreError
from actorscope.store import _peek

__all__ = [
    "ChangeListener",
    "ChangeSubscribers",
    "Database",
    "DatabaseNotWritableError",
    "MigrationError",
    "NotADatabaseError",
    "Params",
    "QueuedWriter",
    "Row",
    "SchemaTooNewError",
    "Transaction",
    "outdated_schema",
    "refuse_newer_schema",
    "url_scheme",
]

Params = Sequence[Any]


class NotADatabaseError(DatabaseOpenError):
    """The file exists but is not an SQLite database, or a database without actorscope's
    tables (a :class:`~actorscope.errors.DatabaseOpenError`)."""


class SchemaTooNewError(DatabaseOpenError):
    """The database was written by a newer actorscope schema (a
    :class:`~actorscope.errors.DatabaseOpenError` creating cannot fix)."""

    creatable = False


class DatabaseNotWritableError(DatabaseOpenError):
    """The database file or its directory cannot be written (a
    :class:`~actorscope.errors.DatabaseOpenError` creating cannot fix)."""

    creatable = False


class MigrationError(StoreError):
    """A migration failed; the transaction was rolled back and nothing was applied (a
    :class:`~actorscope.errors.StoreError`)."""


class Row(Protocol):
    """A result row: read it by column name or by index (each backend returns its own type)."""

    def __getitem__(self, key: int | str, /) -> Any:
        """The value of column ``key`` (its name, or its index from 0)."""

    def __iter__(self) -> Iterator[Any]:
        """The values, in column order."""

    def __len__(self) -> int:
        """How many columns the row has."""

    def keys(self) -> Iterable[str]:
        """The column names, in order."""


#: How many times closing flushes writers that registered during the previous flush.
_FLUSH_ROUNDS = 8
_URL = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://")


def url_scheme(target: str) -> str:
    """The scheme of a database URL as written (``postgresql``), ``""`` for a plain path."""
    match = _URL.match(target)
    return match["scheme"] if match is not None else ""


def refuse_newer_schema(target: str, version: int, known: int) -> None:
    """Raise SchemaTooNewError for a database a newer actorscope migrated past ``known``."""
    if version > known:
        raise SchemaTooNewError(
            f"database {target!r} has schema version {version}, newer than this "
            f"actorscope knows ({known}); upgrade actorscope"
        )


def outdated_schema(target: str, version: int, known: int) -> str:
    """The one line for a database ``create=False`` will not open: older than this code."""
    return (
        f"database {target!r} has schema version {version}, older than this actorscope's "
        f"({known}); upgrade it with: actorscope migrate --db {target}"
    )


class ChangeListener(Protocol):
    """Told about changes that *other* processes commit (pushed by PostgreSQL's NOTIFY)."""

    def on_remote_change(self, key: str) -> None:
        """The rows of ``key`` (an agent UUID) changed; forget what was cached about it."""

    def on_feed_lost(self) -> None:
        """Changes can no longer be heard: forget everything and stop caching."""

    def on_feed_restored(self) -> None:
        """Changes are heard again: forget everything (some may have been missed), cache again."""


class ChangeSubscribers:
    """The listeners of one database's change feed, and whether that feed is live.

    A listener that subscribes while the feed is not live is told ``on_feed_lost`` at once:
    until a feed runs, nothing may be cached.
    """

    __slots__ = ("_listeners", "live")

    def __init__(self) -> None:
        self._listeners: weakref.WeakSet[ChangeListener] = weakref.WeakSet()
        self.live = False

    def add(self, listener: ChangeListener) -> None:
        """Report changes to ``listener`` (held weakly); tell it at once if the feed is down."""
        self._listeners.add(listener)
        if not self.live:
            listener.on_feed_lost()

    def changed(self, key: str) -> None:
        """Agent ``key``'s grants (or the agent) changed: every listener forgets it."""
        for listener in list(self._listeners):
            listener.on_remote_change(key)

    def lost(self) -> None:
        """The feed went down: every listener forgets everything and stops caching."""
        self.live = False
        for listener in list(self._listeners):
            listener.on_feed_lost()

    def restored(self) -> None:
        """The feed is (back) up, or saw a change it cannot name: forget everything, cache."""
        self.live = True
        for listener in list(self._listeners):
            listener.on_feed_restored()


class QueuedWriter(Protocol):
    """A background writer of rows queued in this process (the audit trail's decisions)."""

    async def settle(self, wait: float = ...) -> None:
        """Write the rows queued so far now; wait at most ``wait`` seconds."""

    async def flush(self) -> None:
        """Write every queued row before the database closes; each attempt is bounded."""


class Transaction(abc.ABC):
    """Statements inside one open write transaction (see :meth:`Database.transaction`)."""

    __slots__ = ()

    @abc.abstractmethod
    async def execute(self, sql: str, params: Params = ()) -> int:
        """Run one statement; return the number of rows it changed."""

    @abc.abstractmethod
    async def executemany(self, sql: str, rows: Sequence[Params]) -> None:
        """Run one statement for each parameter row."""

    async def fetchone(self, sql: str, params: Params = ()) -> Row | None:
        """Read one row, seeing this transaction's own uncommitted writes."""
        rows = await self.fetchall(sql, params)
        return rows[0] if rows else None

    @abc.abstractmethod
    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        """Read every row, seeing this transaction's own uncommitted writes."""


class Database(abc.ABC):
    """An open actorscope database. Use ``async with Database.open(target) as db``.

    ``dialect`` is ``"sqlite"`` or ``"postgresql"``; ``path`` names the database (a file path,
    or the URL without its password).

    A backend subclasses it directly and says which targets it opens: ``target_forms`` (how
    its targets are written, for the message naming every form) and ``_opens`` / ``_connect``.
    """

    #: The slug of the tenant every database is created with (its id: ``default_tenant_id``);
    #: what every ``tenant=`` argument means when none is given.
    DEFAULT_TENANT_SLUG: ClassVar[str] = "default"
    dialect: ClassVar[str]
    #: How this backend's targets are written (``"sqlite:///path"``); a backend sets it.
    target_forms: ClassVar[tuple[str, ...]] = ()

    #: Every table's rows of a SQLite file that is not the project's (a bot's own), read only:
    #: what ``actorscope probe`` compares before and after an event.
    read_sqlite_rows = staticmethod(_peek.read_sqlite_rows)

    @staticmethod
    def utc_now() -> str:
        """The current time as the database writes times: an ISO 8601 UTC string with
        microseconds (it sorts as text)."""
        return Database.utc_at(time.time())

    @staticmethod
    def utc_at(timestamp: float) -> str:
        """A ``time.time()`` value as :meth:`utc_now` writes it (for a time taken earlier)."""
        return datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="microseconds")

    def __init__(self, path: str, *, schema_version: int, default_tenant_id: str) -> None:
        self.path = path
        self.schema_version = schema_version
        self.default_tenant_id = default_tenant_id
        self._changes = ChangeSubscribers()
        self._feed_lock = asyncio.Lock()
        self._feed_started = False
        self._closed = False
        self._writers: list[QueuedWriter] = []

    def add_queued_writer(self, writer: QueuedWriter) -> None:
        """Know ``writer`` while it holds queued rows: :meth:`settle_audit` settles it and
        :meth:`close` flushes it first, while statements still run."""
        if writer not in self._writers:
            self._writers.append(writer)

    def remove_queued_writer(self, writer: QueuedWriter) -> None:
        """Forget a writer given to :meth:`add_queued_writer` (nothing if it is not there)."""
        if writer in self._writers:
            self._writers.remove(writer)

    async def settle_audit(self, wait: float = 1.0) -> None:
        """Write the audit rows this process has queued on this database so far, now.

        Denials' rows are committed in groups, within 50 ms; a reader of ``audit_log`` that
        must see the decisions just made (a test, a listing) awaits this first, and so does
        ``actorscope run`` before a turn's reply goes out. Every
        :class:`~actorscope.permissions.AuditLog` on this database is settled, each waiting
        for the store at most ``wait`` seconds (what is not written by then stays queued).
        Rows queued by other processes are theirs to write.
        """
        await asyncio.gather(*(writer.settle(wait) for writer in list(self._writers)))

    async def _flush_writers(self) -> None:
        """Flush every queued writer (each bounds its own waits), while statements run.

        Until none is left: a writer that queues its first row while another is being flushed
        registers anew and is flushed in the next round (at most ``_FLUSH_ROUNDS`` rounds, so
        a flood that never stops cannot hold the close).
        """
        for _ in range(_FLUSH_ROUNDS):
            writers, self._writers = self._writers, []
            if not writers:
                return
            for writer in writers:
                await writer.flush()

    @property
    def closed(self) -> bool:
        """True once :meth:`close` has been called: every later statement raises StoreError."""
        return self._closed

    def _check_open(self) -> None:
        """Raise the one clear StoreError for a statement on a closed database."""
        if self._closed:
            raise StoreError(f"database {self.path!r} is closed")

    @classmethod
    @asynccontextmanager
    async def open(
        cls, target: str | os.PathLike[str], *, busy_timeout: float = 5.0, create: bool = True
    ) -> AsyncIterator[Database]:
        """Open (creating and migrating if needed) the database at ``target``; close on exit.

        ``create=False`` opens an existing, up-to-date actorscope database only (for
        commands that read, and CLI commands that write without ``--create``): it refuses a
        missing or empty file, or a PostgreSQL database without actorscope's tables, with a
        :class:`~actorscope.errors.DatabaseOpenError`, and never migrates (an older schema is
        refused with how to upgrade it).
        """
        db = await cls.connect(target, busy_timeout=busy_timeout, create=create)
        try:
            yield db
        finally:
            await db.close()

    @classmethod
    async def connect(
        cls, target: str | os.PathLike[str], *, busy_timeout: float = 5.0, create: bool = True
    ) -> Database:
        """Open the database for a long-lived owner, who must ``await db.close()``.

        ``busy_timeout`` is how long (seconds) a write waits for another writer; ``create``
        as in :meth:`open`.
        """
        text = os.fspath(target)
        # The backends are the direct subclasses, in the order the store's face imports them.
        backends = Database.__subclasses__()
        for backend in backends:
            where = backend._opens(text)
            if where is not None:
                return await backend._connect(where, busy_timeout=busy_timeout, create=create)
        forms = [form for backend in backends for form in backend.target_forms]
        raise DatabaseOpenError(
            f"unsupported database URL scheme {url_scheme(text) or text!r}: use "
            f"{', '.join(forms[:-1])} or {forms[-1]}"
        )

    @classmethod
    def _opens(cls, target: str) -> str | None:
        """What this backend connects to for ``target`` (the path, the URL), or None when
        ``target`` is not written in one of its forms."""
        return None

    @classmethod
    async def _connect(cls, where: str, *, busy_timeout: float, create: bool) -> Database:
        """Open ``where`` (what :meth:`_opens` returned) as :meth:`connect` describes."""
        raise NotImplementedError(f"{cls.__name__} opens no target")

    @abc.abstractmethod
    async def close(self) -> None:
        """Close every connection. Safe to call twice."""

    @abc.abstractmethod
    def transaction(self) -> AbstractAsyncContextManager[Transaction]:
        """One write transaction: committed when the block ends, rolled back if it raises.

        Write transactions are serialised, across processes too, so a read inside one sees
        every earlier commit and nothing changes under it until it ends.
        """

    async def execute(self, sql: str, params: Params = ()) -> int:
        """Run one write statement in its own transaction; return the rows it changed."""
        async with self.transaction() as tx:
            return await tx.execute(sql, params)

    async def execute_atomic(self, sql: str, params: Params = ()) -> int:
        """Run one write statement that is atomic on its own (an upsert, an update by key)
        and reads nothing first; return the rows it changed.

        Unlike :meth:`execute` it need not be serialised against other writers: PostgreSQL
        runs it without the write lock every transaction of every worker takes, so the
        per-update writes of many workers (claims and leases) do not queue behind each other.
        On SQLite it is :meth:`execute`.
        """
        return await self.execute(sql, params)

    async def fetchone(self, sql: str, params: Params = ()) -> Row | None:
        """Read one row of committed data."""
        rows = await self.fetchall(sql, params)
        return rows[0] if rows else None

    @abc.abstractmethod
    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        """Read every row of committed data."""

    async def lookup(self, sql: str, params: Params = ()) -> list[Row]:
        """A short indexed read of committed data on the hot path (a grant lookup).

        Same answer and errors as :meth:`fetchall`; a backend may answer it faster (SQLite
        reads it on the event loop from a read-only WAL connection).
        """
        return await self.fetchall(sql, params)

    @property
    def pushes_changes(self) -> bool:
        """True if other processes' changes are pushed (NOTIFY) rather than polled for."""
        return False

    @property
    def listening(self) -> bool:
        """True while this database's change feed runs (caches over it may hold decisions)."""
        return self._changes.live

    def subscribe_changes(self, listener: ChangeListener) -> None:
        """Tell ``listener`` (held weakly) about grant changes, and whether they can be heard.

        Until the change feed is live (see :meth:`watch_changes`) the listener is told the
        feed is lost: nothing may be cached where no feed runs.
        """
        self._changes.add(listener)

    def announce_change(self, key: str) -> None:
        """A change to agent ``key`` committed through this object: tell every listener now."""
        self._changes.changed(key)

    async def watch_changes(self) -> None:
        """Start the change feed once (for the first cached check); later calls return at once.

        Returns after the first attempt to follow changes: listeners have been told the
        feed is live, or it keeps retrying in the background while they cache nothing.
        The feed stops on :meth:`close`.
        """
        if self._feed_started:
            return
        async with self._feed_lock:
            if not self._feed_started:
                await self._start_feed()
                self._feed_started = True

    async def poll_changes(self) -> bool:
        """Check for changes now; True if listeners were told to forget (a change or an outage)."""
        return not self.listening

    @abc.abstractmethod
    async def _start_feed(self) -> None:
        """Start following other processes' changes (see :meth:`watch_changes`)."""

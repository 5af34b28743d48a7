"""The SQLite backend of :class:`~actorscope.store.Database`: aiosqlite, WAL, foreign keys on.

One writer connection (writes serialised by a lock, each in an explicit transaction) and one
read-only reader connection (WAL lets it read committed data while a write is open). Grant
lookups (:meth:`SqliteDatabase.lookup`) use a third, synchronous read-only connection on the
event loop itself: an indexed point read in WAL mode never waits for a writer, and skipping the
worker-thread hop makes it several times cheaper. It never waits for a lock either (no busy
timeout): a read SQLite cannot start at once (a recovering or exclusively locked database)
goes through the threaded reader instead, which waits there.

Other processes' grant changes are followed by polling the ``grant_epoch`` counter (moved by
triggers on every grant or agent change) every :data:`EPOCH_POLL_INTERVAL` seconds: when it
moves, every listener forgets everything. A failed poll stops caching until a poll succeeds.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sqlite3
import stat
import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import aiosqlite

from actorscope._input import shown_path
from actorscope.errors import (
    ConflictError,
    DatabaseOpenError,
    RowRefusedError,
    StoreError,
)
from actorscope.store._base import (
    ChangeSubscribers,
    Database,
    DatabaseNotWritableError,
    MigrationError,
    NotADatabaseError,
    Params,
    Row,
    Transaction,
    outdated_schema,
    refuse_newer_schema,
    url_scheme,
)
from actorscope.store._migrations import Migration, load_migrations

__all__ = ["EPOCH_POLL_INTERVAL", "EpochFeed", "SqliteDatabase", "SqliteTransaction"]

_log = logging.getLogger("actorscope.store")

#: Seconds between two reads of the grant epoch (well inside the one-second freshness bound).
EPOCH_POLL_INTERVAL = 0.25
_EPOCH = "SELECT epoch FROM grant_epoch WHERE id = 1"

_SQLITE_HEADER = b"SQLite format 3\x00"
# Primary result codes of a read that would have to wait (the low byte of an extended code).
_WAIT_CODES = frozenset({sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED})
_MEMORY = ":memory:"
_SQLITE_URL = "sqlite:///"
# What a statement can raise: SQLite's errors, and aiosqlite's ValueError ("Connection closed",
# "no active connection") once the connection is closed under a statement. Both leave this
# module as a StoreError: nothing above the store names the backend's exceptions.
_FAILURES = (sqlite3.Error, ValueError)


def _store_error(exc: Exception, what: str) -> StoreError | ConflictError:
    if isinstance(exc, sqlite3.IntegrityError):
        return ConflictError(f"{what}: {exc}")
    if isinstance(exc, sqlite3.DataError):  # a value too big for SQLite ("string or blob too big")
        return RowRefusedError(f"{what}: {exc}")
    return StoreError(f"{what}: {exc}")


class SqliteTransaction(Transaction):
    """Statements inside one open SQLite write transaction."""

    __slots__ = ("_conn",)

    def __init__(self, conn: aiosqlite.Connection) -> None:
        self._conn = conn

    async def execute(self, sql: str, params: Params = ()) -> int:
        """Run one statement; return the number of rows it changed."""
        try:
            cursor = await self._conn.execute(sql, params)
        except _FAILURES as exc:
            raise _store_error(exc, "database write failed") from exc
        rowcount = cursor.rowcount
        await cursor.close()
        return rowcount

    async def executemany(self, sql: str, rows: Sequence[Params]) -> None:
        """Run one statement for each parameter row."""
        try:
            await self._conn.executemany(sql, rows)
        except _FAILURES as exc:
            raise _store_error(exc, "database write failed") from exc

    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        """Read every row, seeing this transaction's own uncommitted writes."""
        try:
            rows = await self._conn.execute_fetchall(sql, params)
        except _FAILURES as exc:
            raise _store_error(exc, "database read failed") from exc
        return list(rows)


class EpochFeed:
    """Follows other processes' grant changes on SQLite by polling the grant epoch."""

    def __init__(
        self,
        db: Database,
        subscribers: ChangeSubscribers,
        *,
        interval: float = EPOCH_POLL_INTERVAL,
    ) -> None:
        self._db = db
        self._subscribers = subscribers
        self._interval = interval
        # The epoch every cached decision was read at or after; None: no such baseline.
        self._epoch: int | None = None
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Poll once now (the baseline), then keep polling in the background."""
        await self.poll()
        self._task = asyncio.create_task(self._run(), name="actorscope-grant-epoch")

    async def close(self) -> None:
        """Stop polling; listeners cache nothing from now on."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        self._subscribers.lost()

    async def poll(self) -> bool:
        """Read the epoch once; True if listeners were told to forget (a move or a failure).

        A failed read suspends caching and drops the baseline, so the next good read resumes
        from the epoch it reads, after every decision cached before it was forgotten.
        """
        try:
            row = await self._db.fetchone(_EPOCH)
        except StoreError as exc:
            if self._subscribers.live:
                _log.warning("store.epoch_poll_failed error=%s; permission caches bypassed", exc)
            self._epoch = None
            self._subscribers.lost()
            return True
        epoch = int(row["epoch"]) if row is not None else -1
        if self._epoch == epoch:
            return False
        moved = self._epoch is not None
        self._epoch = epoch
        self._subscribers.restored()
        return moved

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self._interval)
            await self.poll()


def _preflight(path: Path, *, create: bool = True) -> str:
    """Refuse, before touching anything, a path that cannot be an actorscope database.

    Returns the ``file:`` URI of the read-only reader connection. Without ``create`` a
    missing or empty file is refused too.
    """
    try:
        mode: int | None = path.stat().st_mode
    except FileNotFoundError:
        if not create:
            raise DatabaseOpenError(f"database {str(path)!r} does not exist") from None
        mode = None  # a new database; its directory is checked below
    except OSError as exc:  # too long, a symlink loop, a file used as a directory, no access
        raise DatabaseOpenError(
            f"cannot use database path {shown_path(path)}: {exc.strerror or exc}"
        ) from exc
    if mode is not None and stat.S_ISDIR(mode):
        raise DatabaseOpenError(f"database path {str(path)!r} is a directory")
    if mode is not None and not stat.S_ISREG(mode):
        # A FIFO would block the header read below; a device or socket is no database either.
        raise DatabaseOpenError(f"database path {str(path)!r} is not a regular file")
    parent = path.parent
    if not parent.is_dir():
        problem = "is not a directory" if parent.exists() else "does not exist"
        raise DatabaseNotWritableError(
            f"cannot create database {str(path)!r}: {str(parent)!r} {problem}"
        )
    if path.exists():
        try:
            with path.open("rb") as handle:
                header = handle.read(len(_SQLITE_HEADER))
        except OSError as exc:
            raise DatabaseOpenError(f"cannot read database {str(path)!r}: {exc.strerror}") from exc
        if header and header != _SQLITE_HEADER:
            raise NotADatabaseError(f"{str(path)!r} exists but is not an SQLite database")
        if not header and not create:
            raise NotADatabaseError(f"{str(path)!r} is an empty file, not an actorscope database")
        if not os.access(path, os.W_OK):
            raise DatabaseNotWritableError(f"database {str(path)!r} is not writable")
    elif not os.access(parent, os.W_OK):
        raise DatabaseNotWritableError(
            f"cannot create database {str(path)!r}: directory {str(parent)!r} is not writable"
        )
    if not create:
        return path.resolve().as_uri() + "?mode=ro"
    # Open once synchronously: a path SQLite cannot open (a /proc entry, a special file) must
    # fail here, before aiosqlite starts a worker thread that would outlive the event loop.
    try:
        sqlite3.connect(path).close()
    except sqlite3.Error as exc:
        raise DatabaseOpenError(f"cannot open database {str(path)!r}: {exc}") from exc
    return path.resolve().as_uri() + "?mode=ro"


async def _connect(target: str, *, busy_timeout: float, uri: bool = False) -> aiosqlite.Connection:
    conn = await aiosqlite.connect(target, isolation_level=None, timeout=busy_timeout, uri=uri)
    try:
        conn.row_factory = sqlite3.Row
        await conn.execute("PRAGMA foreign_keys = ON")
        await conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
    except BaseException:
        await conn.close()
        raise
    return conn


async def _schema_version(conn: aiosqlite.Connection) -> int:
    async with conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
    ) as cursor:
        if await cursor.fetchone() is None:
            return 0
    async with conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations") as cursor:
        row = await cursor.fetchone()
    return int(row[0]) if row is not None else 0


class SqliteDatabase(Database):
    """An open SQLite database (one writer connection, one read-only reader)."""

    dialect = "sqlite"
    target_forms = ("a file path", f"{_SQLITE_URL}path")

    def __init__(
        self,
        path: str,
        writer: aiosqlite.Connection,
        reader: aiosqlite.Connection,
        *,
        schema_version: int,
        default_tenant_id: str,
        quick_reader: sqlite3.Connection | None = None,
        busy_timeout: float = 5.0,
    ) -> None:
        super().__init__(path, schema_version=schema_version, default_tenant_id=default_tenant_id)
        self._writer = writer
        self._reader = reader
        self._quick = quick_reader
        self._busy_timeout = busy_timeout
        self._write_lock = asyncio.Lock()
        self._feed = EpochFeed(self, self._changes)

    @classmethod
    def _opens(cls, target: str) -> str | None:
        """A plain path (no ``scheme://``) or ``sqlite:///path``: the file's path."""
        if target.startswith(_SQLITE_URL):
            return target.removeprefix(_SQLITE_URL)
        return None if url_scheme(target) else target

    @classmethod
    async def _connect(cls, where: str, *, busy_timeout: float, create: bool) -> Database:
        return await cls.connect_sqlite(where, busy_timeout=busy_timeout, create=create)

    @classmethod
    async def connect_sqlite(
        cls, target: str, *, busy_timeout: float = 5.0, create: bool = True
    ) -> SqliteDatabase:
        """Open (creating and migrating if needed) the SQLite file ``target`` (or ``:memory:``).

        ``create=False``: only an existing, up-to-date actorscope file (see ``Database.open``).
        """
        if target == _MEMORY and not create:
            raise DatabaseOpenError("an in-memory database is always new: nothing to read")
        reader_uri = "" if target == _MEMORY else _preflight(Path(target), create=create)
        migrations = load_migrations()
        try:
            if create:
                writer = await _connect(target, busy_timeout=busy_timeout)
            else:  # mode=rw: SQLite must not create the file if it vanished since the preflight
                rw_uri = reader_uri.removesuffix("?mode=ro") + "?mode=rw"
                writer = await _connect(rw_uri, busy_timeout=busy_timeout, uri=True)
        except sqlite3.Error as exc:
            raise DatabaseOpenError(f"cannot open database {target!r}: {exc}") from exc
        try:
            version = await _schema_version(writer)
            refuse_newer_schema(target, version, len(migrations))
            if create:
                if target != _MEMORY:
                    await writer.execute("PRAGMA journal_mode = WAL")
                    await writer.execute("PRAGMA synchronous = NORMAL")
                version, tenant_id = await _migrate(writer, migrations, target)
            else:
                tenant_id = await _existing(writer, target, version, len(migrations))
            quick: sqlite3.Connection | None = None
            if target == _MEMORY:
                reader = writer  # one private database: there is no second connection to it
            else:
                reader = await _connect(reader_uri, busy_timeout=busy_timeout, uri=True)
                quick = _quick_reader(reader_uri)
        except sqlite3.DatabaseError as exc:
            await writer.close()
            if "not a database" in str(exc) or "malformed" in str(exc):
                raise NotADatabaseError(
                    f"{target!r} is not a usable SQLite database: {exc}"
                ) from exc
            if "readonly" in str(exc) or "read-only" in str(exc):
                raise DatabaseNotWritableError(
                    f"database {target!r} is not writable: {exc}"
                ) from exc
            raise DatabaseOpenError(f"cannot open database {target!r}: {exc}") from exc
        except BaseException:
            await writer.close()
            raise
        return cls(
            target,
            writer,
            reader,
            schema_version=version,
            default_tenant_id=tenant_id,
            quick_reader=quick,
            busy_timeout=busy_timeout,
        )

    async def close(self) -> None:
        """Close both connections. Safe to call twice."""
        if self._closed:
            return
        await self._flush_writers()
        self._closed = True
        await self._feed.close()
        if self._quick is not None:
            self._quick.close()
        if self._reader is not self._writer:
            await self._reader.close()
        await self._writer.close()

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Transaction]:
        """One write transaction: committed when the block ends, rolled back if it raises.

        It waits at most ``busy_timeout`` seconds for the writes queued before it in this
        process, as SQLite waits that long for another process's lock: while another process
        holds the write lock, queued writes fail in about that time instead of each waiting
        its own timeout in turn.
        """
        left = await self._queue_for_writer()
        try:
            self._check_open()
            await self._begin(left)
            try:
                yield SqliteTransaction(self._writer)
            except BaseException:
                await self._rollback()
                raise
            try:
                await self._writer.execute("COMMIT")
            except _FAILURES as exc:
                await self._rollback()
                raise _store_error(exc, "commit failed") from exc
        finally:
            self._write_lock.release()

    async def _queue_for_writer(self) -> float:
        """Take the writer connection, waiting at most ``busy_timeout`` for it; the seconds
        of the write's budget that are left (``busy_timeout`` when it did not wait)."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        try:
            async with asyncio.timeout(self._busy_timeout):
                await self._write_lock.acquire()
        except TimeoutError:
            raise StoreError(
                "cannot start a write transaction: the writes queued before it did not finish"
                f" within {self._busy_timeout:g}s (the database is locked or busy)"
            ) from None
        return self._busy_timeout - (loop.time() - started)

    async def _begin(self, left: float) -> None:
        """``BEGIN IMMEDIATE``, waiting for another process's lock only for what is ``left``.

        A write that queued behind others has spent part of its budget: SQLite then waits
        only for the rest, so queued writes behind a lock another process holds fail together
        in about one busy timeout, not one after the other.
        """
        shortened = left < self._busy_timeout - 0.001
        try:
            if shortened:
                await self._writer.execute(f"PRAGMA busy_timeout = {max(int(left * 1000), 0)}")
            try:
                await self._writer.execute("BEGIN IMMEDIATE")
            finally:
                if shortened:
                    await self._writer.execute(
                        f"PRAGMA busy_timeout = {int(self._busy_timeout * 1000)}"
                    )
        except _FAILURES as exc:
            raise _store_error(exc, "cannot start a write transaction") from exc
        except BaseException:
            # Cancelled while the connection's thread ran the statements: the BEGIN may still
            # happen there, and the next write must not find its transaction open.
            await asyncio.shield(self._settle())
            raise

    async def _settle(self) -> None:
        """Wait for what the writer's thread was given, then roll back what it left open."""
        try:
            await self._writer.execute("SELECT 1")  # runs after the statements queued before it
        except _FAILURES as exc:
            _log.error("cannot settle the writer of %r after a cancelled write: %s", self.path, exc)
            return
        await self._rollback()

    async def _start_feed(self) -> None:
        if not self._closed:
            await self._feed.start()

    async def poll_changes(self) -> bool:
        """Read the grant epoch now; True if listeners were told to forget."""
        return await self._feed.poll()

    async def _rollback(self) -> None:
        """Roll back the open write transaction while an error is on its way out.

        SQLite has already rolled back by itself after some failures (a full disk, an I/O
        error): a second ROLLBACK would raise "no transaction is active" and hide the cause.
        A ROLLBACK that fails is logged, never raised over the error that caused it.
        """
        try:
            if self._writer.in_transaction:
                await self._writer.execute("ROLLBACK")
        except _FAILURES as exc:  # the connection may be closed already (ValueError)
            _log.error("rollback failed on %r: %s", self.path, exc)

    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        """Read every row of committed data.

        One call into the connection's thread: execute, fetch and reset happen together, so
        no other read can start while this statement still holds an older WAL snapshot.
        """
        self._check_open()
        try:
            rows = await self._reader.execute_fetchall(sql, params)
        except _FAILURES as exc:
            raise _store_error(exc, "database read failed") from exc
        return list(rows)

    async def lookup(self, sql: str, params: Params = ()) -> list[Row]:
        """A short indexed read of committed data, on the event loop (no thread hop).

        A read that would have to wait for a lock goes through :meth:`fetchall`, whose
        thread waits; any other failure is a :class:`StoreError`, as there.
        """
        self._check_open()
        if self._quick is None:
            return await self.fetchall(sql, params)
        try:
            # fetchall() steps the statement to its end, which resets it: no WAL snapshot
            # outlives this call, so the next lookup sees every commit made before it.
            return self._quick.execute(sql, params).fetchall()
        except sqlite3.OperationalError as exc:
            if exc.sqlite_errorcode & 0xFF not in _WAIT_CODES:
                raise _store_error(exc, "database read failed") from exc
        except _FAILURES as exc:
            raise _store_error(exc, "database read failed") from exc
        return await self.fetchall(sql, params)


def _quick_reader(reader_uri: str) -> sqlite3.Connection:
    """The synchronous read-only connection :meth:`SqliteDatabase.lookup` uses on the loop.

    ``timeout=0``: it never sleeps on a lock (that would stall the event loop).
    ``check_same_thread=False``: a database may be closed from another thread than the one
    that opened it; every use is one call on the loop, never two at once.
    """
    conn = sqlite3.connect(
        reader_uri, uri=True, timeout=0, isolation_level=None, check_same_thread=False
    )
    conn.row_factory = sqlite3.Row
    return conn


async def _existing(conn: aiosqlite.Connection, target: str, version: int, known: int) -> str:
    """The default tenant of an up-to-date database opened without ``create``; else refuse."""
    if version == 0:
        raise NotADatabaseError(f"{target!r} is an SQLite file without actorscope's tables")
    if version < known:
        raise DatabaseOpenError(outdated_schema(target, version, known))
    tenant_id = await _default_tenant(conn)
    if tenant_id is None:
        raise NotADatabaseError(f"database {target!r} has no default tenant")
    return tenant_id


async def _default_tenant(conn: aiosqlite.Connection) -> str | None:
    """The id of the default tenant, or ``None`` if there is none."""
    async with conn.execute(
        "SELECT id FROM tenants WHERE slug = ?", (Database.DEFAULT_TENANT_SLUG,)
    ) as cursor:
        row = await cursor.fetchone()
    return None if row is None else str(row[0])


async def _migrate(
    conn: aiosqlite.Connection, migrations: Sequence[Migration], target: str
) -> tuple[int, str]:
    """Apply pending migrations and ensure the default tenant, all in one transaction."""
    await conn.execute("BEGIN IMMEDIATE")
    try:
        await conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
        )
        # Re-read inside the lock: another process may have migrated since we looked.
        current = await _schema_version(conn)
        refuse_newer_schema(target, current, len(migrations))
        for migration in migrations[current:]:
            for statement in migration.statements:
                try:
                    await conn.execute(statement)
                except sqlite3.Error as exc:
                    raise MigrationError(
                        f"migration {migration.version:04d}_{migration.name} failed: {exc}"
                    ) from exc
            await conn.execute(
                "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                (migration.version, migration.name, Database.utc_now()),
            )
        await conn.execute(
            "INSERT INTO tenants (id, slug, name, created_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (slug) DO NOTHING",
            (str(uuid.uuid4()), Database.DEFAULT_TENANT_SLUG, "Default tenant", Database.utc_now()),
        )
        tenant_id = await _default_tenant(conn)
        if tenant_id is None:
            raise MigrationError(f"database {target!r}: the default tenant could not be created")
        await conn.execute("COMMIT")
    except BaseException:
        await conn.execute("ROLLBACK")
        raise
    return len(migrations), tenant_id

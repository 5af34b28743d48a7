"""The PostgreSQL backend of :class:`~actorscope.store.Database`: asyncpg, shared by many workers.

Reads go through a small connection pool, each statement on committed data. Write transactions
are serialised like SQLite's ``BEGIN IMMEDIATE``: within the process by a lock, across every
worker by a transaction-scoped advisory lock taken first, so a read inside a write transaction
sees every earlier commit and check-then-write code behaves exactly as on SQLite. Statements
keep their ``?`` placeholders (numbered here) and rows are ``asyncpg.Record`` (by name or index).
One more connection LISTENs for other workers' grant changes (see :mod:`._listen`).

asyncpg is the optional ``postgres`` extra: it is imported when the first PostgreSQL URL is
opened, so this backend is known (and names its forms) wherever actorscope is installed.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import re
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from types import ModuleType
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit, urlunsplit

from actorscope._input import shown_path
from actorscope.errors import ConflictError, DatabaseOpenError, RowRefusedError, StoreError
from actorscope.store._base import (
    Database,
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
from actorscope.store._sql import numbered_placeholders

if TYPE_CHECKING:
    from actorscope.store._listen import ChangeFeed

__all__ = ["PostgresDatabase", "PostgresTransaction"]

#: The advisory lock every write transaction holds (any constant 64-bit key will do).
WRITE_LOCK_KEY = 0x6163_7473_636F_7065
_SCHEMES = frozenset({"postgresql", "postgres"})
_POOL_SIZE = 8
_CONNECT_TIMEOUT = 10.0
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _driver() -> ModuleType:
    """asyncpg, imported when a PostgreSQL URL is opened; one clear error when it is absent."""
    try:
        import asyncpg
    except ModuleNotFoundError as exc:
        if exc.name != "asyncpg":
            raise
        raise DatabaseOpenError(
            "PostgreSQL needs asyncpg: pip install 'actorscope[postgres]'"
        ) from exc
    driver: ModuleType = asyncpg
    return driver


@functools.cache
def _failures() -> tuple[type[BaseException], ...]:
    """What a statement can raise; a database object exists only once asyncpg is imported.

    InternalClientError: asyncpg's own state broke; as much a store failure as the others.
    """
    asyncpg = _driver()
    return (
        asyncpg.PostgresError,
        asyncpg.InterfaceError,
        asyncpg.InternalClientError,
        OSError,
        TimeoutError,
    )


def _store_error(exc: BaseException, what: str) -> StoreError | ConflictError:
    asyncpg = _driver()
    if isinstance(exc, asyncpg.IntegrityConstraintViolationError):
        return ConflictError(f"{what}: {exc}")
    # Class 22 (a value the type cannot hold) and class 54 (an index row over its size
    # limit): the server is fine, this row is not.
    if isinstance(exc, asyncpg.DataError | asyncpg.ProgramLimitExceededError):
        return RowRefusedError(f"{what}: {exc}")
    return StoreError(f"{what}: {exc}")


def _rowcount(status: str) -> int:
    """Rows changed, from a command tag such as ``UPDATE 3`` or ``INSERT 0 1`` (else -1)."""
    last = status.rsplit(" ", 1)[-1]
    return int(last) if last.isdigit() else -1


class PostgresTransaction(Transaction):
    """Statements inside one open PostgreSQL write transaction."""

    __slots__ = ("_conn",)

    def __init__(self, conn: Any) -> None:
        self._conn = conn

    async def execute(self, sql: str, params: Params = ()) -> int:
        """Run one statement; return the number of rows it changed."""
        try:
            status = await self._conn.execute(numbered_placeholders(sql), *params)
        except _failures() as exc:
            raise _store_error(exc, "database write failed") from exc
        return _rowcount(str(status))

    async def executemany(self, sql: str, rows: Sequence[Params]) -> None:
        """Run one statement for each parameter row."""
        try:
            await self._conn.executemany(numbered_placeholders(sql), rows)
        except _failures() as exc:
            raise _store_error(exc, "database write failed") from exc

    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        """Read every row, seeing this transaction's own uncommitted writes."""
        try:
            return list(await self._conn.fetch(numbered_placeholders(sql), *params))
        except _failures() as exc:
            raise _store_error(exc, "database read failed") from exc


def _address(url: str) -> tuple[str, str, str]:
    """(``host:port``, database name, the URL without its password) for messages and ``path``."""
    if _CONTROL.search(unquote(url)):
        # asyncpg decodes %-escapes; a NUL or newline would reach the socket layer raw.
        raise DatabaseOpenError("bad PostgreSQL URL: it contains a control character")
    try:
        parts = urlsplit(url)
        port = parts.port or 5432
    except ValueError as exc:  # an unclosed [IPv6] bracket, a port that is not a number
        raise DatabaseOpenError(f"bad PostgreSQL URL: {exc}") from exc
    host = parts.hostname or "localhost"
    # asyncpg unquotes each host; one starting with "/" is a Unix socket directory, not a name.
    for name in (n for n in unquote(host).split(",") if not n.startswith("/")):
        try:
            name.encode("idna")
        except UnicodeError as exc:  # the resolver's check: empty labels, labels over 63 chars
            raise DatabaseOpenError(
                f"bad PostgreSQL URL: {shown_path(name)} is not a valid host name"
            ) from exc
    user = parts.username or ""
    netloc = f"{user}@{host}:{port}" if user else f"{host}:{port}"
    safe = urlunsplit((parts.scheme, netloc, parts.path, parts.query, ""))
    return f"{host}:{port}", parts.path.lstrip("/") or user or "postgres", safe


class PostgresDatabase(Database):
    """An open PostgreSQL database: a read pool, serialised writes and a change feed."""

    dialect = "postgresql"
    target_forms = ("postgresql://user@host:port/db",)

    def __init__(
        self,
        path: str,
        pool: Any,
        listen_connection: Callable[[], Awaitable[Any]],
        *,
        schema_version: int,
        default_tenant_id: str,
    ) -> None:
        # Here, not at the top: the feed is built on asyncpg, which connect_url imported.
        from actorscope.store._listen import ChangeFeed

        super().__init__(path, schema_version=schema_version, default_tenant_id=default_tenant_id)
        self._pool = pool
        self._feed: ChangeFeed = ChangeFeed(listen_connection, self._changes)
        self._write_lock = asyncio.Lock()

    @classmethod
    def _opens(cls, target: str) -> str | None:
        """A ``postgresql://`` or ``postgres://`` URL, as it is."""
        return target if url_scheme(target).lower() in _SCHEMES else None

    @classmethod
    async def _connect(cls, where: str, *, busy_timeout: float, create: bool) -> Database:
        return await cls.connect_url(where, busy_timeout=busy_timeout, create=create)

    @classmethod
    async def connect_url(
        cls, url: str, *, busy_timeout: float = 5.0, create: bool = True
    ) -> PostgresDatabase:
        """Connect and migrate (one transaction); DatabaseOpenError if down.

        ``create=False`` never migrates: it refuses a database without actorscope's tables
        or with an older schema. The LISTEN connection opens with the first cached check
        (see :meth:`watch_changes`).
        """
        asyncpg = _driver()
        where, name, safe = _address(url)
        settings = {"lock_timeout": str(max(1, int(busy_timeout * 1000)))}
        try:
            pool = await asyncpg.create_pool(
                url,
                min_size=1,
                max_size=_POOL_SIZE,
                timeout=_CONNECT_TIMEOUT,
                server_settings={**settings, "application_name": "actorscope"},
            )
        except _failures() as exc:
            raise DatabaseOpenError(
                f"cannot connect to PostgreSQL at {where} (database {name!r}): {exc}"
            ) from exc
        try:
            migrations = load_migrations(dialect="postgresql")
            if create:
                version, tenant_id = await _migrate(pool, migrations, safe)
            else:
                version, tenant_id = await _existing(pool, len(migrations), safe)
        except _failures() as exc:
            await pool.close()
            raise DatabaseOpenError(f"cannot open PostgreSQL database {safe!r}: {exc}") from exc
        except BaseException:
            await pool.close()
            raise

        async def listen_connection() -> Any:
            return await asyncpg.connect(
                url,
                timeout=_CONNECT_TIMEOUT,
                server_settings={**settings, "application_name": "actorscope-listen"},
            )

        return cls(
            safe, pool, listen_connection, schema_version=version, default_tenant_id=tenant_id
        )

    async def close(self) -> None:
        """Stop listening and close the pool. Safe to call twice."""
        if self._closed:
            return
        await self._flush_writers()
        self._closed = True
        await self._feed.close()
        try:
            await asyncio.wait_for(self._pool.close(), timeout=_CONNECT_TIMEOUT)
        except _failures():
            self._pool.terminate()
        except asyncio.CancelledError:
            self._pool.terminate()
            raise

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Transaction]:
        """One write transaction, serialised across processes; committed or rolled back."""
        async with self._write_lock:
            self._check_open()
            try:
                conn = await self._pool.acquire()
            except _failures() as exc:
                raise _store_error(exc, "cannot start a write transaction") from exc
            try:
                async with self._begin(conn) as tx:
                    yield tx
            finally:
                # A connection the server dropped (a restart) fails its reset here; the pool
                # closes it. The transaction's own outcome (committed, or its StoreError) stands.
                with contextlib.suppress(*_failures()):
                    await self._pool.release(conn)

    @asynccontextmanager
    async def _begin(self, conn: Any) -> AsyncIterator[Transaction]:
        transaction = conn.transaction()
        try:
            await transaction.start()
            await conn.execute("SELECT pg_advisory_xact_lock($1)", WRITE_LOCK_KEY)
        except _failures() as exc:
            with contextlib.suppress(*_failures()):
                await transaction.rollback()
            raise _store_error(exc, "cannot start a write transaction") from exc
        try:
            yield PostgresTransaction(conn)
        except BaseException:
            with contextlib.suppress(*_failures()):
                await transaction.rollback()
            raise
        try:
            await transaction.commit()
        except _failures() as exc:
            with contextlib.suppress(*_failures()):
                await transaction.rollback()
            raise _store_error(exc, "commit failed") from exc

    async def execute_atomic(self, sql: str, params: Params = ()) -> int:
        """One self-contained write statement, committed on its own, without the write lock."""
        self._check_open()
        try:
            status = await self._pool.execute(numbered_placeholders(sql), *params)
        except _failures() as exc:
            raise _store_error(exc, "database write failed") from exc
        return _rowcount(str(status))

    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        """Read every row of committed data (one statement, its own snapshot)."""
        self._check_open()
        try:
            return list(await self._pool.fetch(numbered_placeholders(sql), *params))
        except _failures() as exc:
            raise _store_error(exc, "database read failed") from exc

    @property
    def pushes_changes(self) -> bool:
        """Always True: other workers' grant changes arrive over LISTEN/NOTIFY."""
        return True

    @property
    def listener_pid(self) -> int | None:
        """The server process id of the LISTEN connection, while it is up."""
        return self._feed.server_pid

    async def _start_feed(self) -> None:
        if not self._closed:
            await self._feed.start()


async def _existing(pool: Any, known: int, target: str) -> tuple[int, str]:
    """The schema version and default tenant of an up-to-date database; else refuse."""
    async with pool.acquire() as conn:
        if await conn.fetchval("SELECT to_regclass('schema_migrations')") is None:
            raise NotADatabaseError(f"PostgreSQL database {target!r} has no actorscope tables")
        version = int(
            await conn.fetchval("SELECT COALESCE(MAX(version), 0) FROM schema_migrations")
        )
        refuse_newer_schema(target, version, known)
        if version < known:
            raise DatabaseOpenError(outdated_schema(target, version, known))
        tenant_id = await conn.fetchval(
            "SELECT id FROM tenants WHERE slug = $1", Database.DEFAULT_TENANT_SLUG
        )
    if tenant_id is None:
        raise NotADatabaseError(f"database {target!r} has no default tenant")
    return version, str(tenant_id)


async def _migrate(pool: Any, migrations: Sequence[Migration], target: str) -> tuple[int, str]:
    """Apply pending migrations and ensure the default tenant, all in one transaction."""
    async with pool.acquire() as conn, conn.transaction():
        # Under the write lock: another worker may be migrating the same database right now.
        await conn.execute("SELECT pg_advisory_xact_lock($1)", WRITE_LOCK_KEY)
        await conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
        )
        current = int(
            await conn.fetchval("SELECT COALESCE(MAX(version), 0) FROM schema_migrations")
        )
        refuse_newer_schema(target, current, len(migrations))
        for migration in migrations[current:]:
            for statement in migration.statements:
                try:
                    await conn.execute(statement)
                except _driver().PostgresError as exc:
                    raise MigrationError(
                        f"migration {migration.version:04d}_{migration.name} failed: {exc}"
                    ) from exc
            await conn.execute(
                "INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)",
                migration.version,
                migration.name,
                Database.utc_now(),
            )
        await conn.execute(
            "INSERT INTO tenants (id, slug, name, created_at) VALUES ($1, $2, $3, $4) "
            "ON CONFLICT (slug) DO NOTHING",
            str(uuid.uuid4()),
            Database.DEFAULT_TENANT_SLUG,
            "Default tenant",
            Database.utc_now(),
        )
        tenant_id = await conn.fetchval(
            "SELECT id FROM tenants WHERE slug = $1", Database.DEFAULT_TENANT_SLUG
        )
        if tenant_id is None:
            raise MigrationError(f"database {target!r}: the default tenant could not be created")
    return len(migrations), str(tenant_id)

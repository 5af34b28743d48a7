"""The project database: creation, migrations, pragmas, constraints, transactions, bad files."""

from __future__ import annotations

import asyncio
import sqlite3
import uuid
from collections.abc import AsyncIterator
from contextlib import closing
from pathlib import Path

import pytest

from actorscope.errors import ActorscopeError, ConflictError, DatabaseOpenError, StoreError
from actorscope.store import Database
from actorscope.store._base import (
    DatabaseNotWritableError,
    MigrationError,
    NotADatabaseError,
    SchemaTooNewError,
)
from actorscope.store._migrations import Migration, load_migrations, split_statements

MIGRATIONS = load_migrations()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """A path for a new database file in an empty temporary directory."""
    return tmp_path / "actorscope.db"


@pytest.fixture
async def sqlite_db(db_path: Path) -> AsyncIterator[Database]:
    """A freshly created, migrated SQLite file at ``db_path``.

    Not the suite's ``db``: this module tests the SQLite file itself (pragmas, WAL, bad files)
    beside it; the dialect-neutral API runs on both backends in test_database_backends.py.
    """
    async with Database.open(db_path) as database:
        yield database


async def _add_tenant(db: Database, slug: str) -> str:
    tenant_id = str(uuid.uuid4())
    await db.execute(
        "INSERT INTO tenants (id, slug, name, created_at) VALUES (?, ?, ?, ?)",
        (tenant_id, slug, slug, Database.utc_now()),
    )
    return tenant_id


async def _add_agent(db: Database, tenant_id: str, key: str) -> str:
    agent_id = str(uuid.uuid4())
    now = Database.utc_now()
    await db.execute(
        "INSERT INTO agents (id, tenant_id, agent_key, created_at, updated_at)"
        " VALUES (?, ?, ?, ?, ?)",
        (agent_id, tenant_id, key, now, now),
    )
    return agent_id


def _files(directory: Path) -> set[str]:
    return {entry.name for entry in directory.iterdir()}


# --- creation and migrations ---------------------------------------------------------------


async def test_new_database_has_the_default_tenant(sqlite_db: Database) -> None:
    """A new database has exactly one tenant, slug "default", whose id is its default_tenant_id."""
    rows = await sqlite_db.fetchall("SELECT id, slug FROM tenants")
    assert [(row["id"], row["slug"]) for row in rows] == [
        (sqlite_db.default_tenant_id, Database.DEFAULT_TENANT_SLUG)
    ]
    assert uuid.UUID(sqlite_db.default_tenant_id).version == 4


async def test_schema_version_equals_the_number_of_migrations(sqlite_db: Database) -> None:
    """schema_version is the number of shipped migrations, each recorded once in order."""
    assert sqlite_db.schema_version == len(MIGRATIONS) >= 1
    rows = await sqlite_db.fetchall("SELECT version, name FROM schema_migrations ORDER BY version")
    assert [(row["version"], row["name"]) for row in rows] == [
        (m.version, m.name) for m in MIGRATIONS
    ]


async def test_reopen_is_idempotent(db_path: Path) -> None:
    """Reopening keeps the default tenant id and does not re-apply migrations."""
    async with Database.open(db_path) as first:
        tenant_id = first.default_tenant_id
        applied = await first.fetchall("SELECT version, applied_at FROM schema_migrations")
    async with Database.open(db_path) as second:
        assert second.default_tenant_id == tenant_id
        assert second.schema_version == len(MIGRATIONS)
        again = await second.fetchall("SELECT version, applied_at FROM schema_migrations")
        assert [tuple(row) for row in again] == [tuple(row) for row in applied]
        count = await second.fetchone("SELECT COUNT(*) FROM schema_migrations")
        assert count is not None
        assert count[0] == len(MIGRATIONS)
        tenants = await second.fetchone("SELECT COUNT(*) FROM tenants")
        assert tenants is not None
        assert tenants[0] == 1


async def test_in_memory_database_is_migrated() -> None:
    """ ":memory:" opens a migrated database with foreign keys on."""
    async with Database.open(":memory:") as db:
        assert db.schema_version == len(MIGRATIONS)
        row = await db.fetchone("PRAGMA foreign_keys")
        assert row is not None
        assert row[0] == 1


async def test_path_with_special_characters(tmp_path: Path) -> None:
    """A path with spaces, '#', '?' and '%' opens, and the reader sees the same file."""
    path = tmp_path / "my db #1?%20.db"
    async with Database.open(path) as db:
        await _add_tenant(db, "acme")
        row = await db.fetchone("SELECT slug FROM tenants WHERE slug = 'acme'")
        assert row is not None
    assert path.is_file()


async def test_close_twice_is_safe(db_path: Path) -> None:
    """Database.close() may be called twice."""
    database = await Database.connect(db_path)
    await database.close()
    await database.close()


async def test_a_failing_migration_applies_nothing(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failing migration raises MigrationError and rolls back every migration of the run."""
    broken = Migration(version=len(MIGRATIONS) + 1, name="broken", statements=("NOT SQL",))
    monkeypatch.setattr("actorscope.store._sqlite.load_migrations", lambda: (*MIGRATIONS, broken))
    with pytest.raises(MigrationError, match="broken"):
        await Database.connect(db_path)
    with closing(sqlite3.connect(db_path)) as conn:
        tables = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    assert tables == []
    monkeypatch.undo()
    async with Database.open(db_path) as db:
        assert db.schema_version == len(MIGRATIONS)


# --- pragmas -------------------------------------------------------------------------------


async def test_reader_uses_wal_and_foreign_keys(sqlite_db: Database) -> None:
    """The reader connection reports journal_mode=wal and foreign_keys=1."""
    journal = await sqlite_db.fetchone("PRAGMA journal_mode")
    foreign_keys = await sqlite_db.fetchone("PRAGMA foreign_keys")
    assert journal is not None
    assert foreign_keys is not None
    assert journal[0] == "wal"
    assert foreign_keys[0] == 1


async def test_writer_uses_wal_and_foreign_keys(sqlite_db: Database) -> None:
    """The writer connection (inside a transaction) reports journal_mode=wal and foreign_keys=1."""
    async with sqlite_db.transaction() as tx:
        journal = await tx.fetchone("PRAGMA journal_mode")
        foreign_keys = await tx.fetchone("PRAGMA foreign_keys")
    assert journal is not None
    assert foreign_keys is not None
    assert journal[0] == "wal"
    assert foreign_keys[0] == 1


# --- constraints ---------------------------------------------------------------------------


async def test_foreign_key_violation_is_a_conflict(sqlite_db: Database) -> None:
    """Inserting an agent for an unknown tenant raises ConflictError and writes nothing."""
    with pytest.raises(ConflictError, match="FOREIGN KEY"):
        await _add_agent(sqlite_db, str(uuid.uuid4()), "main")
    row = await sqlite_db.fetchone("SELECT COUNT(*) FROM agents")
    assert row is not None
    assert row[0] == 0


async def test_live_agent_key_is_unique_per_tenant(sqlite_db: Database) -> None:
    """The same agent key twice in one tenant, both live, raises ConflictError."""
    await _add_agent(sqlite_db, sqlite_db.default_tenant_id, "main")
    with pytest.raises(ConflictError, match="UNIQUE"):
        await _add_agent(sqlite_db, sqlite_db.default_tenant_id, "main")


async def test_agent_key_is_reusable_after_soft_delete(sqlite_db: Database) -> None:
    """After the live agent is soft-deleted its key can be used again in the same tenant."""
    first = await _add_agent(sqlite_db, sqlite_db.default_tenant_id, "main")
    changed = await sqlite_db.execute(
        "UPDATE agents SET deleted_at = ? WHERE id = ?", (Database.utc_now(), first)
    )
    assert changed == 1
    second = await _add_agent(sqlite_db, sqlite_db.default_tenant_id, "main")
    rows = await sqlite_db.fetchall(
        "SELECT id FROM agents WHERE agent_key = 'main' AND deleted_at IS NULL"
    )
    assert [row["id"] for row in rows] == [second]


async def test_agent_key_is_reusable_in_another_tenant(sqlite_db: Database) -> None:
    """The same live agent key may exist in two different tenants."""
    other = await _add_tenant(sqlite_db, "acme")
    await _add_agent(sqlite_db, sqlite_db.default_tenant_id, "main")
    await _add_agent(sqlite_db, other, "main")
    row = await sqlite_db.fetchone("SELECT COUNT(*) FROM agents WHERE agent_key = 'main'")
    assert row is not None
    assert row[0] == 2


async def test_check_constraint_violation_is_a_conflict(sqlite_db: Database) -> None:
    """A CHECK violation (empty tenant slug) raises ConflictError."""
    with pytest.raises(ConflictError):
        await _add_tenant(sqlite_db, "")


async def test_sql_error_is_a_store_error(sqlite_db: Database) -> None:
    """A malformed statement raises StoreError (not a raw sqlite3 error)."""
    with pytest.raises(StoreError):
        await sqlite_db.execute("INSERT INTO no_such_table VALUES (1)")
    with pytest.raises(StoreError):
        await sqlite_db.fetchone("SELECT * FROM no_such_table")


# --- transactions --------------------------------------------------------------------------


async def _insert_then_fail(db: Database, tenant_id: str) -> None:
    async with db.transaction() as tx:
        await tx.execute(
            "INSERT INTO tenants (id, slug, created_at) VALUES (?, ?, ?)",
            (tenant_id, "doomed", Database.utc_now()),
        )
        seen = await tx.fetchone("SELECT slug FROM tenants WHERE id = ?", (tenant_id,))
        assert seen is not None
        raise RuntimeError("boom")


async def test_transaction_rolls_back_when_the_body_raises(sqlite_db: Database) -> None:
    """An exception in a transaction body propagates and none of its writes remain."""
    tenant_id = str(uuid.uuid4())
    with pytest.raises(RuntimeError, match="boom"):
        await _insert_then_fail(sqlite_db, tenant_id)
    assert await sqlite_db.fetchone("SELECT 1 FROM tenants WHERE id = ?", (tenant_id,)) is None
    # The writer is usable again after the rollback.
    await _add_tenant(sqlite_db, "after")


async def _insert_two_tenants(db: Database, first: str, second: str) -> None:
    async with db.transaction() as tx:
        for slug in (first, second):
            await tx.execute(
                "INSERT INTO tenants (id, slug, created_at) VALUES (?, ?, ?)",
                (str(uuid.uuid4()), slug, Database.utc_now()),
            )


async def test_transaction_commits_all_or_nothing_on_conflict(sqlite_db: Database) -> None:
    """A conflict on the second write of a transaction rolls back the first write too."""
    with pytest.raises(ConflictError):
        await _insert_two_tenants(sqlite_db, "first", Database.DEFAULT_TENANT_SLUG)
    assert await sqlite_db.fetchone("SELECT 1 FROM tenants WHERE slug = 'first'") is None


async def test_reader_sees_only_committed_data(sqlite_db: Database) -> None:
    """While a transaction is open the reader does not see its writes; after commit it does."""
    async with sqlite_db.transaction() as tx:
        await tx.execute(
            "INSERT INTO tenants (id, slug, created_at) VALUES (?, ?, ?)",
            (str(uuid.uuid4()), "pending", Database.utc_now()),
        )
        assert await sqlite_db.fetchone("SELECT 1 FROM tenants WHERE slug = 'pending'") is None
    assert await sqlite_db.fetchone("SELECT 1 FROM tenants WHERE slug = 'pending'") is not None


async def test_concurrent_writes_are_serialised(sqlite_db: Database) -> None:
    """Twenty concurrent writes through one Database all commit."""
    await asyncio.gather(*(_add_tenant(sqlite_db, f"tenant-{n}") for n in range(20)))
    row = await sqlite_db.fetchone("SELECT COUNT(*) FROM tenants")
    assert row is not None
    assert row[0] == 21


async def test_executemany_and_fetchall_in_a_transaction(sqlite_db: Database) -> None:
    """Transaction.executemany writes every row and Transaction.fetchall reads them back."""
    now = Database.utc_now()
    rows = [(str(uuid.uuid4()), f"t{n}", now) for n in range(3)]
    async with sqlite_db.transaction() as tx:
        await tx.executemany("INSERT INTO tenants (id, slug, created_at) VALUES (?, ?, ?)", rows)
        inside = await tx.fetchall("SELECT slug FROM tenants WHERE slug LIKE 't_' ORDER BY slug")
    assert [row["slug"] for row in inside] == ["t0", "t1", "t2"]


# --- files that cannot be used -------------------------------------------------------------


async def test_schema_too_new_is_refused_and_the_file_is_untouched(db_path: Path) -> None:
    """A schema version above the known migrations raises SchemaTooNewError; bytes unchanged."""
    async with Database.open(db_path):
        pass
    with closing(sqlite3.connect(db_path)) as conn:
        conn.execute(
            "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
            (len(MIGRATIONS) + 1, "from_the_future", Database.utc_now()),
        )
        conn.commit()
    before = await asyncio.to_thread(db_path.read_bytes)
    files = _files(db_path.parent)
    with pytest.raises(SchemaTooNewError, match="newer"):
        await Database.connect(db_path)
    assert await asyncio.to_thread(db_path.read_bytes) == before
    assert _files(db_path.parent) == files


async def test_a_text_file_is_not_a_database_and_is_untouched(db_path: Path) -> None:
    """A file that is not SQLite raises NotADatabaseError and is left byte for byte unchanged."""
    content = b"hello world this is text"
    await asyncio.to_thread(db_path.write_bytes, content)
    with pytest.raises(NotADatabaseError):
        await Database.connect(db_path)
    assert await asyncio.to_thread(db_path.read_bytes) == content
    assert _files(db_path.parent) == {db_path.name}


async def test_a_corrupt_sqlite_file_is_not_a_database(db_path: Path) -> None:
    """A file with an SQLite header but garbage after it raises NotADatabaseError, unchanged."""
    content = b"SQLite format 3\x00" + b"\xff" * 200
    await asyncio.to_thread(db_path.write_bytes, content)
    with pytest.raises(NotADatabaseError):
        await Database.connect(db_path)
    assert await asyncio.to_thread(db_path.read_bytes) == content


async def test_a_missing_directory_is_not_writable(tmp_path: Path) -> None:
    """A path in a missing directory raises DatabaseNotWritableError and creates nothing."""
    with pytest.raises(DatabaseNotWritableError, match="does not exist"):
        await Database.connect(tmp_path / "missing" / "actorscope.db")
    assert _files(tmp_path) == set()


async def test_a_directory_is_not_a_database_path(tmp_path: Path) -> None:
    """A path that is a directory raises DatabaseOpenError."""
    with pytest.raises(DatabaseOpenError, match="directory") as caught:
        await Database.connect(tmp_path)
    assert type(caught.value) is DatabaseOpenError


@pytest.mark.parametrize(
    "error",
    [
        DatabaseOpenError,
        NotADatabaseError,
        SchemaTooNewError,
        DatabaseNotWritableError,
        MigrationError,
        ConflictError,
        StoreError,
    ],
)
def test_store_errors_are_actorscope_errors(error: type[Exception]) -> None:
    """Every error the store raises derives from ActorscopeError."""
    assert issubclass(error, ActorscopeError)


def test_open_errors_are_database_open_errors() -> None:
    """The store's open errors are DatabaseOpenErrors; creating fixes neither a newer schema nor
    an unwritable path (``creatable``)."""
    for error in (NotADatabaseError, SchemaTooNewError, DatabaseNotWritableError):
        assert issubclass(error, DatabaseOpenError)
    assert issubclass(DatabaseOpenError, StoreError)
    assert (DatabaseOpenError.creatable, NotADatabaseError.creatable) == (True, True)
    assert (SchemaTooNewError.creatable, DatabaseNotWritableError.creatable) == (False, False)


# --- migration files -----------------------------------------------------------------------

TRIGGER_SCRIPT = """\
-- A header comment; with a semicolon.

CREATE TABLE t (a INTEGER); -- trailing comment; with a semicolon
/* a block comment */
CREATE TRIGGER t_ins AFTER INSERT ON t BEGIN
    -- inside the trigger; still one statement
    UPDATE t SET a = a + 1 WHERE rowid = new.rowid;
    INSERT INTO log VALUES ('x;y');
END;

-- a final comment
"""


def test_split_statements_keeps_a_trigger_whole() -> None:
    """A trigger's BEGIN ... END body with inner semicolons and comments stays one statement."""
    statements = split_statements(TRIGGER_SCRIPT)
    assert len(statements) == 2
    assert "CREATE TABLE t (a INTEGER);" in statements[0]
    assert "TRIGGER" not in statements[0]
    assert "CREATE TRIGGER t_ins" in statements[1]
    assert statements[1].endswith("END;")
    assert "INSERT INTO log VALUES ('x;y');" in statements[1]
    for statement in statements:
        assert sqlite3.complete_statement(statement)


def test_split_statements_are_executable_one_by_one() -> None:
    """Each split statement runs through a single sqlite3 execute call."""
    with closing(sqlite3.connect(":memory:")) as conn:
        conn.execute("CREATE TABLE log (v TEXT)")
        for statement in split_statements(TRIGGER_SCRIPT):
            conn.execute(statement)
        conn.execute("INSERT INTO t VALUES (1)")
        assert conn.execute("SELECT a FROM t").fetchall() == [(2,)]


def test_split_statements_splits_statements_sharing_a_line() -> None:
    """Two statements on one line become two statements (sqlite3 executes one at a time)."""
    assert split_statements("CREATE TABLE a (x); CREATE TABLE b (y);\n") == (
        "CREATE TABLE a (x);",
        "CREATE TABLE b (y);",
    )


def test_split_statements_rejects_an_incomplete_statement() -> None:
    """A script ending in an unterminated statement raises ValueError."""
    with pytest.raises(ValueError, match="incomplete"):
        split_statements("CREATE TABLE a (x);\nCREATE TABLE b (y)\n")


def test_split_statements_of_only_comments_is_empty() -> None:
    """Blank lines and line comments alone yield no statements."""
    assert split_statements("-- nothing here\n\n   -- still nothing\n") == ()


def test_load_migrations_is_gapless_and_ordered() -> None:
    """Shipped migrations are numbered 1..n without gaps and each has statements."""
    assert [m.version for m in MIGRATIONS] == list(range(1, len(MIGRATIONS) + 1))
    assert MIGRATIONS[0].name == "initial"
    for migration in MIGRATIONS:
        assert migration.statements
        for statement in migration.statements:
            assert sqlite3.complete_statement(statement)


def test_load_migrations_rejects_a_gap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A migrations package with 0001 and 0003 but no 0002 raises ValueError."""
    package = tmp_path / "actorscope_test_gapped_migrations"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "0001_first.sql").write_text("CREATE TABLE a (x);\n")
    (package / "0003_third.sql").write_text("CREATE TABLE c (x);\n")
    (package / "README.txt").write_text("not a migration")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ValueError, match="0002"):
        load_migrations(package.name)


def test_load_migrations_ignores_other_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only NNNN_name.sql files are migrations; they load in version order."""
    package = tmp_path / "actorscope_test_ordered_migrations"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "0002_second.sql").write_text("CREATE TABLE b (x);\n")
    (package / "0001_first.sql").write_text("CREATE TABLE a (x);\n")
    (package / "notes.sql").write_text("garbage")
    monkeypatch.syspath_prepend(str(tmp_path))
    loaded = load_migrations(package.name)
    assert [(m.version, m.name, m.statements) for m in loaded] == [
        (1, "first", ("CREATE TABLE a (x);",)),
        (2, "second", ("CREATE TABLE b (x);",)),
    ]

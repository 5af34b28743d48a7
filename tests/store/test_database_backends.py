"""Database chosen by URL: the same API, schema, errors and rows on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from actorscope.errors import ConflictError, DatabaseOpenError, StoreError
from actorscope.store import Database
from actorscope.store._base import SchemaTooNewError
from actorscope.store._migrations import load_migrations
from actorscope.store._sql import numbered_placeholders
from actorscope.tools._cron import CronStore
from actorscope.tools._memory import DatabaseMemory, MemoryKey


async def _agent(db: Database, key: str = "main") -> str:
    agent_id = str(uuid.uuid4())
    now = Database.utc_now()
    await db.execute(
        "INSERT INTO agents (id, tenant_id, agent_key, created_at, updated_at) "
        "VALUES (?, ?, ?, ?, ?)",
        (agent_id, db.default_tenant_id, key, now, now),
    )
    return agent_id


def test_placeholders_are_numbered_outside_literals_and_comments() -> None:
    """'?' becomes $1..$n, except inside quotes, quoted identifiers and comments."""
    sql = "SELECT '?', \"a?\" FROM t /* ? */ WHERE a = ? AND b IN (?, 'it''s ?') -- ?\nAND c = ?"
    assert numbered_placeholders(sql) == (
        "SELECT '?', \"a?\" FROM t /* ? */ WHERE a = $1 AND b IN ($2, 'it''s ?') -- ?\nAND c = $3"
    )
    assert numbered_placeholders("SELECT 1") == "SELECT 1"


def test_both_dialects_ship_the_same_migrations() -> None:
    """Each dialect folder holds the same numbers and names."""
    sqlite = [(m.version, m.name) for m in load_migrations(dialect="sqlite")]
    postgres = [(m.version, m.name) for m in load_migrations(dialect="postgresql")]
    assert sqlite == postgres
    with pytest.raises(ValueError, match="dialect"):
        load_migrations(dialect="mysql")


async def test_sqlite_url_opens_the_file(tmp_path: Path) -> None:
    """sqlite:///PATH opens the same file as PATH."""
    path = tmp_path / "u.db"
    async with Database.open(f"sqlite:///{path}") as db:
        assert db.dialect == "sqlite"
        assert not db.pushes_changes
    assert path.is_file()


async def test_unknown_scheme_and_unreachable_server_are_open_errors() -> None:
    """An unsupported scheme, or no server at host:port, is one DatabaseOpenError naming it."""
    with pytest.raises(DatabaseOpenError) as refused:
        await Database.connect("mysql://u@127.0.0.1/db")
    assert str(refused.value) == (
        "unsupported database URL scheme 'mysql': use a file path, sqlite:///path or "
        "postgresql://user@host:port/db"
    )
    with pytest.raises(DatabaseOpenError, match=r"127\.0\.0\.1:1 "):
        await Database.connect("postgresql://u:secret@127.0.0.1:1/db")


async def test_a_postgresql_url_without_asyncpg_says_which_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without asyncpg, a PostgreSQL URL is one DatabaseOpenError naming the extra to install."""
    monkeypatch.setitem(sys.modules, "asyncpg", None)
    with pytest.raises(DatabaseOpenError) as refused:
        await Database.connect("postgres://u@127.0.0.1:1/db")
    assert str(refused.value) == "PostgreSQL needs asyncpg: pip install 'actorscope[postgres]'"


def test_the_store_imports_no_postgresql_driver_until_a_url_is_opened() -> None:
    """Importing the store (and opening SQLite) loads no asyncpg: it is the optional extra."""
    code = (
        "import asyncio, sys, tempfile, os\n"
        "from actorscope.store import Database\n"
        "async def main():\n"
        "    with tempfile.TemporaryDirectory() as d:\n"
        "        async with Database.open(os.path.join(d, 'a.db')) as db:\n"
        "            assert db.dialect == 'sqlite'\n"
        "asyncio.run(main())\n"
        "print('asyncpg' in sys.modules)\n"
    )
    done = subprocess.run(  # noqa: S603 - our own interpreter and a constant script
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "False"


async def test_rows_read_by_name_and_index(db: Database) -> None:
    """Rows support row["column"] and row[i] on every backend."""
    row = await db.fetchone("SELECT slug, name FROM tenants WHERE id = ?", (db.default_tenant_id,))
    assert row is not None
    assert (row["slug"], row[0], row["name"], row[1]) == (
        "default",
        "default",
        *("Default tenant",) * 2,
    )


async def test_execute_counts_changed_rows(db: Database) -> None:
    """execute() returns the number of rows a write changed."""
    await _agent(db, "a")
    await _agent(db, "b")
    assert (
        await db.execute("UPDATE agents SET display_name = ? WHERE agent_key <> ?", ("x", "")) == 2
    )
    assert await db.execute("DELETE FROM agents WHERE agent_key = ?", ("nobody",)) == 0


async def test_unique_and_foreign_key_violations_are_conflicts(db: Database) -> None:
    """Duplicate live key, dangling agent id, bad JSON: ConflictError; bad SQL: StoreError."""
    await _agent(db, "main")
    with pytest.raises(ConflictError):
        await _agent(db, "main")
    now = Database.utc_now()
    with pytest.raises(ConflictError):
        await db.execute(
            "INSERT INTO config_permissions (tenant_id, agent_id, scope, config_type, sender_id, "
            "permission, created_at, updated_at) VALUES (?, ?, 'g', 'cron', 'u', 'allow', ?, ?)",
            (db.default_tenant_id, str(uuid.uuid4()), now, now),
        )
    with pytest.raises(ConflictError):
        await db.execute(
            "INSERT INTO audit_log (created_at, action, detail) VALUES (?, 'x', ?)", (now, "{no")
        )
    with pytest.raises(StoreError):
        await db.fetchall("SELECT nothing FROM nowhere")


async def test_a_raising_transaction_writes_nothing(db: Database) -> None:
    """Every statement of a transaction that raises is rolled back."""
    seen: list[object] = []

    async def write_then_fail() -> None:
        async with db.transaction() as tx:
            await tx.execute(
                "INSERT INTO tenants (id, slug, created_at) VALUES (?, ?, ?)",
                (str(uuid.uuid4()), "acme", Database.utc_now()),
            )
            seen.append(await tx.fetchone("SELECT 1 FROM tenants WHERE slug = 'acme'"))
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        await write_then_fail()
    assert seen[0] is not None  # the transaction saw its own write
    assert await db.fetchone("SELECT 1 FROM tenants WHERE slug = 'acme'") is None


async def test_partial_unique_index_frees_a_deleted_key(db: Database) -> None:
    """A soft-deleted agent's key may be reused (the unique index covers live agents only)."""
    first = await _agent(db, "main")
    await db.execute("UPDATE agents SET deleted_at = ? WHERE id = ?", (Database.utc_now(), first))
    await _agent(db, "main")
    row = await db.fetchone("SELECT COUNT(*) AS n FROM agents WHERE agent_key = 'main'")
    assert row is not None
    assert row["n"] == 2


async def test_grant_changes_move_the_epoch(db: Database) -> None:
    """The grant_epoch triggers fire on both backends."""
    agent = await _agent(db)
    before = await db.fetchone("SELECT epoch FROM grant_epoch WHERE id = 1")
    now = Database.utc_now()
    await db.execute(
        "INSERT INTO config_permissions (tenant_id, agent_id, scope, config_type, sender_id, "
        "permission, created_at, updated_at) VALUES (?, ?, 'g', 'cron', 'u', 'allow', ?, ?)",
        (db.default_tenant_id, agent, now, now),
    )
    after = await db.fetchone("SELECT epoch FROM grant_epoch WHERE id = 1")
    assert before is not None
    assert after is not None
    assert after["epoch"] == before["epoch"] + 1


async def test_concurrent_writes_are_serialised(db: Database) -> None:
    """Read-then-write transactions running at once never lose an update."""
    await db.execute("UPDATE grant_epoch SET epoch = 0 WHERE id = 1")

    async def bump() -> None:
        async with db.transaction() as tx:
            row = await tx.fetchone("SELECT epoch FROM grant_epoch WHERE id = 1")
            assert row is not None
            await asyncio.sleep(0)
            await tx.execute("UPDATE grant_epoch SET epoch = ? WHERE id = 1", (row["epoch"] + 1,))

    await asyncio.gather(*(bump() for _ in range(20)))
    row = await db.fetchone("SELECT epoch FROM grant_epoch WHERE id = 1")
    assert row is not None
    assert row["epoch"] == 20


async def test_newer_schema_is_refused(db_target: str) -> None:
    """A database migrated by a newer actorscope is refused with SchemaTooNewError."""
    async with Database.open(db_target) as db:
        await db.execute(
            "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, 'future', ?)",
            (db.schema_version + 1, Database.utc_now()),
        )
    with pytest.raises(SchemaTooNewError):
        await Database.connect(db_target)


async def test_reads_after_close_fail_cleanly(db_target: str) -> None:
    """A closed database raises StoreError, never hangs."""
    database = await Database.connect(db_target)
    await database.close()
    await database.close()
    with pytest.raises(StoreError):
        await database.fetchall("SELECT 1")


async def test_tool_storage_works_on_every_backend(db: Database) -> None:
    """Memory entries (INSERT ... RETURNING) and cron jobs store and read back the same."""
    agent = await _agent(db)
    memory = DatabaseMemory(db)
    key = MemoryKey(agent_id=agent, namespace=" __shared__ ", scope="group:telegram:-1")
    first = await memory.add(key, "buy milk", created_by="42")
    second = await memory.add(key, "call bob", created_by="43")
    assert (first.text, first.created_by, second.id) == ("buy milk", "42", first.id + 1)
    assert (await memory.set_pinned(key, first.id, True)).pinned
    assert next(e.text for e in await memory.search(key, "milk", 5)) == "buy milk"
    cron = CronStore(db)
    job = await cron.add(
        agent_id=agent, scope="group:telegram:-1", key="group:telegram:-1", name="daily",
        schedule="0 9 * * *", message="hi", created_by="42",
    )  # fmt: skip
    assert [j.name for j in await cron.list(agent_id=agent, key="group:telegram:-1")] == [job.name]
    with pytest.raises(ConflictError):
        await cron.add(
            agent_id=agent, scope="group:telegram:-1", key="group:telegram:-1", name="daily",
            schedule="* * * * *", message="", created_by="43",
        )  # fmt: skip

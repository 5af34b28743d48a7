"""``Database.open(target, create=False)``: an existing, up-to-date database or one clear error."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from actorscope.errors import DatabaseOpenError
from actorscope.store import Database
from actorscope.store._base import NotADatabaseError
from actorscope.store._migrations import load_migrations


async def test_an_existing_database_opens_without_create(db_target: str) -> None:
    """A migrated database opens read-side with the same default tenant on both dialects."""
    async with Database.open(db_target) as db:
        tenant = db.default_tenant_id
    async with Database.open(db_target, create=False) as db:
        assert db.default_tenant_id == tenant
        assert db.schema_version == len(load_migrations())


async def test_a_target_without_actorscope_tables_is_refused(db_target: str) -> None:
    """A missing SQLite file or an empty PostgreSQL schema is refused, and stays as it was."""
    with pytest.raises(DatabaseOpenError):
        async with Database.open(db_target, create=False):
            pass
    if "://" not in db_target:
        assert os.listdir(Path(db_target).parent) == []
    else:
        with pytest.raises(NotADatabaseError, match="no actorscope tables"):
            async with Database.open(db_target, create=False):
                pass


async def test_a_missing_file_is_refused_and_not_created(tmp_path: Path) -> None:
    """A typo'd path names the path and creates no file (nor -wal / -shm)."""
    with pytest.raises(DatabaseOpenError, match="does not exist"):
        async with Database.open(tmp_path / "typo.db", create=False):
            pass
    assert os.listdir(tmp_path) == []


async def test_an_empty_file_is_not_a_database(tmp_path: Path) -> None:
    """An existing empty file is refused and stays empty."""
    path = tmp_path / "empty.db"
    path.touch()
    with pytest.raises(NotADatabaseError, match="empty file"):
        async with Database.open(path, create=False):
            pass
    assert path.read_bytes() == b""


async def test_an_older_schema_says_how_to_upgrade(db_target: str) -> None:
    """A database behind this code's migrations is not migrated: the error names the command."""
    async with Database.open(db_target) as db:
        await db.execute(
            "DELETE FROM schema_migrations WHERE version = ?", (len(load_migrations()),)
        )
    for _ in range(2):  # the first refusal migrated nothing: the second one is the same
        with pytest.raises(DatabaseOpenError, match="actorscope migrate --db"):
            async with Database.open(db_target, create=False):
                pass


async def test_in_memory_is_refused_without_create() -> None:
    """``:memory:`` is always new, so there is nothing to open without creating."""
    with pytest.raises(DatabaseOpenError, match="in-memory"):
        async with Database.open(":memory:", create=False):
            pass

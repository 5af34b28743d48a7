"""Database.read_sqlite_rows: a bot's own SQLite file, read only, every table's rows."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from actorscope.errors import StoreError
from actorscope.store import Database


def test_every_tables_rows_are_read_and_skip_leaves_tables_out(tmp_path: Path) -> None:
    """Rows of each table come back as text (duplicates counted); skipped tables are left out."""
    path = tmp_path / "notes.sqlite"
    with closing(sqlite3.connect(path)) as db, db:
        db.execute('CREATE TABLE "odd ""name""" (text TEXT)')
        db.execute("CREATE TABLE notes (text TEXT, n INTEGER)")
        db.executemany("INSERT INTO notes VALUES (?, ?)", [("a", 1), ("a", 1), ("b", 2)])
    rows = Database.read_sqlite_rows(path)
    assert rows["notes"] == {"('a', 1)": 2, "('b', 2)": 1}
    assert rows['odd "name"'] == {}
    assert set(Database.read_sqlite_rows(path, skip={"notes"})) == {'odd "name"'}


def test_a_missing_file_is_an_error_and_is_not_created(tmp_path: Path) -> None:
    """Read only: a file that does not exist is a StoreError, never an empty new database."""
    path = tmp_path / "absent.sqlite"
    with pytest.raises(StoreError, match="cannot read"):
        Database.read_sqlite_rows(path)
    assert not path.exists()


def test_a_file_that_is_no_database_is_an_error(tmp_path: Path) -> None:
    """Text in a .sqlite file is one StoreError naming the file."""
    path = tmp_path / "notes.sqlite"
    path.write_text("not a database\n" * 100, "utf-8")
    with pytest.raises(StoreError, match=r"cannot read .*notes\.sqlite"):
        Database.read_sqlite_rows(path)

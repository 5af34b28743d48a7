"""Reading a SQLite database file that is not the project's: every table's rows, read only.

A tool that watches what a bot does (``actorscope probe``) compares the rows of the SQLite
databases the bot keeps for itself before and after an event. The store is the one place that
imports a database driver, so the read lives here: it opens the file read only (``mode=ro``),
creates and migrates nothing, and waits at most ``timeout`` seconds for a writer's lock.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Collection
from pathlib import Path

from actorscope.errors import StoreError

__all__ = ["read_sqlite_rows"]


def read_sqlite_rows(
    path: Path, *, skip: Collection[str] = (), timeout: float = 1.0
) -> dict[str, Counter[str]]:
    """Every table of the SQLite database at ``path`` (but ``skip``) → its rows, each as
    text; a :class:`~actorscope.errors.StoreError` when it cannot be read (locked past
    ``timeout``, not a database)."""
    uri = f"{path.resolve().as_uri()}?mode=ro"
    try:
        connection = sqlite3.connect(uri, uri=True, timeout=timeout)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot read {path}: {exc}") from None
    try:
        names = [
            str(row[0])
            for row in connection.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        ]
        # Table names come from the file itself, quoted as identifiers.
        quoted = {name: '"' + name.replace('"', '""') + '"' for name in names if name not in skip}
        return {
            name: Counter(repr(tuple(row)) for row in connection.execute(f"SELECT * FROM {q}"))
            for name, q in quoted.items()
        }
    except sqlite3.Error as exc:
        raise StoreError(f"cannot read {path}: {exc}") from None
    finally:
        connection.close()

"""Numbered SQL migrations shipped as package data, one folder per dialect, applied in one
transaction.

``migrations/sqlite/NNNN_name.sql`` and ``migrations/postgresql/NNNN_name.sql`` carry the same
numbers and names and build the same schema. An SQLite script is split into statements (so it
runs inside the caller's transaction); a PostgreSQL script runs whole (its function bodies are
dollar-quoted, and the server runs a multi-statement script inside the open transaction).
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from importlib import resources

__all__ = ["DIALECTS", "Migration", "load_migrations", "split_statements"]

#: The SQL dialects with a migrations folder.
DIALECTS = ("sqlite", "postgresql")

_NAME = re.compile(r"(?P<version>[0-9]{4})_(?P<name>[a-z0-9_]+)\.sql")


@dataclass(frozen=True, slots=True)
class Migration:
    """One numbered migration: its version, name and SQL statements."""

    version: int
    name: str
    statements: tuple[str, ...]


def split_statements(script: str) -> tuple[str, ...]:
    """Split an SQL script into complete statements (triggers' ``BEGIN ... END`` included).

    ``sqlite3.Cursor.executescript`` would commit the open transaction first; running the
    statements one by one keeps every migration inside the caller's transaction. A piece is
    cut after every ``;`` and a statement ends where SQLite says it is complete, so two
    statements may share a line and a ``;`` inside a trigger body does not end it.
    """
    statements: list[str] = []
    buffer = ""
    for piece in re.split(r"(?<=;)", script):
        buffer += piece
        if sqlite3.complete_statement(buffer):
            statement = _strip_comments(buffer)
            if statement:
                statements.append(buffer.strip())
            buffer = ""
    if _strip_comments(buffer):
        raise ValueError(f"incomplete SQL statement at the end of a migration: {buffer.strip()!r}")
    return tuple(statements)


def _strip_comments(sql: str) -> str:
    """The SQL without ``--`` line comments and ``/* */`` block comments, stripped."""
    without_blocks = re.sub(r"/\*.*?\*/", " ", sql, flags=re.DOTALL)
    return re.sub(r"--[^\n]*", " ", without_blocks).strip()


def _statements(script: str, dialect: str) -> tuple[str, ...]:
    if dialect == "sqlite":
        return split_statements(script)
    return (script,) if _strip_comments(script) else ()


def load_migrations(
    package: str | None = None, *, dialect: str = "sqlite"
) -> tuple[Migration, ...]:
    """Every ``NNNN_name.sql`` of ``dialect`` in version order, numbered from 1 without gaps.

    ``package`` overrides where they are read from (default
    ``actorscope.store.migrations.<dialect>``).
    """
    if dialect not in DIALECTS:
        raise ValueError(f"unknown SQL dialect {dialect!r}; expected one of {', '.join(DIALECTS)}")
    package = package or f"actorscope.store.migrations.{dialect}"
    found: list[Migration] = []
    for entry in resources.files(package).iterdir():
        match = _NAME.fullmatch(entry.name)
        if match is None:
            continue
        found.append(
            Migration(
                version=int(match["version"]),
                name=match["name"],
                statements=_statements(entry.read_text(encoding="utf-8"), dialect),
            )
        )
    found.sort(key=lambda m: m.version)
    for expected, migration in enumerate(found, start=1):
        if migration.version != expected:
            raise ValueError(f"migrations must be numbered without gaps; missing {expected:04d}")
    return tuple(found)

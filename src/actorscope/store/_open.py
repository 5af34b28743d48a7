"""Which backend opens a database target: the one module that knows every backend.

A plain path or ``sqlite:///path`` is SQLite (:mod:`._sqlite`, aiosqlite); ``postgresql://`` or
``postgres://`` is PostgreSQL (:mod:`._postgres`, asyncpg, the ``postgres`` extra, imported only
when such a URL is opened). :meth:`Database.open <actorscope.store.Database.open>` and
:meth:`Database.connect <actorscope.store.Database.connect>` come here; the interface in
:mod:`._base` and the backends know nothing of each other beyond the interface.
"""

from __future__ import annotations

import os
import re

from actorscope.errors import DatabaseOpenError
from actorscope.store._base import Database
from actorscope.store._sqlite import SqliteDatabase

__all__ = ["connect_database"]

_URL = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://")
_SQLITE_PREFIX = "sqlite:///"
_POSTGRES_SCHEMES = ("postgresql", "postgres")


async def connect_database(
    target: str | os.PathLike[str], *, busy_timeout: float = 5.0, create: bool = True
) -> Database:
    """Open the database at ``target`` with the backend its form names (see the module)."""
    text = os.fspath(target)
    match = _URL.match(text)
    if match is None or text.startswith(_SQLITE_PREFIX):
        path = text.removeprefix(_SQLITE_PREFIX) if match is not None else text
        return await SqliteDatabase.connect_sqlite(path, busy_timeout=busy_timeout, create=create)
    if match["scheme"].lower() in _POSTGRES_SCHEMES:
        try:
            # Imported here: asyncpg is the optional ``postgres`` extra.
            from actorscope.store._postgres import PostgresDatabase
        except ModuleNotFoundError as exc:
            if exc.name != "asyncpg":
                raise
            raise DatabaseOpenError(
                "PostgreSQL needs asyncpg: pip install 'actorscope[postgres]'"
            ) from exc
        return await PostgresDatabase.connect_url(text, busy_timeout=busy_timeout, create=create)
    raise DatabaseOpenError(
        f"unsupported database URL scheme {match['scheme']!r}: use a file path, "
        "sqlite:///path or postgresql://user@host:port/db"
    )

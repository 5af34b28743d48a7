"""The project database: SQLite (aiosqlite) or PostgreSQL (asyncpg), numbered migrations."""

from actorscope.store._base import DEFAULT_TENANT_SLUG, Database, Row, Transaction, utc_at, utc_now
from actorscope.store._peek import read_sqlite_rows

__all__ = [
    "DEFAULT_TENANT_SLUG",
    "Database",
    "Row",
    "Transaction",
    "read_sqlite_rows",
    "utc_at",
    "utc_now",
]

"""The project database: SQLite (aiosqlite) or PostgreSQL (asyncpg), numbered migrations."""

from actorscope.store._base import (
    DEFAULT_TENANT_SLUG,
    ChangeListener,
    ChangeSubscribers,
    Database,
    QueuedWriter,
    Row,
    Transaction,
    utc_at,
    utc_now,
)
from actorscope.store._migrations import DIALECTS, Migration, load_migrations
from actorscope.store._peek import read_sqlite_rows
from actorscope.store._sql import numbered_placeholders

__all__ = [
    "DEFAULT_TENANT_SLUG",
    "DIALECTS",
    "ChangeListener",
    "ChangeSubscribers",
    "Database",
    "Migration",
    "QueuedWriter",
    "Row",
    "Transaction",
    "load_migrations",
    "numbered_placeholders",
    "read_sqlite_rows",
    "utc_at",
    "utc_now",
]

"""The project database: SQLite via aiosqlite with numbered migrations."""

from actorscope.store._database import DEFAULT_TENANT_SLUG, Database, Row, Transaction, utc_now
from actorscope.store._migrations import Migration, load_migrations

__all__ = [
    "DEFAULT_TENANT_SLUG",
    "Database",
    "Migration",
    "Row",
    "Transaction",
    "load_migrations",
    "utc_now",
]

"""The project database: SQLite (aiosqlite) or PostgreSQL (asyncpg), numbered migrations."""

from actorscope.store._base import Database, Row, Transaction

# The backends: each is a Database subclass saying which targets it opens, so Database.connect
# knows the ones imported here, in this order (SQLite, the default, first: it is tried and
# named first). PostgreSQL's driver, the optional asyncpg, is imported when a URL is opened.
# isort: split
from actorscope.store import _sqlite  # noqa: F401

# isort: split
from actorscope.store import _postgres  # noqa: F401

__all__ = [
    "Database",
    "Row",
    "Transaction",
]

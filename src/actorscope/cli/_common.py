"""What the commands share: the ``--db`` and ``--create`` options, the database a writing command
changes, wide tables, the listen error and the testing extra.

Each command module imports this module, never ``_app.py``: the app imports the commands and
registers them, so the arrows go one way.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated

import typer
from rich.console import Console

from actorscope.errors import (
    ConfigError,
    DatabaseOpenError,
)
from actorscope.store import Database

__all__ = [
    "DEFAULT_DB",
    "CreateOption",
    "DbOption",
    "cannot_listen",
    "console_for_tables",
    "database_to_change",
    "require_testing_extra",
]

#: ``--db`` of every command that opens the project database: a path, or a URL
#: (``sqlite:///path``, ``postgresql://...``), so it is text, not a ``Path``.
DbOption = Annotated[
    str,
    typer.Option(
        "--db",
        metavar="DB",
        help="The actorscope database: a file path, sqlite:///PATH or postgresql://...",
    ),
]
DEFAULT_DB = "actorscope.db"
#: ``--create`` of the commands that add to the database: without it, they open an existing,
#: up-to-date database only, so a mistyped ``--db`` creates nothing.
CreateOption = Annotated[
    bool,
    typer.Option(
        "--create",
        help="Create the database (or bring an older one up to date) if needed; without it "
        "only an existing, up-to-date database is opened.",
    ),
]


@asynccontextmanager
async def database_to_change(db: str, *, create: bool | None = None) -> AsyncIterator[Database]:
    """The database a writing command changes, closed after the block.

    Unless ``create`` is true, an existing, up-to-date actorscope database only, so a mistyped
    ``--db`` creates nothing. ``create=False`` is a command that offers ``--create``: its error
    for a missing, empty or older database says how to get one (``--create``, ``actorscope
    migrate``); ``None`` is a command that only changes what is there (``remove``, ``rename``,
    ``revoke``), whose error just says the database is not there.
    """
    try:
        database = await Database.connect(db, create=bool(create))
    except DatabaseOpenError as exc:
        if create is not False or not exc.creatable:
            raise  # or --create would not help
        raise DatabaseOpenError(
            f"{exc}; this command creates no database: add --create to create (or upgrade)"
            f" it, or run actorscope migrate --db {db}"
        ) from None
    try:
        yield database
    finally:
        await database.close()


def console_for_tables() -> Console:
    """A console for wide tables: ``COLUMNS``, else the terminal's width, else 400 (piped)."""
    console = Console(emoji=False, highlight=False)  # rich reads COLUMNS itself
    if not console.is_terminal and not os.environ.get("COLUMNS", "").strip().isdigit():
        console = Console(emoji=False, highlight=False, width=400)
    return console


def cannot_listen(where: str, exc: OSError) -> ConfigError:
    """The one line for an address a server cannot bind (in use, unknown host, no access)."""
    return ConfigError(f"cannot listen on {where}: {exc.strerror or exc}")


#: What the testing kit needs beyond the base install (the ``testing`` extra).
_TESTING_EXTRA = ("pytest", "pytest_asyncio")


def require_testing_extra(command: str) -> None:
    """Import pytest and pytest-asyncio, or raise one :class:`ConfigError` naming the
    ``testing`` extra: ``command`` runs the testing kit, which a base install lacks."""
    try:
        for name in _TESTING_EXTRA:
            importlib.import_module(name)
    except ModuleNotFoundError as exc:
        raise ConfigError(
            f"actorscope {command} runs the testing kit, which needs the testing extra "
            f"({exc.name} is missing): pip install 'actorscope[testing]'"
        ) from None

"""The ``actorscope`` command: one typer app, one error path.

Every command raises :class:`~actorscope.errors.ActorscopeError` (or a typer usage error) for
bad input; :func:`main` turns either into one line on stderr and exit status 2, never a
traceback.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Annotated

import typer
import typer.core
import typer.main
from rich.console import Console

from actorscope._input import shown_path
from actorscope._text import escape_unstorable, has_lone_surrogate
from actorscope._version import __version__
from actorscope.errors import (
    ActorscopeError,
    ConfigError,
    DatabaseNotWritableError,
    DatabaseOpenError,
    SchemaTooNewError,
)
from actorscope.store import Database

__all__ = [
    "COMMAND_ORDER",
    "DEFAULT_DB",
    "CreateOption",
    "DbOption",
    "app",
    "cannot_listen",
    "console_for_tables",
    "database_to_change",
    "main",
    "require_testing_extra",
]

EXIT_BAD_INPUT = 2

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
    except (SchemaTooNewError, DatabaseNotWritableError):
        raise  # --create would not help
    except DatabaseOpenError as exc:
        if create is not False:
            raise
        raise DatabaseOpenError(
            f"{exc}; this command creates no database: add --create to create (or upgrade)"
            f" it, or run actorscope migrate --db {db}"
        ) from None
    try:
        yield database
    finally:
        await database.close()


#: The order ``actorscope --help`` lists commands in: first steps first, then the admin
#: commands, then the tool-facing ones (click would sort them alphabetically).
COMMAND_ORDER: tuple[str, ...] = (
    "demo",
    "run",
    "probe",
    "sandbox",
    "serve",
    "normalize",
    "agents",
    "grants",
    "check",
    "audit",
    "keys",
    "migrate",
    "schema",
    "mcp",
)


class _OrderedGroup(typer.core.TyperGroup):
    """The root group: lists its commands in :data:`COMMAND_ORDER`, any others after them."""

    def list_commands(self, ctx: object) -> list[str]:
        """The command names, in :data:`COMMAND_ORDER`."""
        names = list(self.commands)
        rank = {name: index for index, name in enumerate(COMMAND_ORDER)}
        return sorted(names, key=lambda name: (rank.get(name, len(rank)), name))


app = typer.Typer(
    name="actorscope",
    cls=_OrderedGroup,
    help="Scope and actor identity for chat bots and agent hosts in group chats.",
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


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


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"actorscope {__version__}")
        raise typer.Exit


@app.callback()
def _root(
    version: bool = typer.Option(
        False,
        "--version",
        help="Print the version and exit.",
        callback=_print_version,
        is_eager=True,
    ),
) -> None:
    """Scope and actor identity for chat bots and agent hosts in group chats."""


def _register() -> None:
    """Import the modules that register commands on ``app``.

    Imported here, not at the top, so that each of them can import ``app`` from this module.
    They are light: each command imports its platform libraries, test kit or emulator inside
    its own function, so ``--help``, ``--version`` and ``check`` start without them.
    """
    # Imported for their side effect: each registers its commands on `app`.
    from actorscope.cli import (  # noqa: F401
        _agents,
        _audit,
        _demo,
        _grants,
        _keys,
        _mcp,
        _migrate,
        _normalize,
        _probe,
        _run,
        _sandbox,
        _schema,
        _serve,
    )


def _error(message: str) -> None:
    """Print ``message`` as one ``actorscope: error:`` line (newlines folded, printable)."""
    line = escape_unstorable(" ".join(message.split()))
    typer.echo(f"actorscope: error: {line}", err=True)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; return the exit status (bad input: 2, with one line on stderr)."""
    _register()
    command = typer.main.get_command(app)
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        args = ["--help"]
    # Bytes that are not UTF-8 reach Python as lone surrogates, which no database, socket or
    # terminal can take: refuse them here, once, for every command and argument.
    unencodable = [arg for arg in args if has_lone_surrogate(arg)]
    if unencodable:
        _error(f"argument {shown_path(unencodable[0])} is not valid UTF-8 text")
        return EXIT_BAD_INPUT
    try:
        result = command.main(args=args, prog_name="actorscope", standalone_mode=False)
    except typer.Exit as exc:
        return int(exc.exit_code)
    except typer.Abort:
        typer.echo("actorscope: aborted", err=True)
        return 130
    except typer.TyperException as exc:
        # Usage errors (unknown flag, bad value) carry exit code 2; print them on one line.
        _error(exc.format_message())
        return exc.exit_code
    except ConfigError as exc:
        for problem in exc.problems:
            _error(problem)
        return EXIT_BAD_INPUT
    except ActorscopeError as exc:
        _error(str(exc))
        return EXIT_BAD_INPUT
    return result if isinstance(result, int) else 0

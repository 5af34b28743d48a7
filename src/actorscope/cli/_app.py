"""The ``actorscope`` command: one typer app, one error path.

Every command raises :class:`~actorscope.errors.ActorscopeError` (or a typer usage error) for
bad input; :func:`main` turns either into one line on stderr and exit status 2, never a
traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

import typer
import typer.core
import typer.main

from actorscope._input import shown_path
from actorscope._text import escape_unstorable, has_lone_surrogate
from actorscope._version import __version__
from actorscope.cli._agents import agents_app
from actorscope.cli._audit import audit_prune
from actorscope.cli._demo import demo
from actorscope.cli._grants import audit_app, check, grants_app
from actorscope.cli._keys import keys_app
from actorscope.cli._links import links_app
from actorscope.cli._mcp import mcp
from actorscope.cli._migrate import migrate
from actorscope.cli._normalize import normalize
from actorscope.cli._probe import probe_command
from actorscope.cli._run import run
from actorscope.cli._sandbox import sandbox
from actorscope.cli._schema import schema_app
from actorscope.cli._serve import serve
from actorscope.errors import (
    ActorscopeError,
    ConfigError,
)

__all__ = ["COMMANDS", "app", "main"]

EXIT_BAD_INPUT = 2

#: Every command, in the order ``actorscope --help`` lists them: first steps first, then the
#: admin commands, then the tool-facing ones (click would sort them alphabetically). The app
#: registers each from here; no command module imports the app.
COMMANDS: tuple[tuple[str, Callable[..., Any] | typer.Typer], ...] = (
    ("demo", demo),
    ("run", run),
    ("probe", probe_command),
    ("sandbox", sandbox),
    ("serve", serve),
    ("normalize", normalize),
    ("agents", agents_app),
    ("grants", grants_app),
    ("links", links_app),
    ("check", check),
    ("audit", audit_app),
    ("keys", keys_app),
    ("migrate", migrate),
    ("schema", schema_app),
    ("mcp", mcp),
)


class _OrderedGroup(typer.core.TyperGroup):
    """The root group: lists its commands in the order of :data:`COMMANDS`."""

    def list_commands(self, ctx: object) -> list[str]:
        """The command names, in the order of :data:`COMMANDS`."""
        names = list(self.commands)
        rank = {name: index for index, (name, _) in enumerate(COMMANDS)}
        return sorted(names, key=lambda name: (rank.get(name, len(rank)), name))


app = typer.Typer(
    name="actorscope",
    cls=_OrderedGroup,
    help="Scope and actor identity for chat bots and agent hosts in group chats.",
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


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


def _register(root: typer.Typer) -> None:
    """Put every command of :data:`COMMANDS` on ``root`` (and ``audit prune`` under ``audit``)."""
    for name, command in COMMANDS:
        if isinstance(command, typer.Typer):
            root.add_typer(command, name=name)
        else:
            root.command(name)(command)
    audit_app.command("prune")(audit_prune)


_register(app)


def _error(message: str) -> None:
    """Print ``message`` as one ``actorscope: error:`` line (newlines folded, printable)."""
    line = escape_unstorable(" ".join(message.split()))
    typer.echo(f"actorscope: error: {line}", err=True)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; return the exit status (bad input: 2, with one line on stderr)."""
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

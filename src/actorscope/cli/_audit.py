"""``actorscope audit prune --older-than 90d [--export FILE]``: retention of the audit trail."""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Annotated

import typer

from actorscope._input import parse_age, shown_path
from actorscope.cli._common import DEFAULT_DB, DbOption
from actorscope.cli._grants import JsonOpt
from actorscope.errors import ConfigError
from actorscope.permissions import AuditEntry, AuditLog
from actorscope.store import Database

__all__ = ["audit_prune"]


def _create(path: Path) -> IO[str]:
    """A new export file; one ConfigError when it exists or cannot be made."""
    try:
        return path.open("x", encoding="utf-8")
    except FileExistsError:
        raise ConfigError(
            f"--export {shown_path(path)} exists: the export never overwrites; name a new file"
        ) from None
    except OSError as exc:
        raise ConfigError(f"--export {shown_path(path)}: {exc.strerror or exc}") from None


def audit_prune(
    older_than: Annotated[
        str,
        typer.Option(
            "--older-than",
            help="Delete rows older than this age: 90d, 12h or 30m (at least a minute).",
            metavar="AGE",
        ),
    ],
    db: DbOption = DEFAULT_DB,
    export: Annotated[
        Path | None,
        typer.Option(
            "--export",
            help="First write each row it deletes to FILE (a new file), one JSON object a line.",
            metavar="FILE",
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Delete audit rows older than --older-than, oldest first (retention); --export keeps them."""
    try:
        seconds = parse_age(older_than)
    except ValueError as exc:
        raise ConfigError(f"--older-than {exc}") from None
    before = Database.utc_at(time.time() - seconds)

    async def run() -> int:
        async with Database.open(db, create=False) as database:
            if export is None:
                return await AuditLog(database).prune(before)
            with _create(export) as sink:

                def write(entries: Sequence[AuditEntry]) -> None:
                    for entry in entries:
                        sink.write(json.dumps(entry.as_dict(), sort_keys=True) + "\n")
                    sink.flush()
                    os.fsync(sink.fileno())  # on disk before the batch's delete commits

                return await AuditLog(database).prune(before, export=write)

    pruned = asyncio.run(run())
    if as_json:
        shown = None if export is None else str(export)
        typer.echo(json.dumps({"pruned": pruned, "before": before, "export": shown}))
        return
    where = "" if export is None else f"; exported to {shown_path(export)}"
    typer.echo(f"pruned {pruned} audit rows created before {before}{where}")

"""``actorscope migrate``: bring a database's schema up to this actorscope's."""

from __future__ import annotations

import asyncio
import json
from typing import Annotated

import typer

from actorscope.cli._common import DEFAULT_DB, DbOption
from actorscope.store import Database

__all__ = ["migrate"]


def migrate(
    db: DbOption = DEFAULT_DB,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON object.")] = False,
) -> None:
    """Create the database, or apply its pending migrations; print its schema version."""

    async def run() -> tuple[str, int]:
        async with Database.open(db) as database:
            return database.path, database.schema_version

    path, version = asyncio.run(run())
    if as_json:
        typer.echo(json.dumps({"db": path, "schema_version": version}))
    else:
        typer.echo(f"{path}: schema version {version}")

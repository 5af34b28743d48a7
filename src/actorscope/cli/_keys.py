"""``actorscope keys add|list|revoke``: HTTP API keys (the key is printed once, never stored)."""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any

import typer

from actorscope.cli._common import (
    DEFAULT_DB,
    CreateOption,
    DbOption,
    console_for_tables,
    database_to_change,
)
from actorscope.store import Database

__all__ = ["keys_add", "keys_list", "keys_revoke"]

keys_app = typer.Typer(help="HTTP API keys (actorscope serve).", add_completion=False)

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]
_LIST_COLUMNS = ("prefix", "user_id", "role", "agent_id", "created_at", "last_used_at", "state")


@keys_app.command("add")
def keys_add(
    tenant: Annotated[str, typer.Option("--tenant", help="Tenant slug or UUID.", metavar="SLUG")],
    user: Annotated[
        str, typer.Option("--user", help="The HTTP user id the key acts as.", metavar="USER")
    ],
    role: Annotated[
        str,
        typer.Option("--role", help="owner, admin, operator, viewer or member.", metavar="ROLE"),
    ],
    agent: Annotated[
        str | None, typer.Option("--agent", help="Only this agent (key or UUID).", metavar="AGENT")
    ] = None,
    db: DbOption = DEFAULT_DB,
    create: CreateOption = False,
    as_json: JsonOpt = False,
) -> None:
    """Create a key and print it once (it is stored only as a hash)."""
    from actorscope.http import ApiKeyStore

    ApiKeyStore.parse_role(role)

    async def run() -> dict[str, Any]:
        async with database_to_change(db, create=create) as database:
            created = await ApiKeyStore(database).add(
                tenant=tenant, user_id=user, role=role, agent=agent
            )
        return {**created.record.as_dict(), "key": created.key}

    row = asyncio.run(run())
    if as_json:
        typer.echo(json.dumps(row, sort_keys=True))
        return
    typer.echo(row["key"])
    typer.echo(
        f"key {row['prefix']} for user {row['user_id']!r} as {row['role']}: shown once, "
        "keep it now",
        err=True,
    )


@keys_app.command("list")
def keys_list(
    db: DbOption = DEFAULT_DB,
    tenant: Annotated[
        str | None,
        typer.Option("--tenant", help="Only this tenant (slug or UUID).", metavar="SLUG"),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """List keys without their secrets; reads only."""
    from actorscope.http import ApiKeyStore

    async def run() -> list[dict[str, Any]]:
        async with Database.open(db, create=False) as database:
            return [key.as_dict() for key in await ApiKeyStore(database).list(tenant)]

    rows = asyncio.run(run())
    if as_json:
        typer.echo(json.dumps(rows, sort_keys=True))
        return
    from rich.table import Table
    from rich.text import Text

    table = Table(title="API keys")
    for column in _LIST_COLUMNS:
        table.add_column(column, overflow="fold")
    for row in rows:
        state = "revoked" if row["revoked_at"] else "active"
        cells = [str(row[c] or "") for c in _LIST_COLUMNS[:-1]]
        table.add_row(*(Text(cell) for cell in [*cells, state]))
    console_for_tables().print(table)


@keys_app.command("revoke")
def keys_revoke(
    key: Annotated[
        str, typer.Argument(help="The key's prefix or id (as keys list shows).", metavar="KEY")
    ],
    db: DbOption = DEFAULT_DB,
    as_json: JsonOpt = False,
) -> None:
    """Revoke a key: it is refused from its next request on."""
    from actorscope.http import ApiKeyStore

    async def run() -> dict[str, Any]:
        async with database_to_change(db) as database:
            return (await ApiKeyStore(database).revoke(key)).as_dict()

    row = asyncio.run(run())
    if as_json:
        typer.echo(json.dumps(row, sort_keys=True))
    else:
        typer.echo(f"revoked key {row['prefix']} of user {row['user_id']!r}")

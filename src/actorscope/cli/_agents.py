"""``actorscope agents add|list|rename|remove``: agents of a tenant, named by key or UUID."""

from __future__ import annotations

import asyncio
import functools
import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from actorscope._input import is_uuid
from actorscope.agents import AgentRegistry
from actorscope.cli._common import (
    DEFAULT_DB,
    CreateOption,
    DbOption,
    console_for_tables,
    database_to_change,
)
from actorscope.store import Database

__all__ = ["add", "list_agents", "remove", "rename"]

agents_app = typer.Typer(
    help="Agents: UUIDs for the system, keys for people.", add_completion=False
)

TenantOption = Annotated[str, typer.Option("--tenant", help="Tenant slug or UUID.", metavar="SLUG")]
AgentArgument = Annotated[str, typer.Argument(help="The agent's key or UUID.", metavar="AGENT")]
WorkspaceOption = Annotated[
    Path | None,
    typer.Option(
        "--workspace",
        help="Workspace root (as given to `actorscope mcp` or a bot's config) whose agent "
        "directory follows the change: moved on rename, archived on remove.",
        metavar="DIR",
    ),
]


def _follow(registry: AgentRegistry, workspace: Path | None) -> None:
    """Let the workspace at ``workspace`` (if given) follow ``registry``'s renames and removes."""
    if workspace is None:
        return
    from actorscope.tools import Workspace

    # A plain function is held strongly (a bound method would be held weakly and vanish).
    registry.subscribe(functools.partial(Workspace.on_agent_changed, Workspace(workspace)))


JsonOption = Annotated[bool, typer.Option("--json", help="Print a JSON object.")]


def _echo(row: dict[str, str], verb: str, as_json: bool) -> None:
    """One agent change: a JSON object, or ``<verb> key@tenant id=UUID``."""
    if as_json:
        typer.echo(json.dumps(row, sort_keys=True))
    else:
        label = AgentRegistry.label(row["key"], row["tenant"])
        before = f"{row['previous_key']} -> " if "previous_key" in row else ""
        typer.echo(f"{verb} {before}{label} id={row['id']}")


def _row(agent_id: str, key: str, tenant: str, display_name: str) -> dict[str, str]:
    """An agent as the JSON object of every agents command."""
    return {"id": agent_id, "key": key, "tenant": tenant, "display_name": display_name}


@agents_app.command("add")
def add(
    key: Annotated[
        str, typer.Argument(help="The new agent's key, unique in its tenant.", metavar="KEY")
    ],
    db: DbOption = DEFAULT_DB,
    tenant: TenantOption = Database.DEFAULT_TENANT_SLUG,
    display_name: Annotated[
        str, typer.Option("--display-name", help="A name for UIs.", metavar="NAME")
    ] = "",
    create_tenant: Annotated[
        bool, typer.Option("--create-tenant", help="Create the --tenant slug if it is new.")
    ] = False,
    create: CreateOption = False,
    as_json: JsonOption = False,
) -> None:
    """Create an agent and print its key@tenant and UUID."""

    async def run() -> dict[str, str]:
        async with database_to_change(db, create=create) as database:
            registry = AgentRegistry(database)
            known = {t.slug for t in await registry.tenants()}
            if create_tenant and tenant not in known and not is_uuid(tenant, canonical=False):
                await registry.create_tenant(tenant)
            owner = await registry.tenant(tenant)
            agent = await registry.create(key, owner.id, display_name=display_name)
            return _row(agent.id, agent.key, owner.slug, agent.display_name)

    _echo(asyncio.run(run()), "added", as_json)


@agents_app.command("list")
def list_agents(
    db: DbOption = DEFAULT_DB,
    tenant: Annotated[
        str | None,
        typer.Option("--tenant", help="Only this tenant (slug or UUID).", metavar="SLUG"),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON list.")] = False,
) -> None:
    """List live agents (of every tenant unless --tenant); JSON: id, key, tenant, display_name."""

    async def run() -> list[dict[str, str]]:
        async with Database.open(db, create=False) as database:
            registry = AgentRegistry(database)
            slugs = {t.id: t.slug for t in await registry.tenants()}
            agents = await registry.list(tenant)
        rows = [_row(a.id, a.key, slugs[a.tenant_id], a.display_name) for a in agents]
        return sorted(rows, key=lambda r: (r["tenant"], r["key"]))

    rows = asyncio.run(run())
    if as_json:
        typer.echo(json.dumps(rows))
        return
    table = Table(title="agents")
    for column in ("tenant", "key", "id", "display name"):
        table.add_column(column, overflow="fold")
    for row in rows:
        cells = (row["tenant"], row["key"], row["id"], row["display_name"])
        table.add_row(*(Text(cell) for cell in cells))
    console_for_tables().print(table)


@agents_app.command("rename")
def rename(
    agent: AgentArgument,
    new_key: Annotated[str, typer.Argument(help="The new key.", metavar="KEY")],
    db: DbOption = DEFAULT_DB,
    tenant: TenantOption = Database.DEFAULT_TENANT_SLUG,
    workspace: WorkspaceOption = None,
    as_json: JsonOption = False,
) -> None:
    """Give an agent a new key; its UUID and everything that references it stay."""

    async def run() -> dict[str, str]:
        async with database_to_change(db) as database:
            registry = AgentRegistry(database)
            _follow(registry, workspace)
            owner = await registry.tenant(tenant)
            before = await registry.resolve(agent, owner.id)
            after = await registry.rename(before.id, new_key, owner.id)
            row = _row(after.id, after.key, owner.slug, after.display_name)
            return {**row, "previous_key": before.key}

    _echo(asyncio.run(run()), "renamed", as_json)


@agents_app.command("remove")
def remove(
    agent: AgentArgument,
    db: DbOption = DEFAULT_DB,
    tenant: TenantOption = Database.DEFAULT_TENANT_SLUG,
    purge: Annotated[
        bool,
        typer.Option("--purge", help="Delete the row and every row that references it."),
    ] = False,
    workspace: WorkspaceOption = None,
    as_json: JsonOption = False,
) -> None:
    """Remove an agent (soft delete: its key becomes free; --purge deletes it for good)."""

    async def run() -> dict[str, str]:
        async with database_to_change(db) as database:
            registry = AgentRegistry(database)
            _follow(registry, workspace)
            owner = await registry.tenant(tenant)
            gone = await registry.remove(agent, owner.id, purge=purge)
            return _row(gone.id, gone.key, owner.slug, gone.display_name)

    _echo(asyncio.run(run()), "purged" if purge else "removed", as_json)

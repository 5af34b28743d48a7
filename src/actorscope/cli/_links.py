"""``actorscope links add|remove|list|show``: an operator's view of persons and their accounts.

An operator links accounts (audited with ``--by``) and unlinks them; ``list`` and ``show``
only read (a missing database is an error, nothing is created). A person proves a link of
its own with a link code in a direct chat (docs/design.md, "Persons and links").
"""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from actorscope.cli._common import (
    DEFAULT_DB,
    CreateOption,
    DbOption,
    console_for_tables,
    database_to_change,
)
from actorscope.errors import IdentityError, NotFoundError
from actorscope.identity import Scope
from actorscope.permissions import Link, LinkStore
from actorscope.store import Database

__all__ = ["links_add", "links_app", "links_list", "links_remove", "links_show"]

links_app = typer.Typer(
    help="Persons and their linked accounts (telegram:42, discord:..., http:alice).",
    add_completion=False,
)

TenantOpt = Annotated[str, typer.Option("--tenant", help="Tenant slug or UUID.", metavar="SLUG")]
ByOpt = Annotated[str, typer.Option("--by", help="Who makes the change (audit).", metavar="NAME")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]
_COLUMNS = ("person", "account", "via", "linked_by", "created_at")


def _rows(found: list[Link]) -> list[dict[str, str]]:
    return [link.as_dict() for link in found]


def _print(title: str, rows: list[dict[str, str]], as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps(rows, sort_keys=True))
        return
    table = Table(title=title)
    for column in _COLUMNS:
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*(Text(row[column]) for column in _COLUMNS))
    console_for_tables().print(table)


@links_app.command("add")
def links_add(
    accounts: Annotated[
        list[str],
        typer.Argument(
            help="Accounts to link to one person, each named once: <platform>:<id>.",
            metavar="ACCOUNT",
        ),
    ],
    db: DbOption = DEFAULT_DB,
    person: Annotated[
        str | None,
        typer.Option("--person", help="Join this person (person:<uuid>).", metavar="PERSON"),
    ] = None,
    tenant: TenantOpt = Database.DEFAULT_TENANT_SLUG,
    by: ByOpt = "cli",
    create: CreateOption = False,
    as_json: JsonOpt = False,
) -> None:
    """Link accounts to one person (a new one, the one they have, or --person); audited."""
    for account in accounts:
        LinkStore.parse_account(account)
    if person is not None:
        LinkStore.parse_person(person)

    async def run() -> list[dict[str, str]]:
        async with database_to_change(db, create=create) as database:
            made = await LinkStore(database).add(accounts, person=person, by=by, tenant=tenant)
            return _rows(made)

    rows = asyncio.run(run())
    if as_json:
        typer.echo(json.dumps(rows, sort_keys=True))
    else:
        names = ", ".join(row["account"] for row in rows)
        typer.echo(f"{rows[0]['person']}: {names}")


@links_app.command("remove")
def links_remove(
    account: Annotated[str, typer.Argument(help="The account to unlink.", metavar="ACCOUNT")],
    db: DbOption = DEFAULT_DB,
    tenant: TenantOpt = Database.DEFAULT_TENANT_SLUG,
    by: ByOpt = "cli",
    as_json: JsonOpt = False,
) -> None:
    """Unlink one account from its person; exit 2 if it is not linked.

    The person keeps its other accounts and its id (removing its last account removes it). A
    person's /unlink in a chat differs: it unlinks every account and removes the person, and a
    new link then makes a new person, so grants to the old person:<uuid> cover no one.
    """
    if account.startswith(Scope.PERSON_PREFIX):
        raise IdentityError(
            f"links remove takes an account (<platform>:<id>), not {account}: remove each of "
            "its accounts (links show lists them), or the person sends /unlink"
        )
    LinkStore.parse_account(account)

    async def run() -> dict[str, Any]:
        async with database_to_change(db) as database:
            removed = await LinkStore(database).remove(account, by=by, tenant=tenant)
            if removed is None:
                raise NotFoundError(f"{account} is not linked to a person in tenant {tenant!r}")
            return {**removed.as_dict(), "removed": True}

    row = asyncio.run(run())
    if as_json:
        typer.echo(json.dumps(row, sort_keys=True))
    else:
        typer.echo(f"unlinked {row['account']} from {row['person']}")


@links_app.command("list")
def links_list(
    db: DbOption = DEFAULT_DB,
    tenant: Annotated[
        str | None,
        typer.Option("--tenant", help="Only this tenant (slug or UUID).", metavar="SLUG"),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """List every link (of one tenant, or all); reads only."""

    async def run() -> list[dict[str, str]]:
        async with Database.open(db, create=False) as database:
            store = LinkStore(database)
            tenant_id = None if tenant is None else await store.tenant_id(tenant)
            return _rows(await store.links(tenant_id=tenant_id))

    _print("links", asyncio.run(run()), as_json)


@links_app.command("show")
def links_show(
    who: Annotated[
        str,
        typer.Argument(help="An account (<platform>:<id>) or a person:<uuid>.", metavar="WHO"),
    ],
    db: DbOption = DEFAULT_DB,
    tenant: TenantOpt = Database.DEFAULT_TENANT_SLUG,
    as_json: JsonOpt = False,
) -> None:
    """Show a person and every account it owns (named by one of them); reads only."""
    is_person = who.startswith(Scope.PERSON_PREFIX)
    if is_person:
        LinkStore.parse_person(who)
    else:
        LinkStore.parse_account(who)

    async def run() -> list[dict[str, str]]:
        async with Database.open(db, create=False) as database:
            store = LinkStore(database)
            tenant_id = await store.tenant_id(tenant)
            person = who if is_person else await store.person_of(who, tenant_id)
            found = (
                [] if person is None else await store.links(tenant_id=tenant_id, person_id=person)
            )
            if not found:
                if is_person:
                    raise NotFoundError(f"no person {who} in tenant {tenant!r}")
                raise NotFoundError(f"{who} is not linked to a person in tenant {tenant!r}")
            return _rows(found)

    rows = asyncio.run(run())
    _print(rows[0]["person"], rows, as_json)

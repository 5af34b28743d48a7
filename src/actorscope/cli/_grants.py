"""``actorscope grants add|remove|list``, ``actorscope check`` and ``actorscope audit``."""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from actorscope.agents import Agent, AgentRegistry
from actorscope.cli._common import (
    DEFAULT_DB,
    CreateOption,
    DbOption,
    console_for_tables,
    database_to_change,
)
from actorscope.errors import ConfigError, NotFoundError
from actorscope.identity import Identity, PeerKind, Scope
from actorscope.permissions import ConfigType, GrantStore, Permission, PermissionPolicy
from actorscope.store import Database

__all__ = ["audit", "audit_app", "check", "grants_add", "grants_list", "grants_remove"]

#: The most rows ``audit --limit`` asks for (a database integer holds far more; a typo must not).
MAX_AUDIT_ROWS = 1_000_000
#: The columns of ``actorscope audit``'s table, named as in its JSON and the database.
AUDIT_COLUMNS = (
    "created_at",
    "action",
    "sender_id",
    "permission",
    "reason",
    "scope",
    "config_type",
    "actor",
    "agent_id",
)

grants_app = typer.Typer(help="Permission grants of an agent.", add_completion=False)

AgentOpt = Annotated[str, typer.Option("--agent", help="Agent key or UUID.", metavar="AGENT")]
TenantOpt = Annotated[str, typer.Option("--tenant", help="Tenant slug or UUID.", metavar="SLUG")]
FilterTenantOpt = Annotated[
    str | None,
    typer.Option(
        "--tenant",
        help="Only this tenant (slug or UUID); also the tenant of --agent.",
        metavar="SLUG",
    ),
]
ScopeOpt = Annotated[
    str,
    typer.Option("--scope", help="Exact scope, '*', or a prefix ending in ':*'.", metavar="SCOPE"),
]
SenderOpt = Annotated[
    str,
    typer.Option(
        "--sender",
        help="The sender id (actor) the grant is for, a person:<uuid>, or '*'.",
        metavar="ID",
    ),
]
TypeOpt = Annotated[
    str,
    typer.Option(
        "--type", help="file_writer, cron, heartbeat, context_files or '*'.", metavar="TYPE"
    ),
]
DenyOpt = Annotated[bool, typer.Option("--deny", help="A deny grant instead of an allow.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]

#: The roles ``check --role`` takes: none, or one that bypasses grants.
KNOWN_ROLES: tuple[str, ...] = ("", *sorted(PermissionPolicy.BYPASS_ROLES))
#: ``check --exit-code``: the status of a denied check.
EXIT_DENIED = 1


async def _agent(db: Database, key_or_uuid: str, tenant: str) -> Agent:
    return await AgentRegistry(db).resolve(key_or_uuid, tenant)


async def _filters(
    db: Database, agent: str | None, tenant: str | None
) -> tuple[str | None, str | None]:
    """(agent UUID, tenant UUID) to filter by; NotFoundError for an unknown agent or tenant."""
    tenant_id = None if tenant is None else (await AgentRegistry(db).tenant(tenant)).id
    if agent is None:
        return None, tenant_id
    return (await _agent(db, agent, tenant or Database.DEFAULT_TENANT_SLUG)).id, tenant_id


def _table(title: str, columns: tuple[str, ...], rows: list[tuple[str, ...]]) -> None:
    table = Table(title=title)
    for column in columns:
        table.add_column(column, overflow="fold")
    for row in rows:
        # Text(), not str: scopes like "group:x:*" must never be read as rich markup.
        table.add_row(*(Text(cell) for cell in row))
    console_for_tables().print(table)


@grants_app.command("add")
def grants_add(
    agent: AgentOpt,
    scope: ScopeOpt,
    sender: SenderOpt,
    config_type: TypeOpt,
    db: DbOption = DEFAULT_DB,
    deny: DenyOpt = False,
    tenant: TenantOpt = Database.DEFAULT_TENANT_SLUG,
    granted_by: Annotated[
        str, typer.Option("--by", help="Who grants (audit).", metavar="NAME")
    ] = "cli",
    create: CreateOption = False,
    as_json: JsonOpt = False,
) -> None:
    """Grant (or, with --deny, deny) a config type to a sender in a scope; replaces any grant."""
    GrantStore.validate(scope, config_type, sender)
    permission = Permission.DENY if deny else Permission.ALLOW

    async def run() -> dict[str, Any]:
        async with database_to_change(db, create=create) as database:
            found = await _agent(database, agent, tenant)
            grant = await GrantStore(database).grant(
                agent_id=found.id,
                scope=scope,
                config_type=config_type,
                sender_id=sender,
                permission=permission,
                granted_by=granted_by,
            )
            return {**grant.as_dict(), "agent_key": found.key}

    row = asyncio.run(run())
    if as_json:
        typer.echo(json.dumps(row, sort_keys=True))
    else:
        typer.echo(
            f"{row['permission']} {row['config_type']} for {row['sender_id']} in {row['scope']} "
            f"(agent {row['agent_key']})"
        )


@grants_app.command("remove")
def grants_remove(
    agent: AgentOpt,
    scope: ScopeOpt,
    sender: SenderOpt,
    config_type: TypeOpt,
    db: DbOption = DEFAULT_DB,
    deny: Annotated[bool, typer.Option("--deny", help="Remove only if it is a deny.")] = False,
    tenant: TenantOpt = Database.DEFAULT_TENANT_SLUG,
    revoked_by: Annotated[
        str, typer.Option("--by", help="Who revokes (audit).", metavar="NAME")
    ] = "cli",
    as_json: JsonOpt = False,
) -> None:
    """Remove the grant with this agent, scope, sender and type; exit 2 if there is none."""
    grantee = GrantStore.validate(scope, config_type, sender)
    wanted = Permission.DENY if deny else None

    async def run() -> dict[str, Any]:
        async with database_to_change(db) as database:
            found = await _agent(database, agent, tenant)
            store = GrantStore(database)
            current = await store.list(
                agent_id=found.id, scope=scope, config_type=config_type, sender_id=grantee
            )
            if not current or (wanted is not None and current[0].permission != wanted):
                what = f"{wanted} grant" if wanted else "grant"
                raise NotFoundError(
                    f"no {what} of {config_type} for {grantee} in {scope} (agent {found.key})"
                )
            await store.revoke(
                agent_id=found.id,
                scope=scope,
                config_type=config_type,
                sender_id=grantee,
                revoked_by=revoked_by,
            )
            return {**current[0].as_dict(), "agent_key": found.key, "removed": True}

    row = asyncio.run(run())
    if as_json:
        typer.echo(json.dumps(row, sort_keys=True))
    else:
        typer.echo(
            f"removed {row['permission']} {config_type} for {grantee} in {scope} "
            f"(agent {row['agent_key']})"
        )


@grants_app.command("list")
def grants_list(
    db: DbOption = DEFAULT_DB,
    agent: Annotated[
        str | None, typer.Option("--agent", help="Agent key or UUID.", metavar="AGENT")
    ] = None,
    tenant: FilterTenantOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List grants, of one agent or tenant or of every agent; reads only."""

    async def run() -> list[dict[str, Any]]:
        async with Database.open(db, create=False) as database:
            agent_id, tenant_id = await _filters(database, agent, tenant)
            grants = await GrantStore(database).list(agent_id=agent_id, tenant_id=tenant_id)
            return [grant.as_dict() for grant in grants]

    rows = asyncio.run(run())
    if as_json:
        typer.echo(json.dumps(rows, sort_keys=True))
        return
    columns = ("agent_id", "scope", "config_type", "sender_id", "permission", "granted_by")
    _table("grants", columns, [tuple(str(row[c]) for c in columns) for row in rows])


def check(
    agent: AgentOpt,
    scope: Annotated[
        str, typer.Option("--scope", help="The scope (user_id) of the run.", metavar="SCOPE")
    ],
    sender: Annotated[
        str, typer.Option("--sender", help="The actor (sender_id); may be ''.", metavar="ID")
    ],
    config_type: Annotated[
        str,
        typer.Option(
            "--type", help="file_writer, cron, heartbeat or context_files.", metavar="TYPE"
        ),
    ],
    db: DbOption = DEFAULT_DB,
    role: Annotated[
        str,
        typer.Option(
            "--role", help=f"The actor's role: {', '.join(KNOWN_ROLES[1:])}.", metavar="ROLE"
        ),
    ] = "",
    tenant: TenantOpt = Database.DEFAULT_TENANT_SLUG,
    as_json: JsonOpt = False,
    exit_code: Annotated[
        bool, typer.Option("--exit-code", help=f"Exit {EXIT_DENIED} when denied (for scripts).")
    ] = False,
) -> None:
    """Decide one permission check, what-if: writes nothing; exit 0 whatever the decision."""
    ConfigType.parse_check(config_type, scope=scope)
    if role not in KNOWN_ROLES:
        raise ConfigError(
            f"--role must be one of {', '.join(KNOWN_ROLES[1:])} (or left out), not {role!r}"
        )

    async def run() -> tuple[bool, str]:
        async with Database.open(db, create=False) as database:
            found = await _agent(database, agent, tenant)
            identity = Identity(
                user_id=scope,
                sender_id=sender,
                peer_kind=PeerKind.GROUP if Scope.is_group_id(scope) else PeerKind.DIRECT,
                role=role,
                tenant_id=found.tenant_id,
                agent_id=found.id,
            )
            # Here: the bots package loads the platform libraries; --help must not.
            from actorscope.assembly import AgentSettings, assemble

            # A what-if: the agent's own policy, writing no audit row.
            settings = AgentSettings(agent=found.id, tenant=found.tenant_id, audit=False)
            assembly = await assemble(database, settings)
            decision = await assembly.policy.check(config_type, identity)
            return decision.allowed, str(decision.reason)

    allowed, reason = asyncio.run(run())
    if as_json:
        typer.echo(json.dumps({"allowed": allowed, "reason": reason}))
    else:
        typer.echo(f"{'allowed' if allowed else 'denied'} ({reason})")
    if exit_code and not allowed:
        raise typer.Exit(EXIT_DENIED)


audit_app = typer.Typer(add_completion=False, invoke_without_command=True)


@audit_app.callback()
def audit(
    ctx: typer.Context,
    db: DbOption = DEFAULT_DB,
    agent: Annotated[
        str | None, typer.Option("--agent", help="Agent key or UUID.", metavar="AGENT")
    ] = None,
    tenant: FilterTenantOpt = None,
    limit: Annotated[
        int,
        typer.Option(
            "--limit", min=1, max=MAX_AUDIT_ROWS, help="At most this many rows.", metavar="N"
        ),
    ] = 100,
    as_json: JsonOpt = False,
) -> None:
    """Show the audit trail, newest first: grant changes, denials, fail-open allows; reads only.

    `actorscope audit prune` deletes old rows.
    """
    if ctx.invoked_subcommand is not None:
        return

    async def run() -> list[dict[str, Any]]:
        async with Database.open(db, create=False) as database:
            agent_id, tenant_id = await _filters(database, agent, tenant)
            entries = await GrantStore(database).audit.list(
                agent_id=agent_id, tenant_id=tenant_id, limit=limit
            )
            return [entry.as_dict() for entry in entries]

    rows = asyncio.run(run())
    if as_json:
        typer.echo(json.dumps(rows, sort_keys=True))
        return
    _table(
        "audit (sender_id: the sender a check judged, or whom a change is for;"
        " actor: who made a change)",
        AUDIT_COLUMNS,
        [tuple(str(row[c] or "") for c in AUDIT_COLUMNS) for row in rows],
    )

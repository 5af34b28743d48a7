"""``actorscope mcp``: serve the built-in tools over MCP (stdio or streamable HTTP).

The signing key is ``ACTORSCOPE_ORIGIN_KEY`` (the host signs identity tokens with the same
key); without it the server draws a random key, so no token verifies and every call runs with
the empty identity. stdio reads the run's token from ``ACTORSCOPE_IDENTITY_TOKEN`` once at
start-up; HTTP reads the ``X-Actorscope-Identity`` header of each request.

Files live under ``<workspace>/tenants/<tenant UUID>/agents/<key>/``: one server may serve
agents of several tenants, and they never share a directory. A workspace laid out before
tenants (``<workspace>/agents/<key>/``) is adopted on first use by the ``--tenant`` tenant only.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import socket
import stat
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from actorscope._input import shown_path
from actorscope.agents import Agent, AgentRegistry
from actorscope.cli._common import (
    DEFAULT_DB,
    CreateOption,
    DbOption,
    cannot_listen,
    database_to_change,
)
from actorscope.errors import ConfigError
from actorscope.permissions import GrantStore
from actorscope.propagation import OriginSigner
from actorscope.store import Database
from actorscope.tools import IdentityToken, Toolbox, builtin_tools

__all__ = ["Transport", "mcp"]


class Transport(StrEnum):
    """How the MCP server talks to its client."""

    STDIO = "stdio"
    HTTP = "http"


def _signer() -> OriginSigner:
    if os.environ.get(OriginSigner.KEY_ENV) is None:
        typer.echo(
            f"actorscope: warning: {OriginSigner.KEY_ENV} is not set; no identity token can "
            "verify, so every call runs with no scope and no sender",
            err=True,
        )
        return OriginSigner()
    return OriginSigner.from_env()


def _check_workspace(root: Path) -> None:
    """Refuse a workspace root that is not a directory (and cannot become one) up front."""
    try:
        mode = root.stat().st_mode
    except FileNotFoundError:
        return  # created on first write
    except OSError as exc:  # too long, a symlink loop, a file used as a directory
        raise ConfigError(f"--workspace {shown_path(root)}: {exc.strerror or exc}") from None
    if not stat.S_ISDIR(mode):
        raise ConfigError(f"--workspace {shown_path(root)} is not a directory")


def _listen(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port``; ConfigError (one line) if it cannot be had.

    Bound here, before the server starts, so a bad --host or a port in use is the CLI's
    error line rather than the HTTP server's own log line and exit status.
    """
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        return socket.create_server((host, port), family=family)
    except OSError as exc:  # socket.gaierror too: an unknown host
        raise cannot_listen(f"--host {shown_path(host)} --port {port}", exc) from None


async def _serve(
    db_path: str,
    host: str,
    listener: socket.socket | None,
    workspace: Path,
    agent_key: str | None,
    tenant: str,
    create: bool,
) -> None:
    # Imported here: the SDK is the optional `mcp` extra, and every other command must work
    # without it.
    from actorscope.assembly import AgentSettings
    from actorscope.cli._mcp_serve import http_server, serve_stdio
    from actorscope.tools.mcp_server import create_mcp_server

    async with database_to_change(db_path, create=create) as db:
        agents = AgentRegistry(db)
        agent: Agent | None = None
        if agent_key is not None:
            agent = await agents.resolve(agent_key, tenant)
        # Workspaces are per tenant; one laid out before tenants belongs to --tenant's agents.
        owner = await agents.tenant(tenant)
        signer = _signer()  # after --db and --agent: a bad one prints its one error line only
        box = Toolbox.create(
            db,
            # The database's change feed keeps cached decisions within 1 s of any grant change.
            policy=AgentSettings().policy(GrantStore(db)),
            workspace_root=workspace,
            default_agent=agent,
            agents=agents,
            legacy_tenant=owner.id,
        )
        registry = builtin_tools(box)
        if listener is None:  # stdio
            await serve_stdio(create_mcp_server(registry, IdentityToken.from_env(signer)))
        else:
            server = create_mcp_server(registry, signer)
            port = listener.getsockname()[1]
            await http_server(server, host=host, port=port).serve(sockets=[listener])


def mcp(
    db: DbOption = DEFAULT_DB,
    transport: Annotated[
        Transport,
        typer.Option("--transport", help="stdio, or streamable HTTP.", metavar="stdio|http"),
    ] = Transport.STDIO,
    host: Annotated[
        str, typer.Option("--host", help="HTTP bind address.", metavar="HOST")
    ] = "127.0.0.1",
    port: Annotated[
        int, typer.Option("--port", help="HTTP port.", min=0, max=65535, metavar="PORT")
    ] = 8000,
    workspace: Annotated[
        Path | None,
        typer.Option(
            "--workspace",
            help="Workspace root (default: 'workspace' beside the DB).",
            metavar="DIR",
        ),
    ] = None,
    agent: Annotated[
        str | None,
        typer.Option(
            "--agent",
            help="Agent key or UUID for calls whose identity names none.",
            metavar="AGENT",
        ),
    ] = None,
    tenant: Annotated[
        str, typer.Option("--tenant", help="Tenant slug or UUID of --agent.", metavar="SLUG")
    ] = Database.DEFAULT_TENANT_SLUG,
    create: CreateOption = False,
) -> None:
    """Serve the built-in tools (workspace, cron, memory, whoami) over MCP."""
    if importlib.util.find_spec("mcp") is None:
        raise ConfigError("the MCP server needs the mcp extra: pip install 'actorscope[mcp]'")
    # Next to a database file; in the working directory for a database URL.
    beside = Path(".") if "://" in db else Path(db).parent
    root = workspace if workspace is not None else beside / "workspace"
    _check_workspace(root)
    listener = _listen(host, port) if transport is Transport.HTTP else None
    try:
        asyncio.run(_serve(db, host, listener, root, agent, tenant, create))
    finally:
        if listener is not None:
            listener.close()

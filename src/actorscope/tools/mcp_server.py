"""An MCP server for a :class:`~actorscope.tools.ToolRegistry` (extra ``mcp``).

It advertises each tool's flat input schema exactly as built (the low-level SDK server, so
nothing rewrites it) and returns every tool failure as an ``isError`` result with the
structured error as its content. The identity of a call comes from an identity source (a
function of the request context):

- stdio: :func:`stdio_identity`, the :func:`fixed_identity` of the token in
  ``ACTORSCOPE_IDENTITY_TOKEN``, verified once at start-up (one stdio server process serves one
  run);
- streamable HTTP: :func:`header_identity`, the ``X-Actorscope-Identity`` header of each request.

No valid token means the empty identity: the call runs with no scope and no sender, so it can
change nothing in a group. Arguments never supply the actor.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from typing import Any

import mcp_types as types
import uvicorn
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

from actorscope._version import __version__
from actorscope.context import bind_identity
from actorscope.identity import Identity
from actorscope.propagation import OriginSigner
from actorscope.tools._registry import ToolRegistry, ToolResult
from actorscope.tools._token import IDENTITY_HEADER, IDENTITY_TOKEN_ENV, identity_from_token

__all__ = [
    "create_mcp_server",
    "fixed_identity",
    "header_identity",
    "http_server",
    "serve_stdio",
    "stdio_identity",
]

SERVER_NAME = "actorscope"
DEFAULT_HTTP_PATH = "/mcp"

#: Gives the identity a call runs as, from its request context.
_IdentitySource = Callable[[ServerRequestContext[Any, Any]], Identity]


def fixed_identity(identity: Identity) -> _IdentitySource:
    """Every call runs as ``identity`` (stdio: the token verified at start-up)."""

    def source(ctx: ServerRequestContext[Any, Any]) -> Identity:
        return identity

    return source


def stdio_identity(signer: OriginSigner, env: Mapping[str, str] | None = None) -> _IdentitySource:
    """Every call runs as the identity in ``ACTORSCOPE_IDENTITY_TOKEN`` (of ``env``, default the
    process environment), verified now with ``signer``; no valid token is the empty identity."""
    token = (os.environ if env is None else env).get(IDENTITY_TOKEN_ENV)
    return fixed_identity(identity_from_token(token, signer))


def header_identity(signer: OriginSigner, header: str = IDENTITY_HEADER) -> _IdentitySource:
    """Each call runs as the identity in its HTTP request's ``header`` token, if it verifies."""

    def source(ctx: ServerRequestContext[Any, Any]) -> Identity:
        headers = getattr(ctx.request, "headers", None)
        token = headers.get(header) if headers is not None else None
        return identity_from_token(token if isinstance(token, str) else None, signer)

    return source


def _call_result(result: ToolResult) -> types.CallToolResult:
    """A tool result as MCP content: the JSON text, the same object as structured content."""
    text = json.dumps(result.payload, ensure_ascii=False, separators=(",", ":"))
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=result.payload,
        is_error=result.is_error,
    )


def create_mcp_server(
    registry: ToolRegistry, identity: _IdentitySource, *, name: str = SERVER_NAME
) -> Server[Any]:
    """A low-level MCP server serving ``registry``'s tools as ``identity`` says."""
    listing = types.ListToolsResult(
        tools=[
            types.Tool(name=tool.name, description=tool.description, input_schema=tool.input_schema)
            for tool in registry
        ]
    )

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return listing

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        who = identity(ctx)
        with bind_identity(who):
            result = await registry.call(params.name, params.arguments, who)
        return _call_result(result)

    return Server(name, version=__version__, on_list_tools=list_tools, on_call_tool=call_tool)


async def serve_stdio(server: Server[Any]) -> None:
    """Serve over this process's stdin and stdout until the client closes them."""
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def http_server(
    server: Server[Any],
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    path: str = DEFAULT_HTTP_PATH,
) -> uvicorn.Server:
    """A uvicorn server for streamable HTTP at ``http://host:port/path``; ``await .serve()``.

    ``port=0`` takes a free port, or pass pre-bound sockets to ``serve(sockets=...)``.

    Bound to loopback by default; on loopback the SDK also turns on DNS-rebinding protection.
    """
    app = server.streamable_http_app(streamable_http_path=path, host=host)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    return uvicorn.Server(config)

"""An MCP server for a :class:`~actorscope.tools.ToolRegistry` (extra ``mcp``).

It advertises each tool's flat input schema exactly as built (the low-level SDK server, so
nothing rewrites it) and returns every tool failure as an ``isError`` result with the
structured error as its content. Whom a call runs as is the ``identity`` given to
:func:`create_mcp_server`:

- an :class:`~actorscope.identity.Identity`: every call runs as it. Over stdio that is
  ``IdentityToken.from_env(signer)``
  (:meth:`~actorscope.tools.IdentityToken.from_env`), the token in
  ``ACTORSCOPE_IDENTITY_TOKEN`` verified once at start-up (one stdio server process serves
  one run);
- an :class:`~actorscope.propagation.OriginSigner`: each call runs as the identity in the
  ``X-Actorscope-Identity`` header of its HTTP request (streamable HTTP), verified with it.

No valid token means the empty identity: the call runs with no scope and no sender, so it can
change nothing in a group. Arguments never supply the actor. ``actorscope mcp`` serves it over
stdio or streamable HTTP.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import mcp_types as types
from mcp.server import Server, ServerRequestContext

from actorscope._version import __version__
from actorscope.context import bind_identity
from actorscope.errors import ConfigError
from actorscope.identity import Identity
from actorscope.propagation import OriginSigner
from actorscope.tools._registry import ToolRegistry, ToolResult
from actorscope.tools._token import IdentityToken, identity_from_token

__all__ = ["create_mcp_server"]

SERVER_NAME = "actorscope"

#: Gives the identity a call runs as, from its request context.
_IdentitySource = Callable[[ServerRequestContext[Any, Any]], Identity]


def _fixed(identity: Identity) -> _IdentitySource:
    """Every call runs as ``identity`` (stdio: the token verified at start-up)."""

    def source(ctx: ServerRequestContext[Any, Any]) -> Identity:
        return identity

    return source


def _from_header(signer: OriginSigner) -> _IdentitySource:
    """Each call runs as the identity in its HTTP request's identity header, if it verifies."""

    def source(ctx: ServerRequestContext[Any, Any]) -> Identity:
        headers = getattr(ctx.request, "headers", None)
        token = headers.get(IdentityToken.HEADER) if headers is not None else None
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
    registry: ToolRegistry, identity: Identity | OriginSigner, *, name: str = SERVER_NAME
) -> Server[Any]:
    """A low-level MCP server serving ``registry``'s tools.

    ``identity`` is whom every call runs as (an :class:`~actorscope.identity.Identity`), or the
    :class:`~actorscope.propagation.OriginSigner` that verifies each HTTP request's identity
    token (in the header :attr:`~actorscope.tools.IdentityToken.HEADER`); a request
    without a valid one runs as no one.
    """
    if isinstance(identity, Identity):
        source = _fixed(identity)
    elif isinstance(identity, OriginSigner):
        source = _from_header(identity)
    else:
        raise ConfigError(
            "create_mcp_server() takes an Identity (every call runs as it) or an OriginSigner "
            f"(each request's identity token), got {type(identity).__name__}"
        )
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
        who = source(ctx)
        with bind_identity(who):
            result = await registry.call(params.name, params.arguments, who)
        return _call_result(result)

    return Server(name, version=__version__, on_list_tools=list_tools, on_call_tool=call_tool)

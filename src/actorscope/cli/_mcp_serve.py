"""How ``actorscope mcp`` serves an MCP server: over stdio, or streamable HTTP (extra ``mcp``).

Imported only when the command runs: every other command must work without the SDK.
"""

from __future__ import annotations

from typing import Any

import uvicorn
from mcp.server import Server
from mcp.server.stdio import stdio_server

__all__ = ["DEFAULT_HTTP_PATH", "http_server", "serve_stdio"]

DEFAULT_HTTP_PATH = "/mcp"


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

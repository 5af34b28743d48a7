"""The MCP tool boundary against the MCP SDK's own cost of one tools/call, in the same run.

Ours: a ``tools/call`` of ``memory_search`` (and ``whoami``) through an in-process MCP client
session to the actorscope server: identity from a token verified at start-up, ``agent_id``
validated, arguments validated by the input model, an in-memory backend, the JSON result.
Baseline: the same client calling a bare low-level SDK server whose handler returns a constant
result. Goal: <= 1.5x (the boundary adds little to what the protocol already costs). Also the
boundary alone (``ToolRegistry.call``) against the backend call it wraps, and the cost of
verifying an identity token (once per HTTP request).
"""

from __future__ import annotations

import asyncio
import tempfile
from typing import Any

import mcp_types as types
from mcp import Client
from mcp.server import Server, ServerRequestContext

from actorscope.agents import AgentRegistry
from actorscope.identity import Identity
from actorscope.permissions import GrantStore, PermissionPolicy
from actorscope.propagation import OriginSigner
from actorscope.store import Database
from actorscope.tools import IdentityToken, Toolbox, builtin_tools
from actorscope.tools._memory import MemoryEntry, MemoryKey
from actorscope.tools._token import identity_from_token
from actorscope.tools.mcp_server import create_mcp_server
from bench._timing import aper_call, per_call, report

__all__ = ["ListMemory", "main"]


class ListMemory:
    """A memory backend over a list: the benchmark measures the boundary, not SQLite."""

    def __init__(self) -> None:
        self.entries: list[MemoryEntry] = []

    async def add(self, key: MemoryKey, text: str, *, created_by: str) -> MemoryEntry:
        """Append an entry."""
        entry = MemoryEntry(len(self.entries) + 1, key, text, False, created_by, "t", "t")
        self.entries.append(entry)
        return entry

    async def get(self, key: MemoryKey, entry_id: int) -> MemoryEntry:
        """Unused."""
        raise NotImplementedError

    async def update(self, key: MemoryKey, entry_id: int, text: str) -> MemoryEntry:
        """Unused."""
        raise NotImplementedError

    async def forget(self, key: MemoryKey, entry_id: int) -> MemoryEntry:
        """Unused."""
        raise NotImplementedError

    async def set_pinned(self, key: MemoryKey, entry_id: int, pinned: bool) -> MemoryEntry:
        """Unused."""
        raise NotImplementedError

    async def search(self, key: MemoryKey, query: str, limit: int) -> list[MemoryEntry]:
        """Every entry of the key."""
        return [e for e in self.entries if e.key == key][:limit]


def _bare_server() -> Server[Any]:
    result = types.CallToolResult(
        content=[types.TextContent(type="text", text='{"entries":[]}')],
        structured_content={"entries": []},
    )

    listing = types.ListToolsResult(
        tools=[types.Tool(name="memory_search", input_schema={"type": "object"})]
    )

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return listing

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        return result

    return Server("bare", on_list_tools=list_tools, on_call_tool=call_tool)


async def _run() -> None:
    signer = OriginSigner()
    member = Identity.chat("telegram", -1001234567890, 4242, group=True)
    token = IdentityToken.encode(member, signer)
    with tempfile.TemporaryDirectory() as workspace:
        async with Database.open(":memory:") as db:
            agent = await AgentRegistry(db).create("main")
            memory = ListMemory()
            await memory.add(MemoryKey(agent.id, "project", member.user_id), "tea", created_by="1")
            box = Toolbox.create(
                db,
                policy=PermissionPolicy(GrantStore(db)),
                workspace_root=workspace,
                default_agent=agent,
                memory=memory,
            )
            registry = builtin_tools(box)
            search = {"agent_id": "project", "query": "tea"}
            key = MemoryKey(agent.id, "project", member.user_id)
            boundary = await aper_call(
                lambda: registry.call("memory_search", search, member), number=2000
            )
            direct = await aper_call(lambda: memory.search(key, "tea", 10), number=2000)
            ours = create_mcp_server(registry, member)
            async with (
                Client(ours, mode="legacy") as mine,
                Client(_bare_server(), mode="legacy") as bare,
            ):
                for client in (bare, mine, bare):  # warm both up (the listing, the caches)
                    await client.call_tool("memory_search", search)
                await mine.call_tool("whoami", {})
                baseline = await aper_call(
                    lambda: bare.call_tool("memory_search", search), number=500
                )
                searched = await aper_call(
                    lambda: mine.call_tool("memory_search", search), number=500
                )
                whoami = await aper_call(lambda: mine.call_tool("whoami", {}), number=500)
    report("MCP tools/call memory_search", searched, baseline, "bare SDK tools/call", "<= 1.5x")
    report("MCP tools/call whoami", whoami, baseline, "bare SDK tools/call", "<= 1.5x")
    report("boundary: registry.call memory_search", boundary, direct, "backend search alone")
    decode = per_call(lambda: identity_from_token(token, signer))
    report("identity token verify (per HTTP request)", decode, baseline, "bare SDK tools/call")


def main() -> None:
    """Print the ratio lines."""
    asyncio.run(_run())

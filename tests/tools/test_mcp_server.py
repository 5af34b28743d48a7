"""The MCP server: flat schemas on the wire, isError results, and the actor from a signed token."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult, TextContent

from actorscope.agents import Agent, AgentRegistry
from actorscope.cli import main
from actorscope.cli._lint import TARGETS, lint_tool_schema
from actorscope.cli._mcp_serve import http_server
from actorscope.errors import ConfigError
from actorscope.identity import Identity
from actorscope.propagation import OriginSigner
from actorscope.store import Database
from actorscope.tools import IdentityToken, ToolRegistry
from actorscope.tools._strict import to_openai_strict
from actorscope.tools.mcp_server import create_mcp_server

pytestmark = pytest.mark.sqlite_only(
    "the tools' subject is the boundary, not the dialect: test_cron_keys.py and tests/store "
    "run the tools' tables on both"
)

GrantWriter = Callable[[str, str], Awaitable[None]]

KEY = b"s" * 32
CHAT = -100200300
WRITER, MEMBER = "4242", "5151"
GROUP_SCOPE = f"group:telegram:{CHAT}"
MODES = ["legacy", "auto"]


def group(sender: str) -> Identity:
    """A Telegram supergroup member."""
    return Identity.chat("telegram", CHAT, sender, group=True)


def token(identity: Identity, key: bytes = KEY) -> str:
    """The identity token a host holding ``key`` would pass."""
    return IdentityToken.encode(identity, OriginSigner(key))


def payload(result: CallToolResult) -> dict[str, Any]:
    """The JSON object of a tool result (text content and structured content agree)."""
    block = result.content[0]
    assert isinstance(block, TextContent)
    decoded: dict[str, Any] = json.loads(block.text)
    assert decoded == result.structured_content
    return decoded


def stdio_style(registry: ToolRegistry, host_token: str | None) -> Client:
    """An in-process client of a server that verified ``host_token`` at start-up (as stdio does)."""
    env = {} if host_token is None else {"ACTORSCOPE_IDENTITY_TOKEN": host_token}
    server = create_mcp_server(registry, IdentityToken.from_env(OriginSigner(KEY), env))
    return Client(server, mode="legacy")


@pytest.mark.parametrize("mode", MODES)
async def test_tools_list_is_lint_clean_for_every_target(registry: ToolRegistry, mode: str) -> None:
    """The real tools/list is clean for claude and gemini, and for openai-strict once converted."""
    server = create_mcp_server(registry, group(MEMBER))
    async with Client(server, mode=mode) as client:
        listing = await client.list_tools()
    wire = listing.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert [tool["name"] for tool in wire["tools"]] == [tool.name for tool in registry]
    for tool in wire["tools"]:
        assert tool["inputSchema"] == registry.get(tool["name"]).input_schema  # type: ignore[union-attr]
        for target in TARGETS:
            schema = tool["inputSchema"]
            if target == "openai-strict":
                schema = to_openai_strict(schema)
            assert lint_tool_schema(schema, target) == [], (tool["name"], target)


async def test_schema_lint_cli_accepts_the_real_listing_and_flags_a_bad_one(
    registry: ToolRegistry, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`schema lint` passes the served (flat) tools/list for claude and gemini, not openai-strict.

    The flat listing leaves optional properties out of required, which OpenAI strict mode
    rejects (convert with to_openai_strict); a root anyOf makes every target exit 1.
    """
    async with stdio_style(registry, None) as client:
        listing = await client.list_tools()
    wire = listing.model_dump(mode="json", by_alias=True, exclude_none=True)
    good = tmp_path / "tools.json"
    good.write_text(json.dumps({"jsonrpc": "2.0", "id": 1, "result": wire}), encoding="utf-8")
    for target in ("claude", "gemini"):
        assert main(["schema", "lint", str(good), "--target", target]) == 0
    assert main(["schema", "lint", str(good), "--target", "openai-strict"]) == 1
    wire["tools"][0]["inputSchema"]["anyOf"] = [{"required": ["path"], "properties": {}}]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(wire), encoding="utf-8")
    capsys.readouterr()
    assert main(["schema", "lint", str(bad), "--target", "claude"]) == 1
    assert (
        "workspace_write: /anyOf: root-combinator: a root anyOf makes clients drop the tool"
        in capsys.readouterr().out.splitlines()
    )


async def test_memory_tools_advertise_the_identity_rules(registry: ToolRegistry) -> None:
    """agent_id and agent are plain optional strings whose descriptions state the rules."""
    async with stdio_style(registry, None) as client:
        listing = await client.list_tools()
    schema = next(t.input_schema for t in listing.tools if t.name == "memory_reflect")
    assert schema["properties"]["agent_id"]["type"] == "string"
    assert "deprecated" in schema["properties"]["agent"]["description"].lower()
    assert "agent_id wins" in schema["properties"]["agent_id"]["description"]
    assert "agent_id" not in schema.get("required", [])


@pytest.mark.parametrize(
    "arguments",
    [
        {},
        {"sender_id": WRITER},
        {"agent_id": WRITER},
        {"agent": WRITER, "user_id": WRITER},
    ],
)
async def test_group_non_writer_cannot_write_whatever_ids_the_arguments_hold(
    registry: ToolRegistry, grant_writer: GrantWriter, arguments: dict[str, str]
) -> None:
    """A member's token in a group: workspace_write is an isError result, file untouched."""
    await grant_writer(GROUP_SCOPE, WRITER)
    async with stdio_style(registry, token(group(MEMBER))) as client:
        result = await client.call_tool(
            "workspace_write", {"path": "notes.md", "content": "x", **arguments}
        )
        check = await client.call_tool("workspace_read", {"path": "notes.md"})
    assert result.is_error is True
    assert payload(result)["error"]["code"] in ("permission_denied", "invalid_arguments")
    assert payload(check)["error"]["code"] == "not_found"


async def test_group_writer_can_write(registry: ToolRegistry, grant_writer: GrantWriter) -> None:
    """The writer's token in the same group: the write succeeds."""
    await grant_writer(GROUP_SCOPE, WRITER)
    async with stdio_style(registry, token(group(WRITER))) as client:
        result = await client.call_tool("workspace_write", {"path": "n.md", "content": "hi"})
        read = await client.call_tool("workspace_read", {"path": "n.md"})
    assert result.is_error is False
    assert payload(read)["content"] == "hi"


async def test_same_call_from_a_direct_chat_is_allowed(registry: ToolRegistry) -> None:
    """The member's DM token: no grant is needed outside groups."""
    dm = Identity.chat("telegram", MEMBER, MEMBER, group=False)
    async with stdio_style(registry, token(dm)) as client:
        result = await client.call_tool("workspace_write", {"path": "n.md", "content": "hi"})
    assert result.is_error is False


@pytest.mark.parametrize(
    "host_token",
    [
        None,
        token(group(WRITER), key=b"f" * 32),
        token(group(MEMBER)).replace(".", ".x", 1),
        "ast1.e30.1." + "0" * 64,
    ],
    ids=["missing", "other-key", "tampered", "junk"],
)
async def test_missing_or_forged_token_is_denied(
    registry: ToolRegistry, grant_writer: GrantWriter, host_token: str | None
) -> None:
    """Without a valid token the call has no scope and no sender: nothing is written."""
    await grant_writer(GROUP_SCOPE, WRITER)
    async with stdio_style(registry, host_token) as client:
        result = await client.call_tool("workspace_write", {"path": "n.md", "content": "x"})
        who = await client.call_tool("whoami", {})
    assert result.is_error is True
    assert payload(result)["error"]["code"] == "no_scope"
    assert (payload(who)["user_id"], payload(who)["sender_id"]) == ("", "")


@pytest.mark.parametrize("value", [None, 0, True, {}, [], "", " \t\r\n", "\u2003\u00a0"], ids=repr)
async def test_invalid_namespace_is_an_is_error_result_over_mcp(
    registry: ToolRegistry, value: Any
) -> None:
    """Through the wire, a bad agent_id beside a good agent is an isError naming agent_id."""
    async with stdio_style(registry, token(group(MEMBER))) as client:
        result = await client.call_tool(
            "memory_reflect", {"action": "add", "agent_id": value, "agent": "p", "text": "t"}
        )
        search = await client.call_tool("memory_search", {"agent": "p"})
    assert result.is_error is True
    assert payload(result)["error"]["field"] == "agent_id"
    assert payload(search)["entries"] == []


@pytest.fixture
async def http_url(
    registry: ToolRegistry, serve_on_loopback: Callable[..., Any]
) -> AsyncIterator[str]:
    """The built-in tools served over streamable HTTP on a loopback port of this process."""
    server = http_server(create_mcp_server(registry, OriginSigner(KEY)), host="127.0.0.1", port=0)
    async with serve_on_loopback(server) as port:
        yield f"http://127.0.0.1:{port}/mcp"


async def _http_call(url: str, host_token: str | None, name: str, args: dict[str, Any]) -> Any:
    headers = {IdentityToken.HEADER: host_token} if host_token is not None else {}
    async with (
        httpx2.AsyncClient(headers=headers) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        return payload(await client.call_tool(name, args))


def test_a_server_needs_an_identity_or_a_signer(registry: ToolRegistry) -> None:
    """create_mcp_server refuses an identity that is neither an Identity nor an OriginSigner."""
    with pytest.raises(ConfigError, match=r"an Identity .* or an OriginSigner"):
        create_mcp_server(registry, "X-Actorscope-Identity")  # type: ignore[arg-type]


async def test_streamable_http_reads_the_identity_header(
    http_url: str, grant_writer: GrantWriter
) -> None:
    """Over real loopback HTTP each request's header decides: writer yes, member no, forged no."""
    await grant_writer(GROUP_SCOPE, WRITER)
    args = {"path": "n.md", "content": "x"}
    with anyio.fail_after(20):
        writer = await _http_call(http_url, token(group(WRITER)), "workspace_write", args)
        member = await _http_call(http_url, token(group(MEMBER)), "workspace_write", args)
        forged = await _http_call(
            http_url, token(group(WRITER), key=b"f" * 32), "workspace_write", args
        )
        anonymous = await _http_call(http_url, None, "whoami", {})
    assert writer == {"path": "n.md", "bytes": 1}
    assert member["error"]["reason"] == "no_grant"
    assert forged["error"]["code"] == "no_scope"
    assert anonymous["sender_id"] == ""


async def test_tokens_of_two_tenants_agents_named_main_reach_separate_files(
    db: Database, agent: Agent, registry: ToolRegistry
) -> None:
    """Over MCP, acme's main (its token names its UUID and tenant) cannot read default's main."""
    agents = AgentRegistry(db)
    acme = await agents.create("main", tenant=(await agents.create_tenant("acme")).slug)
    me = Identity.chat("telegram", 4242, 4242, group=False)
    as_default = replace(me, agent_id=agent.id, tenant_id=agent.tenant_id)
    as_acme = replace(me, agent_id=acme.id, tenant_id=acme.tenant_id)
    async with stdio_style(registry, token(as_default)) as client:
        await client.call_tool("workspace_write", {"path": "n.md", "content": "default's"})
    async with stdio_style(registry, token(as_acme)) as client:
        peek = payload(await client.call_tool("workspace_read", {"path": "n.md"}))
        assert peek["error"]["code"] == "not_found"
        await client.call_tool("workspace_write", {"path": "n.md", "content": "acme's"})
    async with stdio_style(registry, token(as_default)) as client:
        own = payload(await client.call_tool("workspace_read", {"path": "n.md"}))
    assert own["content"] == "default's"

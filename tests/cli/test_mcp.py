"""``actorscope mcp``: registered, clean errors, and a real stdio server process end to end."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp_types import TextContent

from actorscope.agents import AgentRegistry
from actorscope.cli import main
from actorscope.identity import Identity
from actorscope.propagation import OriginSigner
from actorscope.store import Database
from actorscope.tools import IdentityToken

KEY = "k" * 32


def test_mcp_command_is_registered(capsys: pytest.CaptureFixture[str]) -> None:
    """`actorscope mcp --help` lists the transport, host, port, workspace and agent options."""
    assert main(["mcp", "--help"]) == 0
    out = capsys.readouterr().out
    for option in ("--db", "--transport", "--host", "--port", "--workspace", "--agent"):
        assert option in out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--agent", "ghost"], "no agent 'ghost'"),
        (["--transport", "carrier-pigeon"], "carrier-pigeon"),
        (["--port", "70000"], "--port"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    message: str,
) -> None:
    """An unknown agent or a bad option: one error line on stderr, exit 2, no traceback."""
    monkeypatch.setenv("ACTORSCOPE_ORIGIN_KEY", KEY)
    argv = ["mcp", "--db", str(tmp_path / "t.db"), "--create", *extra]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith("actorscope: error:")
    assert message in err


def test_missing_extra_is_a_clean_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without the mcp package the command says which extra to install, and exits 2."""
    real = importlib.util.find_spec

    def without_mcp(name: str, package: str | None = None) -> Any:
        return None if name == "mcp" else real(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", without_mcp)
    assert main(["mcp", "--db", str(tmp_path / "t.db")]) == 2
    assert "actorscope[mcp]" in capsys.readouterr().err
    assert not (tmp_path / "t.db").exists()


def _text(result: Any) -> dict[str, Any]:
    block = result.content[0]
    assert isinstance(block, TextContent)
    decoded: dict[str, Any] = json.loads(block.text)
    return decoded


async def test_stdio_server_process_acts_as_the_token_identity(tmp_path: Path) -> None:
    """A spawned stdio server verifies the env token: whoami is the token's, group writes denied."""
    db_path = tmp_path / "t.db"
    async with Database.open(db_path) as db:
        await AgentRegistry(db).create("main")
    member = Identity.chat("telegram", -100200300, 5151, group=True)
    token = IdentityToken.encode(member, OriginSigner(KEY.encode()))
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "actorscope", "mcp", "--db", str(db_path), "--agent", "main"],
        env={"ACTORSCOPE_ORIGIN_KEY": KEY, "ACTORSCOPE_IDENTITY_TOKEN": token},
        cwd=str(tmp_path),
    )
    with anyio.fail_after(60):
        async with Client(params) as client:
            listing = await client.list_tools()
            who = await client.call_tool("whoami", {})
            write = await client.call_tool(
                "workspace_write", {"path": "n.md", "content": "x", "sender_id": "1"}
            )
            denied = await client.call_tool("workspace_write", {"path": "n.md", "content": "x"})
    assert len(listing.tools) == 8
    assert (_text(who)["user_id"], _text(who)["sender_id"]) == (member.user_id, "5151")
    assert write.is_error is True
    assert denied.is_error is True
    assert _text(denied)["error"]["reason"] == "no_grant"
    assert not (tmp_path / "workspace").exists() or not any((tmp_path / "workspace").rglob("n.md"))


async def test_stdio_server_adopts_a_workspace_laid_out_before_tenants(tmp_path: Path) -> None:
    """Files under <workspace>/agents/main/ are the --tenant's main's files after the upgrade."""
    db_path = tmp_path / "t.db"
    async with Database.open(db_path) as db:
        await AgentRegistry(db).create("main")
    direct = Identity.chat("telegram", 4242, 4242, group=False)
    legacy = tmp_path / "workspace" / "agents" / "main" / "4242" / "n.md"
    legacy.parent.mkdir(parents=True)
    legacy.write_text("from before tenants", encoding="utf-8")
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "actorscope", "mcp", "--db", str(db_path), "--agent", "main"],
        env={
            "ACTORSCOPE_ORIGIN_KEY": KEY,
            "ACTORSCOPE_IDENTITY_TOKEN": IdentityToken.encode(direct, OriginSigner(KEY.encode())),
        },
        cwd=str(tmp_path),
    )
    with anyio.fail_after(60):
        async with Client(params) as client:
            read = await client.call_tool("workspace_read", {"path": "n.md"})
    assert _text(read) == {"path": "n.md", "content": "from before tenants"}
    assert not legacy.exists()
    (moved,) = (tmp_path / "workspace" / "tenants").glob("*/agents/main/4242/n.md")
    assert moved.read_text(encoding="utf-8") == "from before tenants"

"""``actorscope agents add|list|rename|remove``: keys or UUIDs, tenant slugs, one-line errors."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path

import pytest

from actorscope.agents import AgentRegistry
from actorscope.cli import main
from actorscope.store import Database


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run the CLI; return exit status, stdout and stderr."""
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def listed(capsys: pytest.CaptureFixture[str], db: Path, *extra: str) -> list[dict[str, str]]:
    """`agents list --json` parsed."""
    status, out, err = run(capsys, "agents", "list", "--db", str(db), "--json", *extra)
    assert (status, err) == (0, "")
    rows = json.loads(out)
    assert isinstance(rows, list)
    return rows


def create_tenant(db: Path, slug: str) -> None:
    """Create a tenant directly through the registry."""

    async def go() -> None:
        async with Database.open(db) as database:
            await AgentRegistry(database).create_tenant(slug)

    asyncio.run(go())


def test_add_then_list_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """add prints key@tenant and the UUID; list --json shows id, key, tenant, display_name."""
    db = tmp_path / "a.db"
    status, out, err = run(
        capsys, "agents", "add", "--db", str(db), "--create", "bot", "--display-name", "B"
    )
    assert (status, err) == (0, "")
    assert out.startswith("added bot@default id=")
    agent_id = out.strip().rsplit("=", 1)[1]
    assert str(uuid.UUID(agent_id)) == agent_id
    assert listed(capsys, db) == [
        {"id": agent_id, "key": "bot", "tenant": "default", "display_name": "B"}
    ]


def test_same_key_in_two_tenants(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The same key can be added to two tenants; --tenant filters the list."""
    db = tmp_path / "a.db"
    create_tenant(db, "acme")
    assert run(capsys, "agents", "add", "--db", str(db), "--create", "bot")[0] == 0
    status, out, _ = run(
        capsys, "agents", "add", "--db", str(db), "--create", "bot", "--tenant", "acme"
    )
    assert status == 0
    assert out.startswith("added bot@acme id=")
    rows = listed(capsys, db)
    assert [(r["tenant"], r["key"]) for r in rows] == [("acme", "bot"), ("default", "bot")]
    assert rows[0]["id"] != rows[1]["id"]
    assert [r["tenant"] for r in listed(capsys, db, "--tenant", "acme")] == ["acme"]


def test_create_tenant_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--create-tenant makes a new tenant slug; without it an unknown slug is an error."""
    db = tmp_path / "a.db"
    status, _, err = run(
        capsys, "agents", "add", "--db", str(db), "--create", "bot", "--tenant", "new"
    )
    assert status == 2
    assert err == "actorscope: error: no tenant 'new'\n"
    args = (
        "agents",
        "add",
        "--db",
        str(db),
        "--create",
        "bot",
        "--tenant",
        "new",
        "--create-tenant",
    )
    assert run(capsys, *args)[0] == 0
    assert [r["tenant"] for r in listed(capsys, db)] == ["new"]


def test_rename_keeps_the_uuid(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """rename by key or by UUID changes the key and keeps the id."""
    db = tmp_path / "a.db"
    run(capsys, "agents", "add", "--db", str(db), "--create", "bot")
    [before] = listed(capsys, db)
    status, out, err = run(capsys, "agents", "rename", "--db", str(db), "bot", "helper")
    assert (status, err) == (0, "")
    assert out == f"renamed bot -> helper@default id={before['id']}\n"
    status, out, _ = run(capsys, "agents", "rename", "--db", str(db), before["id"], "final")
    assert status == 0
    assert [(r["id"], r["key"]) for r in listed(capsys, db)] == [(before["id"], "final")]


def test_remove_by_key_and_uuid(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """remove accepts a key or a UUID; the agent disappears from the list."""
    db = tmp_path / "a.db"
    run(capsys, "agents", "add", "--db", str(db), "--create", "a")
    run(capsys, "agents", "add", "--db", str(db), "--create", "b")
    ids = {r["key"]: r["id"] for r in listed(capsys, db)}
    status, out, _ = run(capsys, "agents", "remove", "--db", str(db), "a")
    assert (status, out) == (0, f"removed a@default id={ids['a']}\n")
    status, out, _ = run(capsys, "agents", "remove", "--db", str(db), ids["b"], "--purge")
    assert (status, out) == (0, f"purged b@default id={ids['b']}\n")
    assert listed(capsys, db) == []


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("agents", "rename", "ghost", "x"), "no agent 'ghost' in tenant 'default'"),
        (("agents", "remove", "ghost"), "no agent 'ghost' in tenant 'default'"),
        (("agents", "remove", str(uuid.UUID(int=7))), "no agent"),
        (("agents", "add", "../x"), "agent key must be"),
        (("agents", "add", "bot", "--tenant", "nope"), "no tenant 'nope'"),
        (("agents", "list", "--tenant", "Bad Slug"), "tenant slug must be"),
        (("agents", "rename", "bot", "a/b"), "agent key must be"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], message: str
) -> None:
    """Unknown agents or tenants and bad keys print one error line and exit 2."""
    db = tmp_path / "a.db"
    run(capsys, "agents", "add", "--db", str(db), "--create", "bot")
    status, out, err = run(capsys, *argv[:2], "--db", str(db), *argv[2:])
    assert status == 2
    assert out == ""
    assert err.count("\n") == 1
    assert err.startswith("actorscope: error: ")
    assert message in err


def test_duplicate_key_is_a_conflict(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Adding a key that is live in the tenant fails with one line; the list is unchanged."""
    db = tmp_path / "a.db"
    run(capsys, "agents", "add", "--db", str(db), "--create", "bot")
    status, _, err = run(capsys, "agents", "add", "--db", str(db), "--create", "bot")
    assert status == 2
    assert err == "actorscope: error: agent 'bot' already exists in tenant 'default'\n"
    assert len(listed(capsys, db)) == 1


def test_list_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Without --json, list prints a table with each agent's tenant, key and id."""
    db = tmp_path / "a.db"
    run(capsys, "agents", "add", "--db", str(db), "--create", "support-bot")
    [row] = listed(capsys, db)
    status, out, _ = run(capsys, "agents", "list", "--db", str(db))
    assert status == 0
    assert "support-bot" in out
    assert row["id"] in out
    assert "default" in out


def test_rename_and_remove_with_workspace_move_the_agents_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--workspace: rename moves the agent's directory to its new key; remove archives it."""
    db, root = tmp_path / "a.db", tmp_path / "ws"
    run(capsys, "agents", "add", "--db", str(db), "--create", "bot")
    [row] = listed(capsys, db)
    agent_id = row["id"]

    async def tenant_dir() -> Path:
        async with Database.open(db) as database:
            agent = await AgentRegistry(database).get(agent_id)
        return root / "tenants" / agent.tenant_id / "agents"

    agents = asyncio.run(tenant_dir())
    (agents / "bot" / "notes").mkdir(parents=True)
    (agents / "bot" / ".agent.json").write_text(json.dumps({"agent_id": agent_id}), "utf-8")
    (agents / "bot" / "notes" / "a.md").write_text("mine", "utf-8")
    args = ("--db", str(db), "--workspace", str(root))
    assert run(capsys, "agents", "rename", *args, "bot", "helper")[0] == 0
    assert not (agents / "bot").exists()
    assert (agents / "helper" / "notes" / "a.md").read_text("utf-8") == "mine"
    assert run(capsys, "agents", "remove", *args, "helper")[0] == 0
    assert not (agents / "helper").exists()
    assert (agents / f"helper~{agent_id}" / "notes" / "a.md").read_text("utf-8") == "mine"

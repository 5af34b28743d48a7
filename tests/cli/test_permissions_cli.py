"""``actorscope grants``, ``check`` and ``audit``: the CLI contract of docs/design.md."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from actorscope.agents import Agent, AgentRegistry
from actorscope.cli import main
from actorscope.store import Database

GROUP = "group:telegram:-100200"


@pytest.fixture
def cli_db(tmp_path: Path) -> tuple[str, Agent]:
    """A database file with the agent ``main``, and that agent."""
    path = tmp_path / "cli.db"

    async def setup() -> Agent:
        async with Database.open(path) as db:
            return await AgentRegistry(db).create("main")

    return str(path), asyncio.run(setup())


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run the CLI; return exit status, stdout and stderr."""
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def check(capsys: pytest.CaptureFixture[str], db: str, *extra: str) -> dict[str, object]:
    """Run `check --json` and return the parsed object (asserting exit 0)."""
    status, out, err = run(capsys, "check", "--db", db, "--agent", "main", "--json", *extra)
    assert (status, err) == (0, "")
    parsed: dict[str, object] = json.loads(out)
    return parsed


def test_add_check_remove_round_trip(
    capsys: pytest.CaptureFixture[str], cli_db: tuple[str, Agent]
) -> None:
    """grants add allows the sender, check --json prints allowed and reason, remove undoes it."""
    db, _ = cli_db
    args = ("--scope", GROUP, "--sender", "42", "--type", "file_writer")
    assert check(capsys, db, *args) == {"allowed": False, "reason": "no_grant"}
    grant = ("--agent", "main", "--scope", GROUP, "--sender", "42", "--type", "file_writer")
    status, out, _ = run(capsys, "grants", "add", "--db", db, *grant)
    assert status == 0
    assert "allow file_writer for 42" in out
    assert check(capsys, db, *args) == {"allowed": True, "reason": "granted"}
    assert check(capsys, db, "--scope", GROUP, "--sender", "42", "--type", "cron") == {
        "allowed": True,
        "reason": "granted",
    }
    status, out, _ = run(capsys, "grants", "remove", "--db", db, *grant)
    assert status == 0
    assert "removed" in out
    assert check(capsys, db, *args) == {"allowed": False, "reason": "no_grant"}


def test_check_reasons_and_role(
    capsys: pytest.CaptureFixture[str], cli_db: tuple[str, Agent]
) -> None:
    """check reports docs/design.md's reasons: DM, role bypass, synthetic, empty sender, deny."""
    db, agent = cli_db
    assert check(capsys, db, "--scope", "42", "--sender", "42", "--type", "cron") == {
        "allowed": True,
        "reason": "not_group_context",
    }
    role = ("--scope", GROUP, "--sender", "", "--type", "cron", "--role", "admin")
    assert check(capsys, db, *role)["reason"] == "role_bypass"
    synthetic = ("--scope", GROUP, "--sender", "subagent:x", "--type", "cron")
    assert check(capsys, db, *synthetic)["reason"] == "synthetic_sender"
    assert check(capsys, db, "--scope", GROUP, "--sender", "", "--type", "cron") == {
        "allowed": False,
        "reason": "empty_sender",
    }
    deny = ("--agent", agent.id, "--scope", "group:*", "--sender", "*", "--type", "*", "--deny")
    assert run(capsys, "grants", "add", "--db", db, *deny)[0] == 0
    assert check(capsys, db, "--scope", GROUP, "--sender", "42", "--type", "heartbeat") == {
        "allowed": False,
        "reason": "denied_by_grant",
    }


def test_list_and_audit_json(capsys: pytest.CaptureFixture[str], cli_db: tuple[str, Agent]) -> None:
    """grants list --json and audit --json print the rows as JSON arrays."""
    db, agent = cli_db
    grant = ("--agent", "main", "--scope", "guild:5:*", "--sender", "7", "--type", "cron")
    run(capsys, "grants", "add", "--db", db, *grant, "--by", "ops")
    status, out, _ = run(capsys, "grants", "list", "--db", db, "--json")
    assert status == 0
    (row,) = json.loads(out)
    assert (row["agent_id"], row["scope"], row["sender_id"], row["granted_by"]) == (
        agent.id,
        "guild:5:*",
        "7",
        "ops",
    )
    status, out, _ = run(capsys, "grants", "list", "--db", db, "--agent", "main")
    assert status == 0
    assert "guild:5:*" in out
    check(capsys, db, "--scope", "guild:5:user:8", "--sender", "8", "--type", "cron")
    status, out, _ = run(capsys, "audit", "--db", db, "--json")
    assert status == 0
    columns = ("action", "sender_id", "permission", "reason", "scope", "actor")
    rows = [tuple(e[c] for c in columns) for e in json.loads(out)]
    # check is a what-if: no check.deny row. The grant row names its grantee and permission.
    assert rows == [("grant.add", "7", "allow", "", "guild:5:*", "ops")]
    status, out, _ = run(capsys, "audit", "--db", db)
    assert status == 0
    header = next(line for line in out.splitlines() if "created_at" in line)
    names = [cell.strip() for cell in header.strip("┃│ ").replace("┃", "│").split("│")]
    assert names == [
        "created_at",
        "action",
        "sender_id",
        "permission",
        "reason",
        "scope",
        "config_type",
        "actor",
        "agent_id",
    ]
    line = next(line for line in out.splitlines() if "grant.add" in line)
    cells = [cell.strip() for cell in line.strip("│ ").split("│")]
    assert cells[1:8] == ["grant.add", "7", "allow", "", "guild:5:*", "cron", "ops"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("grants", "add", "--agent", "ghost"), "no agent 'ghost'"),
        (("grants", "add", "--agent", "main", "--scope", "group:x"), "bad group scope"),
        (("grants", "add", "--agent", "main", "--type", "writer"), "config type must be"),
        (("grants", "add", "--agent", "main", "--sender", "subagent:1"), "not a person"),
        (("grants", "add", "--agent", "main", "--sender", "042"), "without sign or leading zero"),
        (("grants", "remove", "--agent", "main"), "no grant of cron"),
        (("grants", "remove", "--agent", "main", "--deny"), "no deny grant"),
        (("grants", "list", "--agent", "ghost"), "no agent 'ghost'"),
        (("grants", "add", "--agent", "main", "--tenant", "nope"), "no tenant 'nope'"),
    ],
)
def test_bad_grant_input_is_one_line_exit_2(
    capsys: pytest.CaptureFixture[str],
    cli_db: tuple[str, Agent],
    argv: tuple[str, ...],
    message: str,
) -> None:
    """Unknown agent, bad scope, bad type, bad sender, missing grant: one line on stderr, exit 2."""
    db, _ = cli_db
    defaults = {"--scope": GROUP, "--sender": "42", "--type": "cron", "--agent": "main"}
    args = list(argv)
    if argv[1] != "list":
        for flag, value in defaults.items():
            if flag not in args:
                args += [flag, value]
    status, out, err = run(capsys, *args, "--db", db)
    assert status == 2
    assert out == ""
    assert message in err
    assert err.count("\n") == 1
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--agent", "ghost", "--scope", GROUP, "--type", "cron"), "no agent 'ghost'"),
        (("--agent", "main", "--scope", "group:*", "--type", "cron"), "concrete scope"),
        (("--agent", "main", "--scope", GROUP, "--type", "*"), "config type must be"),
    ],
)
def test_bad_check_input_is_one_line_exit_2(
    capsys: pytest.CaptureFixture[str],
    cli_db: tuple[str, Agent],
    extra: tuple[str, ...],
    message: str,
) -> None:
    """check with an unknown agent, a pattern scope or type '*' exits 2 with one line."""
    db, _ = cli_db
    status, out, err = run(capsys, "check", "--db", db, "--sender", "42", "--json", *extra)
    assert (status, out) == (2, "")
    assert message in err
    assert err.count("\n") == 1

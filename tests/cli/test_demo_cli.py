"""``actorscope demo``: the scripted conversation's printed decisions, and the audit it leaves."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from actorscope.agents import AgentRegistry
from actorscope.cli import main
from actorscope.cli._demo import SAMPLES
from actorscope.store import Database

#: The ``run_cli`` fixture (tests/cli/conftest.py).
RunCli = Callable[..., subprocess.CompletedProcess[str]]

GROUP = "group:telegram:-1001234567890"
GUILD = "guild:81234567890123456"
# (platform, chat, who, scope, actor, action, decision, reason), one row per turn.
EXPECTED = [
    ("telegram", "devs / ideas", "alice", GROUP, "4242", "file_writer", "allowed", "granted"),
    ("telegram", "devs / ideas", "bob", GROUP, "5151", "file_writer", "denied", "no_grant"),
    ("telegram", "devs / ideas", "sub-agent of bob", GROUP, "5151", "file_writer", "denied",
     "no_grant"),
    ("telegram", "devs / ideas", "sub-agent of alice", GROUP, "4242", "file_writer", "allowed",
     "granted"),
    ("telegram", "devs", "anonymous admin", GROUP, '""', "file_writer", "denied", "empty_sender"),
    ("telegram", "devs", "erin", GROUP, "6161", "cron", "allowed", "role_bypass"),
    ("telegram", "private", "bob", "5151", "5151", "file_writer", "allowed", "not_group_context"),
    ("discord", "#general", "carol", f"{GUILD}:user:9001", "9001", "file_writer", "allowed",
     "granted"),
    ("discord", "thread design", "dave /save", f"{GUILD}:user:9002", "9002", "file_writer",
     "denied", "no_grant"),
    ("discord", "#general", "webhook", f"{GUILD}:webhook:*", '""', "file_writer", "denied",
     "empty_sender"),
]  # fmt: skip


def table_rows(out: str) -> list[tuple[str, ...]]:
    """The body rows of the conversation table (cells without the '#' column)."""
    rows = []
    for line in out.splitlines():
        if line.startswith("│"):
            cells = tuple(cell.strip() for cell in line.strip("│").split("│"))
            rows.append(cells[1:])
    return rows


def matches(row: tuple[str, ...], expected: tuple[str, ...]) -> bool:
    """Cell-by-cell equality; a trailing '*' in the expectation matches any rest."""
    return len(row) == len(expected) and all(
        cell.startswith(want[:-1]) if want.endswith("*") else cell == want
        for cell, want in zip(row, expected, strict=True)
    )


def test_demo_prints_the_expected_decisions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each turn of the conversation is printed with the decision written here."""
    assert main(["demo", "--db", str(tmp_path / "demo.db"), "--no-identities"]) == 0
    out = capsys.readouterr().out
    rows = table_rows(out)
    assert len(rows) == len(EXPECTED), out
    for row, expected in zip(rows, EXPECTED, strict=True):
        assert matches(row, expected), (row, expected)
    assert "5 denials are in the audit log" in out


def test_demo_database_keeps_the_denials_for_audit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """After the demo, `actorscope audit --db` lists its denials (a rerun starts a fresh agent)."""
    db = str(tmp_path / "demo.db")
    assert main(["demo", "--db", db, "--no-identities"]) == 0
    assert main(["demo", "--db", db, "--no-identities"]) == 0
    first, second, _ = capsys.readouterr().out.split("denials are")
    assert table_rows(first) == table_rows(second)
    assert main(["audit", "--db", db, "--agent", "demo", "--json"]) == 0
    entries = json.loads(capsys.readouterr().out)
    denials = sorted(
        (
            e["sender_id"],
            e["reason"],
            "webhook" if e["scope"].startswith(f"{GUILD}:webhook:") else e["scope"],
        )
        for e in entries
        if e["action"] == "check.deny"
    )
    assert denials == [
        ("", "empty_sender", GROUP),
        ("", "empty_sender", "webhook"),
        ("5151", "no_grant", GROUP),
        ("5151", "no_grant", GROUP),
        ("9002", "no_grant", f"{GUILD}:user:9002"),
    ]


def test_demo_prints_the_identity_table_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """By default the identity table comes before the conversation."""
    assert main(["demo", "--db", str(tmp_path / "demo.db")]) == 0
    out = capsys.readouterr().out
    assert out.index("scope (user_id) vs actor (sender_id)") < out.index("a group conversation")


def test_demo_with_an_unusable_db_is_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A --db that is not a database: exit 2, one error line, nothing printed before it."""
    bad = tmp_path / "notes.db"
    bad.write_text("not sqlite")
    assert main(["demo", "--db", str(bad)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert len(captured.err.splitlines()) == 1
    assert captured.err.startswith("actorscope: error:")


# --- data safety (the installed console script, in a subprocess) --------------------------


def _with_agents(path: Path, *agents: tuple[str, str]) -> None:
    """Create ``path`` with agents (key, display name) in the default tenant."""

    async def setup() -> None:
        async with Database.open(path) as db:
            for key, name in agents:
                await AgentRegistry(db).create(key, display_name=name)

    asyncio.run(setup())


def test_demo_uses_its_own_database_by_default(run_cli: RunCli, tmp_path: Path) -> None:
    """Without --db the demo writes actorscope-demo.db, never the commands' actorscope.db."""
    result = run_cli("demo", "--no-identities", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert sorted(os.listdir(tmp_path)) == ["actorscope-demo.db"]
    assert "actorscope audit --db actorscope-demo.db --agent demo" in result.stdout


def test_demo_refuses_a_database_with_other_agents(run_cli: RunCli, tmp_path: Path) -> None:
    """Another agent in --db: exit 2 and no byte changed; --reset plays and leaves it alone."""
    path = tmp_path / "actorscope.db"
    _with_agents(path, ("main", "my bot"))
    before = path.read_bytes()
    refused = run_cli("demo", "--db", "actorscope.db", cwd=tmp_path)
    assert refused.returncode == 2, refused.stderr
    assert "holds other agents (main@default)" in refused.stderr
    assert "--reset" in refused.stderr
    assert path.read_bytes() == before
    listed = run_cli("agents", "list", "--db", "actorscope.db", "--json", cwd=tmp_path)
    (main_before,) = json.loads(listed.stdout)
    played = run_cli("demo", "--db", "actorscope.db", "--reset", "--no-identities", cwd=tmp_path)
    assert played.returncode == 0, played.stderr
    listed = run_cli("agents", "list", "--db", "actorscope.db", "--json", cwd=tmp_path)
    agents = {row["key"]: row for row in json.loads(listed.stdout)}
    assert agents["main"] == main_before
    assert agents["demo"]["display_name"] == "actorscope demo"


def test_demo_never_replaces_an_agent_demo_it_did_not_create(
    run_cli: RunCli, tmp_path: Path
) -> None:
    """A user's own agent 'demo' is refused even with --reset, and stays as it was."""
    path = tmp_path / "mine.db"
    _with_agents(path, ("demo", "production demo bot"))
    before = path.read_bytes()
    for extra in ((), ("--reset",)):
        result = run_cli("demo", "--db", "mine.db", *extra, cwd=tmp_path)
        assert result.returncode == 2, result.stderr
        assert "the demo did not create" in result.stderr
    assert path.read_bytes() == before


def test_demo_denial_count_matches_the_audit_it_names(run_cli: RunCli, tmp_path: Path) -> None:
    """After two runs, the printed count equals the check.deny rows the printed command shows."""
    for _ in range(2):
        result = run_cli("demo", "--no-identities", cwd=tmp_path)
        assert result.returncode == 0, result.stderr
    (line,) = [row for row in result.stdout.splitlines() if "denials are in the audit" in row]
    count = int(line.split("This run's ")[1].split()[0])
    command = line.split(": actorscope ")[1].split()
    audit = run_cli(*command, "--json", cwd=tmp_path)
    rows = json.loads(audit.stdout)
    assert count == sum(row["action"] == "check.deny" for row in rows) == 5


def test_demo_json_and_identity_keys_name_the_demo_agent(run_cli: RunCli, tmp_path: Path) -> None:
    """--json prints the turns; the identity table's session keys use the demo's agent key."""
    result = run_cli("demo", "--json", cwd=tmp_path)
    played = json.loads(result.stdout)
    assert len(played["turns"]) == len(EXPECTED)
    assert played["audited_denials"] == 5
    assert all(s.session.startswith("agent:demo:") for s in SAMPLES if s.session)

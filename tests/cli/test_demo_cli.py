"""``actorscope demo``: the scripted conversation's printed decisions, and the audit it leaves."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from actorscope.cli import main

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
        ("webhook" if e["actor_id"].startswith(f"{GUILD}:webhook:") else e["actor_id"], e["reason"])
        for e in entries
        if e["action"] == "check.deny"
    )
    assert denials == [
        ("5151", "no_grant"),
        ("5151", "no_grant"),
        ("9002", "no_grant"),
        (GROUP, "empty_sender"),
        ("webhook", "empty_sender"),
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

"""``actorscope links add|remove|list|show`` on both store dialects (issue 34)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from actorscope.cli import main

DC = "discord:990000000000000001"
UNKNOWN = "0b5e3a4e-55a4-4c63-9a3c-2b6f1d0c9a11"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run the CLI in this process; (exit status, stdout, stderr)."""
    status = main(list(args))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def as_json(capsys: pytest.CaptureFixture[str], *args: str) -> Any:
    """Run a command with --json that must succeed; its output read as JSON."""
    status, out, err = run(capsys, *args, "--json")
    assert status == 0, err
    return json.loads(out)


def test_links_add_list_show_remove(db_target: str, capsys: pytest.CaptureFixture[str]) -> None:
    """add links two accounts (with --by), list and show read them, remove unlinks one."""
    added = as_json(
        capsys, "links", "add", "telegram:42", DC, "--db", db_target, "--create", "--by", "alice"
    )
    assert {row["account"] for row in added} == {"telegram:42", DC}
    assert {row["linked_by"] for row in added} == {"alice"}
    person = added[0]["person"]
    listed = as_json(capsys, "links", "list", "--db", db_target)
    assert [(row["person"], row["via"]) for row in listed] == [(person, "operator")] * 2
    shown = as_json(capsys, "links", "show", DC, "--db", db_target)
    assert [row["account"] for row in shown] == sorted(["telegram:42", DC])
    assert as_json(capsys, "links", "show", person, "--db", db_target) == shown
    status, out, _ = run(
        capsys, "links", "add", "http:alice", "--person", person, "--db", db_target
    )
    assert (status, out) == (0, f"{person}: {DC}, http:alice, telegram:42\n")
    removed = as_json(capsys, "links", "remove", "telegram:42", "--db", db_target, "--by", "bob")
    assert (removed["account"], removed["person"], removed["removed"]) == (
        "telegram:42",
        person,
        True,
    )
    status, out, _ = run(capsys, "links", "list", "--db", db_target)
    assert status == 0
    assert "http:alice" in out
    assert "telegram:42" not in out
    audit = as_json(capsys, "audit", "--db", db_target)
    removals = [row for row in audit if row["action"] == "link.remove"]
    assert [(row["sender_id"], row["actor"], row["scope"]) for row in removals] == [
        ("telegram:42", "bob", person)
    ]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("links", "add", "telegram:777000", "telegram:42"), "is not a person"),
        (("links", "add", "telegram:042"), "is not a telegram person id"),
        (("links", "add", "fax:1"), "of a known platform"),
        (("links", "add", "telegram:42", "--person", "person:x"), "person:<uuid>"),
        (("links", "remove", "telegram:99"), "telegram:99 is not linked"),
        (("links", "show", "telegram:99"), "telegram:99 is not linked"),
        (("links", "show", "nobody"), "of a known platform"),
        (("links", "list", "--tenant", "acme"), "no tenant 'acme'"),
        (("links", "add", "telegram:43", "telegram:44"), "at most one person"),
        (("links", "add", "telegram:901", "telegram:901"), "telegram:901 is named twice"),
        (("links", "add", f"discord:{2**64}"), "is not a discord person id (1 to "),
        (("links", "add", "http:"), "'' is not an HTTP person id"),
        (("links", "add", "foo:42"), "known platform (discord, http, telegram): 'foo:42'"),
        (("links", "show", f"person:{UNKNOWN}"), f"no person person:{UNKNOWN} in tenant"),
        (("links", "remove", f"person:{UNKNOWN}"), "links remove takes an account"),
        (
            (
                "grants",
                "add",
                "--agent",
                "main",
                "--scope",
                "*",
                "--type",
                "cron",
                "--sender",
                "telegram:42",
            ),
            "a grant names the bare id ('42') or the person of linked accounts (person:<uuid>)",
        ),
        (("links", "add", "telegram:42", "telegram:42"), "telegram:42 is named twice"),
    ],
)
def test_links_refusals_are_one_line(
    db_target: str, capsys: pytest.CaptureFixture[str], args: tuple[str, ...], expected: str
) -> None:
    """Every refusal is exit 2 with one error line naming what is wrong, and changes nothing."""
    as_json(capsys, "links", "add", "telegram:42", "telegram:43", "--db", db_target, "--create")
    as_json(capsys, "links", "add", "telegram:44", "--db", db_target)
    before = as_json(capsys, "links", "list", "--db", db_target)
    status, _, err = run(capsys, *args, "--db", db_target)
    assert status == 2
    (line,) = err.splitlines()
    assert line.startswith("actorscope: error: ")
    assert expected in line, line
    assert as_json(capsys, "links", "list", "--db", db_target) == before


def test_grants_add_refuses_a_person_that_does_not_exist(
    db_target: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """grants add --sender person:<uuid> of no person is exit 2, one line naming it; a linked
    person's grant is made."""
    assert run(capsys, "agents", "add", "main", "--db", db_target, "--create")[0] == 0
    person = as_json(capsys, "links", "add", "telegram:42", "--db", db_target)[0]["person"]
    grant = ("grants", "add", "--agent", "main", "--scope", "*", "--type", "cron")
    unknown = "person:0b5e3a4e-55a4-4c63-9a3c-2b6f1d0c9a11"
    status, _, err = run(capsys, *grant, "--sender", unknown, "--db", db_target)
    assert status == 2
    assert err == (
        f"actorscope: error: no person {unknown} in the agent's tenant: link its accounts first"
        " (actorscope links list shows the persons)\n"
    )
    status, out, err = run(capsys, *grant, "--sender", person, "--db", db_target)
    assert status == 0, err
    assert out == f"allow cron for {person} in * (agent main)\n"

"""``actorscope audit prune --older-than AGE [--export FILE] [--json]``: retention by hand."""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from actorscope.permissions import AuditEntry, AuditLog
from actorscope.permissions._audit import AuditAction
from actorscope.store import Database

RunCli = Callable[..., subprocess.CompletedProcess[str]]
DAY = 86_400.0


async def _filled(path: Path) -> None:
    """Three denials' rows: 100 days, 95 days and a minute old."""
    async with Database.open(path) as db:
        log = AuditLog(db)
        for n, age in enumerate((100 * DAY, 95 * DAY, 60)):
            entry = AuditEntry(
                action=AuditAction.CHECK_DENY,
                sender_id=str(n),
                scope="group:telegram:-100",
                reason="no_grant",
                created_at=Database.utc_at(time.time() - age),
            )
            await log.write(entry)


def test_the_prune_command_exports_then_deletes(run_cli: RunCli, tmp_path: Path) -> None:
    """audit prune --older-than 90d --export FILE: the rows it deleted, one JSON line each."""
    asyncio.run(_filled(tmp_path / "a.db"))
    out = run_cli(
        "audit", "prune", "--older-than", "90d", "--db", "a.db", "--export", "old.jsonl",
        "--json", cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    answer = json.loads(out.stdout)
    assert (answer["pruned"], answer["export"]) == (2, "old.jsonl")
    lines = (tmp_path / "old.jsonl").read_text().splitlines()
    assert [json.loads(line)["sender_id"] for line in lines] == ["0", "1"]
    assert all(json.loads(line)["action"] == "check.deny" for line in lines)
    again = run_cli("audit", "prune", "--older-than", "90d", "--db", "a.db", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("pruned 0 audit rows created before ")
    listed = run_cli("audit", "--db", "a.db", "--json", cwd=tmp_path)
    assert [row["sender_id"] for row in json.loads(listed.stdout)] == ["2"]


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (("--older-than", "90"), "--older-than must be an age such as 90d, 12h or 30m, got '90'"),
        (("--older-than", "0d"), "--older-than must be at least 60 seconds, got '0d'"),
        (
            ("--older-than", "1d", "--export", "old.jsonl"),
            "--export 'old.jsonl' exists: the export never overwrites; name a new file",
        ),
    ],
)
def test_the_prune_command_refuses_bad_input_in_one_line(
    run_cli: RunCli, tmp_path: Path, args: tuple[str, ...], problem: str
) -> None:
    """A bad age or an export file that exists: exit 2, one line, nothing deleted."""
    asyncio.run(_filled(tmp_path / "a.db"))
    (tmp_path / "old.jsonl").write_text("keep me\n")
    out = run_cli("audit", "prune", *args, "--db", "a.db", cwd=tmp_path)
    assert out.returncode == 2
    assert out.stderr.strip() == f"actorscope: error: {problem}"
    assert (tmp_path / "old.jsonl").read_text() == "keep me\n"
    listed = run_cli("audit", "--db", "a.db", "--json", cwd=tmp_path)
    assert len(json.loads(listed.stdout)) == 3


def test_the_prune_command_creates_no_database(run_cli: RunCli, tmp_path: Path) -> None:
    """Pruning a database that is not there is refused; no file appears."""
    out = run_cli("audit", "prune", "--older-than", "1d", "--db", "none.db", cwd=tmp_path)
    assert out.returncode == 2
    assert "none.db" in out.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []

"""CLI conventions: --json everywhere, the --help order, lazy imports, table width.

Every case runs the installed console script in a subprocess with a timeout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ACTORSCOPE = Path(sys.executable).parent / "actorscope"
TIMEOUT = 60.0
#: What ``--help``, ``--version`` and ``check`` must not import: platform libraries, the
#: test kit and its emulator.
HEAVY = ("telegram", "discord", "actorscope.testing")


def run_cli(
    *args: str, cwd: Path, env: dict[str, str] | None = None, python: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    """Run the console script (or ``python *python -m actorscope``) and return what it did."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("ACTORSCOPE_")}
    command = [sys.executable, *python, "-m", "actorscope"] if python else [str(ACTORSCOPE)]
    return subprocess.run(  # noqa: S603 - our own console script, arguments from the test
        [*command, *args],
        cwd=cwd,
        env={**base, **(env or {})},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def ok(result: subprocess.CompletedProcess[str]) -> str:
    """The stdout of a run that exited 0."""
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def test_agents_commands_print_json(tmp_path: Path) -> None:
    """agents add, rename and remove print one JSON object each with --json."""
    db = ("--db", "a.db", "--json")
    added = json.loads(ok(run_cli("agents", "add", "bot", *db, cwd=tmp_path)))
    assert (added["key"], added["tenant"]) == ("bot", "default")
    renamed = json.loads(ok(run_cli("agents", "rename", "bot", "helper", *db, cwd=tmp_path)))
    assert (renamed["id"], renamed["key"], renamed["previous_key"]) == (
        added["id"],
        "helper",
        "bot",
    )
    removed = json.loads(ok(run_cli("agents", "remove", "helper", *db, cwd=tmp_path)))
    assert (removed["id"], removed["key"]) == (added["id"], "helper")
    assert json.loads(ok(run_cli("agents", "list", *db, cwd=tmp_path))) == []


def test_agents_commands_keep_their_text_lines(tmp_path: Path) -> None:
    """Without --json the agents commands print their one-line summaries."""
    out = ok(run_cli("agents", "add", "bot", "--db", "a.db", cwd=tmp_path))
    assert out.startswith("added bot@default id=")
    out = ok(run_cli("agents", "rename", "bot", "helper", "--db", "a.db", cwd=tmp_path))
    assert out.startswith("renamed bot -> helper@default id=")


def test_help_lists_commands_in_order(tmp_path: Path) -> None:
    """--help lists the first steps first (demo, run, sandbox), admin after, mcp last."""
    out = ok(run_cli("--help", cwd=tmp_path))
    listed = [line.split()[0] for line in out.split("Commands:")[1].splitlines() if line.strip()]
    expected = ["demo", "run", "sandbox", "normalize", "agents", "grants", "check", "audit"]
    assert listed == [*expected, "migrate", "schema", "mcp"]


def _imported(stderr: str) -> set[str]:
    """The module names in ``-X importtime`` output."""
    names = set()
    for line in stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            names.add(line.rsplit("|", 1)[1].strip())
    return names


@pytest.mark.parametrize(
    "args",
    [
        ("--help",),
        ("--version",),
        ("check", "--db", "x.db", "--agent", "main", "--scope", "group:x:1", "--sender", "1"),
    ],
)
def test_startup_imports_no_platform_library(tmp_path: Path, args: tuple[str, ...]) -> None:
    """--help, --version and check import no telegram, discord, test kit or emulator."""
    ok(run_cli("agents", "add", "main", "--db", "x.db", cwd=tmp_path))
    if args[0] == "check":
        args = (*args, "--type", "cron", "--exit-code")
    result = run_cli(*args, cwd=tmp_path, python=("-X", "importtime"))
    assert result.returncode == (1 if args[0] == "check" else 0), result.stderr[-2000:]
    names = _imported(result.stderr)
    assert "actorscope.cli._app" in names  # the output is what we think it is
    heavy = sorted(n for n in names if n.split(".")[0] in HEAVY or n.startswith(HEAVY))
    assert heavy == []


def test_tables_respect_columns(tmp_path: Path) -> None:
    """A piped table is 400 wide, unless COLUMNS says otherwise."""
    ok(run_cli("agents", "add", "bot", "--db", "a.db", cwd=tmp_path))
    wide = ok(run_cli("agents", "list", "--db", "a.db", cwd=tmp_path, env={"COLUMNS": ""}))
    narrow = ok(run_cli("agents", "list", "--db", "a.db", cwd=tmp_path, env={"COLUMNS": "60"}))
    assert max(len(line) for line in narrow.splitlines()) <= 60
    assert "bot" in narrow
    assert max(len(line) for line in wide.splitlines()) > 60

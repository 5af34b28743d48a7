"""CLI conventions: --json everywhere, the --help order, lazy imports, table width.

Every case runs the installed console script in a subprocess with a timeout.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from actorscope.agents import AgentRegistry
from actorscope.cli import main
from actorscope.permissions import GrantStore
from actorscope.store import Database

#: The ``run_cli`` fixture (tests/cli/conftest.py).
RunCli = Callable[..., subprocess.CompletedProcess[str]]

ACTORSCOPE = Path(sys.executable).parent / "actorscope"
TIMEOUT = 60.0
#: What ``--help``, ``--version`` and ``check`` must not import: platform libraries, the
#: test kit and its emulator.
HEAVY = ("telegram", "discord", "actorscope.testing", "fastapi", "uvicorn")


def ok(result: subprocess.CompletedProcess[str]) -> str:
    """The stdout of a run that exited 0."""
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def test_agents_commands_print_json(run_cli: RunCli, tmp_path: Path) -> None:
    """agents add, rename and remove print one JSON object each with --json."""
    db = ("--db", "a.db", "--json")
    added = json.loads(ok(run_cli("agents", "add", "bot", *db, "--create", cwd=tmp_path)))
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


def test_agents_commands_keep_their_text_lines(run_cli: RunCli, tmp_path: Path) -> None:
    """Without --json the agents commands print their one-line summaries."""
    out = ok(run_cli("agents", "add", "bot", "--db", "a.db", "--create", cwd=tmp_path))
    assert out.startswith("added bot@default id=")
    out = ok(run_cli("agents", "rename", "bot", "helper", "--db", "a.db", cwd=tmp_path))
    assert out.startswith("renamed bot -> helper@default id=")


def test_help_lists_commands_in_order(run_cli: RunCli, tmp_path: Path) -> None:
    """--help lists the first steps first (demo, run, probe, sandbox), admin after, mcp last."""
    out = ok(run_cli("--help", cwd=tmp_path))
    listed = [line.split()[0] for line in out.split("Commands:")[1].splitlines() if line.strip()]
    expected = [
        "demo",
        "run",
        "probe",
        "sandbox",
        "serve",
        "normalize",
        "agents",
        "grants",
        "links",
        "check",
    ]
    assert listed == [*expected, "audit", "keys", "migrate", "schema", "mcp"]


#: Every command with options or arguments, as typed after ``actorscope``.
COMMANDS = (
    ("demo",),
    ("run",),
    ("probe",),
    ("sandbox",),
    ("normalize",),
    ("agents", "add"),
    ("agents", "list"),
    ("agents", "rename"),
    ("agents", "remove"),
    ("grants", "add"),
    ("grants", "remove"),
    ("grants", "list"),
    ("links", "add"),
    ("links", "remove"),
    ("links", "list"),
    ("links", "show"),
    ("check",),
    ("audit",),
    ("audit", "prune"),
    ("migrate",),
    ("schema", "lint"),
    ("mcp",),
    ("serve",),
    ("keys", "add"),
    ("keys", "list"),
    ("keys", "revoke"),
)


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_help_names_values_in_capitals(
    command: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    """Every option's and argument's value is named like FILE or TEXT, never <str> or {file}."""
    assert main([*command, "--help"]) == 0
    usage, _, options = capsys.readouterr().out.partition("Options:")
    assert not re.search(r"\{[a-z_]+\}", usage), usage
    for line in options.splitlines():
        column = re.split(r"\s{2,}", line.strip())[0]
        if column.startswith("--") and " / " not in column:  # a --flag / --no-flag pair
            for value in column.split()[1:]:
                assert re.fullmatch(r"[A-Z][A-Z_]*|[a-z-]+(\|[a-z-]+)+", value), line


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
def test_startup_imports_no_platform_library(
    run_cli: RunCli, tmp_path: Path, args: tuple[str, ...]
) -> None:
    """--help, --version and check import no telegram, discord, test kit or emulator."""
    ok(run_cli("agents", "add", "main", "--db", "x.db", "--create", cwd=tmp_path))
    if args[0] == "check":
        args = (*args, "--type", "cron", "--exit-code")
    result = run_cli(*args, cwd=tmp_path, python=("-X", "importtime"))
    assert result.returncode == (1 if args[0] == "check" else 0), result.stderr[-2000:]
    names = _imported(result.stderr)
    assert "actorscope.cli._app" in names  # the output is what we think it is
    heavy = sorted(n for n in names if n.split(".")[0] in HEAVY or n.startswith(HEAVY))
    assert heavy == []


def test_tables_respect_columns(run_cli: RunCli, tmp_path: Path) -> None:
    """A piped table is 400 wide, unless COLUMNS says otherwise."""
    ok(run_cli("agents", "add", "bot", "--db", "a.db", "--create", cwd=tmp_path))
    wide = ok(run_cli("agents", "list", "--db", "a.db", cwd=tmp_path, env={"COLUMNS": ""}))
    narrow = ok(run_cli("agents", "list", "--db", "a.db", cwd=tmp_path, env={"COLUMNS": "60"}))
    assert max(len(line) for line in narrow.splitlines()) <= 60
    assert "bot" in narrow
    assert max(len(line) for line in wide.splitlines()) > 60


TELEGRAM_UPDATE = {
    "update_id": 1,
    "message": {
        "message_id": 1,
        "date": 0,
        "chat": {"id": -100200, "type": "group"},
        "from": {"id": 42, "is_bot": False, "first_name": "a"},
        "text": "hi",
    },
}
DISCORD_DISPATCH = {
    "op": 0,
    "t": "MESSAGE_CREATE",
    "d": {
        "id": "1",
        "channel_id": "2",
        "guild_id": "3",
        "author": {"id": "4", "username": "x"},
        "content": "hi",
    },
}


def run_with_stdin(*args: str, stdin: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run the console script with ``stdin`` as its standard input."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACTORSCOPE_")}
    return subprocess.run(  # noqa: S603 - our own console script, arguments from the test
        [str(ACTORSCOPE), *args],
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def test_normalize_reads_dash_as_stdin(tmp_path: Path) -> None:
    """`normalize -` reads the payload from stdin."""
    result = run_with_stdin(
        "normalize", "--platform", "telegram", "-", stdin=json.dumps(TELEGRAM_UPDATE), cwd=tmp_path
    )
    assert json.loads(ok(result))["user_id"] == "group:telegram:-100200"


@pytest.mark.parametrize(
    ("platform", "payload", "expected"),
    [
        ("telegram", DISCORD_DISPATCH, "looks like a Discord gateway dispatch"),
        ("discord", TELEGRAM_UPDATE, "looks like a Telegram Update"),
        ("telegram", {"foo": 1}, "missing key 'update_id'"),
    ],
)
def test_normalize_says_what_a_wrong_payload_lacks(
    tmp_path: Path, platform: str, payload: dict[str, object], expected: str
) -> None:
    """The other platform's payload (or none) is named in words, without Python wording."""
    result = run_with_stdin(
        "normalize", "--platform", platform, "-", stdin=json.dumps(payload), cwd=tmp_path
    )
    assert result.returncode == 2
    (line,) = result.stderr.splitlines()
    assert line.startswith("actorscope: error: stdin: ")
    assert expected in line
    assert "__init__" not in line
    assert "Error" not in line


def test_schema_lint_prints_json(run_cli: RunCli, tmp_path: Path) -> None:
    """schema lint --json prints one object; exit 1 when there are violations, else 0."""
    bad = {"name": "t", "inputSchema": {"type": "object", "properties": {"a": {}}}}
    good = {
        "name": "t",
        "inputSchema": {"type": "object", "properties": {}, "additionalProperties": False},
    }
    (tmp_path / "bad.json").write_text(json.dumps([bad]))
    (tmp_path / "good.json").write_text(json.dumps([good]))
    args = ("--target", "openai-strict", "--json")
    failed = run_cli("schema", "lint", "bad.json", *args, cwd=tmp_path)
    assert failed.returncode == 1, failed.stderr
    summary = json.loads(failed.stdout)
    assert (summary["tools"], summary["target"]) == (1, "openai-strict")
    assert summary["violations"]
    assert summary["violations"][0]["tool"] == "t"
    clean = json.loads(ok(run_cli("schema", "lint", "good.json", *args, cwd=tmp_path)))
    assert clean["violations"] == []


def test_grants_remove_prints_json(run_cli: RunCli, tmp_path: Path) -> None:
    """grants remove --json prints the removed grant as one object."""

    async def setup() -> None:
        async with Database.open(tmp_path / "a.db") as db:
            agent = await AgentRegistry(db).create("main")
            await GrantStore(db).grant(
                agent_id=agent.id, scope="group:telegram:-1", config_type="cron", sender_id="42"
            )

    asyncio.run(setup())
    grant = ("--agent", "main", "--scope", "group:telegram:-1", "--type", "cron")
    out = ok(
        run_cli(
            "grants", "remove", "--db", "a.db", *grant, "--sender", "42", "--json", cwd=tmp_path
        )
    )
    removed = json.loads(out)
    assert (removed["removed"], removed["scope"], removed["config_type"]) == (
        True,
        "group:telegram:-1",
        "cron",
    )
    assert json.loads(ok(run_cli("grants", "list", "--db", "a.db", "--json", cwd=tmp_path))) == []


def test_sandbox_on_a_busy_port_is_one_line(run_cli: RunCli, tmp_path: Path) -> None:
    """A port already in use: one error line naming it, exit 2, no traceback."""
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        result = run_cli("sandbox", "--port", str(port), cwd=tmp_path)
    assert result.returncode == 2, result.stderr[-2000:]
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"actorscope: error: cannot listen on 127.0.0.1 --port {port}: ")
    assert result.stdout == ""

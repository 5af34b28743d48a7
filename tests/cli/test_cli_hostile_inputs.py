"""Hostile CLI inputs (files, paths, URLs): one error line and exit 2, never a traceback or a hang.

Each case runs the installed console script in a subprocess with a timeout, so a hang fails
the test instead of stalling the suite.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from actorscope._input import MAX_INPUT_BYTES, MAX_INTEGER_DIGITS, MAX_JSON_DEPTH
from actorscope.cli import main

#: The ``run_cli`` fixture (tests/cli/conftest.py).
RunCli = Callable[..., subprocess.CompletedProcess[str]]

# A Python exception or warning class name, e.g. ValueError, JSONDecodeError, RecursionError.
PYTHON_TYPE_NAME = re.compile(r"\b[A-Z]\w*(?:Error|Exception|Warning)\b")

DEEP_JSON = "[" * 100_000 + "]" * 100_000
BIG_INT_JSON = '{"update_id": ' + "1" * 5000 + "}"
DEEP_TOML = "handler = " + "[" * 100_000 + "]" * 100_000 + "\n"
BIG_INT_TOML = "handler = " + "1" * 5000 + "\n"


def assert_one_error_line(result: subprocess.CompletedProcess[str], expected: str) -> None:
    """Exit 2, exactly one ``actorscope: error:`` line naming ``expected``, nothing Pythonic."""
    assert result.returncode == 2, result.stderr[-2000:]
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr[-2000:]
    assert lines[0].startswith("actorscope: error: ")
    assert expected in lines[0]
    assert "Traceback" not in result.stderr
    assert PYTHON_TYPE_NAME.search(result.stderr) is None, lines[0]
    assert len(lines[0]) < 400, "an over-long path or value is shortened"


def write(tmp_path: Path, name: str, content: str | bytes) -> str:
    """Write ``content`` to ``tmp_path / name`` and return its path."""
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return str(path)


def fifo(tmp_path: Path) -> str:
    """A FIFO nobody writes to (opening it for reading blocks by default)."""
    os.mkfifo(tmp_path / "fifo")
    return "fifo"


NESTED = f"nested deeper than the limit of {MAX_JSON_DEPTH} levels"
LONG_INT = f"longer than {MAX_INTEGER_DIGITS} digits"
TOO_BIG = f"larger than the {MAX_INPUT_BYTES}-byte limit"
LONG_NAME = "a" * 5000
CASES: dict[str, tuple[Callable[[Path], list[str]], str]] = {
    "normalize-deep-json": (
        lambda p: ["normalize", write(p, "d.json", DEEP_JSON), "--platform", "telegram"],
        NESTED,
    ),
    "schema-big-int": (
        lambda p: ["schema", "lint", write(p, "i.json", BIG_INT_JSON), "--target", "gemini"],
        LONG_INT,
    ),
    "schema-not-utf8": (
        lambda p: ["schema", "lint", write(p, "b.json", b'\xff\xfe["x"]'), "--target", "claude"],
        "not UTF-8 text",
    ),
    "normalize-dev-zero": (
        lambda p: ["normalize", "/dev/zero", "--platform", "telegram"],
        TOO_BIG,
    ),
    "normalize-fifo": (
        lambda p: ["normalize", fifo(p), "--platform", "telegram"],
        "'fifo': not valid JSON",
    ),
    "run-deep-toml": (lambda p: ["run", write(p, "d.toml", DEEP_TOML)], "nested too deeply"),
    "run-big-int-toml": (
        lambda p: ["run", write(p, "i.toml", BIG_INT_TOML)],
        "an integer is longer than",
    ),
    "db-too-long": (
        lambda p: ["agents", "list", "--db", LONG_NAME],
        "(5000 characters): File name too long",
    ),
    "db-fifo": (lambda p: ["grants", "list", "--db", fifo(p)], "is not a regular file"),
    "mcp-db-fifo": (lambda p: ["mcp", "--db", fifo(p)], "is not a regular file"),
    "mcp-workspace-fifo": (
        lambda p: ["mcp", "--db", "x.db", "--workspace", fifo(p)],
        "--workspace 'fifo' is not a directory",
    ),
    "postgres-open-bracket": (
        lambda p: ["audit", "--db", "postgresql://u@[::1/db"],
        "bad PostgreSQL URL",
    ),
    "postgres-nul-host": (
        lambda p: ["agents", "list", "--db", "postgresql://u@h%00/db"],
        "bad PostgreSQL URL: it contains a control character",
    ),
    "normalize-incomplete-payload": (
        lambda p: [
            "normalize",
            write(p, "k.json", '{"op": 0, "t": "MESSAGE_CREATE", "d": {"id": "1"}}'),
            "--platform",
            "discord",
        ],
        "malformed discord payload: author is not a JSON object",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_hostile_input_is_one_line_and_exit_2(run_cli: RunCli, case: str, tmp_path: Path) -> None:
    """Each hostile file, path or URL gives one error line, exit 2, no traceback, no hang."""
    make_args, expected = CASES[case]
    assert_one_error_line(run_cli(*make_args(tmp_path), cwd=tmp_path), expected)


IN_PROCESS: dict[str, tuple[Callable[[Path], list[str]], str]] = {
    "schema-deep-json": (
        lambda p: ["schema", "lint", write(p, "d.json", DEEP_JSON), "--target", "claude"],
        NESTED,
    ),
    "normalize-big-int": (
        lambda p: ["normalize", write(p, "i.json", BIG_INT_JSON), "--platform", "discord"],
        LONG_INT,
    ),
    "postgres-long-host": (
        lambda p: ["agents", "list", "--db", f"postgresql://{'h' * 300}/db"],
        "(300 characters) is not a valid host name",
    ),
    "postgres-empty-label": (
        lambda p: [
            "check",
            "--db",
            "postgresql://a..b/db",
            "--agent",
            "main",
            "--scope",
            "x",
            "--sender",
            "1",
            "--type",
            "cron",
        ],
        "'a..b' is not a valid host name",
    ),
    "postgres-long-socket-directory": (
        lambda p: ["agents", "list", "--db", f"postgresql://%2Fnowhere%2F{'s' * 80}/db"],
        "cannot connect to PostgreSQL",  # a socket directory is no host name: not refused as one
    ),
    "newline-in-file-name": (
        lambda p: ["run", write(p, "a\nb.toml", "")],
        "b.toml: handler: missing",
    ),
    "non-utf8-argument": (
        lambda p: [
            *("grants", "add", "--db", str(p / "x.db"), "--agent", "main"),
            *("--scope", "\udcff", "--sender", "1", "--type", "cron"),
        ],
        "argument '\\udcff' is not valid UTF-8 text",
    ),
    "audit-huge-limit": (
        lambda p: ["audit", "--db", str(p / "x.db"), "--limit", "9" * 30],
        "--limit",
    ),
    "mcp-unknown-agent": (
        lambda p: ["mcp", "--db", str(p / "x.db"), "--create", "--agent", "nope"],
        "no agent 'nope'",
    ),
    "long-workspace": (
        lambda p: ["mcp", "--db", str(p / "x.db"), "--workspace", str(p / LONG_NAME)],
        "characters): File name too long",
    ),
}


@pytest.mark.parametrize("case", list(IN_PROCESS))
def test_hostile_input_in_process(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cases that cannot hang run through main(): the same one line, exit 2."""
    monkeypatch.delenv("ACTORSCOPE_ORIGIN_KEY", raising=False)  # mcp warns without it
    make_args, expected = IN_PROCESS[case]
    status = main(make_args(tmp_path))
    captured = capsys.readouterr()
    result = subprocess.CompletedProcess(args=[], returncode=status, stdout="", stderr=captured.err)
    assert_one_error_line(result, expected)


def test_schema_lint_prints_lone_surrogates_escaped(run_cli: RunCli, tmp_path: Path) -> None:
    """A tool name spelling a lone surrogate in JSON is printed escaped, not an encoding crash."""
    tools = '[{"name": "\\ud800x", "inputSchema": {"type": "object", "properties": {}}}]'
    result = run_cli(
        "schema",
        "lint",
        write(tmp_path, "t.json", tools),
        "--target",
        "openai-strict",
        cwd=tmp_path,
    )
    assert (result.returncode, result.stderr) == (1, "")
    assert result.stdout.startswith("\\ud800x: ")


def test_mcp_port_in_use_is_one_line(run_cli: RunCli, tmp_path: Path) -> None:
    """`mcp --transport http` on a port already taken is the CLI's one error line, exit 2."""
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = str(taken.getsockname()[1])
        result = run_cli("mcp", "--db", "x.db", "--transport", "http", "--port", port, cwd=tmp_path)
    assert_one_error_line(result, f"cannot listen on --host '127.0.0.1' --port {port}")

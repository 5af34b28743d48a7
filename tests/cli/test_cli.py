"""The ``actorscope`` command line: version, help, demo, and one-line usage errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from actorscope import __version__
from actorscope.cli import main
from actorscope.cli._demo import SAMPLES


def test_version_prints_the_version(capsys: pytest.CaptureFixture[str]) -> None:
    """`actorscope --version` prints "actorscope <version>" and exits 0."""
    assert main(["--version"]) == 0
    captured = capsys.readouterr()
    assert captured.out == f"actorscope {__version__}\n"
    assert captured.err == ""


def test_no_arguments_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    """`actorscope` without arguments prints the help (listing demo) and exits 0."""
    assert main([]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("Usage: actorscope")
    assert "demo" in captured.out
    assert "--version" in captured.out
    assert captured.err == ""


def test_help_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    """`actorscope --help` prints the help and exits 0."""
    assert main(["--help"]) == 0
    assert "Usage: actorscope" in capsys.readouterr().out


def test_demo_prints_the_identity_table(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """`actorscope demo` prints a table with group scopes and thread session keys literally."""
    assert main(["demo", "--db", str(tmp_path / "demo.db")]) == 0
    captured = capsys.readouterr()
    assert "group:telegram:" in captured.out
    assert ":thread:" in captured.out
    assert "guild:" in captured.out
    assert captured.err == ""


def test_demo_prints_every_id_unbroken(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Piped `actorscope demo` output contains each sample's scope and session key on one line."""
    assert main(["demo", "--db", str(tmp_path / "demo.db")]) == 0
    out = capsys.readouterr().out
    for sample in SAMPLES:
        assert sample.identity.user_id in out, sample.context
        if sample.session:
            assert sample.session in out, sample.context


@pytest.mark.parametrize(
    "argv",
    [["--bogus"], ["demo", "--bogus"], ["no-such-command"]],
    ids=["root-option", "command-option", "command"],
)
def test_bad_input_is_one_line_on_stderr_with_exit_2(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """An unknown option or command exits 2 with exactly one "actorscope: error:" line on stderr."""
    assert main(argv) == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("actorscope: error:")
    assert "Traceback" not in captured.err
    assert captured.out == ""


def test_python_dash_m_actorscope_prints_the_version() -> None:
    """`python -m actorscope --version` prints the version and exits 0 in a real process."""
    result = subprocess.run(
        [sys.executable, "-m", "actorscope", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"actorscope {__version__}\n"
    assert result.stderr == ""

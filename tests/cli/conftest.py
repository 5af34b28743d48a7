"""The installed ``actorscope`` console script, run in a subprocess, for the CLI tests."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

#: The console script pip installed next to this interpreter.
ACTORSCOPE = Path(sys.executable).parent / "actorscope"
TIMEOUT = 120.0

RunCli = Callable[..., subprocess.CompletedProcess[str]]


def _run(
    *args: str, cwd: Path, env: dict[str, str] | None = None, python: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    # The test environment's ACTORSCOPE_* variables (PostgreSQL URLs ...) never leak in.
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


@pytest.fixture
def run_cli() -> RunCli:
    """``run_cli(*args, cwd=, env=None, python=())``: the console script (or ``python
    *python -m actorscope``) with ``args``, stdin empty; returns the completed process."""
    return _run

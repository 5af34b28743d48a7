"""The test suite's own PostgreSQL handling: without a server, one line says why."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_missing_server_is_reported_once_not_per_test() -> None:
    """No server, none required: PostgreSQL cases are deselected, one header line says why."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"ACTORSCOPE_REQUIRE_POSTGRES", "PYTEST_ADDOPTS"}
    }
    env["ACTORSCOPE_TEST_POSTGRES_URL"] = "postgresql://postgres@127.0.0.1:1/postgres"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/store/test_database_backends.py::test_rows_read_by_name_and_index",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("no PostgreSQL server usable at 127.0.0.1:1") == 1
    assert "PostgreSQL suite not run (1 cases deselected)" in result.stdout
    assert "SKIPPED" not in result.stdout
    assert "1 passed, 1 deselected" in result.stdout

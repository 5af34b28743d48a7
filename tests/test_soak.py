"""The short soak in ``make test``: two workers on one PostgreSQL, 30 s of stream, one fault of
each kind; every invariant of ``make soak`` must hold (``soak/``, docs/guides/scaling.md).

It starts a PostgreSQL cluster of its own (the restart fault needs a server it controls), so it
needs PostgreSQL's binaries: without them it is skipped, and with ``ACTORSCOPE_REQUIRE_POSTGRES=1``
(CI) that is a failure. It runs as a subprocess, bounded, on loopback only.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from soak.__main__ import duration
from soak._cluster import find_bindir
from soak._faults import KINDS, schedule

ROOT = Path(__file__).resolve().parents[1]
#: The whole run: cluster, workers, 30 s of stream, the drain and the teardown.
LIMIT = 600


def test_the_short_soak_has_one_fault_of_each_kind() -> None:
    """30 s of stream gets each of the five faults once, inside the stream, in order."""
    planned = schedule(duration("30s"), seed=17)
    assert sorted(p.kind for p in planned) == sorted(KINDS)
    offsets = [p.offset for p in planned]
    assert offsets == sorted(offsets)
    assert offsets[0] > 0
    assert offsets[-1] < 30


def test_the_short_soak_holds_every_invariant(tmp_path: Path) -> None:
    """Exactly-once effects, audit rows, freshness and recovery hold under the five faults."""
    if find_bindir() is None:
        missing = "no PostgreSQL binaries under /usr/lib/postgresql (apt install postgresql)"
        if os.environ.get("ACTORSCOPE_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"{missing}; ACTORSCOPE_REQUIRE_POSTGRES=1 forbids skipping")
        pytest.skip(missing)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACTORSCOPE_")}
    result = subprocess.run(  # noqa: S603 - this interpreter, the repository's own module
        [
            sys.executable, "-m", "soak", "--duration", "30s", "--workers", "2",
            "--keep", str(tmp_path / "run"),
        ],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=LIMIT,
        check=False,
    )  # fmt: skip
    shown = f"{result.stdout[-6000:]}\n{result.stderr[-3000:]}\n(logs: {tmp_path / 'run'})"
    assert result.returncode == 0, shown
    assert "PASS: every invariant held" in result.stdout, shown
    assert result.stdout.count(" fault ") >= len(KINDS), shown

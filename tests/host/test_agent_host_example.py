"""examples/agent_host.py runs offline and tells the story it promises."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "agent_host.py"


async def test_example_allows_the_writer_and_denies_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Writer allowed (granted), non-writer denied (no_grant), forged announce denied."""
    namespace = runpy.run_path(str(EXAMPLE), run_name="agent_host_example")
    assert await namespace["run_example"](tmp_path / "example.db") is True
    out = capsys.readouterr().out
    assert "check_file_writer -> allowed (granted)" in out
    assert "check_file_writer -> denied (no_grant)" in out
    assert "check_file_writer -> denied (synthetic_sender)" in out
    assert out.rstrip().endswith("as expected")

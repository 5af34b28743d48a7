"""The benchmarks run end to end on a few updates each, so ``make bench`` cannot rot.

Timings are never asserted: only that every line is printed with its goal and that both
sides of a throughput line did the same work (the harness refuses a line otherwise).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from bench import integrations, peers, permissions, pipeline
from bench._stubs import Sends, same_work

UPDATES, RUNS = 20, 1  # two chunks of 10 per run (bench._sides.alternate)


def _lines(out: str, text: str) -> list[str]:
    return [line for line in out.splitlines() if text in line]


def test_same_work_refuses_sides_that_answered_differently() -> None:
    """Two sides whose replies differ make no line: a ratio of different work is refused."""
    sent: Sends = [(1, None, 7, "noted")]
    assert same_work("a", sent, "b", list(sent)) == "replies 1/1"
    with pytest.raises(AssertionError, match="did not send the same replies"):
        same_work("a", sent, "b", [(1, 9, 7, "noted")])


async def test_pipeline_bench_prints_both_goal_lines(capsys: pytest.CaptureFixture[str]) -> None:
    """The Telegram and Discord pipeline lines, each with its goal and equal replies."""
    await pipeline.run(updates=UPDATES, runs=RUNS)
    out = capsys.readouterr().out
    assert _lines(out, "telegram pipeline / bare PTB, stub")[0].endswith(
        ("goal >= 0.85: met", "goal >= 0.85: NOT met")
    )
    assert "goal >= 0.6: " in _lines(out, "discord pipeline / bare discord.py, stub")[0]
    assert len(_lines(out, "replies ")) == 2
    assert "python-telegram-bot 22." in out


async def test_integrations_bench_prints_each_gate(capsys: pytest.CaptureFixture[str]) -> None:
    """The PTB gate and the discord.py Cog lines, each against the same bot without it."""
    await integrations.run(updates=UPDATES, runs=RUNS)
    out = capsys.readouterr().out
    assert "goal >= 0.85: " in _lines(out, "PTB gate: install() + requires / bare")[0]
    assert "goal >= 0.85: " in _lines(out, "discord.py gate: ActorscopeCog + requires")[0]
    for line in _lines(out, "replies "):
        count = int(line.split("replies ")[1].split("/")[0])
        assert count > 0, line


async def test_peers_bench_measures_nonebot_and_names_aiogram(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """NoneBot2 is measured beside bare PTB and ours; aiogram, bare and with actorscope's
    gate, beside them and each other (or named missing)."""
    await peers.run(updates=UPDATES, runs=RUNS)
    out = capsys.readouterr().out
    assert _lines(out, "NoneBot2 + Permission / bare PTB, stub")
    assert "goal >= 1: " in _lines(out, "PTB + actorscope gate / NoneBot2 + Permission")[0]
    assert "nonebot-adapter-telegram 0.1" in out
    if importlib.util.find_spec("aiogram") is None:
        assert _lines(out, "aiogram: not installed here")
    else:
        assert _lines(out, "aiogram 3 + dict filter / bare PTB, stub")
        assert _lines(out, "aiogram 3 + install() + requires / bare PTB, stub")
        gated = _lines(out, "aiogram with actorscope's gate / aiogram 3 + dict filter")
        assert len(gated) == 1
        pair = "(aiogram 3 + install() + requires / aiogram 3 + dict filter)"
        [replies] = [line for line in out.splitlines() if line.endswith(pair)]
        assert int(replies.split("replies ")[1].split("/")[0]) > 0


async def test_permissions_bench_compares_with_the_checks_own_sql(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The cold lines run the check's recorded SQL on a bare connection; every goal printed."""
    sizes = permissions.Sizes(
        small=100,
        large=400,
        warm_calls=50,
        calls=5,
        rounds=2,
        cold_runs=2,
        flood=10,
        flood_runs=1,
        lag_seconds=0.02,
        lag_runs=1,
        cache=tmp_path / "cache",
    )
    await permissions.run(sizes)
    out = capsys.readouterr().out
    assert _lines(out, "cold check (100 grants) / its own SQL, bare sync")
    assert "goal <= 1.5: " in _lines(out, "cold check (400 grants) / its own SQL, bare sync")[0]
    assert "goal >= 0.5: " in _lines(out, "denial flood: checks/s audit on / audit off")[0]
    assert "goal <= 1 ms: " in _lines(out, "loop lag p99 net of CPU waits, cold checks")[0]
    assert _lines(out, "same, wall clock (with this machine's CPU waits)")
    (kept,) = (tmp_path / "cache").iterdir()
    built = kept.stat().st_mtime_ns
    await permissions.cached_database(tmp_path / "again.db", 400, tmp_path / "cache")
    assert kept.stat().st_mtime_ns == built  # the second run copies, never rebuilds
    assert (tmp_path / "again.db").read_bytes() == kept.read_bytes()

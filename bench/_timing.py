"""Timing helpers shared by the benchmarks: best-of-N per-call cost, and a ratio line."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable


def per_call(fn: Callable[[], object], *, number: int = 20_000, repeat: int = 5) -> float:
    """Seconds per call of ``fn``: the best of ``repeat`` runs of ``number`` calls."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best


async def aper_call(
    fn: Callable[[], Awaitable[object]], *, number: int = 2_000, repeat: int = 5
) -> float:
    """Seconds per awaited call of ``fn``: the best of ``repeat`` runs of ``number`` calls."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            await fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best


def report(label: str, ours: float, baseline: float, baseline_label: str, goal: str = "") -> None:
    """Print one line: both costs in microseconds and their ratio (and the goal, if any)."""
    ratio = ours / baseline if baseline else float("inf")
    line = (
        f"{label:<44} {ours * 1e6:10.2f} us  vs {baseline_label:<32} "
        f"{baseline * 1e6:10.2f} us  ratio {ratio:8.3f}"
    )
    if goal:
        line += f"  (goal {goal})"
    print(line)

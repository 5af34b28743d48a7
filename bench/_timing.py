"""Timing helpers for the benchmarks: per-call costs, ratio lines, goal lines (median, min-max)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Awaitable, Callable, Sequence


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


def spread(samples: Sequence[float]) -> tuple[float, float, float]:
    """Median, min and max of ``samples`` (one per run)."""
    return statistics.median(samples), min(samples), max(samples)


def goal_line(
    label: str, ratios: Sequence[float], goal: float | None, *, at_least: bool = False
) -> None:
    """One ratio line: the median of several runs, their min-max, and the goal, met or not
    (``goal=None``: a line printed for comparison, without a goal)."""
    median, low, high = spread(ratios)
    line = f"{label:<58} ratio {median:7.3f} (min-max {low:.3f}-{high:.3f}, {len(ratios)} runs)"
    if goal is not None:
        met = median >= goal if at_least else median <= goal
        sign = ">=" if at_least else "<="
        line += f"  goal {sign} {goal:g}: {'met' if met else 'NOT met'}"
    print(line)

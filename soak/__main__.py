"""``python -m soak [--duration 2m] [--workers 3] [--rate 30] [--seed 17] [--keep DIR]``.

``make soak`` runs it (``make soak ARGS="--duration 10m"``). Exit 0 when every invariant held,
1 when one broke (the first is named), 2 when the soak itself could not run.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
from collections.abc import Callable
from pathlib import Path

from soak._report import judge
from soak._run import Settings, run

_DURATION = re.compile(r"([0-9]+(?:\.[0-9]+)?)([smh]?)")
_UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0}


def duration(text: str) -> float:
    """``90``, ``90s``, ``10m`` or ``1h`` as seconds."""
    match = _DURATION.fullmatch(text.strip())
    if match is None:
        raise argparse.ArgumentTypeError(f"not a duration (90s, 10m, 1h): {text!r}")
    seconds = float(match.group(1)) * _UNITS[match.group(2)]
    if seconds < 10:
        raise argparse.ArgumentTypeError(f"at least 10s of stream, got {text!r}")
    return seconds


def _positive(kind: Callable[[str], float]) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be positive, got {text!r}")
        return value

    return parse


def main(argv: list[str] | None = None) -> int:
    """Run the soak with the command line's settings; the exit status."""
    parser = argparse.ArgumentParser(prog="python -m soak", description=__doc__)
    parser.add_argument("--duration", type=duration, default=120.0, help="stream time (2m)")
    parser.add_argument("--workers", type=_positive(int), default=3, help="worker processes (3)")
    parser.add_argument("--rate", type=_positive(float), default=30.0, help="events/s (30)")
    parser.add_argument("--seed", type=int, default=17, help="the stream's and faults' seed")
    parser.add_argument("--keep", type=Path, help="copy logs and configuration here")
    args = parser.parse_args(argv)
    settings = Settings(
        duration=args.duration,
        workers=args.workers,
        rate=args.rate,
        seed=args.seed,
        keep=args.keep,
    )
    try:
        seen = asyncio.run(run(settings))
    except (RuntimeError, OSError) as exc:
        print(f"soak: cannot run: {exc}", file=sys.stderr)
        return 2
    report = judge(seen)
    print(report.render())
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())

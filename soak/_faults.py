"""The faults and their schedule: what breaks, when, and how long until all is well again.

Five kinds, each at least once, in a seeded order spread over the middle of the run (a cycle
of the five per two minutes of stream): ``kill -9`` of a random worker (the supervisor starts
it again), a PostgreSQL restart, termination of every LISTEN connection, one worker's store
unreachable for a few seconds, and a webhook delivery dropped mid-request.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

__all__ = ["KINDS", "OUTAGE_SECONDS", "Planned", "schedule"]

KINDS = ("kill", "pg_restart", "listen_kill", "store_outage", "webhook_drop")
#: How long a worker's store stays unreachable.
OUTAGE_SECONDS = 4.0
#: Seconds of stream per cycle of the five faults.
_CYCLE = 120.0

_DESCRIPTIONS = {
    "kill": "kill -9 of a random worker (the supervisor restarts it)",
    "pg_restart": "PostgreSQL restart (pg_ctl restart -m fast)",
    "listen_kill": "pg_terminate_backend of every LISTEN connection",
    "store_outage": f"one worker's store unreachable for {OUTAGE_SECONDS:g}s",
    "webhook_drop": "a webhook delivery cut after its request (retried elsewhere)",
}


@dataclass(frozen=True, slots=True)
class Planned:
    """A fault to inject ``offset`` seconds into the stream."""

    offset: float
    kind: str

    @property
    def description(self) -> str:
        """What the fault does, in words."""
        return _DESCRIPTIONS[self.kind]


def schedule(duration: float, seed: int) -> list[Planned]:
    """Each kind once per cycle, shuffled per cycle, evenly between 10 % and 85 % of the run."""
    rng = random.Random(seed)  # noqa: S311 - a reproducible schedule, not a secret
    cycles = max(1, round(duration / _CYCLE))
    kinds: list[str] = []
    for _ in range(cycles):
        cycle = list(KINDS)
        rng.shuffle(cycle)
        kinds.extend(cycle)
    start, end = 0.10 * duration, 0.85 * duration
    step = (end - start) / len(kinds)
    return [Planned(round(start + i * step, 1), kind) for i, kind in enumerate(kinds)]

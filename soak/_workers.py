"""The workers: N ``actorscope run`` processes on one ``bot.toml``, kept running.

Each slot has its own webhook port, its own Discord shards and its own database proxy (given
to its process as ``ACTORSCOPE_*`` overrides of the one file). A supervisor restarts a
process that dies (``kill -9`` is a fault), and samples every process's resident memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Instance", "Slot", "Supervisor", "rss_kib"]

_READY = "running agent"
_START_TIMEOUT = 60.0
_STOP_GRACE = 15.0


def rss_kib(pid: int) -> int | None:
    """The resident set size of ``pid`` in KiB (``None`` once it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


@dataclass(slots=True)
class Instance:
    """One process of a slot, from start to exit."""

    slot: int
    pid: int
    started: float
    #: Its stderr (warnings and errors); stdout is beside it as ``.out``.
    log: Path
    ready: float | None = None
    ended: float | None = None
    killed: float | None = None
    returncode: int | None = None
    #: ``(time, KiB)`` samples.
    rss: list[tuple[float, int]] = field(default_factory=list)


@dataclass(slots=True)
class Slot:
    """A worker's place: its port, shards and database URL, and its processes in order."""

    index: int
    webhook_port: int
    shard_ids: tuple[int, ...]
    database: str
    instances: list[Instance] = field(default_factory=list)
    process: asyncio.subprocess.Process | None = None

    @property
    def current(self) -> Instance | None:
        """The running (or starting) process, if any."""
        last = self.instances[-1] if self.instances else None
        return last if last is not None and last.ended is None else None


class Supervisor:
    """Starts the slots' processes, restarts those that die, samples their memory."""

    def __init__(self, config: Path, slots: list[Slot], env: Mapping[str, str], logs: Path) -> None:
        self._config = config
        self.slots = slots
        self._env = dict(env)
        self._logs = logs
        self._stopping = False
        self._tasks: list[asyncio.Task[None]] = []
        self._ready: dict[int, asyncio.Event] = {s.index: asyncio.Event() for s in slots}

    async def start(self) -> None:
        """Start every slot and wait until each says it is running."""
        for slot in self.slots:
            self._tasks.append(asyncio.create_task(self._keep(slot)))
        self._tasks.append(asyncio.create_task(self._sample()))
        await asyncio.wait_for(
            asyncio.gather(*(event.wait() for event in self._ready.values())), _START_TIMEOUT
        )

    def kill(self, slot: Slot) -> Instance | None:
        """``kill -9`` the slot's process (the supervisor starts a new one)."""
        instance = slot.current
        if instance is None or slot.process is None:
            return None
        instance.killed = time.time()
        self._ready[slot.index].clear()
        with contextlib.suppress(ProcessLookupError):
            os.kill(instance.pid, signal.SIGKILL)
        return instance

    async def stop(self) -> None:
        """SIGTERM every process (a clean shutdown), bounded; then SIGKILL what is left."""
        self._stopping = True
        for slot in self.slots:
            if slot.process is not None and slot.process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    slot.process.send_signal(signal.SIGTERM)
        waits = [s.process.wait() for s in self.slots if s.process is not None]
        try:
            await asyncio.wait_for(asyncio.gather(*waits), _STOP_GRACE)
        except TimeoutError:
            for slot in self.slots:
                if slot.process is not None and slot.process.returncode is None:
                    with contextlib.suppress(ProcessLookupError):
                        slot.process.kill()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def _slot_env(self, slot: Slot) -> dict[str, str]:
        return {
            **self._env,
            "ACTORSCOPE_DATABASE": slot.database,
            # Values are text: numbers and lists go in the section's JSON form (merged).
            "ACTORSCOPE_TELEGRAM": json.dumps({"port": slot.webhook_port}),
            "ACTORSCOPE_DISCORD": json.dumps({"shard_ids": list(slot.shard_ids)}),
        }

    async def _keep(self, slot: Slot) -> None:
        """Run the slot's process; start it again whenever it ends (until stopping)."""
        while not self._stopping:
            number = len(slot.instances)
            log = self._logs / f"worker{slot.index}.{number}.err"
            with log.open("wb") as sink:
                process = await asyncio.create_subprocess_exec(
                    sys.executable,
                    "-m",
                    "actorscope",
                    "run",
                    str(self._config),
                    env=self._slot_env(slot),
                    stdout=asyncio.subprocess.PIPE,
                    stderr=sink,
                )
            slot.process = process
            instance = Instance(slot.index, process.pid, time.time(), log)
            slot.instances.append(instance)
            assert process.stdout is not None
            with log.with_suffix(".out").open("wb") as sink:
                async for line in process.stdout:
                    sink.write(line)
                    sink.flush()
                    if instance.ready is None and _READY in line.decode(errors="replace"):
                        instance.ready = time.time()
                        self._ready[slot.index].set()
            instance.returncode = await process.wait()
            instance.ended = time.time()
            self._ready[slot.index].clear()
            if not self._stopping:
                await asyncio.sleep(0.2)

    async def _sample(self) -> None:
        while True:
            now = time.time()
            for slot in self.slots:
                instance = slot.current
                if instance is not None and instance.ready is not None:
                    kib = rss_kib(instance.pid)
                    if kib is not None:
                        instance.rss.append((now, kib))
            await asyncio.sleep(2.0)

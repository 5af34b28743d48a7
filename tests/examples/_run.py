"""Run one vendored official example in a subprocess against an emulator, bounded.

The examples are the libraries' own files, unchanged (see ``README.md``); ``launch.py`` points
each at the emulator the test started. A running example is an :class:`Example`: every wait on
it is bounded and fails at once, with the example's output, when the process ends first.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from pathlib import Path
from typing import TypeVar

from tests._wait import wait_until

HERE = Path(__file__).resolve().parent
PTB = HERE / "python-telegram-bot-22.8"
DPY = HERE / "discord.py-2.7.1"
LAUNCHER = HERE / "launch.py"
#: Seconds any wait on an example may take (its start, a reply).
BOUND = 20.0
_T = TypeVar("_T")


class ExampleExited(AssertionError):
    """The example's process ended while the test still waited on it."""


class Example:
    """A running example: its process and everything it printed."""

    def __init__(self, process: asyncio.subprocess.Process, log: Path) -> None:
        self.process = process
        self.log = log

    def output(self) -> str:
        """What the example printed so far (stdout and stderr)."""
        return self.log.read_text(encoding="utf-8", errors="replace")

    async def until(self, waiting: Awaitable[_T], seconds: float = BOUND) -> _T:
        """``waiting``'s result; fails when the process ends first or ``seconds`` pass."""
        task = asyncio.ensure_future(waiting)
        exited = asyncio.ensure_future(self.process.wait())
        try:
            done, _ = await asyncio.wait(
                {task, exited}, timeout=seconds, return_when="FIRST_COMPLETED"
            )
        finally:
            exited.cancel()
        if task in done:
            return task.result()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
        if exited in done:
            raise ExampleExited(f"the example exited ({self.process.returncode}):\n{self.output()}")
        raise TimeoutError(f"waited {seconds:g}s in vain; the example printed:\n{self.output()}")

    async def wait(self, condition: Callable[[], object], seconds: float = BOUND) -> None:
        """Wait until ``condition()`` is true (checked every 10 ms), bounded like :meth:`until`."""
        # The inner bound is a backstop only: :meth:`until` ends first and says why.
        await self.until(wait_until(lambda: bool(condition()), seconds + 1), seconds)

    async def stop(self) -> int:
        """Interrupt the example as Ctrl-C does; kill it if it has not ended within BOUND."""
        if self.process.returncode is None:
            self.process.send_signal(signal.SIGINT)
            try:
                await asyncio.wait_for(self.process.wait(), BOUND)
            except TimeoutError:
                self.process.kill()
                await self.process.wait()
        assert self.process.returncode is not None
        return self.process.returncode


def example_env(extra: Mapping[str, str]) -> dict[str, str]:
    """The test's environment without any real bot token, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_BOT_TOKEN")}
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra)
    return env


@contextlib.asynccontextmanager
async def launched(
    platform: str, script: Path, cwd: Path, env: Mapping[str, str]
) -> AsyncIterator[Example]:
    """Run ``script`` (``platform``: telegram or discord) in ``cwd`` for the block; its output
    is added to any failure of the block."""
    log = cwd / "example.log"
    for number in range(2, 100):  # a restarted example keeps its earlier runs' output
        if not log.exists():
            break
        log = cwd / f"example-{number}.log"
    with log.open("wb") as sink:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            str(LAUNCHER),
            platform,
            str(script),
            cwd=cwd,
            env=example_env(env),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=sink,
            stderr=asyncio.subprocess.STDOUT,
        )
    example = Example(process, log)
    try:
        yield example
    except AssertionError as exc:
        if not isinstance(exc, ExampleExited):
            exc.add_note(f"the example printed:\n{example.output()}")
        raise
    finally:
        await example.stop()

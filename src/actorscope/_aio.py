"""Asyncio helpers every package may share.

:class:`Site`: one aiohttp application served on one TCP socket, bound, cleaned up, never left
half-open (the Telegram webhook server and the Bot API emulator's loopback server).
:func:`read_lines`: the lines of a blocking stream (stdin) without blocking the loop (the
sandbox prompts: ``actorscope run --sandbox``, ``actorscope sandbox``, the PTB and aiogram
sandboxes).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from typing import TextIO

from aiohttp import web

__all__ = ["Site", "read_lines"]


class Site:
    """Serve an app on ``host:port``; ``port`` is the bound port while running, else ``None``."""

    def __init__(self) -> None:
        self._runner: web.AppRunner | None = None
        self.port: int | None = None

    @property
    def running(self) -> bool:
        """Whether :meth:`start` succeeded and :meth:`stop` has not been called since."""
        return self._runner is not None

    async def start(
        self, app: web.Application, host: str, port: int, *, shutdown_timeout: float
    ) -> int:
        """Bind and start answering; returns the bound port (useful with ``port = 0``).

        On any failure the runner is cleaned up before the exception propagates.
        """
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=shutdown_timeout)
        await runner.setup()
        try:
            await web.TCPSite(runner, host, port).start()
        except BaseException:
            await runner.cleanup()
            raise
        self._runner = runner
        self.port = int(runner.addresses[0][1])
        return self.port

    async def stop(self) -> None:
        """Close the socket and every connection; safe to call twice."""
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()
        self.port = None


async def read_lines(stream: TextIO) -> AsyncIterator[str]:
    """Lines of a blocking stream (stdin), read on a daemon thread so the event loop keeps running.

    A daemon thread (not the loop's executor) because a ``readline`` blocked on a terminal
    cannot be cancelled, and ``asyncio.run`` would wait for an executor thread at exit.
    """
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[str | None] = asyncio.Queue()

    def post(item: str | None) -> bool:
        try:
            loop.call_soon_threadsafe(queue.put_nowait, item)
        except RuntimeError:  # the loop is closed: nobody is listening any more
            return False
        return True

    def pump() -> None:
        for line in stream:
            if not post(line):
                return
        post(None)

    threading.Thread(target=pump, name="sandbox-stdin", daemon=True).start()
    while (line := await queue.get()) is not None:
        yield line

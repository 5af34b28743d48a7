"""A loopback TCP proxy between one worker and PostgreSQL, so its store can go away.

Each worker reaches the database through its own proxy. :meth:`Proxy.blackhole` makes the
store unreachable for that worker only, the way a network partition does: bytes stop moving in
both directions and new connections are accepted but not forwarded; when the partition heals,
everything held resumes (TCP retransmits; nothing is cut).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine
from typing import Any

__all__ = ["Proxy"]

_CHUNK = 65_536


class Proxy:
    """Forwards ``127.0.0.1:<port>`` to ``127.0.0.1:<target>``; an async context manager."""

    def __init__(self, target: int) -> None:
        self.target = target
        self._open = asyncio.Event()
        self._open.set()
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def port(self) -> int:
        """The listening port."""
        assert self._server is not None
        return int(self._server.sockets[0].getsockname()[1])

    async def __aenter__(self) -> Proxy:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._open.set()
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def blackhole(self, seconds: float) -> None:
        """Hold every byte and every new connection for ``seconds``, then let them through."""
        self._open.clear()
        try:
            await asyncio.sleep(seconds)
        finally:
            self._open.set()

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await self._open.wait()
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target)
        except OSError:
            writer.close()
            return
        self._spawn(self._pump(reader, up_writer))
        self._spawn(self._pump(up_reader, writer))

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(_CHUNK):
                await self._open.wait()
                writer.write(data)
                await writer.drain()
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            with contextlib.suppress(OSError, RuntimeError):
                writer.close()

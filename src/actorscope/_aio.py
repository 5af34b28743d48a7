"""One aiohttp application served on one TCP socket: bound, cleaned up, never left half-open.

Shared by the Telegram webhook server and the Bot API emulator's loopback server.
"""

from __future__ import annotations

from aiohttp import web

__all__ = ["Site"]


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

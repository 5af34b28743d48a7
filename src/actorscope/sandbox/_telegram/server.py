"""A loopback HTTP server that exposes a :class:`BotApiEmulator` as the Bot API.

It listens on ``127.0.0.1`` only, at ``http://127.0.0.1:<port>/bot<token>/<method>``, and
accepts what clients send the real Bot API: query strings, JSON bodies, urlencoded forms and
multipart forms (what PTB's default ``HTTPXRequest`` posts). Uploaded files are served back at
``/file/bot<token>/<file_path>`` (the path ``getFile`` answers). Point PTB at it with
``ApplicationBuilder().base_url(server.base_url)``. Port ``0`` picks a free port. A bot that
sets a webhook gets its updates POSTed through ``webhook_routes`` (:mod:`.webhooks`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from types import TracebackType
from typing import Any

from aiohttp import web

from actorscope._aio import Site
from actorscope.sandbox._prompt import Output
from actorscope.sandbox._telegram.console import TelegramConsole
from actorscope.sandbox._telegram.emulator import ApiResponse, BotApiEmulator
from actorscope.sandbox._telegram.errors import BotApiError
from actorscope.sandbox._telegram.files import Upload
from actorscope.sandbox._telegram.webhooks import WebhookDelivery

__all__ = ["LOOPBACK_HOST", "BotApiServer"]

_log = logging.getLogger("actorscope.sandbox.telegram")

LOOPBACK_HOST = "127.0.0.1"
# Long polls are ended by emulator.close() before cleanup, so shutdown never waits this long.
_SHUTDOWN_TIMEOUT = 2.0
_BODY_CUT = "Bad Request: the connection closed before the request body arrived"
_FORM_TYPES = frozenset({"application/x-www-form-urlencoded", "multipart/form-data"})


def _json_response(response: ApiResponse) -> web.Response:
    return web.Response(
        status=response.status, body=response.to_bytes(), content_type="application/json"
    )


async def _read_body(request: web.Request) -> dict[str, Any]:
    """The body's parameters; raises ``BotApiError`` for a body that cannot be read."""
    if not request.body_exists:
        return {}
    if request.content_type == "application/json":
        try:
            body = json.loads(await request.read())
        except ValueError:
            raise BotApiError(400, "Bad Request: can't parse JSON body") from None
        if not isinstance(body, dict):
            raise BotApiError(400, "Bad Request: the JSON body must be an object")
        return body
    if request.content_type in _FORM_TYPES:
        params: dict[str, Any] = {}
        for name, value in (await request.post()).items():
            if isinstance(value, web.FileField):
                params[name] = Upload(value.filename, value.content_type, value.file.read())
            else:
                params[name] = value
        return params
    raise BotApiError(400, f"Bad Request: unsupported content type {request.content_type!r}")


class BotApiServer:
    """Serve one emulator over HTTP on the loopback interface (an async context manager)."""

    def __init__(
        self,
        emulator: BotApiEmulator,
        *,
        port: int = 0,
        webhook_routes: Mapping[str, str] | None = None,
    ) -> None:
        if not 0 <= port <= 65535:
            raise BotApiError(400, f"Bad Request: port {port} is out of range")
        self.emulator = emulator
        self._requested_port = port
        self._site = Site()
        #: Delivers updates to the bot's webhook through ``webhook_routes`` (see
        #: :mod:`.webhooks`): each public HTTPS base URL a bot may set, with the loopback base
        #: URL that stands in for it.
        self.webhooks = WebhookDelivery(emulator, webhook_routes or {})

    def console(self, out: Output) -> TelegramConsole:
        """The sandbox prompt, typing at the served emulator as people and printing through
        ``out`` what the bot does; each typed line waits until the bot has fetched its update
        (a bot polls this server). ``close()`` it when done."""
        return TelegramConsole(self.emulator, out, wait_for_bot=True)

    @property
    def port(self) -> int:
        """The bound port (known once started)."""
        if self._site.port is None:
            raise RuntimeError("the server is not running")
        return self._site.port

    @property
    def base_url(self) -> str:
        """What to pass to ``ApplicationBuilder().base_url(...)``."""
        return f"http://{LOOPBACK_HOST}:{self.port}/bot"

    @property
    def root_url(self) -> str:
        """The server's root, what aiogram's ``TelegramAPIServer.from_base(...)`` takes."""
        return f"http://{LOOPBACK_HOST}:{self.port}"

    async def start(self) -> None:
        """Bind 127.0.0.1 and start answering."""
        if self._site.running:
            raise RuntimeError("the server is already running")
        app = web.Application()
        app.router.add_route("*", "/bot{token}/{method}", self._handle)
        app.router.add_get("/file/bot{token}/{file_path:.+}", self._download)
        app.router.add_route("*", "/{tail:.*}", self._not_found)
        await self._site.start(
            app, LOOPBACK_HOST, self._requested_port, shutdown_timeout=_SHUTDOWN_TIMEOUT
        )
        self.webhooks.start()

    async def stop(self) -> None:
        """End waiting long polls and webhook deliveries, then close every connection and the
        socket."""
        if not self._site.running:
            return
        self.emulator.close()
        await self.webhooks.stop()
        await self._site.stop()

    async def __aenter__(self) -> BotApiServer:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    async def _handle(self, request: web.Request) -> web.Response:
        params: dict[str, Any] = dict(request.query)
        try:
            params.update(await _read_body(request))
        except BotApiError as exc:
            return _json_response(ApiResponse.failure(exc))
        except ConnectionResetError:
            # The client gave up mid-body (a bot cancelling a request as it stops): nobody
            # reads this answer, and it is no server error worth a traceback.
            _log.debug("botapi.client_gone method=%s", request.match_info["method"])
            return _json_response(ApiResponse.failure(BotApiError(400, _BODY_CUT)))
        token = request.match_info["token"]
        response = await self.emulator.call(request.match_info["method"], params, token=token)
        return _json_response(response)

    async def _download(self, request: web.Request) -> web.Response:
        try:
            stored = self.emulator.download(
                request.match_info["file_path"], token=request.match_info["token"]
            )
        except BotApiError as exc:
            return _json_response(ApiResponse.failure(exc))
        return web.Response(
            body=stored.content, content_type=stored.mime_type or "application/octet-stream"
        )

    async def _not_found(self, request: web.Request) -> web.Response:
        return _json_response(ApiResponse.failure(BotApiError(404, "Not Found")))

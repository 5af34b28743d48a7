"""A python-telegram-bot ``BaseRequest`` that answers from a :class:`BotApiEmulator`, offline.

It reads :class:`telegram.request.RequestData` the way ``HTTPXRequest`` sends it
(``json_parameters``: strings, objects and arrays JSON-serialised; files as multipart parts),
so the emulator sees exactly what it would see over HTTP, without a socket::

    app = (
        ApplicationBuilder()
        .token(emu.token)
        .request(EmulatorRequest(emu))
        .get_updates_request(EmulatorRequest(emu))
        .build()
    )
"""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from telegram._utils.types import ODVInput
from telegram.error import TimedOut
from telegram.request import BaseRequest, RequestData

from actorscope.sandbox._telegram.emulator import ApiResponse, BotApiEmulator
from actorscope.sandbox._telegram.errors import BotApiError
from actorscope.sandbox._telegram.files import Upload

__all__ = ["EmulatorRequest", "decode_request_data", "split_bot_url", "split_file_url"]


def split_bot_url(url: str) -> tuple[str, str]:
    """``(token, method)`` of a ``.../bot<token>/<method>`` URL (empty strings if it is not)."""
    path = urlsplit(url).path
    head, _, method = path.rpartition("/")
    _, marker, token = head.rpartition("/bot")
    if not marker or not method:
        return "", ""
    return token, method


def split_file_url(url: str) -> tuple[str, str]:
    """``(token, file_path)`` of a ``.../file/bot<token>/<file_path>`` URL (empty if not one)."""
    # PTB percent-encodes the path of a file URL (the token's ":" too).
    _, marker, tail = unquote(urlsplit(url).path).partition("/file/bot")
    token, _, file_path = tail.partition("/")
    if not marker or not file_path:
        return "", ""
    return token, file_path


def _file_part(value: Any) -> Upload:
    """A multipart file tuple ``(filename, content, mime type)`` as an :class:`Upload`."""
    filename, content, mime_type = (*tuple(value), None, None, None)[:3]
    data = content.encode() if isinstance(content, str) else bytes(content or b"")
    return Upload(filename, mime_type, data)


def decode_request_data(data: RequestData | None) -> dict[str, Any]:
    """The parameters PTB would send over HTTP; uploaded files become :class:`Upload` parts."""
    if data is None:
        return {}
    params: dict[str, Any] = dict(data.json_parameters)
    if data.contains_files:
        for name, part in data.multipart_data.items():
            params[name] = _file_part(part)
    return params


class EmulatorRequest(BaseRequest):
    """Routes PTB's Bot API requests straight into an emulator (no network at all)."""

    __slots__ = ("_emulator", "_initialized", "_read_timeout")

    def __init__(self, emulator: BotApiEmulator, *, read_timeout: float | None = 5.0) -> None:
        self._emulator = emulator
        self._read_timeout = read_timeout
        self._initialized = False

    @property
    def read_timeout(self) -> float | None:
        """The default read timeout in seconds (PTB adds the poll timeout for getUpdates)."""
        return self._read_timeout

    async def initialize(self) -> None:
        """Nothing to open; remembers that it was initialized."""
        self._initialized = True

    async def shutdown(self) -> None:
        """Nothing to close."""
        self._initialized = False

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        write_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        connect_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        pool_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        """Answer one request from the emulator; a slow answer raises ``TimedOut``."""
        if not self._initialized:
            raise RuntimeError("This EmulatorRequest is not initialized!")
        token, file_path = split_file_url(url)
        if file_path:
            try:
                return 200, self._emulator.download(file_path, token=token).content
            except BotApiError as exc:
                return exc.error_code, ApiResponse.failure(exc).to_bytes()
        token, api_method = split_bot_url(url)
        if not api_method:
            return 404, b'{"ok": false, "error_code": 404, "description": "Not Found"}'
        params = dict(parse_qsl(urlsplit(url).query))
        params.update(decode_request_data(request_data))
        timeout = read_timeout if isinstance(read_timeout, float | int) else self._read_timeout
        if read_timeout is None:
            timeout = None
        call = self._emulator.call(api_method, params, token=token)
        try:
            response = await asyncio.wait_for(call, timeout)
        except TimeoutError as exc:
            raise TimedOut from exc
        return response.status, response.to_bytes()

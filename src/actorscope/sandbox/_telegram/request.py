"""Bot API requests as python-telegram-bot sends them: URLs and ``RequestData`` decoded.

:func:`decode_request_data` reads :class:`telegram.request.RequestData` the way
``HTTPXRequest`` sends it (``json_parameters``: strings, objects and arrays JSON-serialised;
files as multipart parts), so the emulator's ``request()`` (a PTB ``BaseRequest`` without a
socket) hands it exactly what it would see over HTTP.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urlsplit

from telegram.request import RequestData

from actorscope.sandbox._telegram.files import Upload

__all__ = ["decode_request_data", "split_bot_url", "split_file_url"]


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

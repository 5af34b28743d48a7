"""What guards every request: the body limit, the failed-authentication limiter, problems.

:class:`BodyLimit` is a plain ASGI middleware: it refuses a ``Content-Length`` over the limit
at once and reads any other body only up to the limit (then answers 413 without reading the
rest), so the app never holds more than :data:`MAX_BODY` bytes of one request.
:class:`FailureLimiter` counts failed authentications per client address in a fixed window,
in a bounded table (the oldest address goes first when it is full).
"""

from __future__ import annotations

import json
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

__all__ = [
    "MAX_BODY",
    "PROBLEM_JSON",
    "BodyLimit",
    "FailureLimiter",
    "Problem",
    "problem_body",
]

#: The largest request body accepted (bytes).
MAX_BODY = 64 * 1024
PROBLEM_JSON = "application/problem+json"

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_TITLES = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    409: "Conflict",
    413: "Content Too Large",
    422: "Unprocessable Content",
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
}


class Problem(Exception):
    """An error answered as ``application/problem+json`` (RFC 9457) with ``status``."""

    def __init__(
        self,
        status: int,
        detail: str,
        *,
        headers: dict[str, str] | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.headers = headers or {}
        self.extra = extra


def problem_body(status: int, detail: str, **extra: Any) -> dict[str, Any]:
    """The problem document for ``status``: type, title, status, detail and any extra members."""
    return {
        "type": "about:blank",
        "title": _TITLES.get(status, "Error"),
        "status": status,
        "detail": detail,
        **extra,
    }


class BodyLimit:
    """Refuse request bodies over ``limit`` bytes with 413, reading at most ``limit + 1``."""

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Buffer the body up to the limit, then replay it to the app; 413 past it."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", ()):
            if name == b"content-length" and (not value.isdigit() or int(value) > self.limit):
                await self._refuse(send)
                return
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                # The client went away: let the app see that as usual.
                await self.app(scope, _replay([message]), send)
                return
            body = message.get("body", b"")
            size += len(body)
            if size > self.limit:
                await self._refuse(send)
                return
            chunks.append(body)
            more = bool(message.get("more_body", False))
        whole = {"type": "http.request", "body": b"".join(chunks), "more_body": False}
        await self.app(scope, _replay([whole], receive), send)

    async def _refuse(self, send: Send) -> None:
        detail = f"the request body is larger than {self.limit} bytes"
        body = json.dumps(problem_body(413, detail)).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", PROBLEM_JSON.encode()),
                    (b"content-length", str(len(body)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


def _replay(messages: list[Message], then: Receive | None = None) -> Receive:
    """A ``receive`` that returns ``messages`` first, then defers to ``then`` (disconnects)."""
    pending = list(messages)

    async def receive() -> Message:
        if pending:
            return pending.pop(0)
        if then is not None:
            return await then()
        return {"type": "http.disconnect"}

    return receive


class FailureLimiter:
    """At most ``limit`` failed authentications per address per ``window`` seconds.

    Keeps at most ``max_addresses`` addresses (the least recently failing one is forgotten
    first), so a flood of addresses costs bounded memory.
    """

    def __init__(
        self,
        *,
        limit: int = 10,
        window: float = 60.0,
        max_addresses: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limit = limit
        self.window = window
        self.max_addresses = max_addresses
        self._clock = clock
        self._failures: OrderedDict[str, tuple[float, int]] = OrderedDict()

    def retry_after(self, address: str) -> int:
        """Seconds until ``address`` may try again (0: it may now)."""
        entry = self._failures.get(address)
        if entry is None:
            return 0
        start, count = entry
        left = start + self.window - self._clock()
        if left <= 0:
            del self._failures[address]
            return 0
        return max(1, int(left + 0.999)) if count >= self.limit else 0

    def failed(self, address: str) -> None:
        """Count one failed authentication from ``address``."""
        now = self._clock()
        start, count = self._failures.pop(address, (now, 0))
        if start + self.window <= now:
            start, count = now, 0
        self._failures[address] = (start, count + 1)
        while len(self._failures) > self.max_addresses:
            self._failures.popitem(last=False)

    def __len__(self) -> int:
        return len(self._failures)

"""What guards every request: the body limit, the failed-authentication limiter, problems.

:class:`BodyLimit` is a plain ASGI middleware: it refuses a ``Content-Length`` over the limit
at once and reads any other body only up to the limit (then answers 413 without reading the
rest), so the app never holds more than :data:`MAX_BODY` bytes of one request; a body that
takes longer than :data:`BODY_TIMEOUT` seconds to arrive is answered 408.
:class:`FailureLimiter` counts failed authentications per client address in a fixed window,
in a bounded table (the oldest address goes first when it is full).
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any

__all__ = [
    "BODY_TIMEOUT",
    "MAX_BODY",
    "PROBLEM_JSON",
    "BodyLimit",
    "FailureLimiter",
    "ForwardedFor",
    "Problem",
    "problem_body",
]

#: The largest request body accepted (bytes).
MAX_BODY = 64 * 1024
#: Seconds a request body may take to arrive (``[http] body_timeout`` has the same default).
BODY_TIMEOUT = 30.0
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
    408: "Request Timeout",
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
    """Refuse request bodies over ``limit`` bytes with 413, reading at most ``limit + 1``, and
    bodies slower than ``timeout`` seconds with 408."""

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY, timeout: float = BODY_TIMEOUT) -> None:
        self.app = app
        self.limit = limit
        self.timeout = timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Buffer the body up to the limit, then replay it to the app; 413 past it."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", ()):
            if name == b"content-length" and (not value.isdigit() or int(value) > self.limit):
                await self._too_large(send)
                return
        chunks: list[bytes] = []
        size = 0
        more = True
        deadline = asyncio.get_running_loop().time() + self.timeout
        while more:
            try:
                async with asyncio.timeout_at(deadline):
                    message = await receive()
            except TimeoutError:
                detail = f"the request body did not arrive within {self.timeout:g} seconds"
                await self._refuse(send, 408, detail)
                return
            if message["type"] != "http.request":
                # The client went away: let the app see that as usual.
                await self.app(scope, _replay([message]), send)
                return
            body = message.get("body", b"")
            size += len(body)
            if size > self.limit:
                await self._too_large(send)
                return
            chunks.append(body)
            more = bool(message.get("more_body", False))
        whole = {"type": "http.request", "body": b"".join(chunks), "more_body": False}
        await self.app(scope, _replay([whole], receive), send)

    async def _too_large(self, send: Send) -> None:
        await self._refuse(send, 413, f"the request body is larger than {self.limit} bytes")

    async def _refuse(self, send: Send, status: int, detail: str) -> None:
        body = json.dumps(problem_body(status, detail)).encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
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


class ForwardedFor:
    """Believe ``X-Forwarded-For`` and ``X-Forwarded-Proto`` from ``trusted`` proxies only.

    ``trusted`` are IP addresses or networks. A request whose peer is one of them gets as its
    client the rightmost ``X-Forwarded-For`` address that is not a trusted proxy (what the
    last trusted proxy saw; anything left of it the client could have written) and the
    forwarded scheme; any other request keeps its peer, whatever its headers say.
    """

    def __init__(self, app: ASGIApp, trusted: Sequence[str]) -> None:
        self.app = app
        self.trusted = tuple(ipaddress.ip_network(entry) for entry in trusted)

    def _is_proxy(self, host: str) -> bool:
        try:
            address = ipaddress.ip_address(host.strip().removeprefix("[").removesuffix("]"))
        except ValueError:
            return False
        return any(address in network for network in self.trusted)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Rewrite the client (and scheme) of a request a trusted proxy forwarded."""
        client = scope.get("client")
        if scope["type"] == "http" and client and self._is_proxy(str(client[0])):
            chain: list[str] = []
            proto = None
            for name, value in scope.get("headers", ()):
                if name == b"x-forwarded-for":
                    chain += [h.strip() for h in value.decode("latin-1").split(",") if h.strip()]
                elif name == b"x-forwarded-proto":
                    proto = value.decode("latin-1").strip().lower()
            host = next((h for h in reversed(chain) if not self._is_proxy(h)), None)
            scope = dict(scope)
            if host is not None:
                scope["client"] = (host, 0)
            if proto in ("http", "https"):
                scope["scheme"] = proto
        await self.app(scope, receive, send)


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

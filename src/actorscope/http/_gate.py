"""Bounds on the connections ``actorscope serve`` holds: how many, and how long one may idle.

uvicorn reads a request head for as long as its client trickles it, and accepts every
connection its socket offers, so a few hundred slow clients hold every file descriptor of the
process (the bots' too). :class:`ConnectionGate` bounds both, with plain public parts: it is
the ASGI app uvicorn runs (it wraps the real one) and gives uvicorn its HTTP protocol class
(``uvicorn.Config(http=gate.protocol)``), a thin :class:`asyncio.Protocol` around uvicorn's own
h11 protocol that sees each connection open and close.

- **Time.** A connection has ``header_timeout`` seconds, from opening or from the end of its
  previous request, to deliver a complete request head (its blank line arriving is the marker:
  from then on the wait is the server's, not the client's, and uvicorn either calls the app or
  refuses a malformed head and closes); then it is closed (with a 408 if it had sent part of
  one). While a request runs, its body
  must arrive within the app's body timeout (:class:`~actorscope.http._guard.BodyLimit`
  answers 408). Answers are small (a page of at most 100 audit rows), so a client that does
  not read them holds nothing: the transport buffers them whole.
- **Number.** At most ``max_connections`` are open. A new one beyond that closes the oldest
  connection that is neither running a request nor waiting for the app with a complete head
  (slow or idle ones yield to new clients, with a 408 if they had sent part of a head); when
  none may yield, the new one is answered 503 and closed. asyncio accepts up to
  :attr:`ConnectionGate.accept_batch` connections per loop turn before the gate sees them, so
  that is uvicorn's ``backlog``; the kernel still queues more (they hold no descriptor of the
  process).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.utils import get_local_addr, get_remote_addr

from actorscope.http._guard import PROBLEM_JSON, ASGIApp, Receive, Scope, Send, problem_body

__all__ = ["ConnectionGate"]

_Address = tuple[str, int | None] | None
#: A connection as both sides name it: (client address, server address).
_Peer = tuple[_Address, _Address]


def _raw_response(status: int, reason: str, detail: str) -> bytes:
    """A complete ``Connection: close`` HTTP/1.1 response with a problem document."""
    body = json.dumps(problem_body(status, detail)).encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: {PROBLEM_JSON}\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode() + body


#: The blank line that ends an HTTP/1.1 request head.
_HEAD_END = b"\r\n\r\n"
_TIMED_OUT = _raw_response(408, "Request Timeout", "the request head did not arrive in time")
_FULL = _raw_response(503, "Service Unavailable", "the server is at its connection limit")


class _Connection(asyncio.Protocol):
    """One client connection: uvicorn's h11 protocol inside, the gate's bookkeeping around."""

    def __init__(self, gate: ConnectionGate, inner: asyncio.Protocol) -> None:
        self.gate = gate
        self.inner = inner
        self.transport: asyncio.Transport | None = None
        self.peer: _Peer = (None, None)
        #: Requests of this connection the app is running (h11 runs one at a time).
        self.busy = 0
        #: Bytes arrived since the connection last went idle (a partial request head).
        self.partial = False
        #: A complete request head arrived since then (the app is about to run it).
        self.headed = False
        #: The last bytes that arrived, to find a head's end split between two reads.
        self._tail = b""
        self._deadline: asyncio.TimerHandle | None = None

    # -- asyncio.Protocol: what the transport tells the connection ------------------------------

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Admit the connection (or answer 503 and close it) and start its head deadline.

        A stream server's transport is an :class:`asyncio.Transport` (uvicorn's protocol
        declares the same).
        """
        self.transport = transport
        self.peer = (get_remote_addr(transport), get_local_addr(transport))
        if not self.gate.admit(self):
            transport.write(_FULL)
            transport.close()
            self.transport = None
            return
        self.inner.connection_made(transport)
        self.idle()

    def data_received(self, data: bytes) -> None:
        """Hand the bytes to uvicorn's protocol."""
        if self.transport is None:
            return
        if not self.busy and not self.headed:
            self.partial = True
            if _HEAD_END in self._tail + data:
                # The client delivered its head: the app's start is uvicorn's to make.
                self.headed = True
                self._stop_deadline()
            self._tail = data[-len(_HEAD_END) + 1 :]
        self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        """As uvicorn's protocol says."""
        return None if self.transport is None else self.inner.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        """Forget the connection; tell uvicorn's protocol."""
        self._stop_deadline()
        if self.transport is None:
            return
        self.gate.forget(self)
        self.transport = None
        self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        """As uvicorn's protocol does (its flow control)."""
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        """As uvicorn's protocol does (its flow control)."""
        self.inner.resume_writing()

    # -- what the gate does with it ------------------------------------------------------------

    def started(self) -> None:
        """The app runs a request of this connection: its head arrived in time."""
        self.busy += 1
        self.partial = self.headed = False
        self._stop_deadline()

    def finished(self) -> None:
        """The app finished a request: the next head has ``header_timeout`` seconds again."""
        self.busy -= 1
        if not self.busy and self.transport is not None:
            self.idle()

    def idle(self) -> None:
        """Start the head deadline (a request head has not arrived)."""
        self._stop_deadline()
        self.partial = self.headed = False
        self._tail = b""
        loop = asyncio.get_running_loop()
        self._deadline = loop.call_later(self.gate.header_timeout, self.timed_out)

    def timed_out(self) -> None:
        """No complete head in time: close the connection."""
        self._deadline = None
        if not self.busy and not self.headed:
            self.close()

    def close(self) -> None:
        """Close a connection that runs no request (a 408 first if part of a head arrived)."""
        if self.transport is not None:
            if self.partial:
                self.transport.write(_TIMED_OUT)
            self.transport.close()

    def _stop_deadline(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None


class ConnectionGate:
    """The ASGI app uvicorn runs (``app`` inside) and its protocol class (:attr:`protocol`).

    One gate per server: it knows that server's open connections and nothing else. The bounds
    come from ``[http]`` (:class:`~actorscope.bots.HttpSection` has their defaults).
    """

    def __init__(self, app: ASGIApp, *, max_connections: int, header_timeout: float) -> None:
        self.app = app
        self.max_connections = max_connections
        self.header_timeout = header_timeout
        # Oldest first (dicts keep insertion order): who yields first when the gate is full.
        self._open: dict[_Peer, _Connection] = {}
        self.protocol = self._protocol_class()

    @property
    def accept_batch(self) -> int:
        """How many connections asyncio accepts per loop turn (uvicorn's ``backlog``), before
        the gate sees any of them: it bounds how far a burst overshoots the limit, and a new
        connection outlives eight turns of newcomers (its head arrives and its request starts
        within a few) before it is the oldest idle one. The kernel's own queue stays longer
        (:data:`~actorscope.http._serve.LISTEN_BACKLOG`)."""
        return max(4, self.max_connections // 8)

    @property
    def open_connections(self) -> int:
        """How many connections are open now."""
        return len(self._open)

    def _protocol_class(self) -> type[asyncio.Protocol]:
        """uvicorn's ``http`` protocol class: its h11 protocol, wrapped by this gate."""
        gate = self

        class GatedH11Protocol(_Connection):
            """uvicorn's h11 protocol behind this gate (built as uvicorn builds its own)."""

            def __init__(self, **kwargs: Any) -> None:
                super().__init__(gate, H11Protocol(**kwargs))

        return GatedH11Protocol

    def admit(self, connection: _Connection) -> bool:
        """Make room for ``connection`` (closing the oldest idle one) or refuse it."""
        if len(self._open) >= self.max_connections:
            idle = next((c for c in self._open.values() if not (c.busy or c.headed)), None)
            if idle is None:
                return False
            self.forget(idle)
            idle.close()
        self._open[connection.peer] = connection
        return True

    def forget(self, connection: _Connection) -> None:
        """``connection`` is closed (or closing): it no longer counts."""
        if self._open.get(connection.peer) is connection:
            del self._open[connection.peer]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Run the app for one request, the connection marked busy meanwhile."""
        peer = (scope.get("client"), scope.get("server"))
        connection = self._open.get(peer) if scope["type"] == "http" else None
        if connection is None:
            await self.app(scope, receive, send)
            return
        connection.started()
        try:
            await self.app(scope, receive, send)
        finally:
            connection.finished()

"""Telegram's side of webhook mode: take updates from the emulator, POST them to the workers.

A small round-robin load balancer in front of the webhook workers, that retries a failed
delivery (no answer, a 5xx, a cut connection) on the next worker, as Telegram retries an
undelivered update. Probes are pinned to one worker. One delivery can be dropped mid-request
on purpose (a fault): the request is written whole and the connection cut before the answer,
so the worker may have the update while the dispatcher believes it failed.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import yarl

from actorscope.sandbox import BotApiEmulator

__all__ = ["SECRET_HEADER", "Delivery", "Dispatcher"]

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"  # noqa: S105 - a header name
#: Seconds one POST may take before it counts as failed (Telegram waits about this long).
_REQUEST_TIMEOUT = 30.0
#: Seconds an update is retried before the dispatcher gives up on it.
_GIVE_UP = 180.0
#: Seconds a pinned probe is retried on its worker.
_PINNED_GIVE_UP = 5.0
_CONCURRENCY = 40  # Telegram's default max_connections


@dataclass(slots=True)
class Delivery:
    """What became of one update: where it was tried, and where it was taken."""

    update_id: int
    attempts: list[tuple[int, str]] = field(default_factory=list)  # (slot, outcome)
    taken_by: int | None = None
    gave_up: bool = False


class Dispatcher:
    """Delivers the emulator's updates to ``urls`` (one per worker slot)."""

    def __init__(
        self,
        emu: BotApiEmulator,
        urls: list[str],
        secret: str,
        *,
        on_drop: Callable[[int, int], None] | None = None,
    ) -> None:
        self._emu = emu
        self._urls = urls
        self._secret = secret
        self._turn = itertools.cycle(range(len(urls)))
        self._queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._tasks: list[asyncio.Task[None]] = []
        self._session: aiohttp.ClientSession | None = None
        self._drop = False
        #: Told ``(update id, slot)`` when a delivery was cut on purpose.
        self.on_drop = on_drop
        #: Update id -> the slot it must go to (probes).
        self.pinned: dict[int, int] = {}
        #: Slot -> the update ids being delivered to it right now.
        self.in_flight: dict[int, set[int]] = {slot: set() for slot in range(len(urls))}
        self.deliveries: dict[int, Delivery] = {}
        self.retries = 0

    async def __aenter__(self) -> Dispatcher:
        self._session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=_CONCURRENCY * 2),
            timeout=aiohttp.ClientTimeout(total=_REQUEST_TIMEOUT),
        )
        self._tasks = [asyncio.create_task(self._fetch())]
        self._tasks += [asyncio.create_task(self._deliver_loop()) for _ in range(_CONCURRENCY)]
        return self

    async def __aexit__(self, *exc: object) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._session is not None:
            await self._session.close()

    def drop_next(self) -> None:
        """Cut the next delivery's connection after its request is written (a fault)."""
        self._drop = True

    @property
    def pending(self) -> int:
        """Updates fetched and not yet delivered or given up."""
        return self._queue.qsize() + sum(len(ids) for ids in self.in_flight.values())

    async def _fetch(self) -> None:
        offset = None
        while True:
            updates = await self._emu.queue.poll(offset=offset, limit=100, wait=1.0)
            for update in updates:
                offset = update["update_id"] + 1
                self._queue.put_nowait(update)

    async def _deliver_loop(self) -> None:
        while True:
            update = await self._queue.get()
            await self._deliver(update)

    async def _deliver(self, update: dict[str, Any]) -> None:
        update_id = int(update["update_id"])
        record = self.deliveries.setdefault(update_id, Delivery(update_id))
        pinned = self.pinned.get(update_id)
        slot = pinned if pinned is not None else next(self._turn)
        body = json.dumps(update).encode()
        started = time.monotonic()
        delay = 0.05
        while True:
            self.in_flight[slot].add(update_id)
            try:
                outcome = await self._post(slot, body, update_id)
            finally:
                self.in_flight[slot].discard(update_id)
            record.attempts.append((slot, outcome))
            if outcome in ("200", "400"):
                record.taken_by = slot
                return
            limit = _PINNED_GIVE_UP if pinned is not None else _GIVE_UP
            if time.monotonic() - started > limit:
                record.gave_up = True
                return
            self.retries += 1
            if pinned is None:
                slot = (slot + 1) % len(self._urls)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 1.0)

    async def _post(self, slot: int, body: bytes, update_id: int) -> str:
        if self._drop:
            self._drop = False
            await self._post_and_cut(slot, body)
            if self.on_drop is not None:
                self.on_drop(update_id, slot)
            return "dropped"
        assert self._session is not None
        try:
            async with self._session.post(
                self._urls[slot],
                data=body,
                headers={SECRET_HEADER: self._secret, "Content-Type": "application/json"},
            ) as response:
                await response.read()
                return str(response.status)
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            return type(exc).__name__

    async def _post_and_cut(self, slot: int, body: bytes) -> None:
        """Write the whole request, then cut the connection before any answer."""
        url = yarl.URL(self._urls[slot])
        try:
            _, writer = await asyncio.open_connection(url.host, url.port)
        except OSError:
            return
        head = (
            f"POST {url.path} HTTP/1.1\r\nHost: {url.host}:{url.port}\r\n"
            f"Content-Type: application/json\r\n{SECRET_HEADER}: {self._secret}\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        )
        with contextlib.suppress(OSError):
            writer.write(head.encode() + body)
            await writer.drain()
        writer.transport.abort()

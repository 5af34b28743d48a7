"""HTTP API: 200 concurrent ``POST /v1/agents/main/messages`` on loopback against uvicorn.

Reports requests per second and the p50/p99 latency of each round, and checks that every
request got its own reply exactly once (none lost, none duplicated). The server's connection
limit (``[http] max_connections``, 100 by default) is raised to the client's concurrency: this
measures throughput, not the limit (its tests are in tests/http).
"""

from __future__ import annotations

import asyncio
import collections
import tempfile
import time
from pathlib import Path

import httpx

from actorscope.agents import AgentRegistry
from actorscope.bots import HttpSection
from actorscope.http import ApiKeyStore, create_app
from actorscope.http._serve import running, url_of
from actorscope.messages import RunRequest
from actorscope.store import Database

CONCURRENT = 200
ROUNDS = 3


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def _round(http: httpx.AsyncClient, key: str, number: int) -> tuple[float, list[float]]:
    latencies: list[float] = []

    async def one(i: int) -> str:
        start = time.perf_counter()
        response = await http.post(
            "/v1/agents/main/messages",
            json={"content": f"r{number}-m{i}"},
            headers={"Authorization": f"Bearer {key}"},
        )
        latencies.append(time.perf_counter() - start)
        response.raise_for_status()
        reply: str = response.json()["reply"]
        return reply

    start = time.perf_counter()
    replies = await asyncio.gather(*(one(i) for i in range(CONCURRENT)))
    elapsed = time.perf_counter() - start
    assert sorted(replies) == sorted(f"echo r{number}-m{i}" for i in range(CONCURRENT))
    return elapsed, latencies


async def _main() -> None:
    seen: collections.Counter[str] = collections.Counter()

    async def handler(request: RunRequest) -> str:
        seen[request.content] += 1
        return f"echo {request.content}"

    with tempfile.TemporaryDirectory() as tmp:
        async with Database.open(Path(tmp) / "bench.db") as db:
            await AgentRegistry(db).create("main")
            key = (await ApiKeyStore(db).add(tenant="default", user_id="bench", role="member")).key
            section = HttpSection(
                agent="main", handler="unused:handler", port=0, max_connections=CONCURRENT
            )
            sock = section.listen()
            try:
                async with running(create_app(db, handler=handler), sock, section):
                    limits = httpx.Limits(max_connections=CONCURRENT)
                    async with httpx.AsyncClient(
                        base_url=url_of(sock), timeout=60, limits=limits
                    ) as http:
                        for number in range(ROUNDS):
                            elapsed, latencies = await _round(http, key, number)
                            print(
                                f"round {number}: {CONCURRENT} concurrent POST messages "
                                f"{CONCURRENT / elapsed:8.1f} req/s  "
                                f"p50 {_percentile(latencies, 0.5) * 1e3:7.1f} ms  "
                                f"p99 {_percentile(latencies, 0.99) * 1e3:7.1f} ms"
                            )
            finally:
                sock.close()
    assert all(count == 1 for count in seen.values())
    assert len(seen) == CONCURRENT * ROUNDS
    print(f"all {CONCURRENT * ROUNDS} messages handled exactly once")


def main() -> None:
    """Run the rounds and print one line each."""
    asyncio.run(_main())

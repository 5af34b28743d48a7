"""Several workers on one PostgreSQL database: grant changes reach every worker's cache.

Workers are OS processes running ``grant_worker.py`` (one JSON command per line); the
listener-drop test uses two database objects in this process so it can watch the cache.
Every wait is bounded. These tests need a PostgreSQL server (see ``tests/conftest.py``).
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import asyncpg
import pytest
from tests._wait import wait_until

from actorscope.agents import Agent, AgentRegistry
from actorscope.identity import Identity, PeerKind
from actorscope.permissions import GrantStore, PermissionPolicy
from actorscope.store import Database

WORKER = Path(__file__).with_name("grant_worker.py")
SCOPE = "group:telegram:-100777"  # the worker's scope
REPLY_TIMEOUT = 60.0

pytestmark = pytest.mark.parametrize("backend", ["postgresql"])


class Worker:
    """A worker process and its command pipe."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc

    async def read(self) -> dict[str, Any]:
        """The next JSON line the worker prints."""
        assert self.proc.stdout is not None
        line = await asyncio.wait_for(self.proc.stdout.readline(), timeout=REPLY_TIMEOUT)
        assert line, "worker exited early"
        reply: dict[str, Any] = json.loads(line)
        assert "error" not in reply, reply["error"]
        return reply

    async def send(self, op: str, **args: Any) -> None:
        """Send one command without waiting for its reply."""
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps({"op": op, **args}) + "\n").encode())
        await self.proc.stdin.drain()

    async def ask(self, op: str, **args: Any) -> dict[str, Any]:
        """Send one command and return its reply."""
        await self.send(op, **args)
        return await self.read()

    async def stop(self) -> None:
        """Ask the worker to quit and wait for it (killed if it does not)."""
        try:
            await self.send("quit")
            await asyncio.wait_for(self.proc.wait(), timeout=15)
        except (TimeoutError, ConnectionError):
            self.proc.kill()
            await self.proc.wait()


StartWorkers = Callable[[int], Awaitable[list[Worker]]]


@pytest.fixture
async def agent(db_target: str) -> AsyncIterator[Agent]:
    """The agent ``main`` in the test's fresh database."""
    async with Database.open(db_target) as db:
        yield await AgentRegistry(db).create("main")


@pytest.fixture
async def start_workers(db_target: str, agent: Agent) -> AsyncIterator[StartWorkers]:
    """Start ``n`` worker processes on the test's database; stopped after the test."""
    started: list[Worker] = []

    async def start(n: int) -> list[Worker]:
        workers = []
        for _ in range(n):
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                str(WORKER),
                db_target,
                agent.id,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
            )
            worker = Worker(proc)
            started.append(worker)
            workers.append(worker)
        for worker in workers:
            ready = await worker.read()
            assert not ready["listening"], "LISTEN starts with the first cached check"
        return workers

    yield start
    await asyncio.gather(*(w.stop() for w in started))


async def test_grant_in_one_worker_revoke_seen_by_another(start_workers: StartWorkers) -> None:
    """A grant made in one process is checked in another; its revoke reaches the other's cache."""
    granter, checker = await start_workers(2)
    assert (await checker.ask("check", user="42"))["reason"] == "no_grant"
    await granter.ask("grant", user="42")
    # A denial is not cached past the grant: the NOTIFY dropped it.
    seen = await checker.ask("until", user="42", allowed=True, timeout=10)
    assert seen["reached"]
    warm = await checker.ask("check", user="42")
    assert warm["allowed"]
    assert warm["cached"] == 1  # the allow is served from the cache from now on
    assert (await granter.ask("revoke", user="42"))["ok"]
    denied = await checker.ask("until", user="42", allowed=False, timeout=10)
    assert denied["reached"], f"the revoke never reached the other worker: {denied}"
    assert (await checker.ask("check", user="42"))["reason"] == "no_grant"


async def test_four_workers_concurrent_checks_and_changes_lose_nothing(
    start_workers: StartWorkers, db_target: str, agent: Agent
) -> None:
    """4 processes: 1,000 concurrent checks, 100 concurrent grants/revokes, nothing lost."""
    # Telegram sender ids (a group check refuses any other form): seeds 1ppkk, fresh 2ppkk.
    seeds = [str(10000 + 100 * p + k) for p in range(4) for k in range(5)]
    fresh = [[str(20000 + 100 * p + k) for k in range(20)] for p in range(4)]
    async with Database.open(db_target) as db:
        store = GrantStore(db)
        for user in seeds:
            await store.grant(
                agent_id=agent.id, scope=SCOPE, config_type="file_writer", sender_id=user
            )
    workers = await start_workers(4)
    everyone = seeds + [u for users in fresh for u in users]
    for worker in workers:  # warm every cache with the seeds' allows
        assert not (await worker.ask("verify", expected=dict.fromkeys(seeds, True), timeout=10))[
            "wrong"
        ]
    for p, worker in enumerate(workers):
        await worker.send(
            "storm",
            check_users=everyone,
            checks=250,
            grant=fresh[p],
            revoke=seeds[p * 5 : p * 5 + 5],
            timeout=60,
        )
    storms = [await worker.read() for worker in workers]
    assert [s["checks"] for s in storms] == [250] * 4
    assert [s["changed"] for s in storms] == [25] * 4
    expected = {u: u not in seeds for u in everyone}
    for worker in workers:
        verdict = await worker.ask("verify", expected=expected, timeout=15)
        assert verdict["wrong"] == [], f"a worker kept stale decisions: {verdict}"
    async with Database.open(db_target) as db:
        grants = await GrantStore(db).list(agent_id=agent.id)
        assert sorted(g.sender_id for g in grants) == sorted(u for u, ok in expected.items() if ok)
        rows = await db.fetchall(
            "SELECT action, COUNT(*) AS n FROM audit_log WHERE action LIKE 'grant.%' "
            "GROUP BY action ORDER BY action"
        )
        assert {r["action"]: r["n"] for r in rows} == {"grant.add": 100, "grant.remove": 20}


async def _allow_connections(server: str, name: str, allow: bool) -> None:
    conn = await asyncpg.connect(server, timeout=10)
    try:
        await conn.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS {str(allow).lower()}')
    finally:
        await conn.close()


async def _denied(policy: PermissionPolicy, member: Identity) -> bool:
    """Whether ``member``'s file_writer check is denied now."""
    return not (await policy.check_file_writer(member)).allowed


async def _cached_allow(policy: PermissionPolicy, store: GrantStore, member: Identity) -> None:
    """Check until the allow is cached (a NOTIFY landing during a cold read rightly skips it)."""

    async def allowed_and_cached() -> bool:
        assert (await policy.check_file_writer(member)).allowed
        return len(store.cache) == 1

    await wait_until(allowed_and_cached)


async def test_killed_listener_flushes_and_bypasses_the_cache(
    db_target: str, agent: Agent, postgres_server_url: str
) -> None:
    """Listener killed: cache flushed, checks read the database until it listens again."""
    name = urlsplit(db_target).path.lstrip("/")
    member = Identity(user_id=SCOPE, sender_id="42", peer_kind=PeerKind.GROUP, agent_id=agent.id)
    key: dict[str, Any] = {
        "agent_id": agent.id,
        "scope": SCOPE,
        "config_type": "file_writer",
        "sender_id": "42",
    }
    async with Database.open(db_target) as ours, Database.open(db_target) as theirs:
        store = GrantStore(ours)
        policy = PermissionPolicy(store)
        elsewhere = GrantStore(theirs)
        await elsewhere.grant(**key)
        await _cached_allow(policy, store, member)  # the first check starts the feed
        assert ours.listening
        pid = ours.listener_pid  # type: ignore[attr-defined]
        assert pid is not None
        # Keep the listener from coming back while we look (existing pool connections stay).
        await _allow_connections(postgres_server_url, name, False)
        try:
            await theirs.fetchall("SELECT pg_terminate_backend(?)", (pid,))
            await wait_until(lambda: not ours.listening, 10)
            assert len(store.cache) == 0
            async with store.watch() as watcher:
                assert await watcher.apoll()  # the one entry point reports the outage too
            await elsewhere.revoke(**key)  # its NOTIFY reaches nobody in `ours`
            assert not (await policy.check_file_writer(member)).allowed
            await elsewhere.grant(**key)
            assert (await policy.check_file_writer(member)).allowed
            assert len(store.cache) == 0  # every check went to the database
        finally:
            await _allow_connections(postgres_server_url, name, True)
        await wait_until(lambda: ours.listening, 15)
        await _cached_allow(policy, store, member)  # caching again
        await elsewhere.revoke(**key)
        await wait_until(lambda: _denied(policy, member), 10)

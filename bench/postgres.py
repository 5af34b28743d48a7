"""PostgreSQL vs SQLite: warm and cold checks, and revoke-to-denial time across processes.

Needs a PostgreSQL server: ``ACTORSCOPE_TEST_POSTGRES_URL`` (default
``postgresql://postgres@127.0.0.1:54329/postgres``); without one it says so and skips. A
database is created for the run and dropped after it.

The cross-process figure: a second OS process keeps checking a member whose allow it has
cached; this process revokes the grant; the time runs from the start of ``revoke()`` here to
the first denial there (the commit, the NOTIFY, and the other worker's next check).
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import asyncpg

from actorscope.agents import Agent, AgentRegistry
from actorscope.identity import Identity, PeerKind
from actorscope.permissions import GrantStore, PermissionPolicy
from actorscope.store import Database
from bench._timing import aper_call, report

SERVER = os.environ.get(
    "ACTORSCOPE_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:54329/postgres"
)
GROUP = "group:telegram:-100200"
ROUNDS = 200

# The checker process: warm its cache on "watch", then spin (yielding to the loop, so the
# NOTIFY is read) until the member is denied, and print when that happened.
CHECKER = """
import asyncio, json, sys, time
from actorscope.identity import Identity, PeerKind
from actorscope.permissions import GrantStore, PermissionPolicy
from actorscope.store import Database

async def main(url, agent_id):
    async with Database.open(url) as db:
        policy = PermissionPolicy(GrantStore(db))
        member = Identity(user_id=sys.argv[3], sender_id="42", peer_kind=PeerKind.GROUP,
                          agent_id=agent_id)
        print("ready", flush=True)
        while (await asyncio.to_thread(sys.stdin.readline)).strip() == "watch":
            deadline = time.monotonic() + 5
            while not (await policy.check_file_writer(member)).allowed:
                if time.monotonic() > deadline:
                    break
                await asyncio.sleep(0.0005)
            print("watching", flush=True)
            denied_at = None
            while time.monotonic() < deadline + 5:
                if not (await policy.check_file_writer(member)).allowed:
                    denied_at = time.monotonic()
                    break
                await asyncio.sleep(0)
            print(json.dumps(denied_at), flush=True)

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


def _database_url(name: str) -> str:
    base, _, _ = SERVER.rpartition("/")
    return f"{base}/{name}"


async def _admin(sql: str) -> None:
    conn = await asyncpg.connect(SERVER, timeout=5)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


async def _setup(
    target: str, key: str
) -> tuple[Database, Agent, GrantStore, PermissionPolicy, Identity]:
    db = await Database.connect(target)
    agent = await AgentRegistry(db).create(key)
    store = GrantStore(db)
    await store.grant(agent_id=agent.id, scope=GROUP, config_type="file_writer", sender_id="42")
    member = Identity(user_id=GROUP, sender_id="42", peer_kind=PeerKind.GROUP, agent_id=agent.id)
    return db, agent, store, PermissionPolicy(store), member


async def _checks(target: str) -> tuple[float, float]:
    """(warm, cold) seconds per check on ``target``."""
    db, agent, store, policy, member = await _setup(target, "checks")
    try:
        assert (await policy.check_file_writer(member)).allowed
        warm = await aper_call(lambda: policy.check_file_writer(member), number=20_000)

        async def cold() -> object:
            store.invalidate(agent.id)
            return await policy.check_file_writer(member)

        return warm, await aper_call(cold, number=500)
    finally:
        await db.close()


async def _revoke_to_denial(target: str) -> list[float]:
    """Seconds from a revoke here to the denial in another process, per round."""
    db, agent, store, _, _ = await _setup(target, "revokes")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", CHECKER, target, agent.id, GROUP,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdin is not None
    assert proc.stdout is not None

    async def line() -> str:
        assert proc.stdout is not None
        return (await asyncio.wait_for(proc.stdout.readline(), timeout=30)).decode().strip()

    key: dict[str, Any] = {
        "agent_id": agent.id, "scope": GROUP, "config_type": "file_writer", "sender_id": "42"
    }  # fmt: skip
    samples: list[float] = []
    try:
        assert await line() == "ready"
        for round_ in range(ROUNDS):
            if round_:
                await store.grant(**key)
            proc.stdin.write(b"watch\n")
            await proc.stdin.drain()
            assert await line() == "watching"
            started = time.monotonic()
            await store.revoke(**key)
            denied_at = json.loads(await line())
            if denied_at is not None:
                samples.append(denied_at - started)
    finally:
        proc.stdin.close()
        await asyncio.wait_for(proc.wait(), timeout=30)
        await db.close()
    return samples


async def _run() -> None:
    name = f"actorscope_bench_{os.getpid()}_{secrets.token_hex(3)}"
    try:
        await _admin(f'CREATE DATABASE "{name}"')
    except (OSError, asyncpg.PostgresError, TimeoutError) as exc:
        print(f"skipped: no PostgreSQL server usable at {SERVER.rpartition('@')[2]}: {exc}")
        return
    try:
        with tempfile.TemporaryDirectory() as tmp:
            sqlite_warm, sqlite_cold = await _checks(str(Path(tmp) / "bench.db"))
        pg_warm, pg_cold = await _checks(_database_url(name))
        samples = await _revoke_to_denial(_database_url(name))
    finally:
        await _admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    report("warm check_file_writer, PostgreSQL", pg_warm, sqlite_warm, "warm check, SQLite", "~1x")
    report("cold check_file_writer, PostgreSQL", pg_cold, sqlite_cold, "cold check, SQLite")
    if len(samples) < 2:
        print(f"revoke -> denial in another process: only {len(samples)} of {ROUNDS} rounds")
        return
    p99 = statistics.quantiles(samples, n=100)[98]
    print(
        f"revoke -> denial in another process ({len(samples)} of {ROUNDS} rounds): "
        f"median {statistics.median(samples) * 1e3:.2f} ms, p99 {p99 * 1e3:.2f} ms, "
        f"max {max(samples) * 1e3:.2f} ms"
    )


def main() -> None:
    """Print the PostgreSQL lines (or why they were skipped)."""
    asyncio.run(_run())


if __name__ == "__main__":
    main()

"""Freshness in every mode: the database owns its change feed; cached decisions follow grants.

A cached decision never outlives a grant change by more than a second in any process that
opened the store, whatever started it; where no feed runs, nothing is cached. The PostgreSQL
feed tests drive :class:`ChangeFeed` over a real connection wrapped in a seam that can stall
it or fail to connect. Every wait is bounded and ends on a marker, never on a sleep.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from tests._wait import wait_until

from actorscope.agents import Agent
from actorscope.errors import StoreError
from actorscope.identity import Identity, PeerKind
from actorscope.permissions import GrantStore, PermissionPolicy
from actorscope.permissions._cache import DecisionCache
from actorscope.store import Database, Row
from actorscope.store._base import ChangeSubscribers
from actorscope.store._listen import CHANGE_CHANNEL, ChangeFeed

WORKER = Path(__file__).with_name("grant_worker.py")
SCOPE = "group:telegram:-100777"  # the worker's scope
FEED_TASKS = {"actorscope-grant-epoch", "actorscope-change-feed"}


async def _until(condition: Callable[[], bool], within: float) -> float:
    """Wait (bounded) until ``condition()`` holds; return the seconds it took."""
    loop = asyncio.get_running_loop()
    start = loop.time()
    await wait_until(condition, within)
    return loop.time() - start


def _key(agent: Agent, user: str = "42") -> dict[str, Any]:
    return {"agent_id": agent.id, "scope": SCOPE, "config_type": "file_writer", "sender_id": user}


def _member(agent: Agent, user: str = "42") -> Identity:
    return Identity(user_id=SCOPE, sender_id=user, peer_kind=PeerKind.GROUP, agent_id=agent.id)


@pytest.mark.parametrize("backend", ["sqlite"])
async def test_library_mode_sees_another_process_revoke_within_a_second(
    db_target: str, db: Database, agent: Agent
) -> None:
    """A plain script (no watcher, no `actorscope run`) stops allowing within 1 s of a revoke:
    from its feed's first tick after the revoke (tests/permissions/_feed_ticks.py)."""
    store = GrantStore(db)
    await store.grant(**_key(agent))
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(WORKER),
        db_target,
        agent.id,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None

    async def ask(op: str, **args: Any) -> dict[str, Any]:
        assert proc.stdin is not None
        assert proc.stdout is not None
        proc.stdin.write((json.dumps({"op": op, **args}) + "\n").encode())
        await proc.stdin.drain()
        reply: dict[str, Any] = json.loads(
            await asyncio.wait_for(proc.stdout.readline(), timeout=60)
        )
        assert "error" not in reply, reply["error"]
        return reply

    try:
        ready = json.loads(await asyncio.wait_for(proc.stdout.readline(), timeout=60))
        assert ready["ready"]
        assert ready["within_bound"]
        assert (await ask("until", user="42", allowed=True, timeout=10))["reached"]
        warm = await ask("check", user="42")
        assert warm["allowed"]
        assert warm["cached"] == 1  # the worker caches: only a feed may make that safe
        assert await store.revoke(**_key(agent))
        denied = await ask("until", user="42", allowed=False, timeout=10)  # bounds a hang only
        assert denied["reached"], f"the revoke never reached the library process: {denied}"
        assert denied["ticks"] <= 1, denied
    finally:
        proc.stdin.write(b'{"op": "quit"}\n')
        await proc.stdin.drain()
        try:
            await asyncio.wait_for(proc.wait(), timeout=15)
        except TimeoutError:
            proc.kill()
            await proc.wait()


@pytest.mark.parametrize("backend", ["sqlite"])
async def test_failed_poll_suspends_caching_until_a_poll_rereads_the_epoch(
    tmp_path: Path, db: Database, agent: Agent, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a failed epoch poll nothing is cached, so a revoke right after it is not missed."""
    store = GrantStore(db)
    policy = PermissionPolicy(store)
    member = _member(agent)
    await store.grant(**_key(agent))
    watcher = store.watch()
    await watcher.apoll()
    failing = True
    real_fetchone = db.fetchone

    async def fetchone(sql: str, params: Sequence[object] = ()) -> Row | None:
        if failing and "grant_epoch" in sql:
            raise StoreError("database read failed: disk I/O error")
        return await real_fetchone(sql, params)

    monkeypatch.setattr(db, "fetchone", fetchone)
    assert await watcher.apoll() is True
    assert store.cache.suspended
    assert (await policy.check_file_writer(member)).allowed  # read from the database...
    assert len(store.cache) == 0  # ...and not kept
    async with Database.open(tmp_path / "t.db") as theirs:  # another process, as SQLite sees it
        assert await GrantStore(theirs).revoke(**_key(agent))
    failing = False
    await watcher.apoll()
    assert not store.cache.suspended
    assert not (await policy.check_file_writer(member)).allowed


async def test_feed_starts_with_the_first_cached_check_and_stops_on_close(
    db_target: str, agent: Agent
) -> None:
    """No feed and no cache before the first check; the check starts it; close() stops it."""
    db = await Database.connect(db_target)
    try:
        store = GrantStore(db)
        await store.grant(**_key(agent))
        assert not db.listening
        assert store.cache.suspended  # no feed runs: nothing may be cached
        assert (await PermissionPolicy(store).check_file_writer(_member(agent))).allowed
        assert db.listening
        assert len(store.cache) == 1  # the very first check is cached once the feed is up
        assert FEED_TASKS & {t.get_name() for t in asyncio.all_tasks()}
    finally:
        await db.close()
    assert not FEED_TASKS & {t.get_name() for t in asyncio.all_tasks()}
    assert not db.listening
    assert store.cache.suspended


class _Cache:
    """A change listener over a decision cache, as a GrantStore is."""

    def __init__(self) -> None:
        self.cache: DecisionCache[str] = DecisionCache()
        #: How many times the feed said it was lost (a reconnect may end the suspension
        #: before a poll of ``cache.suspended`` sees it, so tests wait for this count).
        self.losses = 0

    def on_remote_change(self, key: str) -> None:
        """Forget one agent."""
        self.cache.invalidate(key)

    def on_feed_lost(self) -> None:
        """Cache nothing."""
        self.losses += 1
        self.cache.suspend()

    def on_feed_restored(self) -> None:
        """Forget everything, cache again."""
        self.cache.resume()


class _Stallable:
    """A LISTEN connection that can stall: queries hang and notifications stop arriving."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.stalled = False
        #: Queries sent: the feed's probes (the only queries on its LISTEN connection).
        self.probes = 0
        self._resume = asyncio.Event()

    def stall(self) -> None:
        """From now on nothing goes through this connection."""
        self.stalled = True

    async def add_listener(self, channel: str, callback: Callable[..., None]) -> None:
        """LISTEN; notifications are withheld while stalled."""

        def forward(conn: Any, pid: int, chan: str, payload: str) -> None:
            if not self.stalled:
                callback(self, pid, chan, payload)

        await self.conn.add_listener(channel, forward)

    async def execute(self, *args: Any) -> Any:
        """A query; hangs while stalled (until the connection is closed)."""
        self.probes += 1
        if self.stalled:
            await self._resume.wait()
        return await self.conn.execute(*args)

    def add_termination_listener(self, callback: Callable[[Any], None]) -> None:
        """Called with this wrapper when the real connection closes."""
        self.conn.add_termination_listener(lambda conn: callback(self))

    def is_closed(self) -> bool:
        """True once the real connection is closed."""
        return bool(self.conn.is_closed())

    def get_server_pid(self) -> int:
        """The real connection's backend pid."""
        return int(self.conn.get_server_pid())

    async def close(self) -> None:
        """Close the real connection (a stalled one is terminated)."""
        self._resume.set()
        if self.stalled:
            self.conn.terminate()
        else:
            await self.conn.close()

    def terminate(self) -> None:
        """Terminate the real connection."""
        self._resume.set()
        self.conn.terminate()


@pytest.mark.parametrize("backend", ["postgresql"])
async def test_stalled_listen_suspends_caching_then_recovers(db_target: str, agent: Agent) -> None:
    """A LISTEN connection that stops hearing anything misses a probe: caching stops within 1 s,
    at the probe in flight or the next one (counted, not timed: tests/permissions/_feed_ticks.py),
    a probe and its timeout being within the second."""
    defaults = inspect.signature(ChangeFeed).parameters
    assert defaults["probe_interval"].default + defaults["probe_timeout"].default <= 1.0
    opened: list[_Stallable] = []

    async def connect() -> _Stallable:
        conn = _Stallable(await asyncpg.connect(db_target, timeout=10))
        opened.append(conn)
        return conn

    subscribers = ChangeSubscribers()
    listener = _Cache()
    subscribers.add(listener)
    feed = ChangeFeed(connect, subscribers)
    await feed.start()
    try:
        assert feed.live
        assert listener.cache.put((agent.id, "x"), "allow", listener.cache.generation(agent.id))
        losses, probes = listener.losses, opened[-1].probes
        opened[-1].stall()
        await _until(lambda: listener.losses > losses, 10)  # bounds a hang only
        assert opened[-1].probes - probes <= 1, "a stalled LISTEN went unnoticed past a probe"
        assert listener.cache.get((agent.id, "x")) is None  # flushed when the feed was lost
        await _until(lambda: feed.live, 10)  # a fresh connection, probed, listens again
        assert len(opened) >= 2
        assert not listener.cache.suspended
        async with Database.open(db_target) as elsewhere:  # its NOTIFYs reach the new feed
            assert listener.cache.put((agent.id, "x"), "allow", listener.cache.generation(agent.id))
            await GrantStore(elsewhere).grant(**_key(agent))
            await _until(lambda: listener.cache.get((agent.id, "x")) is None, 10)
    finally:
        await feed.close()


@pytest.mark.parametrize("backend", ["postgresql"])
async def test_feed_reconnects_after_an_internal_client_error(db_target: str) -> None:
    """asyncpg's InternalClientError while connecting is retried with backoff, not fatal."""
    attempts: list[int] = []

    async def connect() -> Any:
        attempts.append(1)
        if len(attempts) <= 2:
            raise asyncpg.InternalClientError("cannot switch to state 12; another operation")
        return await asyncpg.connect(db_target, timeout=10)

    subscribers = ChangeSubscribers()
    listener = _Cache()
    subscribers.add(listener)
    feed = ChangeFeed(connect, subscribers)
    await feed.start()  # the first attempt fails quietly; the background task retries
    try:
        assert listener.cache.suspended
        await _until(lambda: feed.live, 10)
        assert len(attempts) == 3
        assert not listener.cache.suspended
    finally:
        await feed.close()
    assert listener.cache.suspended


@pytest.mark.parametrize("backend", ["postgresql"])
async def test_open_wraps_an_internal_client_error(
    db_target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """InternalClientError while opening is one StoreError naming the server, never raw."""

    async def broken_pool(*args: Any, **kwargs: Any) -> Any:
        raise asyncpg.InternalClientError("cannot switch to state 12; another operation")

    monkeypatch.setattr(asyncpg, "create_pool", broken_pool)
    with pytest.raises(StoreError, match=r"cannot connect to PostgreSQL at .*another operation"):
        async with Database.open(db_target):
            pass


async def test_same_file_opened_twice_in_one_process_sees_changes(
    tmp_path: Path, agent: Agent, db_target: str
) -> None:
    """Two Database objects on one store in one process: each one's feed hears the other."""
    async with Database.open(db_target) as ours, Database.open(db_target) as theirs:
        store = GrantStore(ours)
        policy = PermissionPolicy(store)
        member = _member(agent)
        await GrantStore(theirs).grant(**_key(agent))
        assert (await policy.check_file_writer(member)).allowed
        assert await GrantStore(theirs).revoke(**_key(agent))
        await _until(lambda: len(store.cache) == 0, 2)
        assert not (await policy.check_file_writer(member)).allowed


@pytest.mark.parametrize("backend", ["postgresql"])
async def test_probes_wake_no_other_worker(db_target: str, agent: Agent) -> None:
    """A feed probes on a channel of its own: other workers' LISTENs hear only real changes."""
    heard: list[str] = []
    other = await asyncpg.connect(db_target, timeout=10)
    try:
        await other.add_listener(CHANGE_CHANNEL, lambda *args: heard.append(args[3]))
        subscribers = ChangeSubscribers()
        subscribers.add(_Cache())
        feed = ChangeFeed(lambda: asyncpg.connect(db_target, timeout=10), subscribers)
        await feed.start()  # live only after its first probe was answered
        try:
            assert feed.live
            async with Database.open(db_target) as elsewhere:  # the marker: one real change
                await GrantStore(elsewhere).grant(**_key(agent))
            await _until(lambda: bool(heard), 10)
        finally:
            await feed.close()
        assert heard == [agent.id]
    finally:
        await other.close()

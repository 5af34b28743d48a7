"""Console sessions live on the server (issue 26, defect 5): signing out ends a session at
once, in every process sharing the database; so do expiry and revoking its key."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack

import httpx
import pytest
from tests.http.test_http_console import _field, sign_in

from actorscope.agents import AgentRegistry
from actorscope.http import ApiKeyStore, create_app
from actorscope.http._console import SESSION_COOKIE
from actorscope.http._sessions import ConsoleSessions
from actorscope.permissions import GrantStore
from actorscope.store import Database

GROUP = "group:telegram:-100200"
GRANT = {"agent": "main", "scope": GROUP, "sender_id": "7", "config_type": "cron"}


@pytest.fixture
async def two_processes(db_target: str) -> AsyncIterator[tuple[httpx.AsyncClient, ...]]:
    """Two apps, each on its own connection to one database (what two serve processes
    sharing it are), and a client of each."""
    async with AsyncExitStack() as stack:
        clients = []
        for _ in range(2):
            db = await stack.enter_async_context(Database.open(db_target))
            transport = httpx.ASGITransport(app=create_app(db))
            clients.append(
                await stack.enter_async_context(
                    httpx.AsyncClient(transport=transport, base_url="http://testserver")
                )
            )
        yield tuple(clients)


async def test_sign_out_ends_the_session_in_every_process(
    db_target: str, two_processes: tuple[httpx.AsyncClient, ...]
) -> None:
    """A session started by one process works in the other; signed out there, its old cookie
    and CSRF token add no grant in either, and every page sends it back to sign-in."""
    first, second = two_processes
    async with Database.open(db_target) as db:
        await AgentRegistry(db).create("main")
        key = (await ApiKeyStore(db).add(tenant="default", user_id="ops", role="operator")).key
    assert (await sign_in(first, key)).status_code == 303
    cookie = {"Cookie": f"{SESSION_COOKIE}={first.cookies[SESSION_COOKIE]}"}
    second.cookies.clear()
    page = await second.get("/console/grants", headers=cookie)
    assert page.status_code == 200
    csrf = _field(page.text, "csrf")
    assert _field((await first.get("/console/grants")).text, "csrf") == csrf
    out = await second.post("/console/logout", data={"csrf": csrf}, headers=cookie)
    assert out.status_code == 303
    for client in (first, second):
        client.cookies.clear()
        added = await client.post(
            "/console/grants/add", data={**GRANT, "csrf": csrf}, headers=cookie
        )
        assert added.status_code == 303
        assert added.headers["location"].endswith("/console/login")
        gone = await client.get("/console/agents", headers=cookie)
        assert gone.headers["location"].endswith("/console/login")
    async with Database.open(db_target) as db:
        assert await GrantStore(db).list(scope=GROUP) == []
        row = await db.fetchone("SELECT COUNT(*) AS n FROM console_sessions")
        assert row is not None
        assert row["n"] == 0


async def test_expired_and_revoked_sessions_are_refused(db: Database) -> None:
    """A session past its time, or of a revoked key, is no session; an unknown or overlong
    token is none either; expired rows are deleted when the next session starts."""
    keys = ApiKeyStore(db)
    new = await keys.add(tenant="default", user_id="ops", role="admin")
    sessions = ConsoleSessions(db)
    live = await sessions.start(new.record)
    found = await sessions.find(live.token)
    assert found is not None
    assert (found.key.id, found.csrf) == (new.record.id, live.csrf)
    expired = await ConsoleSessions(db, seconds=0).start(new.record)
    assert await sessions.find(expired.token) is None
    for token in ("", "x" * 43, "x" * 5000, "\x00", "é" * 43):
        assert await sessions.find(token) is None
    await sessions.start(new.record)
    row = await db.fetchone("SELECT COUNT(*) AS n FROM console_sessions")
    assert row is not None
    assert row["n"] == 2  # the live ones; the expired one is gone
    await keys.revoke(new.record.prefix)
    assert await sessions.find(live.token) is None

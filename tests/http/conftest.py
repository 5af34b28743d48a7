"""Fixtures of the HTTP API tests: an app over the test database, keys of every role, clients."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import pytest
from fastapi import FastAPI

from actorscope.agents import Agent
from actorscope.bots import HttpSection
from actorscope.context import current_identity
from actorscope.http import ApiKeyStore, create_app
from actorscope.http._keys import ROLES
from actorscope.http._serve import running, url_of
from actorscope.messages import RunRequest
from actorscope.store import Database

#: Tables a failed request must leave as they were.
TABLES = ("config_permissions", "audit_log", "api_keys", "agents", "tenants")


async def echo(request: RunRequest) -> str:
    """A handler that answers with the identity it ran as (request and bound context)."""
    bound = current_identity()
    assert bound is not None
    return (
        f"user={request.user_id} sender={request.sender_id!r} role={request.role} "
        f"channel={request.channel} bound_role={bound.role} bound_user={bound.user_id} "
        f"content={request.content}"
    )


@pytest.fixture
async def keys(db: Database, agent: Agent) -> dict[str, str]:
    """One key per role for user ``<role>-user`` of the default tenant."""
    store = ApiKeyStore(db)
    made = {}
    for role in ROLES:
        made[role] = (await store.add(tenant="default", user_id=f"{role}-user", role=role)).key
    return made


@pytest.fixture
def app(db: Database) -> FastAPI:
    """The API and console over the test database, answering messages with :func:`echo`."""
    return create_app(db, handler=echo)


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    """An httpx client talking to the app in-process."""
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        yield http


def bearer(key: str) -> dict[str, str]:
    """The Authorization header of ``key``."""
    return {"Authorization": f"Bearer {key}"}


async def row_counts(db: Database) -> dict[str, int]:
    """How many rows each table in :data:`TABLES` has (and api_keys' last_used_at values)."""
    counts = {}
    for table in TABLES:
        row = await db.fetchone(f"SELECT COUNT(*) AS n FROM {table}")
        assert row is not None
        counts[table] = int(row["n"])
    used = await db.fetchone("SELECT COUNT(last_used_at) AS n FROM api_keys")
    assert used is not None
    counts["api_keys.last_used_at"] = int(used["n"])
    return counts


@pytest.fixture
async def live_server(app: FastAPI) -> AsyncIterator[str]:
    """The app under a real uvicorn on 127.0.0.1 (a free port); yields its base URL."""
    async with serving(app) as url:
        yield url


@asynccontextmanager
async def serving(app: FastAPI, section: HttpSection | None = None) -> AsyncIterator[str]:
    """``app`` under uvicorn on a free port of 127.0.0.1 for the block (with ``section``'s
    bounds, default ``HttpSection()``'s); its base URL."""
    sock = HttpSection(host="127.0.0.1", port=0).listen()
    try:
        async with running(app, sock, section):
            yield url_of(sock)
    finally:
        sock.close()

"""``actorscope serve`` and tenants: the served agent is one agent (its UUID), never every agent
of its key; a key of another tenant reaches nothing of the served tenant (issue 26, defect 1)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
from tests._wait import wait_until
from tests.http.conftest import bearer

from actorscope.agents import AgentRegistry
from actorscope.bots import BotConfig
from actorscope.errors import IdentityError
from actorscope.http import ApiKeyStore, create_app
from actorscope.http._serve import serve
from actorscope.store import Database

#: A handler that writes ``notes.txt`` of the caller's scope ("write TEXT") or reads it back,
#: with the services ``serve`` gives it (the served agent's workspace).
HANDLER = """\
from actorscope.bots import BotServices
from actorscope.context import current_identity


async def handle(request):
    services = BotServices.current()
    identity = current_identity()
    path = services.workspace.resolve(services.agent, identity, "notes.txt")
    if request.content.startswith("write "):
        services.workspace.write(services.agent, identity, "notes.txt", request.content[6:])
        return "written"
    return path.read_text() if path.exists() else "(no notes)"
"""


@asynccontextmanager
async def _serving(tmp_path: Path, database: str, module: str) -> AsyncIterator[str]:
    """``serve()`` of a file with [http] only, on a free loopback port; its base URL."""
    (tmp_path / f"{module}.py").write_text(HANDLER)
    path = tmp_path / "bot.toml"
    path.write_text(
        f'database = "{database}"\nworkspace = "{tmp_path / "ws"}"\n\n[http]\n'
        f'host = "127.0.0.1"\nport = 0\nagent = "main"\nhandler = "{module}:handle"\n'
    )
    config = BotConfig.load(path, require_bots=False)
    assert config.http is not None
    sock = config.http.listen()
    lines: list[str] = []
    stop = asyncio.Event()
    task = asyncio.create_task(
        serve(config, sock, out=lines.append, stop=stop, handle_signals=False)
    )
    try:
        await wait_until(lambda: bool(lines) or task.done(), 10)
        host, port = sock.getsockname()[:2]
        yield f"http://{host}:{port}"
    finally:
        stop.set()
        await asyncio.wait({task}, timeout=10)
        sock.close()
    assert task.exception() is None


async def test_a_key_of_another_tenant_never_reaches_the_served_agent(
    db_target: str, backend: str, tmp_path: Path
) -> None:
    """Tenants default and acme both have agent main and user bob; serve serves default's
    main. acme's bob gets the 404 of an unknown agent (by key and by the served UUID), and
    never reads nor overwrites default's bob's notes."""
    async with Database.open(db_target) as db:
        registry = AgentRegistry(db)
        served = await registry.create("main")
        await registry.create_tenant("acme")
        await registry.create("main", "acme")
        keys = ApiKeyStore(db)
        ours = (await keys.add(tenant="default", user_id="bob", role="member")).key
        theirs = (await keys.add(tenant="acme", user_id="bob", role="member")).key
    async with (
        _serving(tmp_path, db_target, f"tenants_bot_{backend}") as url,
        httpx.AsyncClient(base_url=url, timeout=10) as http,
    ):

        async def say(key: str, agent: str, content: str) -> httpx.Response:
            return await http.post(
                f"/v1/agents/{agent}/messages", json={"content": content}, headers=bearer(key)
            )

        assert (await say(ours, "main", "write default bob's secret")).json()["reply"] == "written"
        unknown = await say(theirs, "ghost", "read")
        assert unknown.status_code == 404
        for agent in ("main", served.id):
            for content in ("read", "write acme was here"):
                answer = await say(theirs, agent, content)
                assert answer.status_code == 404
                assert answer.headers["content-type"] == "application/problem+json"
                assert answer.json() == {
                    **unknown.json(),
                    "detail": unknown.json()["detail"].replace("ghost", agent),
                }
        assert (await say(ours, "main", "read")).json()["reply"] == "default bob's secret"


@pytest.mark.sqlite_only("the subject is create_app's argument check, before any query")
async def test_create_app_refuses_an_agent_key_for_the_served_agent(db: Database) -> None:
    """create_app(agent=...) takes the Agent or its UUID; a key, which names an agent in
    every tenant, is one clear error."""
    with pytest.raises(IdentityError, match="served agent's UUID or Agent"):
        create_app(db, agent="main")
    agent = await AgentRegistry(db).create("main")
    assert create_app(db, agent=agent).state.operations.served_agent == agent.id
    assert create_app(db, agent=agent.id.upper()).state.operations.served_agent == agent.id

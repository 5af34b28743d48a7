"""The app over the composition root: an agent's ``Assembly`` gives the operators' stores and
the one run step of its messages; over a bare database each agent is assembled once."""

from __future__ import annotations

import httpx
import pytest
from tests.http.conftest import bearer

from actorscope.agents import Agent, AgentRegistry
from actorscope.assembly import AgentSettings, assemble
from actorscope.context import current_identity
from actorscope.errors import ConfigError
from actorscope.http import ApiKeyStore, create_app
from actorscope.messages import RunRequest
from actorscope.propagation import OriginSigner, RunInfo
from actorscope.store import Database


async def roles(request: RunRequest) -> str:
    """The role the request and the bound identity carry, and the run's trace id."""
    bound = current_identity()
    info = RunInfo.current()
    assert bound is not None
    assert info is not None
    return f"{request.role} {bound.role} {request.agent_id} {info.trace_id}"


def _client(app: object) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
    return httpx.AsyncClient(transport=transport, base_url="http://testserver")


async def test_an_app_over_an_assembly_serves_its_agent_with_its_stores(
    db: Database, agent: Agent
) -> None:
    """The operators' grants, writers, links and signer are the assembly's; messages reach its
    agent only, through one run step, with the key's role: owners and roles name senders, and
    an HTTP call has none (the key's user named there gains nothing)."""
    assembly = await assemble(db, AgentSettings(owners=("ann",), roles={"ann": "admin"}))
    other = await AgentRegistry(db).create("other")
    app = create_app(assembly, handler=roles)
    ops = app.state.operations
    assert (ops.grants, ops.writers, ops.links) == (
        assembly.grants,
        assembly.writers,
        assembly.links,
    )
    assert (ops.signer, ops.served_agent) == (assembly.signer, agent.id)
    key = (await ApiKeyStore(db).add(tenant="default", user_id="ann", role="member")).key
    async with _client(app) as http:
        answers = [
            await http.post("/v1/agents/main/messages", json={"content": c}, headers=bearer(key))
            for c in ("hi", "again")
        ]
        elsewhere = await http.post(
            f"/v1/agents/{other.key}/messages", json={"content": "hi"}, headers=bearer(key)
        )
    replies = [answer.json()["reply"].split() for answer in answers]
    assert [reply[:3] for reply in replies] == [["member", "member", agent.id]] * 2
    assert replies[0][3][:16] == replies[1][3][:16]  # one step: one trace id prefix
    assert elsewhere.status_code == 404


async def test_over_a_database_each_agent_is_assembled_once(db: Database, agent: Agent) -> None:
    """Without an assembly, an agent's first message assembles it: its later messages run
    through the same run step (one trace id prefix per step), another agent through its own."""
    other = await AgentRegistry(db).create("other")
    app = create_app(db, handler=roles, signer=OriginSigner())
    key = (await ApiKeyStore(db).add(tenant="default", user_id="ann", role="viewer")).key
    replies: list[list[str]] = []
    async with _client(app) as http:
        for name in ("main", "main", "other"):
            answer = await http.post(
                f"/v1/agents/{name}/messages", json={"content": "hi"}, headers=bearer(key)
            )
            replies.append(answer.json()["reply"].split())
    assert [reply[:3] for reply in replies] == [
        ["viewer", "viewer", agent.id],
        ["viewer", "viewer", agent.id],
        ["viewer", "viewer", other.id],
    ]
    prefixes = [reply[3][:16] for reply in replies]
    assert prefixes[0] == prefixes[1] != prefixes[2]


async def test_an_assembly_brings_its_own_agent_and_signer(db: Database) -> None:
    """create_app(assembly, agent=... or signer=...) and a source that is neither a database
    nor an assembly are each one ConfigError saying what to pass."""
    assembly = await assemble(db)
    with pytest.raises(ConfigError, match="an Assembly serves its own agent"):
        create_app(assembly, agent=assembly.agent)
    with pytest.raises(ConfigError, match="an Assembly serves its own agent"):
        create_app(assembly, signer=OriginSigner())
    with pytest.raises(ConfigError, match="an open Database or an Assembly, got str"):
        create_app("actorscope.db")  # type: ignore[arg-type]

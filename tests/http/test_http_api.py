"""The /v1 API in-process (httpx over ASGI): every endpoint, every error status, the role matrix,
revocation at the next request, body limit, rate limit, and nothing written by a failed request."""

from __future__ import annotations

import logging
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from tests.http.conftest import bearer, echo, row_counts

from actorscope.agents import Agent
from actorscope.http import ApiKeyStore, create_app
from actorscope.identity import Identity, PeerKind
from actorscope.permissions import GrantStore
from actorscope.store import Database

GROUP = "group:telegram:-100200"
OPERATORS = ("owner", "admin", "operator")
NON_OPERATORS = ("viewer", "member")

#: Every operator endpoint: (method, path, request kwargs) that succeeds for an operator.
OPERATOR_CALLS: list[tuple[str, str, dict[str, Any]]] = [
    ("GET", "/v1/agents", {}),
    ("GET", "/v1/grants", {"params": {"agent": "main"}}),
    (
        "POST",
        "/v1/grants",
        {"json": {"agent": "main", "scope": GROUP, "sender_id": "7", "config_type": "cron"}},
    ),
    (
        "DELETE",
        "/v1/grants",
        {"params": {"agent": "main", "scope": GROUP, "sender_id": "7", "config_type": "cron"}},
    ),
    ("GET", "/v1/agents/main/writers", {"params": {"scope": GROUP}}),
    ("POST", "/v1/agents/main/writers", {"json": {"scope": GROUP, "sender_id": "43"}}),
    ("DELETE", "/v1/agents/main/writers", {"params": {"scope": GROUP, "sender_id": "43"}}),
    ("GET", "/v1/links", {}),
    ("POST", "/v1/links", {"json": {"accounts": ["telegram:7"]}}),
    ("DELETE", "/v1/links", {"params": {"account": "telegram:7"}}),
    ("GET", "/v1/audit", {}),
]


async def _writer(store: GrantStore, agent: Agent, sender: str = "42") -> None:
    await store.grant(agent_id=agent.id, scope=GROUP, config_type="file_writer", sender_id=sender)


def _problem(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    body: dict[str, Any] = response.json()
    assert body["status"] == status
    assert body["detail"]
    return body


async def test_message_runs_the_handler_with_the_http_identity(
    client: httpx.AsyncClient, keys: dict[str, str]
) -> None:
    """user_id = the key's user, sender_id = '', channel http, role = the key's role (bound too)."""
    response = await client.post(
        "/v1/agents/main/messages", json={"content": "hello"}, headers=bearer(keys["viewer"])
    )
    assert response.status_code == 200, response.text
    reply = response.json()["reply"]
    assert reply == (
        "user=viewer-user sender='' role=viewer channel=http bound_role=viewer "
        "bound_user=viewer-user content=hello"
    )


async def test_whoami_names_the_key_user_and_role(
    client: httpx.AsyncClient, keys: dict[str, str]
) -> None:
    """whoami: the user, the role and the HTTP identity row."""
    body = (await client.get("/v1/whoami", headers=bearer(keys["member"]))).json()
    assert (body["user_id"], body["role"]) == ("member-user", "member")
    assert body["identity"] == {
        "user_id": "member-user",
        "sender_id": "",
        "channel": "http",
        "peer_kind": "direct",
        "role": "member",
    }


async def test_role_matrix_of_the_operator_endpoints(
    db: Database,
    agent: Agent,
    store: GrantStore,
    client: httpx.AsyncClient,
    keys: dict[str, str],
) -> None:
    """owner/admin/operator reach every operator endpoint; viewer and member get 403, no write."""
    await _writer(store, agent)
    for role in NON_OPERATORS:
        before = await row_counts(db)
        for method, path, kwargs in OPERATOR_CALLS:
            response = await client.request(method, path, headers=bearer(keys[role]), **kwargs)
            _problem(response, 403)
        assert await row_counts(db) == before
    for role in OPERATORS:
        for method, path, kwargs in OPERATOR_CALLS:
            response = await client.request(method, path, headers=bearer(keys[role]), **kwargs)
            assert response.status_code in (200, 201), (role, method, path, response.text)


async def test_grants_add_list_remove_are_audited_as_the_key_user(
    db: Database, agent: Agent, client: httpx.AsyncClient, keys: dict[str, str]
) -> None:
    """A grant added and removed over the API: its audit rows name the grantee (sender_id), the
    permission, and the key's user as the actor who made the change."""
    headers = bearer(keys["operator"])
    grant = {"agent": "main", "scope": GROUP, "sender_id": "42", "config_type": "file_writer"}
    added = await client.post("/v1/grants", json=grant, headers=headers)
    assert added.status_code == 201
    assert added.json()["granted_by"] == "operator-user"
    listed = await client.get("/v1/grants", params={"scope": GROUP}, headers=headers)
    assert [g["sender_id"] for g in listed.json()] == ["42"]
    assert (await client.get("/v1/grants", params={"sender_id": "9"}, headers=headers)).json() == []
    removed = await client.delete("/v1/grants", params=grant, headers=headers)
    assert removed.json()["removed"] is True
    _problem(await client.delete("/v1/grants", params=grant, headers=headers), 404)
    audit = (await client.get("/v1/audit", params={"action": "grant.add"}, headers=headers)).json()
    names = ("sender_id", "permission", "reason", "actor", "scope")
    assert [tuple(e[n] for n in names) for e in audit["items"]] == [
        ("42", "allow", "", "operator-user", GROUP)
    ]
    gone = (
        await client.get("/v1/audit", params={"action": "grant.remove"}, headers=headers)
    ).json()
    assert [tuple(e[n] for n in names) for e in gone["items"]] == [
        ("42", "allow", "", "operator-user", GROUP)
    ]
    by_grantee = await client.get("/v1/audit", params={"sender_id": "42"}, headers=headers)
    assert [e["action"] for e in by_grantee.json()["items"]] == ["grant.remove", "grant.add"]
    by_actor = await client.get("/v1/audit", params={"actor": "operator-user"}, headers=headers)
    assert len(by_actor.json()["items"]) == 2


async def test_writers_follow_the_chat_command_rules(
    db: Database, agent: Agent, store: GrantStore, client: httpx.AsyncClient, keys: dict[str, str]
) -> None:
    """Add (409 when already), list, remove (404 when not one, 409 for the last writer)."""
    await _writer(store, agent)
    headers = bearer(keys["admin"])
    path = "/v1/agents/main/writers"
    added = await client.post(path, json={"scope": GROUP, "sender_id": "43"}, headers=headers)
    assert added.status_code == 201
    _problem(
        await client.post(path, json={"scope": GROUP, "sender_id": "43"}, headers=headers), 409
    )
    listed = await client.get(path, params={"scope": GROUP}, headers=headers)
    assert listed.json() == {"scope": GROUP, "writers": ["42", "43"]}
    ok = await client.delete(path, params={"scope": GROUP, "sender_id": "43"}, headers=headers)
    assert ok.status_code == 200
    _problem(
        await client.delete(path, params={"scope": GROUP, "sender_id": "43"}, headers=headers), 404
    )
    last = await client.delete(path, params={"scope": GROUP, "sender_id": "42"}, headers=headers)
    assert "last writer" in _problem(last, 409)["detail"]
    changes = await db.fetchall(
        "SELECT action, sender_id FROM audit_log WHERE action IN ('grant.add', 'grant.remove')"
        " AND actor = 'admin-user' ORDER BY id"
    )
    assert [(r["action"], r["sender_id"]) for r in changes] == [
        ("grant.add", "43"),
        ("grant.remove", "43"),
    ]


async def test_audit_filters_and_cursor_pagination(
    db: Database, agent: Agent, store: GrantStore, client: httpx.AsyncClient, keys: dict[str, str]
) -> None:
    """Denials are found by reason/scope/sender; pages of 2 follow next_cursor to the end."""
    from actorscope.permissions import PermissionPolicy

    policy = PermissionPolicy(store)
    for sender in ("51", "52", "53"):
        identity = Identity(
            user_id=GROUP, sender_id=sender, channel="telegram", peer_kind=PeerKind.GROUP,
            tenant_id=agent.tenant_id, agent_id=agent.id,
        )  # fmt: skip
        assert not (await policy.check_file_writer(identity)).allowed
    headers = bearer(keys["owner"])
    seen: list[str] = []
    params: dict[str, Any] = {"reason": "no_grant", "scope": GROUP, "limit": 2}
    for _ in range(5):
        page = (await client.get("/v1/audit", params=params, headers=headers)).json()
        seen += [e["sender_id"] for e in page["items"]]
        if page["next_cursor"] is None:
            break
        params["cursor"] = page["next_cursor"]
    assert seen == ["53", "52", "51"]
    one = await client.get("/v1/audit", params={"sender_id": "52"}, headers=headers)
    assert [e["sender_id"] for e in one.json()["items"]] == ["52"]
    later = await client.get("/v1/audit", params={"since": "2999-01-01"}, headers=headers)
    assert later.json()["items"] == []
    _problem(await client.get("/v1/audit", params={"since": "yesterday"}, headers=headers), 422)
    _problem(await client.get("/v1/audit", params={"limit": 0}, headers=headers), 422)


async def test_unknown_missing_and_revoked_keys_get_the_same_401(
    db: Database, client: httpx.AsyncClient, keys: dict[str, str]
) -> None:
    """No header, a malformed, an unknown and a revoked key: one 401 body; revocation is
    effective at the very next request."""
    headers = bearer(keys["operator"])
    assert (await client.get("/v1/whoami", headers=headers)).status_code == 200
    prefix = keys["operator"].split("_")[1]
    await ApiKeyStore(db).revoke(prefix)
    bodies = [
        _problem(await client.get("/v1/whoami", headers=h), 401)
        for h in (
            {},
            {"Authorization": "Basic x"},
            bearer("nope"),
            bearer("as_000000000000_" + "a" * 43),
            headers,
        )
    ]
    assert all(body == bodies[0] for body in bodies)


async def test_403_and_404_for_agents(
    db: Database, agent: Agent, client: httpx.AsyncClient
) -> None:
    """A key for one agent is refused another (403); an unknown agent is 404."""
    from actorscope.agents import AgentRegistry

    await AgentRegistry(db).create("other")
    store = ApiKeyStore(db)
    only_main = (await store.add(tenant="default", user_id="u", role="owner", agent="main")).key
    response = await client.post(
        "/v1/agents/other/messages", json={"content": "x"}, headers=bearer(only_main)
    )
    _problem(response, 403)
    listed = await client.get("/v1/agents", headers=bearer(only_main))
    assert [a["key"] for a in listed.json()] == ["main"]
    response = await client.post(
        "/v1/agents/ghost/messages", json={"content": "x"}, headers=bearer(only_main)
    )
    _problem(response, 404)
    _problem(await client.get("/v1/nowhere", headers=bearer(only_main)), 404)


async def test_failed_requests_write_nothing(
    db: Database, agent: Agent, store: GrantStore, client: httpx.AsyncClient, keys: dict[str, str]
) -> None:
    """422 (fields, invalid scope, bad sender), 404, 413: row counts and last_used_at unchanged."""
    await _writer(store, agent)
    headers = bearer(keys["operator"])
    before = await row_counts(db)
    bad_grants: list[dict[str, Any]] = [
        {"agent": "main", "scope": "group:", "sender_id": "1", "config_type": "cron"},
        {"agent": "main", "scope": GROUP, "sender_id": "042", "config_type": "cron"},
        {"agent": "main", "scope": GROUP, "sender_id": "1", "config_type": "root"},
        {"agent": "main", "scope": GROUP, "sender_id": "1", "config_type": "cron", "x": 1},
        {"agent": "ghost", "scope": GROUP, "sender_id": "1", "config_type": "cron"},
    ]
    for body in bad_grants:
        response = await client.post("/v1/grants", json=body, headers=headers)
        assert response.status_code in (404, 422), response.text
    invalid = await client.post(
        "/v1/agents/main/writers", json={"scope": "dm:42", "sender_id": "1"}, headers=headers
    )
    assert "scope" in _problem(invalid, 422)["detail"]
    star = await client.get("/v1/agents/main/writers", params={"scope": "*"}, headers=headers)
    _problem(star, 422)
    missing = await client.post("/v1/agents/main/messages", json={}, headers=headers)
    body = _problem(missing, 422)
    assert body["errors"] == [{"field": "body.content", "message": "Field required"}]
    huge = await client.post(
        "/v1/agents/main/messages", json={"content": "x" * 70_000}, headers=headers
    )
    _problem(huge, 413)
    assert await row_counts(db) == before


async def test_oversized_chunked_body_is_refused_before_it_is_read(
    client: httpx.AsyncClient, keys: dict[str, str]
) -> None:
    """A body without Content-Length over 64 KiB: 413 after at most 64 KiB + one chunk read."""
    sent = 0

    async def chunks() -> Any:
        nonlocal sent
        for _ in range(64):
            sent += 4096
            yield b"x" * 4096

    response = await client.post(
        "/v1/agents/main/messages", content=chunks(), headers=bearer(keys["member"])
    )
    _problem(response, 413)
    assert sent <= 64 * 1024 + 4096


async def test_failed_authentications_are_rate_limited_per_address(
    db: Database, agent: Agent, keys: dict[str, str]
) -> None:
    """After the limit, even a good key gets 429 with Retry-After; memory stays bounded."""
    app = create_app(db, handler=echo, failure_limit=3, failure_window=60)
    transport = httpx.ASGITransport(app=app, client=("10.9.8.7", 1234))
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
        for _ in range(3):
            _problem(await http.get("/v1/whoami", headers=bearer("wrong")), 401)
        limited = await http.get("/v1/whoami", headers=bearer(keys["owner"]))
        _problem(limited, 429)
        assert int(limited.headers["Retry-After"]) >= 1
    other = httpx.ASGITransport(app=app, client=("10.9.8.8", 1234))
    async with httpx.AsyncClient(transport=other, base_url="http://t") as http:
        assert (await http.get("/v1/whoami", headers=bearer(keys["owner"]))).status_code == 200
    limiter = app.state.limiter
    limiter.max_addresses = 5
    for n in range(50):
        limiter.failed(f"192.0.2.{n}")
    assert len(limiter) == 5


async def test_no_key_appears_in_any_log_line(
    client: httpx.AsyncClient, keys: dict[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    """Requests with good, bad and revoked keys log nothing that contains a key or its secret."""
    caplog.set_level(logging.DEBUG)
    for key in (keys["owner"], keys["member"] + "x", "as_" + "f" * 12 + "_" + "s" * 43):
        await client.get("/v1/whoami", headers=bearer(key))
        await client.post("/v1/agents/main/messages", json={"content": 1}, headers=bearer(key))
    text = caplog.text
    for key in keys.values():
        assert key not in text
        assert key.split("_", 2)[2] not in text


async def test_last_used_at_is_recorded_after_a_successful_request(
    db: Database, client: httpx.AsyncClient, keys: dict[str, str]
) -> None:
    """A 403 leaves last_used_at empty; a 200 sets it."""
    prefix = keys["member"].split("_")[1]
    _problem(await client.get("/v1/agents", headers=bearer(keys["member"])), 403)
    assert (await ApiKeyStore(db).get(prefix)).last_used_at is None
    assert (await client.get("/v1/whoami", headers=bearer(keys["member"]))).status_code == 200
    assert (await ApiKeyStore(db).get(prefix)).last_used_at is not None


async def test_health_ready_openapi_and_docs(app: FastAPI, client: httpx.AsyncClient) -> None:
    """/healthz, /readyz, /openapi.json (with every /v1 path) and /docs answer."""
    assert (await client.get("/healthz")).json() == {"status": "ok"}
    assert (await client.get("/readyz")).json() == {"status": "ready"}
    schema = (await client.get("/openapi.json")).json()
    paths = set(schema["paths"])
    assert {
        "/v1/agents/{agent}/messages",
        "/v1/whoami",
        "/v1/agents",
        "/v1/grants",
        "/v1/agents/{agent}/writers",
        "/v1/audit",
    } <= paths
    assert not any(p.startswith("/console") for p in paths)
    assert (await client.get("/docs")).status_code == 200


async def test_readyz_is_503_when_the_database_is_closed(db_target: str) -> None:
    """A closed database: /readyz answers 503 problem+json, /healthz still 200."""
    async with Database.open(db_target) as db:
        app = create_app(db)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
        _problem(await http.get("/readyz"), 503)
        assert (await http.get("/healthz")).status_code == 200


async def test_messages_without_a_handler_are_503(
    db: Database, agent: Agent, keys: dict[str, str]
) -> None:
    """An app created without a handler refuses messages with one clear 503."""
    transport = httpx.ASGITransport(app=create_app(db))
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
        response = await http.post(
            "/v1/agents/main/messages", json={"content": "x"}, headers=bearer(keys["owner"])
        )
        assert "no handler" in _problem(response, 503)["detail"]

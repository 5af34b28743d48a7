"""Every query and path parameter of every endpoint, API and console, with out-of-range and
garbage values (issue 26, defect 6): never a 500 or a 503, never a traceback in the log; the
API answers problem documents, and what the store cannot take never reaches it."""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute
from tests.http.conftest import bearer
from tests.http.test_http_console import sign_in

from actorscope.agents import Agent
from actorscope.http import _console as console
from actorscope.permissions import GrantStore

GROUP = "group:telegram:-100200"

#: A value each parameter name accepts, so that only the one parameter under test is wrong.
VALID: dict[str, str] = {
    "agent": "main",
    "scope": GROUP,
    "sender_id": "42",
    "config_type": "file_writer",
    "reason": "no_grant",
    "actor": "ops",
    "action": "check.deny",
    "since": "2024-01-01T00:00:00+00:00",
    "cursor": "5",
    "limit": "10",
    "account": "telegram:42",
    "person": "person:0b5e3a4e-55a4-4c63-9a3c-2b6f1d0c9a11",
}

#: Values no parameter should turn into a 500, a 503 or a store error (already URL-encoded).
HOSTILE: tuple[str, ...] = (
    *(
        quote(value, safe="")
        for value in (
            "",
            " ",
            "x" * 5000,
            "\x00",
            "a\x00b",
            "\x1b[31mred",
            "\x85",
            "\u2028",
            "😀" * 600,
            "-1",
            "0",
            str(2**63 - 1),
            str(2**63),
            str(2**64),
            "-" + str(2**63 + 1),
            "1e400",
            "NaN",
            "0001-01-01T00:00:00+01:00",
            "9999-12-31T23:59:59-01:00",
            "*",
            "group:telegram:*",
            "../../etc/passwd",
            "' OR 1=1 --",
        )
    ),
    # Bytes that are not UTF-8: stray, overlong, a lone surrogate's.
    "%FF%FE",
    "%C0%80",
    "%ED%A0%80",
)

#: Bodies of the endpoints that need one (valid: only the parameter is wrong).
BODIES: dict[tuple[str, str], dict[str, Any]] = {
    ("POST", "/v1/agents/{agent}/messages"): {"content": "hi"},
    ("POST", "/v1/agents/{agent}/writers"): {"scope": GROUP, "sender_id": "43"},
}


def _api_operations(app: FastAPI) -> list[tuple[str, str, list[tuple[str, str]]]]:
    """(method, path, [(where, name)]) of every operation of the OpenAPI document."""
    found = []
    for path, item in app.openapi()["paths"].items():
        for method, operation in item.items():
            params = [(p["in"], p["name"]) for p in operation.get("parameters", ())]
            found.append((method.upper(), path, params))
    return found


def _console_pages() -> list[tuple[str, str, list[tuple[str, str]]]]:
    """(GET, path, [(where, name)]) of every console page (not in the OpenAPI document)."""
    found = []
    for route in console.router.routes:
        if isinstance(route, APIRoute) and "GET" in (route.methods or ()):
            # A page's parameters are its own (its dependencies read the cookie only).
            params = [("query", p.alias) for p in route.dependant.query_params]
            params += [("path", p.alias) for p in route.dependant.path_params]
            found.append(("GET", route.path, params))
    return found


def _url(path: str, params: list[tuple[str, str]], wrong: tuple[str, str], value: str) -> str:
    """``path`` with every parameter valid but ``wrong``, which is ``value`` (URL-encoded)."""
    query = []
    for where, name in params:
        text = value if (where, name) == wrong else quote(VALID[name], safe="")
        if where == "path":
            path = path.replace("{" + name + "}", text)
        else:
            query.append(f"{name}={text}")
    return path + ("?" + "&".join(query) if query else "")


async def test_no_parameter_value_reaches_the_store_as_garbage(
    app: FastAPI,
    client: httpx.AsyncClient,
    keys: dict[str, str],
    agent: Agent,
    store: GrantStore,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Each parameter of each endpoint gets each HOSTILE value, the others valid: the answer
    is below 500 (and no 503), an API error is a problem document, nothing is logged at
    ERROR; each endpoint answers its valid request below 500 too."""
    caplog.set_level(logging.WARNING)
    await store.grant(agent_id=agent.id, scope=GROUP, config_type="file_writer", sender_id="42")
    owner = bearer(keys["owner"])
    assert (await sign_in(client, keys["owner"])).status_code == 303
    operations = _api_operations(app) + _console_pages()
    names = {name for _, _, params in operations for _, name in params}
    assert names <= set(VALID), f"give these parameters a valid value: {names - set(VALID)}"
    assert {p for _, p, params in operations if params} >= {"/v1/audit", "/console/audit"}
    tried = 0
    for method, path, params in operations:
        body = BODIES.get((method, path))
        cases = [(("", ""), "")] + [(param, value) for param in params for value in HOSTILE]
        for wrong, value in cases:
            url = _url(path, params, wrong, value)
            response = await client.request(method, url, headers=owner, json=body)
            where = f"{method} {url[:120]} -> {response.status_code}"
            assert response.status_code < 500, where
            if response.status_code >= 400 and path.startswith("/v1"):
                assert response.headers["content-type"] == "application/problem+json", where
            tried += 1
    assert tried > 500
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert not errors, [r.getMessage() for r in errors[:3]]


async def test_an_audit_cursor_past_the_largest_id_is_422(
    client: httpx.AsyncClient, keys: dict[str, str], agent: Agent
) -> None:
    """cursor = 2**63 (one past what a database integer holds): 422 naming query.cursor; the
    largest id itself is a cursor like any other."""
    too_far = await client.get(f"/v1/audit?cursor={2**63}", headers=bearer(keys["owner"]))
    assert too_far.status_code == 422
    assert too_far.headers["content-type"] == "application/problem+json"
    assert too_far.json()["errors"][0]["field"] == "query.cursor"
    largest = await client.get(f"/v1/audit?cursor={2**63 - 1}", headers=bearer(keys["owner"]))
    assert largest.status_code == 200

"""``/v1/links``: operators link and unlink accounts over the API, audited as the key's user."""

from __future__ import annotations

from typing import Any

import httpx
from tests.http.conftest import bearer, row_counts
from tests.http.test_http_console import _field, sign_in

from actorscope.agents import Agent, AgentRegistry
from actorscope.http import ApiKeyStore
from actorscope.store import Database

DC = "discord:990000000000000001"


def _problem(response: httpx.Response, status: int, words: str) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    assert words in response.json()["detail"]


async def test_links_add_list_remove_are_audited_as_the_key_user(
    db: Database, agent: Agent, client: httpx.AsyncClient, keys: dict[str, str]
) -> None:
    """POST links two accounts, GET lists and filters them, DELETE unlinks; both audited with
    the key's user as the actor."""
    headers = bearer(keys["admin"])
    added = await client.post("/v1/links", json={"accounts": ["telegram:42", DC]}, headers=headers)
    assert added.status_code == 201, added.text
    person = added.json()[0]["person"]
    assert {row["linked_by"] for row in added.json()} == {"admin-user"}
    listed = await client.get("/v1/links", params={"account": DC}, headers=headers)
    assert [row["person"] for row in listed.json()] == [person]
    by_person = await client.get("/v1/links", params={"person": person}, headers=headers)
    assert sorted(row["account"] for row in by_person.json()) == sorted(["telegram:42", DC])
    removed = await client.delete("/v1/links", params={"account": DC}, headers=headers)
    assert removed.json()["removed"] is True
    _problem(
        await client.delete("/v1/links", params={"account": DC}, headers=headers), 404, "not linked"
    )
    audit = (await client.get("/v1/audit", params={"actor": "admin-user"}, headers=headers)).json()
    rows = [(e["action"], e["sender_id"], e["scope"]) for e in audit["items"]]
    assert rows == [
        ("link.remove", DC, person),
        ("link.add", DC, person),
        ("link.add", "telegram:42", person),
    ]


async def test_link_refusals_are_problems_that_write_nothing(
    db: Database, agent: Agent, client: httpx.AsyncClient, keys: dict[str, str]
) -> None:
    """A non-person or look-alike account is 422, another person's account 409, a viewer 403;
    none of them writes a row."""
    headers = bearer(keys["operator"])
    await client.post("/v1/links", json={"accounts": ["telegram:42"]}, headers=headers)
    await client.post("/v1/links", json={"accounts": ["telegram:43"]}, headers=headers)
    before = await row_counts(db)
    cases: list[tuple[dict[str, Any], int, str]] = [
        ({"accounts": ["telegram:777000"]}, 422, "not a person"),
        ({"accounts": ["telegram:042"]}, 422, "not a telegram person id"),
        ({"accounts": ["nowhere:1"]}, 422, "of a known platform"),
        ({"accounts": ["telegram:42", "telegram:43"]}, 409, "at most one person"),
        ({"accounts": ["telegram:44"], "person": "person:x"}, 422, "person:<uuid>"),
        ({"accounts": ["telegram:901", "telegram:901"]}, 422, "telegram:901 is named twice"),
    ]
    for body, status, words in cases:
        _problem(await client.post("/v1/links", json=body, headers=headers), status, words)
    _problem(
        await client.post(
            "/v1/links", json={"accounts": ["telegram:44"]}, headers=bearer(keys["viewer"])
        ),
        403,
        "may not use operator endpoints",
    )
    assert (
        await client.post("/v1/links", json={"accounts": []}, headers=headers)
    ).status_code == 422
    assert await row_counts(db) == before


async def test_a_key_sees_and_links_in_its_own_tenant_only(
    db: Database, agent: Agent, client: httpx.AsyncClient, keys: dict[str, str]
) -> None:
    """Another tenant's key neither sees nor unlinks this tenant's persons; its own links are
    its tenant's."""
    await AgentRegistry(db).create_tenant("acme")
    theirs = bearer((await ApiKeyStore(db).add(tenant="acme", user_id="eve", role="admin")).key)
    ours = bearer(keys["admin"])
    await client.post("/v1/links", json={"accounts": ["telegram:42"]}, headers=ours)
    assert (await client.get("/v1/links", headers=theirs)).json() == []
    _problem(
        await client.delete("/v1/links", params={"account": "telegram:42"}, headers=theirs),
        404,
        "not linked",
    )
    made = await client.post("/v1/links", json={"accounts": ["telegram:42"]}, headers=theirs)
    assert made.status_code == 201
    mine = (await client.get("/v1/links", headers=ours)).json()
    assert [row["person"] for row in mine] != [row["person"] for row in made.json()]


async def test_the_console_links_and_unlinks_with_a_confirmation(
    db: Database, agent: Agent, client: httpx.AsyncClient, keys: dict[str, str]
) -> None:
    """The links page lists persons' accounts; its form links two accounts (CSRF required), a
    third joins by person; unlinking asks first; a refusal is an error page that writes nothing."""
    assert (await sign_in(client, keys["admin"])).status_code == 303
    page = (await client.get("/console/links")).text
    assert "No linked accounts yet." in page
    token = _field(page, "csrf")
    pair = {"account": "telegram:42", "other": DC}
    assert (await client.post("/console/links/add", data=pair)).status_code == 403
    assert (
        await client.post("/console/links/add", data={**pair, "csrf": token})
    ).status_code == 303
    listed = (await client.get("/v1/links", headers=bearer(keys["admin"]))).json()
    person = listed[0]["person"]
    joined = {"account": "http:alice", "other": person, "csrf": token}
    assert (await client.post("/console/links/add", data=joined)).status_code == 303
    page = (await client.get("/console/links")).text
    for account in ("telegram:42", DC, "http:alice"):
        assert account in page
    before = await row_counts(db)
    refused = await client.post(
        "/console/links/add", data={"account": "telegram:777000", "csrf": token}
    )
    assert refused.status_code == 422
    assert "not a person" in refused.text
    assert await row_counts(db) == before
    asked = await client.post("/console/links/remove", data={"account": DC, "csrf": token})
    assert asked.status_code == 200
    assert f"Unlink {DC} from its person?" in asked.text
    done = await client.post(
        "/console/links/remove", data={"account": DC, "csrf": token, "confirmed": "yes"}
    )
    assert done.status_code == 303
    assert DC not in (await client.get("/console/links")).text


async def test_a_grant_to_an_unknown_person_is_a_422(
    db: Database, agent: Agent, client: httpx.AsyncClient, keys: dict[str, str]
) -> None:
    """POST /v1/grants to a person that does not exist is a 422 problem naming it; nothing is
    written."""
    headers = bearer(keys["operator"])
    unknown = "person:0b5e3a4e-55a4-4c63-9a3c-2b6f1d0c9a11"
    grant = {"agent": "main", "scope": "*", "sender_id": unknown, "config_type": "cron"}
    before = await row_counts(db)
    _problem(
        await client.post("/v1/grants", json=grant, headers=headers), 422, f"no person {unknown}"
    )
    assert await row_counts(db) == before
    made = await client.post("/v1/links", json={"accounts": ["telegram:42"]}, headers=headers)
    person = made.json()[0]["person"]
    added = await client.post("/v1/grants", json={**grant, "sender_id": person}, headers=headers)
    assert added.status_code == 201, added.text

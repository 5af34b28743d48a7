"""The console over httpx: sign-in, cookie flags, CSRF on every form, pages, and revocation."""

from __future__ import annotations

import re

import httpx
from tests.http.conftest import row_counts

from actorscope.agents import Agent
from actorscope.http import ApiKeyStore
from actorscope.permissions import GrantStore
from actorscope.store import Database

GROUP = "group:telegram:-100200"


def _field(page: str, name: str) -> str:
    match = re.search(rf'name="{name}" value="([^"]*)"', page)
    assert match is not None, f"no {name} field"
    return match.group(1)


async def sign_in(client: httpx.AsyncClient, key: str) -> httpx.Response:
    """Sign in through the form; return the answer to the POST."""
    page = (await client.get("/console/login")).text
    token = _field(page, "login_token")
    return await client.post("/console/login", data={"key": key, "login_token": token})


async def test_sign_in_sets_a_strict_httponly_cookie_and_shows_every_page(
    client: httpx.AsyncClient, keys: dict[str, str]
) -> None:
    """An operator key signs in (HttpOnly, SameSite=Strict); every page renders for phones."""
    answer = await sign_in(client, keys["operator"])
    assert answer.status_code == 303
    cookie = answer.headers["set-cookie"]
    assert "HttpOnly" in cookie
    assert "SameSite=strict" in cookie or "SameSite=Strict" in cookie
    for page in ("agents", "grants", "writers", "links", "audit"):
        response = await client.get(f"/console/{page}")
        assert response.status_code == 200, page
        assert 'name="viewport"' in response.text
        assert "<script" not in response.text


async def test_viewer_keys_and_bad_keys_cannot_sign_in(
    client: httpx.AsyncClient, keys: dict[str, str]
) -> None:
    """A viewer key gets 403, a wrong key 401; neither gets a session."""
    assert (await sign_in(client, keys["viewer"])).status_code == 403
    assert (await sign_in(client, "as_bad")).status_code == 401
    assert (await client.get("/console/agents")).status_code == 303


async def test_sign_in_without_the_form_token_is_refused(
    client: httpx.AsyncClient, keys: dict[str, str]
) -> None:
    """A sign-in POST without the double-submit token: 403."""
    response = await client.post("/console/login", data={"key": keys["owner"]})
    assert response.status_code == 403


async def test_every_form_needs_the_csrf_token(
    db: Database, agent: Agent, store: GrantStore, client: httpx.AsyncClient, keys: dict[str, str]
) -> None:
    """Adding a grant or removing a writer without (or with a wrong) token: 403, nothing written;
    with the page's token it works."""
    await store.grant(agent_id=agent.id, scope=GROUP, config_type="file_writer", sender_id="42")
    await store.grant(agent_id=agent.id, scope=GROUP, config_type="file_writer", sender_id="43")
    await sign_in(client, keys["admin"])
    grant = {"agent": "main", "scope": GROUP, "sender_id": "7", "config_type": "cron"}
    before = await row_counts(db)
    for csrf in ({}, {"csrf": "0" * 64}):
        refused = await client.post("/console/grants/add", data={**grant, **csrf})
        assert refused.status_code == 403
        assert "CSRF" in refused.text
        writer = {"agent": "main", "scope": GROUP, "sender_id": "43", **csrf}
        assert (await client.post("/console/writers/remove", data=writer)).status_code == 403
    assert await row_counts(db) == before
    token = _field((await client.get("/console/grants")).text, "csrf")
    assert (
        await client.post("/console/grants/add", data={**grant, "csrf": token})
    ).status_code == 303
    writer = {"agent": "main", "scope": GROUP, "sender_id": "43", "csrf": token}
    confirm = {**writer, "confirmed": "yes"}
    assert (await client.post("/console/writers/remove", data=confirm)).status_code == 303
    page = (await client.get("/console/writers")).text
    assert "Remove 42" in page
    assert "Remove 43" not in page


async def test_a_revoked_key_ends_its_session_at_the_next_request(
    db: Database, client: httpx.AsyncClient, keys: dict[str, str]
) -> None:
    """Revoking the key sends the next console request back to sign-in."""
    await sign_in(client, keys["owner"])
    assert (await client.get("/console/agents")).status_code == 200
    await ApiKeyStore(db).revoke(keys["owner"].split("_")[1])
    response = await client.get("/console/agents")
    assert response.status_code == 303
    assert response.headers["location"].endswith("/console/login")


async def test_console_errors_are_pages_not_tracebacks(
    client: httpx.AsyncClient, keys: dict[str, str]
) -> None:
    """An invalid scope in the add-writer form: a 422 page naming the scope."""
    await sign_in(client, keys["operator"])
    token = _field((await client.get("/console/writers")).text, "csrf")
    bad = {"agent": "main", "scope": "nonsense", "sender_id": "1", "csrf": token}
    response = await client.post("/console/writers/add", data=bad)
    assert response.status_code == 422
    assert "scope" in response.text
    assert "Traceback" not in response.text


async def test_removing_a_grant_or_a_writer_asks_first(
    db: Database, agent: Agent, store: GrantStore, client: httpx.AsyncClient, keys: dict[str, str]
) -> None:
    """The Remove buttons lead to a confirmation page (a form, no JavaScript) and remove
    nothing; only its confirmed form removes, and Cancel goes back."""
    await store.grant(agent_id=agent.id, scope=GROUP, config_type="file_writer", sender_id="42")
    await store.grant(agent_id=agent.id, scope=GROUP, config_type="file_writer", sender_id="43")
    await sign_in(client, keys["operator"])
    token = _field((await client.get("/console/grants")).text, "csrf")
    grant = {"agent": "main", "scope": GROUP, "sender_id": "42", "config_type": "file_writer"}
    writer = {"agent": "main", "scope": GROUP, "sender_id": "43"}
    before = await row_counts(db)
    asked = await client.post("/console/grants/remove", data={**grant, "csrf": token})
    assert asked.status_code == 200
    assert f"Remove the grant of file_writer for 42 in {GROUP}?" in asked.text
    assert _field(asked.text, "confirmed") == "yes"
    assert _field(asked.text, "sender_id") == "42"
    assert 'href="/console/grants">Cancel</a>' in asked.text
    assert "<script" not in asked.text
    asked = await client.post("/console/writers/remove", data={**writer, "csrf": token})
    assert f"Remove 43 as a writer of {GROUP}?" in asked.text
    assert await row_counts(db) == before
    done = await client.post(
        "/console/grants/remove", data={**grant, "csrf": token, "confirmed": "yes"}
    )
    assert done.status_code == 303
    assert [g.sender_id for g in await store.list(scope=GROUP)] == ["43"]


async def test_the_grant_form_defaults_to_no_type(
    db: Database, agent: Agent, client: httpx.AsyncClient, keys: dict[str, str]
) -> None:
    """The add-grant form's type starts empty and required ('*' is an option to pick, named
    for what it means); a form sent without a type adds nothing (422)."""
    await sign_in(client, keys["operator"])
    page = (await client.get("/console/grants")).text
    form = page[page.index('id="add-grant"') :]
    start = form.index('<select name="config_type"')
    select = form[start : form.index("</select>", start)]
    assert "required" in select
    assert '<option value="" selected disabled>choose a type</option>' in select
    assert '<option value="*">* (every type)</option>' in select
    assert select.count("selected") == 1
    token = _field(page, "csrf")
    before = await row_counts(db)
    bare = {"agent": "main", "scope": GROUP, "sender_id": "7", "config_type": "", "csrf": token}
    assert (await client.post("/console/grants/add", data=bare)).status_code == 422
    assert await row_counts(db) == before


async def test_the_audit_table_names_a_grants_grantee_permission_and_who_made_it(
    client: httpx.AsyncClient, agent: Agent, keys: dict[str, str]
) -> None:
    """A grant added in the console: its audit row shows the grantee under Sender, allow under
    Permission, nothing under Reason, the key's user under Changed by."""
    await sign_in(client, keys["operator"])
    token = _field((await client.get("/console/grants")).text, "csrf")
    grant = {"agent": "main", "scope": GROUP, "sender_id": "7", "config_type": "cron"}
    assert (
        await client.post("/console/grants/add", data={**grant, "csrf": token})
    ).status_code == 303
    page = (await client.get("/console/audit")).text
    heads = re.findall(r"<th>([^<]*)</th>", page)
    assert heads == [
        "Time (UTC)",
        "Action",
        "Sender",
        "Permission",
        "Reason",
        "Scope",
        "Type",
        "Changed by",
        "Agent",
    ]
    body = page[page.index("<tbody>") : page.index("</tbody>")]
    (row,) = [row for row in body.split("<tr>") if "grant.add" in row]
    cells = [re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r"<td>(.*?)</td>", row)]
    assert cells[1:] == ["grant.add", "7", "allow", "", GROUP, "cron", "operator-user", "main"]

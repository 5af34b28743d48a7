"""The operator console (``/console``): server-rendered pages, no JavaScript needed.

Sign-in takes an owner, admin or operator key and starts a session on the server
(:mod:`actorscope.http._sessions`); the cookie (HttpOnly, SameSite=Strict) holds only its
random token. Each request reads the session and its key again, so signing out, expiry and a
revoked key end it at its next request, in every process sharing the database. Every form
carries the session's CSRF token; the sign-in form a double-submit token.
"""

from __future__ import annotations

import hmac
import secrets
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from jinja2 import Environment, PackageLoader, select_autoescape

from actorscope.http._api import Cursor, Filter, Since, check_key, operations
from actorscope.http._guard import Problem
from actorscope.http._keys import ApiKey
from actorscope.http._ops import AUDIT_PAGE, Operations
from actorscope.http._sessions import SESSION_SECONDS, Session, csrf_token
from actorscope.identity import Scope
from actorscope.permissions import ConfigType

__all__ = ["SESSION_COOKIE", "error_page", "is_console", "router"]

SESSION_COOKIE = "actorscope_session"
LOGIN_COOKIE = "actorscope_login"
_PREFIX = "/console"

_templates = Environment(
    loader=PackageLoader("actorscope.http", "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
)

router = APIRouter(prefix=_PREFIX, include_in_schema=False)


def is_console(request: Request) -> bool:
    """True for a console page (errors are shown as pages there, not problem documents)."""
    root = request.scope.get("root_path", "")
    return request.url.path.removeprefix(root).startswith(_PREFIX)


def _render(
    request: Request, name: str, status: int = 200, key: ApiKey | None = None, **context: Any
) -> HTMLResponse:
    root = request.scope.get("root_path", "")
    session: Session | None = getattr(request.state, "session", None)
    page = _templates.get_template(name).render(
        base=root + _PREFIX,
        key=key,
        csrf=session.csrf if key is not None and session is not None else "",
        request_path=request.url.path,
        **context,
    )
    return HTMLResponse(page, status_code=status)


def error_page(request: Request, problem: Problem) -> Response:
    """A console page for a refused request (sign-in again for 401)."""
    if problem.status == 401:
        return _redirect(request, "/login")
    key: ApiKey | None = getattr(request.state, "api_key", None)
    response = _render(
        request, "error.html", problem.status, key=key, problem=problem, title="Refused"
    )
    response.headers.update(problem.headers)
    return response


def _redirect(request: Request, path: str) -> RedirectResponse:
    root = request.scope.get("root_path", "")
    return RedirectResponse(root + _PREFIX + path, status_code=303)


async def signed_in(request: Request) -> ApiKey:
    """The operator key of the live session of the cookie (dependency); 401 (back to sign-in)
    for none, an ended or expired one, or one whose key was revoked."""
    session = await operations(request).sessions.find(request.cookies.get(SESSION_COOKIE, ""))
    if session is None:
        raise Problem(401, "sign in with an operator key")
    request.state.api_key = session.key
    request.state.session = session
    return session.key


async def _form_csrf(request: Request, csrf: Annotated[str, Form()] = "") -> None:
    """403 unless the form's CSRF token is the session cookie's (dependency of every POST)."""
    cookie = request.cookies.get(SESSION_COOKIE, "")
    if not cookie or not hmac.compare_digest(csrf.encode(), csrf_token(cookie).encode()):
        raise Problem(403, "the form's CSRF token is missing or wrong; reload the page")


Operator = Annotated[ApiKey, Depends(signed_in)]
#: ``yes`` on the second step of a removal (the confirmation page's form).
Confirmed = Annotated[str, Form()]
Ops = Annotated[Operations, Depends(operations)]
Csrf = Depends(_form_csrf)


def _confirm(
    request: Request,
    key: ApiKey,
    action: str,
    back: str,
    question: str,
    fields: dict[str, str],
) -> Response:
    """The second step of a removal: the question, and a form that posts ``fields`` again with
    ``confirmed=yes`` (no JavaScript)."""
    return _render(
        request,
        "confirm.html",
        key=key,
        title="Confirm the removal",
        question=question,
        action=action,
        back=back,
        fields=fields,
    )


@router.get("")
async def home(request: Request) -> Response:
    """To the agents page."""
    return _redirect(request, "/agents")


@router.get("/login")
async def login_page(request: Request) -> Response:
    """The sign-in form, with a fresh double-submit token."""
    token = secrets.token_urlsafe(24)
    response = _render(request, "login.html", title="Sign in", login_token=token, message="")
    _set_cookie(request, response, LOGIN_COOKIE, token, 600)
    return response


@router.post("/login")
async def login(
    request: Request,
    key: Annotated[str, Form()] = "",
    login_token: Annotated[str, Form()] = "",
) -> Response:
    """Sign in with an operator key; sets the session cookie."""
    expected = request.cookies.get(LOGIN_COOKIE, "")
    if not expected or not hmac.compare_digest(login_token.encode(), expected.encode()):
        raise Problem(403, "the sign-in form's token is missing or wrong; reload the page")
    try:
        found = await check_key(request, key.strip())
    except Problem as problem:
        if problem.status != 401:
            raise
        return _login_again(request, "That key is not valid.", 401)
    if not found.operator:
        return _login_again(request, f"A {found.role} key cannot use the console.", 403)
    session = await operations(request).sessions.start(found)
    response = _redirect(request, "/agents")
    _set_cookie(request, response, SESSION_COOKIE, session.token, SESSION_SECONDS)
    response.delete_cookie(LOGIN_COOKIE, path=_cookie_path(request))
    return response


def _login_again(request: Request, message: str, status: int) -> Response:
    token = secrets.token_urlsafe(24)
    response = _render(
        request, "login.html", status, title="Sign in", login_token=token, message=message
    )
    _set_cookie(request, response, LOGIN_COOKIE, token, 600)
    return response


def _cookie_path(request: Request) -> str:
    root: str = request.scope.get("root_path", "")
    return root + _PREFIX


def _set_cookie(request: Request, response: Response, name: str, value: str, age: int) -> None:
    response.set_cookie(
        name,
        value,
        max_age=age,
        path=_cookie_path(request),
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )


@router.post("/logout", dependencies=[Csrf])
async def logout(request: Request, key: Operator, ops: Ops) -> Response:
    """End the session on the server (its cookie is refused from now on, everywhere)."""
    await ops.sessions.end(request.cookies.get(SESSION_COOKIE, ""))
    response = _redirect(request, "/login")
    response.delete_cookie(SESSION_COOKIE, path=_cookie_path(request))
    return response


@router.get("/agents")
async def agents_page(request: Request, key: Operator, ops: Ops) -> Response:
    """The agents of the operator's tenant."""
    agents = await ops.visible_agents(key)
    return _render(request, "agents.html", key=key, title="Agents", agents=agents)


def _blank(value: str | None) -> str | None:
    return value.strip() or None if value is not None else None


@router.get("/grants")
async def grants_page(
    request: Request,
    key: Operator,
    ops: Ops,
    agent: Filter = None,
    scope: Filter = None,
    sender_id: Filter = None,
    config_type: Filter = None,
) -> Response:
    """Grants, filtered, with forms to add and remove."""
    filters = {
        "agent": _blank(agent),
        "scope": _blank(scope),
        "sender_id": _blank(sender_id),
        "config_type": _blank(config_type),
    }
    grants = await ops.list_grants(key, **filters)
    agents = await ops.visible_agents(key)
    names = {a.id: a.key for a in agents}
    return _render(
        request,
        "grants.html",
        key=key,
        title="Grants",
        grants=grants,
        names=names,
        agents=agents,
        filters={k: v or "" for k, v in filters.items()},
        config_types=sorted(c.value for c in ConfigType),
    )


@router.post("/grants/add", dependencies=[Csrf])
async def grants_add(
    request: Request,
    key: Operator,
    ops: Ops,
    agent: Annotated[str, Form()],
    scope: Annotated[str, Form()],
    sender_id: Annotated[str, Form()],
    config_type: Annotated[str, Form()],
    permission: Annotated[str, Form()] = "allow",
) -> Response:
    """Add (or replace) a grant, then back to the grants page."""
    await ops.add_grant(
        key,
        agent=agent.strip(),
        scope=scope.strip(),
        sender_id=sender_id.strip(),
        config_type=config_type.strip(),
        permission=permission,
    )
    return _redirect(request, "/grants")


@router.post("/grants/remove", dependencies=[Csrf])
async def grants_remove(
    request: Request,
    key: Operator,
    ops: Ops,
    agent: Annotated[str, Form()],
    scope: Annotated[str, Form()],
    sender_id: Annotated[str, Form()],
    config_type: Annotated[str, Form()],
    confirmed: Confirmed = "",
) -> Response:
    """Ask to confirm, then (confirmed) remove a grant and go back to the grants page."""
    fields = {"agent": agent, "scope": scope, "sender_id": sender_id, "config_type": config_type}
    if confirmed != "yes":
        question = f"Remove the grant of {config_type} for {sender_id} in {scope}?"
        return _confirm(request, key, "/grants/remove", "/grants", question, fields)
    await ops.remove_grant(key, **fields)
    return _redirect(request, "/grants")


@router.get("/writers")
async def writers_page(request: Request, key: Operator, ops: Ops) -> Response:
    """Every group with writers, per agent, with forms to add and remove."""
    groups = await ops.groups(key)
    agents = await ops.visible_agents(key)
    return _render(request, "writers.html", key=key, title="Writers", groups=groups, agents=agents)


@router.post("/writers/add", dependencies=[Csrf])
async def writers_add(
    request: Request,
    key: Operator,
    ops: Ops,
    agent: Annotated[str, Form()],
    scope: Annotated[str, Form()],
    sender_id: Annotated[str, Form()],
) -> Response:
    """Add a writer to a group, then back to the writers page."""
    await ops.add_writer(key, agent.strip(), scope.strip(), sender_id.strip())
    return _redirect(request, "/writers")


@router.post("/writers/remove", dependencies=[Csrf])
async def writers_remove(
    request: Request,
    key: Operator,
    ops: Ops,
    agent: Annotated[str, Form()],
    scope: Annotated[str, Form()],
    sender_id: Annotated[str, Form()],
    confirmed: Confirmed = "",
) -> Response:
    """Ask to confirm, then (confirmed) remove a writer and go back to the writers page."""
    if confirmed != "yes":
        fields = {"agent": agent, "scope": scope, "sender_id": sender_id}
        question = f"Remove {sender_id} as a writer of {scope}?"
        return _confirm(request, key, "/writers/remove", "/writers", question, fields)
    await ops.remove_writer(key, agent, scope, sender_id)
    return _redirect(request, "/writers")


@router.get("/links")
async def links_page(request: Request, key: Operator, ops: Ops) -> Response:
    """Persons and their linked accounts, with forms to link and unlink."""
    links = await ops.list_links(key)
    return _render(request, "links.html", key=key, title="Links", links=links)


@router.post("/links/add", dependencies=[Csrf])
async def links_add(
    request: Request,
    key: Operator,
    ops: Ops,
    account: Annotated[str, Form()],
    other: Annotated[str, Form()] = "",
) -> Response:
    """Link ``account`` with another account or to a person, then back to the links page."""
    other = other.strip()
    if other.startswith(Scope.PERSON_PREFIX):
        await ops.add_links(key, [account.strip()], person=other)
    else:
        await ops.add_links(key, [account.strip(), *([other] if other else [])])
    return _redirect(request, "/links")


@router.post("/links/remove", dependencies=[Csrf])
async def links_remove(
    request: Request,
    key: Operator,
    ops: Ops,
    account: Annotated[str, Form()],
    confirmed: Confirmed = "",
) -> Response:
    """Ask to confirm, then (confirmed) unlink an account and go back to the links page."""
    if confirmed != "yes":
        question = f"Unlink {account} from its person?"
        return _confirm(request, key, "/links/remove", "/links", question, {"account": account})
    await ops.remove_link(key, account)
    return _redirect(request, "/links")


@router.get("/audit")
async def audit_page(
    request: Request,
    key: Operator,
    ops: Ops,
    reason: Filter = None,
    scope: Filter = None,
    sender_id: Filter = None,
    actor: Filter = None,
    action: Filter = None,
    since: Since = None,
    cursor: Cursor = None,
) -> Response:
    """The audit log, filtered, newest first, with the per-reason count of the last day."""
    filters = {
        "reason": _blank(reason),
        "scope": _blank(scope),
        "sender_id": _blank(sender_id),
        "actor": _blank(actor),
        "action": _blank(action),
        "since": _blank(since),
    }
    page = await ops.audit(key, cursor=cursor, limit=AUDIT_PAGE, **filters)
    counts = await ops.reasons_last_day(key)
    agents = {a.id: a.key for a in await ops.visible_agents(key)}
    return _render(
        request,
        "audit.html",
        key=key,
        title="Audit log",
        page=page,
        counts=counts,
        names=agents,
        filters={k: v or "" for k, v in filters.items()},
    )

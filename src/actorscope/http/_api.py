"""The ``/v1`` API: messages, whoami, and (owner/admin/operator keys) agents, grants, links,
audit. Authentication is ``Authorization: Bearer <key>``; see :mod:`actorscope.http._app`."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, ConfigDict, Field

from actorscope.http._guard import Problem
from actorscope.http._keys import ApiKey
from actorscope.http._ops import AUDIT_PAGE, Operations
from actorscope.identity import Scope

__all__ = [
    "MAX_CURSOR",
    "MAX_PARAMETER",
    "AgentPath",
    "Cursor",
    "Filter",
    "Required",
    "Since",
    "authenticate",
    "operations",
    "router",
]

#: The largest audit cursor (an id): what a database integer holds.
MAX_CURSOR = 2**63 - 1
#: The longest text a query or path parameter may be: the longest scope actorscope stores.
MAX_PARAMETER = Scope.MAX_CHARS
#: No control characters: no stored id, scope or type has one (audit rows store them escaped).
_PRINTABLE = r"^[^\x00-\x1f\x7f-\x9f]*$"

#: An optional filter, compared exactly.
Filter = Annotated[str | None, Query(max_length=MAX_PARAMETER, pattern=_PRINTABLE)]
#: A required query parameter.
Required = Annotated[str, Query(min_length=1, max_length=MAX_PARAMETER, pattern=_PRINTABLE)]
#: The ``next_cursor`` of the page before.
Cursor = Annotated[
    int | None, Query(ge=1, le=MAX_CURSOR, description="next_cursor of the page before")
]
#: An ISO 8601 time: rows at or after it.
Since = Annotated[
    str | None, Query(max_length=64, description="ISO 8601 time; rows at or after it.")
]
#: An agent key or UUID in a path.
AgentPath = Annotated[
    str,
    Path(min_length=1, max_length=MAX_PARAMETER, pattern=_PRINTABLE, description="Key or UUID."),
]

_bearer = HTTPBearer(auto_error=False, description="An API key from `actorscope keys add`.")
#: The one body of every refused authentication: missing, malformed, unknown or revoked alike.
UNAUTHORIZED = "a valid API key is required (Authorization: Bearer <key>)"


def operations(request: Request) -> Operations:
    """The app's :class:`Operations`."""
    ops: Operations = request.app.state.operations
    return ops


def client_address(request: Request) -> str:
    """The address failed authentications are counted for."""
    return request.client.host if request.client is not None else "unknown"


async def check_key(request: Request, presented: str | None) -> ApiKey:
    """The live key ``presented`` is; 429 for an address over its failure limit, else 401."""
    limiter = request.app.state.limiter
    address = client_address(request)
    wait = limiter.retry_after(address)
    if wait:
        raise Problem(
            429,
            "too many failed authentications from this address; try again later",
            headers={"Retry-After": str(wait)},
        )
    key = None if not presented else await operations(request).keys.authenticate(presented)
    if key is None:
        limiter.failed(address)
        raise Problem(401, UNAUTHORIZED, headers={"WWW-Authenticate": "Bearer"})
    request.state.api_key = key
    return key


async def authenticate(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> ApiKey:
    """The request's API key (dependency)."""
    return await check_key(request, None if credentials is None else credentials.credentials)


Caller = Annotated[ApiKey, Depends(authenticate)]
Ops = Annotated[Operations, Depends(operations)]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)


class MessageIn(_Body):
    """A message to an agent."""

    content: str = Field(min_length=1, description="The message text.")
    session: str = Field(
        default="", max_length=128, description="A session name; each is its own conversation."
    )


class GrantIn(_Body):
    """A grant to create or replace."""

    agent: str = Field(min_length=1, description="Agent key or UUID.")
    scope: str = Field(min_length=1)
    sender_id: str = Field(min_length=1, description="The actor's sender id, or '*'.")
    config_type: str = Field(min_length=1)
    permission: Literal["allow", "deny"] = "allow"


class WriterIn(_Body):
    """A writer to add to a group."""

    scope: str = Field(min_length=1, description="The group scope (or guild:<gid>:*).")
    sender_id: str = Field(min_length=1)


class LinkIn(_Body):
    """Accounts to link to one person (a new one, the one they have, or ``person``)."""

    accounts: list[Annotated[str, Field(min_length=1, max_length=MAX_PARAMETER)]] = Field(
        min_length=1, max_length=16, description="Accounts: <platform>:<id>."
    )
    person: str | None = Field(
        default=None, max_length=MAX_PARAMETER, description="Join this person (person:<uuid>)."
    )


router = APIRouter(prefix="/v1")


@router.post("/agents/{agent}/messages", tags=["messages"])
async def post_message(agent: AgentPath, body: MessageIn, key: Caller, ops: Ops) -> dict[str, Any]:
    """Run the configured handler for one message with the key's HTTP identity."""
    return await ops.message(key, agent, body.content, body.session)


@router.get("/whoami", tags=["identity"])
async def whoami(key: Caller) -> dict[str, Any]:
    """The key's user, role, tenant and agent, and the identity a message runs with."""
    return {
        "user_id": key.user_id,
        "role": key.role,
        "tenant_id": key.tenant_id,
        "agent_id": key.agent_id,
        "key": key.prefix,
        "identity": {
            "user_id": key.user_id,
            "sender_id": "",
            "channel": "http",
            "peer_kind": "direct",
            "role": key.role,
        },
    }


@router.get("/agents", tags=["operators"])
async def list_agents(key: Caller, ops: Ops) -> list[dict[str, Any]]:
    """The agents of the key's tenant."""
    ops.require_operator(key)
    return [
        {"id": a.id, "key": a.key, "tenant_id": a.tenant_id, "display_name": a.display_name}
        for a in await ops.visible_agents(key)
    ]


@router.get("/grants", tags=["operators"])
async def list_grants(
    key: Caller,
    ops: Ops,
    agent: Filter = None,
    scope: Filter = None,
    sender_id: Filter = None,
    config_type: Filter = None,
) -> list[dict[str, Any]]:
    """Grants of the key's tenant, filtered (each filter compared exactly)."""
    grants = await ops.list_grants(
        key, agent=agent, scope=scope, sender_id=sender_id, config_type=config_type
    )
    return [grant.as_dict() for grant in grants]


@router.post("/grants", status_code=201, tags=["operators"])
async def add_grant(body: GrantIn, key: Caller, ops: Ops) -> dict[str, Any]:
    """Create or replace a grant (audited with the key's user as the actor)."""
    grant = await ops.add_grant(
        key,
        agent=body.agent,
        scope=body.scope,
        sender_id=body.sender_id,
        config_type=body.config_type,
        permission=body.permission,
    )
    return grant.as_dict()


@router.delete("/grants", tags=["operators"])
async def remove_grant(
    key: Caller,
    ops: Ops,
    agent: Required,
    scope: Required,
    sender_id: Required,
    config_type: Required,
) -> dict[str, Any]:
    """Remove a grant (audited); 404 if there is none."""
    grant = await ops.remove_grant(
        key, agent=agent, scope=scope, sender_id=sender_id, config_type=config_type
    )
    return {**grant.as_dict(), "removed": True}


@router.get("/links", tags=["operators"])
async def list_links(
    key: Caller, ops: Ops, person: Filter = None, account: Filter = None
) -> list[dict[str, Any]]:
    """Links of the key's tenant: persons and their accounts (filters compared exactly)."""
    return [link.as_dict() for link in await ops.list_links(key, person=person, account=account)]


@router.post("/links", status_code=201, tags=["operators"])
async def add_links(body: LinkIn, key: Caller, ops: Ops) -> list[dict[str, Any]]:
    """Link accounts to one person (audited with the key's user); 409 for another person's."""
    made = await ops.add_links(key, body.accounts, person=body.person)
    return [link.as_dict() for link in made]


@router.delete("/links", tags=["operators"])
async def remove_link(key: Caller, ops: Ops, account: Required) -> dict[str, Any]:
    """Unlink one account (audited); 404 if it is not linked."""
    return {**(await ops.remove_link(key, account)).as_dict(), "removed": True}


@router.get("/agents/{agent}/writers", tags=["operators"])
async def list_writers(agent: AgentPath, key: Caller, ops: Ops, scope: Required) -> dict[str, Any]:
    """The writers of one group, as ``/writers`` in the chat lists them."""
    where = ops.group(scope)
    return {"scope": where, "writers": await ops.list_writers(key, agent, scope)}


@router.post("/agents/{agent}/writers", status_code=201, tags=["operators"])
async def add_writer(agent: AgentPath, body: WriterIn, key: Caller, ops: Ops) -> dict[str, Any]:
    """Add a writer to a group (the chat command's rules); 409 if already one."""
    await ops.add_writer(key, agent, body.scope, body.sender_id)
    return {"scope": ops.group(body.scope), "sender_id": body.sender_id, "added": True}


@router.delete("/agents/{agent}/writers", tags=["operators"])
async def remove_writer(
    agent: AgentPath, key: Caller, ops: Ops, scope: Required, sender_id: Required
) -> dict[str, Any]:
    """Remove a writer (the chat command's rules); 404 if not one, 409 for the last one."""
    await ops.remove_writer(key, agent, scope, sender_id)
    return {"scope": ops.group(scope), "sender_id": sender_id, "removed": True}


@router.get("/audit", tags=["operators"])
async def audit(
    key: Caller,
    ops: Ops,
    reason: Filter = None,
    scope: Filter = None,
    sender_id: Annotated[
        str | None,
        Query(
            max_length=MAX_PARAMETER,
            pattern=_PRINTABLE,
            description="The sender a check judged, or whom a change is for (a grantee).",
        ),
    ] = None,
    actor: Annotated[
        str | None,
        Query(max_length=MAX_PARAMETER, pattern=_PRINTABLE, description="Who made a change."),
    ] = None,
    action: Filter = None,
    since: Since = None,
    cursor: Cursor = None,
    limit: Annotated[int, Query(ge=1, le=AUDIT_PAGE)] = AUDIT_PAGE,
) -> dict[str, Any]:
    """The audit log, newest first, filtered; follow ``next_cursor`` for older rows.

    A row's ``sender_id`` is the sender a check judged, or whom a grant, writer or key change
    is for; ``actor`` is who made a change (empty for a check); ``permission`` is the allow or
    deny a grant change set.
    """
    page = await ops.audit(
        key,
        reason=reason,
        scope=scope,
        sender_id=sender_id,
        actor=actor,
        action=action,
        since=since,
        cursor=cursor,
        limit=limit,
    )
    return {"items": [e.as_dict() for e in page.entries], "next_cursor": page.next_cursor}

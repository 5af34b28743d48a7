"""``create_app``: the FastAPI app of the API (``/v1``) and the operator console (``/console``).

Every error is ``application/problem+json`` (the console answers HTML pages); a request that
fails writes nothing, ``last_used_at`` included (it is recorded after a successful answer).
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse, Response
from starlette.background import BackgroundTask
from starlette.exceptions import HTTPException as StarletteHTTPException

from actorscope._input import parse_uuid
from actorscope._version import __version__
from actorscope.agents import Agent
from actorscope.assembly import Assembly
from actorscope.errors import ActorscopeError, ConfigError
from actorscope.host import Handler
from actorscope.http import _api, _console
from actorscope.http._guard import (
    BODY_TIMEOUT,
    MAX_BODY,
    PROBLEM_JSON,
    BodyLimit,
    FailureLimiter,
    Problem,
    problem_body,
)
from actorscope.http._keys import ApiKey
from actorscope.http._ops import Operations, problem_for
from actorscope.propagation import OriginSigner
from actorscope.store import Database

__all__ = ["create_app"]

_log = logging.getLogger("actorscope.http")


def _problem(
    status: int, detail: str, headers: dict[str, str] | None = None, **extra: Any
) -> Response:
    return JSONResponse(
        problem_body(status, detail, **extra),
        status_code=status,
        media_type=PROBLEM_JSON,
        headers=headers,
    )


def _field(loc: tuple[Any, ...] | list[Any]) -> str:
    """A validation error's location as a field path: ``body.content``, ``query.limit``."""
    return ".".join(str(part) for part in loc)


def create_app(
    source: Database | Assembly,
    *,
    handler: Handler | None = None,
    agent: Agent | str | None = None,
    signer: OriginSigner | None = None,
    failure_limit: int = 10,
    failure_window: float = 60.0,
    max_body: int = MAX_BODY,
    body_timeout: float = BODY_TIMEOUT,
) -> FastAPI:
    """The API and console over an open database, or one agent's assembly (the caller opens
    and closes the database).

    Given an :class:`~actorscope.assembly.Assembly` (what ``actorscope serve`` passes), the
    app serves its agent: operators work with the assembly's grants, writers and links, and
    ``handler`` answers ``POST /v1/agents/{agent}/messages`` for that agent only, through one
    run step (``assembly.run_step``: the agent's owners, roles and signer) with the key's
    role carried by each request; ``agent`` and ``signer`` are the assembly's, so passing
    them too is a :class:`~actorscope.errors.ConfigError`. Given a :class:`Database`,
    ``handler`` answers for ``agent`` only, when given (the
    :class:`~actorscope.agents.Agent` or its UUID: agent keys are unique per tenant only, so a
    key would name one agent in every tenant), else for any agent of the key's tenant; each
    agent a message reaches is assembled once (:func:`~actorscope.assembly.assemble`, with
    ``signer``) for its run step.

    Console sessions live in the database (any process serving it knows them; signing out
    ends one everywhere). At most ``failure_limit`` failed authentications per client address
    per ``failure_window`` seconds (then 429). A request body over ``max_body`` bytes is answered
    413, one slower than ``body_timeout`` seconds 408.

    Forwarded headers are the server's business: ``actorscope serve`` believes them only from
    ``[http] trusted_proxies``; under your own uvicorn, set ``forwarded_allow_ips`` (its default
    trusts 127.0.0.1) or ``proxy_headers=False``.
    """
    app = FastAPI(
        title="actorscope",
        version=__version__,
        description="Scope and actor identity for chat bots and agent hosts: HTTP API.",
    )
    if not isinstance(source, Database | Assembly):
        raise ConfigError(
            f"create_app takes an open Database or an Assembly, got {type(source).__name__}"
        )
    if isinstance(source, Assembly):
        if agent is not None or signer is not None:
            raise ConfigError(
                "create_app: an Assembly serves its own agent with its own signer;"
                " pass agent= and signer= only with a Database"
            )
        served: str | None = source.agent.id
        db = source.db
    else:
        served = agent.id if isinstance(agent, Agent) else agent
        if served is not None:
            # A key names an agent in every tenant: only the UUID is one agent.
            served = parse_uuid(served, "agent (the served agent's UUID or Agent, not its key)")
        db = source
    app.state.operations = Operations(source, handler=handler, served_agent=served, signer=signer)
    app.state.limiter = FailureLimiter(limit=failure_limit, window=failure_window)
    app.include_router(_api.router)
    app.include_router(_console.router)

    @app.exception_handler(Problem)
    async def on_problem(request: Request, exc: Problem) -> Response:
        if _console.is_console(request):
            return _console.error_page(request, exc)
        return _problem(exc.status, exc.detail, exc.headers, **exc.extra)

    @app.exception_handler(RequestValidationError)
    async def on_invalid(request: Request, exc: RequestValidationError) -> Response:
        errors = [{"field": _field(e["loc"]), "message": e["msg"]} for e in exc.errors()]
        detail = "; ".join(f"{e['field']}: {e['message']}" for e in errors)
        if _console.is_console(request):
            return _console.error_page(request, Problem(422, detail))
        return _problem(422, detail, errors=errors)

    @app.exception_handler(StarletteHTTPException)
    async def on_http(request: Request, exc: StarletteHTTPException) -> Response:
        detail = str(exc.detail) if exc.status_code != 404 else f"no such path: {request.url.path}"
        return _problem(exc.status_code, detail, dict(exc.headers or {}))

    @app.exception_handler(ActorscopeError)
    async def on_actorscope(request: Request, exc: ActorscopeError) -> Response:
        return await on_problem(request, problem_for(exc))

    @app.exception_handler(Exception)
    async def on_crash(request: Request, exc: Exception) -> Response:
        _log.exception("request %s %s failed", request.method, request.url.path)
        return _problem(500, "the server failed to answer this request")

    @app.middleware("http")
    async def record_use(request: Request, call_next: Any) -> Response:
        response: Response = await call_next(request)
        key: ApiKey | None = getattr(request.state, "api_key", None)
        if key is not None and response.status_code < 400 and response.background is None:
            # After the answer is sent: a locked database delays no answer for a hint.
            response.background = BackgroundTask(app.state.operations.keys.touch_quietly, key)
        return response

    @app.get("/healthz", tags=["health"])
    async def healthz() -> dict[str, str]:
        """The process answers."""
        return {"status": "ok"}

    @app.get("/readyz", tags=["health"])
    async def readyz() -> Response:
        """The database answers."""
        try:
            await db.fetchone("SELECT 1")
        except ActorscopeError as exc:
            return _problem(503, f"the database does not answer: {exc}")
        return JSONResponse({"status": "ready"})

    @app.get("/", include_in_schema=False)
    async def root() -> Response:
        return RedirectResponse("/console", status_code=303)

    app.add_middleware(BodyLimit, limit=max_body, timeout=body_timeout)
    return app

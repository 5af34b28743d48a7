"""PydanticAI integration (extra ``pydantic-ai``): tools that act for the human in the group.

- **Identity in deps.** :class:`ActorscopeDeps` carries the run's bound
  :class:`~actorscope.identity.Identity` and the services tools need (policy, signer,
  toolbox). Use it as an agent's deps, or put it in a field named ``actorscope`` of your own
  deps; :meth:`ActorscopeDeps.of` finds it. Tools read the actor from there, never from
  arguments the model wrote.
- **Guarded tools.** :func:`requires` on a tool function checks the actor with the policy
  before the body runs; a denial is the tool's result (``{"error": {"code":
  "permission_denied", "reason": ...}}``) that the model can explain, and the policy audits it.
- **Built-in tools.** :func:`registry_toolset` serves the tools of any
  :class:`~actorscope.tools.ToolRegistry` (actorscope's workspace, cron, memory and whoami
  tools: ``registry_toolset(builtin_tools(toolbox))``) with their flat schemas; every call
  goes through the registry's boundary, which validates ``agent_id`` / ``agent`` on the raw
  arguments before anything runs. Tools that take an agent
  namespace are written as actorscope :class:`~actorscope.tools.Tool` s and served this way.
- **Delegation.** :func:`run_delegate` runs another agent inside a tool under a signed origin
  (:func:`~actorscope.propagation.spawn_subagent` or :func:`~actorscope.propagation.delegate`
  and :meth:`~actorscope.propagation.OriginSigner.run_request`), so the delegate's guarded tools are
  judged for the human who asked; the result comes back through the announce path.
  :func:`mcp_toolset` connects a delegate to actorscope's MCP server with the run's identity in
  the ``X-Actorscope-Identity`` header, never in a tool argument.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

from pydantic_ai import Agent, AgentRunResult, RunContext
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.tools import Tool as PydanticTool
from pydantic_ai.toolsets import FunctionToolset

from actorscope.context import bind_identity, current_identity
from actorscope.errors import ConfigError, IdentityError
from actorscope.identity import Identity
from actorscope.messages import InboundMessage, RunRequest
from actorscope.permissions import ConfigType, Decision
from actorscope.propagation import (
    OriginSigner,
    RunInfo,
    delegate,
    spawn_subagent,
)
from actorscope.tools import (
    IdentityToken,
    Toolbox,
    ToolRegistry,
    ToolResult,
)

__all__ = [
    "ActorscopeDeps",
    "mcp_toolset",
    "registry_toolset",
    "requires",
    "run_delegate",
    "run_message",
]

#: The field of a user's own deps that holds its :class:`ActorscopeDeps`.
DEPS_FIELD = "actorscope"
#: Parameter names a guarded tool function may not take: the actor and the scope come from
#: deps, and an agent namespace needs the runtime rules of an actorscope ``Tool``.
IDENTITY_PARAMETERS: frozenset[str] = frozenset(
    {"sender_id", "user_id", "actor_id", "actor", "sender", "scope", "role", "agent_id", "agent"}
)

P = ParamSpec("P")
T = TypeVar("T")


class _CheckPolicy(Protocol):
    """What a guard needs: ``actorscope.permissions.PermissionPolicy`` has it."""

    def check(self, config_type: str, identity: Identity | None = None) -> Awaitable[Decision]:
        """Decide ``config_type`` for ``identity``; denials are audited by the policy."""
        ...


@dataclass(frozen=True, slots=True)
class ActorscopeDeps:
    """The run's identity and the services its tools use.

    ``identity`` is the one the host bound for this run (:meth:`bound` reads it); ``signer``
    signs delegation origins and MCP identity tokens; ``toolbox`` serves the built-in tools;
    ``agent_key`` names the agent in session keys of delegated runs.
    """

    identity: Identity
    policy: _CheckPolicy
    signer: OriginSigner | None = None
    toolbox: Toolbox | None = None
    agent_key: str = "main"

    def __post_init__(self) -> None:
        if not isinstance(self.identity, Identity):
            raise ConfigError(
                f"ActorscopeDeps.identity must be an Identity, got {type(self.identity).__name__}"
            )

    @classmethod
    def bound(
        cls,
        *,
        policy: _CheckPolicy,
        signer: OriginSigner | None = None,
        toolbox: Toolbox | None = None,
        agent_key: str = "main",
    ) -> ActorscopeDeps:
        """Deps for the identity bound to this run (a ``Host`` handler has one bound)."""
        identity = current_identity()
        if identity is None:
            raise IdentityError(
                "ActorscopeDeps.bound() must be called inside a run: no identity is bound"
            )
        return cls(identity, policy, signer, toolbox, agent_key)

    @classmethod
    def of(cls, deps: object) -> ActorscopeDeps:
        """The :class:`ActorscopeDeps` of a run's deps: the deps themselves, or their
        ``actorscope`` field."""
        if isinstance(deps, ActorscopeDeps):
            return deps
        nested = getattr(deps, DEPS_FIELD, None)
        if isinstance(nested, ActorscopeDeps):
            return nested
        raise ConfigError(
            "this tool needs actorscope deps: run the agent with deps=ActorscopeDeps(...) or "
            f"deps that have an {DEPS_FIELD!r} field holding one, got {type(deps).__name__}"
        )


def _denial(decision: Decision) -> dict[str, Any]:
    """The tool result of a refused check: an error the model can read and explain."""
    reason = str(decision.reason)
    message = (
        f"{decision.config_type} permission denied ({reason}): the person who sent this "
        "message may not do this here"
    )
    return ToolResult.error("permission_denied", message, reason=reason).payload


GuardedFunc = Callable[Concatenate[RunContext[Any], P], Awaitable[T]]


def _refuse_identity_parameters(func: Callable[..., Any]) -> None:
    names = list(inspect.signature(func).parameters)
    if not names:
        raise ConfigError(f"{func.__qualname__}: a guarded tool takes the RunContext first")
    taken = sorted(IDENTITY_PARAMETERS.intersection(names[1:]))
    if taken:
        raise ConfigError(
            f"{func.__qualname__}: a guarded tool may not take {', '.join(taken)} from the "
            "model; the actor comes from deps (an agent namespace: write an actorscope Tool "
            "and serve it with registry_toolset)"
        )


def requires(config_type: str) -> Callable[[GuardedFunc[P, T]], GuardedFunc[P, T | dict[str, Any]]]:
    """Guard an async tool function ``(ctx: RunContext[...], ...)`` with a ``config_type`` check.

    Before the body runs, the deps' policy checks the deps' identity (never an argument). An
    allowed call runs the body with that identity bound; a denied one returns :func:`denial`
    instead, so the run goes on and the model can tell the person why.
    """
    checked = ConfigType.parse_check(config_type)

    def decorate(func: GuardedFunc[P, T]) -> GuardedFunc[P, T | dict[str, Any]]:
        if not inspect.iscoroutinefunction(func):
            raise ConfigError(f"{func.__qualname__}: requires() guards async tool functions")
        _refuse_identity_parameters(func)

        @functools.wraps(func)
        async def guarded(
            ctx: RunContext[Any], /, *args: P.args, **kwargs: P.kwargs
        ) -> T | dict[str, Any]:
            deps = ActorscopeDeps.of(ctx.deps)
            decision = await deps.policy.check(checked, deps.identity)
            if not decision.allowed:
                return _denial(decision)
            with bind_identity(deps.identity):
                return await func(ctx, *args, **kwargs)

        return guarded

    return decorate


def _registry_caller(registry: ToolRegistry, name: str) -> Callable[..., Awaitable[dict[str, Any]]]:
    async def call(ctx: RunContext[Any], **arguments: Any) -> dict[str, Any]:
        deps = ActorscopeDeps.of(ctx.deps)
        # The raw arguments: the registry validates agent_id / agent before anything else.
        with bind_identity(deps.identity):
            result = await registry.call(name, arguments, deps.identity)
        return result.payload

    return call


def registry_toolset(registry: ToolRegistry, *, id: str | None = None) -> FunctionToolset[Any]:
    """``registry``'s tools as a PydanticAI toolset, each advertised with its flat schema.

    Every call runs as the deps' identity through :meth:`ToolRegistry.call`, so refusals
    (permission, identity arguments, bad input) come back as error results, not exceptions.
    """
    tools = [
        PydanticTool.from_schema(
            _registry_caller(registry, tool.name),
            name=tool.name,
            description=tool.description,
            json_schema=tool.input_schema,
            takes_ctx=True,
        )
        for tool in registry
    ]
    return FunctionToolset(tools, id=id)


@dataclass(frozen=True, slots=True)
class _DelegateResult:
    """What a delegate produced, and for whom.

    ``run`` is the delegate's run request (its ``sender_id`` is the human, or the synthetic
    carrier when the origin was no person); ``announce`` the turn that brought the result back,
    attributed the same way; ``output`` the result's text.
    """

    output: str
    run: RunRequest
    announce: RunRequest


async def run_message(
    agent: Agent[Any, Any],
    message: InboundMessage,
    caller: ActorscopeDeps,
    *,
    agent_key: str | None = None,
    deps: Callable[[ActorscopeDeps], object] | None = None,
) -> tuple[RunRequest, AgentRunResult[Any]]:
    """Run ``agent`` on a synthesised ``message`` (a carrier), as the identity it earns.

    :meth:`~actorscope.propagation.OriginSigner.run_request` (``caller``'s signer, consuming
    the origin) decides who that is: the origin's human when the signature verifies, else the
    carrier's synthetic sender, which every group check denies. The agent's deps are
    ``caller``'s with that identity (``deps`` builds the agent's own deps from them).
    """
    signer = _signer(caller)
    run = signer.run_request(message, agent_key=agent_key or caller.agent_key)
    identity = run.identity()
    run_deps = replace(caller, identity=identity)
    with bind_identity(identity), RunInfo.for_request(run).bind():
        result = await agent.run(run.content, deps=deps(run_deps) if deps is not None else run_deps)
    return run, result


def _signer(deps: ActorscopeDeps) -> OriginSigner:
    if deps.signer is None:
        raise ConfigError("delegation needs ActorscopeDeps.signer (an OriginSigner)")
    return deps.signer


async def run_delegate(
    ctx: RunContext[Any],
    agent: Agent[Any, Any],
    task: str,
    *,
    target_agent_id: str | None = None,
    agent_key: str | None = None,
    deps: Callable[[ActorscopeDeps], object] | None = None,
) -> _DelegateResult:
    """Run ``agent`` on ``task`` for the human behind ``ctx``, and bring its result back.

    Without ``target_agent_id`` the delegate is a sub-agent of the same agent (the human's
    role comes along); with one (a UUID) it is another agent (the human, no role). The
    carrier is signed with the deps' signer and attributed by
    :meth:`~actorscope.propagation.OriginSigner.run_request`, whose identity the delegate runs as:
    its deps are the caller's with that identity (``deps`` builds the delegate's own deps
    from them). The output returns as an announce, attributed the same way.
    """
    caller = ActorscopeDeps.of(ctx.deps)
    signer = _signer(caller)
    with bind_identity(caller.identity):
        if target_agent_id is None:
            sub = spawn_subagent(task, signer=signer)
            carrier, announce_result = sub.message, sub.announce
        else:
            handed = delegate(target_agent_id, task, signer=signer)
            carrier, announce_result = handed.message, handed.announce
    run, result = await run_message(
        agent,
        carrier,
        caller,
        agent_key=agent_key or caller.agent_key,
        deps=deps,
    )
    output = result.output if isinstance(result.output, str) else str(result.output)
    message = announce_result(output, signer=signer)
    announce = signer.run_request(message, agent_key=caller.agent_key)
    return _DelegateResult(announce.content, run, announce)


def mcp_toolset(
    url: str,
    *,
    signer: OriginSigner,
    id: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> MCPToolset[Any]:
    """A toolset of actorscope's MCP server at ``url`` that acts as each run's deps identity.

    Every run connects with its identity signed into the ``X-Actorscope-Identity`` header
    (the server, made with ``create_mcp_server(registry, signer)``, verifies it with the same
    key); no tool argument carries the actor. A refused call comes back to the model as a
    failed tool result it can explain.
    """
    extra = dict(headers or {})
    if any(key.lower() == IdentityToken.HEADER.lower() for key in extra):
        raise ConfigError(f"{IdentityToken.HEADER} is set from each run's deps, not by hand")

    def run_headers(ctx: RunContext[Any]) -> dict[str, str]:
        identity = ActorscopeDeps.of(ctx.deps).identity
        return {**extra, IdentityToken.HEADER: IdentityToken.encode(identity, signer)}

    return MCPToolset(url, id=id, headers=run_headers, tool_error_behavior="failed")

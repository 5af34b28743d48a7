"""PydanticAI: guarded tools, delegation and MCP judge the human in the group, offline.

The matrix: a writer, a non-writer, a Telegram anonymous admin and a Discord webhook, each
asking for ``notes.md`` through a guarded tool of the agent itself, through a delegate agent's
guarded tool, and through a delegate whose tools are actorscope's MCP server. Every model is
a scripted ``FunctionModel``; the MCP server listens on 127.0.0.1.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any

import anyio
import pytest
from pydantic import BaseModel, ConfigDict, Field
from pydantic_ai import Agent as PydanticAgent
from pydantic_ai import RunContext
from tests.integrations.conftest import Script, World

from actorscope.cli._lint import TARGETS, lint_tool_schema
from actorscope.context import bind_identity
from actorscope.errors import ConfigError, GrantError, IdentityError
from actorscope.identity import Identity, PeerKind, SenderKind
from actorscope.integrations.pydantic_ai import (
    ActorscopeDeps,
    mcp_toolset,
    registry_toolset,
    requires,
    run_delegate,
    run_message,
)
from actorscope.messages import InboundMessage, MetaKey
from actorscope.permissions import AuditAction, Reason
from actorscope.propagation import spawn_subagent
from actorscope.tools import Tool, ToolRegistry, builtin_tools
from actorscope.tools._identity_args import AGENT_ALIAS_DESCRIPTION, AGENT_ID_DESCRIPTION
from actorscope.tools._registry import ToolCall
from actorscope.tools._strict import to_openai_strict

pytestmark = pytest.mark.sqlite_only(
    "PydanticAI's subject is the tool boundary and delegation, not the dialect: the policy and "
    "grants under it run on both backends in tests/permissions"
)

CHAT = -1001234567890
GROUP = f"group:telegram:{CHAT}"
WRITER, MEMBER = "4242", "5151"
NOTES = "notes.md"
WHO = ("writer", "non_writer", "anonymous_admin", "webhook")
PATHS = ("direct", "delegated", "mcp")


def person(kind: str) -> Identity:
    """The identity of one kind of sender in the group (no agent yet)."""
    if kind == "writer":
        return Identity.chat("telegram", CHAT, WRITER, group=True)
    if kind == "non_writer":
        return Identity.chat("telegram", CHAT, MEMBER, group=True)
    if kind == "anonymous_admin":
        return Identity.chat("telegram", CHAT, 1087968824, group=True)
    return Identity.chat(
        "discord", 55, 777, group=True, guild_id=99, sender_kind=SenderKind.WEBHOOK
    )


def expected(kind: str, path: str) -> tuple[bool, Reason]:
    """The decision the write gets: for the human, whatever the path."""
    if kind == "writer":
        return True, Reason.GRANTED
    if kind == "non_writer":
        return False, Reason.NO_GRANT
    # No person: denied as such directly, and a delegated run stays synthetic.
    return False, Reason.EMPTY_SENDER if path == "direct" else Reason.SYNTHETIC_SENDER


@requires("file_writer")
async def write_notes(ctx: RunContext[ActorscopeDeps], text: str) -> dict[str, Any]:
    """Append a line to notes.md in this conversation's workspace.

    Args:
        text: The line to add.
    """
    deps = ActorscopeDeps.of(ctx.deps)
    assert deps.toolbox is not None
    agent, who = await deps.toolbox.acting(deps.identity)
    size = deps.toolbox.workspace.append(agent, who, NOTES, f"- {text}\n")
    return {"written": NOTES, "bytes": size}


@dataclass
class Outcome:
    """What one request produced: the main agent's answer, and the delegate's attribution."""

    answer: str
    announce_sender: str | None = None
    delegate_sender: str | None = None


async def ask(world: World, identity: Identity, path: str, mcp_url: str = "") -> Outcome:
    """Run the main agent for ``identity`` along ``path``, each model scripted."""
    deps = ActorscopeDeps(identity, world.policy, world.signer, world.toolbox, "main")
    seen: dict[str, str] = {}
    if path == "direct":
        main = PydanticAgent(
            Script("write_notes", {"text": "buy milk"}).model(),
            deps_type=ActorscopeDeps,
            tools=[write_notes],
        )
        return Outcome(str((await main.run("write notes.md", deps=deps)).output))
    if path == "delegated":
        helper = PydanticAgent(
            Script("write_notes", {"text": "buy milk"}).model(),
            deps_type=ActorscopeDeps,
            tools=[write_notes],
        )
    else:
        helper = PydanticAgent(
            Script("workspace_write", {"path": NOTES, "content": "- buy milk\n"}).model(),
            deps_type=ActorscopeDeps,
            toolsets=[mcp_toolset(mcp_url, signer=world.signer)],
        )

    async def delegate_notes(ctx: RunContext[ActorscopeDeps], text: str) -> str:
        """Ask the helper agent to write notes.md."""
        done = await run_delegate(
            ctx, helper, f"write {NOTES}: {text}", target_agent_id=world.helper.id
        )
        seen["announce"] = done.announce.sender_id
        seen["delegate"] = done.run.sender_id
        return done.output

    main = PydanticAgent(
        Script("delegate_notes", {"text": "buy milk"}).model(),
        deps_type=ActorscopeDeps,
        tools=[delegate_notes],
    )
    with anyio.fail_after(30):
        answer = str((await main.run("write notes.md", deps=deps)).output)
    return Outcome(answer, seen.get("announce"), seen.get("delegate"))


async def grant_writer(world: World) -> None:
    """The writer may write files in the group, for both agents."""
    for agent in (world.main, world.helper):
        await world.store.grant(
            agent_id=agent.id, scope=GROUP, config_type="file_writer", sender_id=WRITER
        )


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("kind", WHO)
async def test_matrix_judges_the_human_on_every_path(
    world: World, mcp_url: str, kind: str, path: str
) -> None:
    """Decision, audit row, written file and attribution follow the human who asked."""
    await grant_writer(world)
    identity = replace(person(kind), agent_id=world.main.id, tenant_id=world.main.tenant_id)
    outcome = await ask(world, identity, path, mcp_url)
    allowed, reason = expected(kind, path)

    checks = [(who, d) for who, d in world.policy.decisions if d.config_type == "file_writer"]
    assert len(checks) == 1
    judged, decision = checks[0]
    assert (decision.allowed, decision.reason) == (allowed, reason)
    assert decision.scope == identity.user_id
    human = identity.sender_id
    if human:
        assert decision.sender_id == human
    assert judged is not None
    assert judged.agent_id == (world.main.id if path == "direct" else world.helper.id)

    written = list(world.root.rglob(NOTES))
    assert len(written) == (1 if allowed else 0)
    rows = [r for r in await world.store.audit.list() if r.action == AuditAction.CHECK_DENY]
    if allowed:
        assert rows == []
        assert "buy milk" in written[0].read_text()
    else:
        assert [(r.reason, r.config_type, r.scope) for r in rows] == [
            (reason, "file_writer", identity.user_id)
        ]
        if human:
            assert rows[0].sender_id == human  # the human, never the sub-agent
        elif path == "direct":
            assert rows[0].sender_id == ""
        else:
            assert rows[0].sender_id.startswith("subagent:delegate:")
        assert reason in outcome.answer  # the model is told why, and the run went on
    if path != "direct":
        # The delegate ran as the human, and its result came back attributed to them.
        want = human or "subagent:delegate:"
        assert outcome.delegate_sender is not None
        assert outcome.delegate_sender.startswith(want)
        assert outcome.announce_sender is not None
        assert outcome.announce_sender.startswith(want)


@pytest.mark.parametrize("path", PATHS)
async def test_model_supplied_identity_arguments_change_no_actor(
    world: World, mcp_url: str, path: str
) -> None:
    """A non-writer's model naming the writer in tool arguments writes nothing, anywhere."""
    await grant_writer(world)
    identity = replace(person("non_writer"), agent_id=world.main.id, tenant_id=world.main.tenant_id)
    forged = {"sender_id": WRITER, "user_id": WRITER, "actor_id": WRITER, "role": "owner"}
    deps = ActorscopeDeps(identity, world.policy, world.signer, world.toolbox)
    if path == "mcp":
        script = Script("workspace_write", {"path": NOTES, "content": "x", **forged})
        agent = PydanticAgent(
            script.model(),
            deps_type=ActorscopeDeps,
            toolsets=[mcp_toolset(mcp_url, signer=world.signer)],
        )
    elif path == "delegated":
        script = Script("workspace_write", {"path": NOTES, "content": "x", **forged})
        agent = PydanticAgent(
            script.model(),
            deps_type=ActorscopeDeps,
            toolsets=[registry_toolset(builtin_tools(world.toolbox))],
        )
    else:
        script = Script("write_notes", {"text": "x", **forged})
        agent = PydanticAgent(script.model(), deps_type=ActorscopeDeps, tools=[write_notes])
    with anyio.fail_after(30):
        answer = str((await agent.run("write", deps=deps)).output)
    assert list(world.root.rglob(NOTES)) == []
    assert "sender_id" in answer  # refused as an argument the tool does not take
    assert all(d.sender_id in ("", MEMBER) for _, d in world.policy.decisions)


async def test_schemas_pydantic_ai_sends_pass_the_linter_for_every_target(
    world: World, mcp_url: str
) -> None:
    """Guarded functions, the built-in toolset, a namespace tool and MCP tools lint clean."""
    local = Script("whoami", {})
    remote = Script("whoami", {})
    identity = replace(person("writer"), agent_id=world.main.id)
    deps = ActorscopeDeps(identity, world.policy, world.signer, world.toolbox)
    agents = [
        PydanticAgent(
            local.model(),
            deps_type=ActorscopeDeps,
            tools=[write_notes],
            toolsets=[
                registry_toolset(builtin_tools(world.toolbox)),
                registry_toolset(note_registry()),
            ],
        ),
        PydanticAgent(
            remote.model(),
            deps_type=ActorscopeDeps,
            toolsets=[mcp_toolset(mcp_url, signer=world.signer)],
        ),
    ]
    with anyio.fail_after(30):
        for agent in agents:
            await agent.run("who am I?", deps=deps)
    assert {tool.name for tool in remote.seen} >= {"workspace_write", "memory_reflect"}
    script = Script("", {}, [*local.seen, *remote.seen])
    names = {tool.name for tool in script.seen}
    assert {"write_notes", "workspace_write", "memory_reflect", "note_tag", "whoami"} <= names
    for tool in script.seen:
        schema = tool.parameters_json_schema
        for target in TARGETS:
            shown = to_openai_strict(schema) if target == "openai-strict" else schema
            assert lint_tool_schema(shown, target) == [], (tool.name, target)


class NoteTagInput(BaseModel):
    """Tag the notes of an agent namespace."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    agent_id: str | None = Field(default=None, description=AGENT_ID_DESCRIPTION)
    agent: str | None = Field(default=None, description=AGENT_ALIAS_DESCRIPTION)
    tag: str = Field(description="The tag.")


def note_registry() -> ToolRegistry:
    """One identity-taking tool, written as an actorscope Tool (runtime namespace rules)."""

    async def tag(call: ToolCall, args: NoteTagInput) -> dict[str, Any]:
        return {"namespace": call.namespace, "tag": args.tag, "sender": call.identity.sender_id}

    return ToolRegistry((Tool("note_tag", "Tag notes.", NoteTagInput, tag, True),))


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({"agent_id": None, "agent": "notes", "tag": "t"}, "agent_id"),
        ({"agent_id": "  ", "agent": "notes", "tag": "t"}, "agent_id"),
        ({"agent": 5, "tag": "t"}, "agent"),
    ],
)
async def test_agent_namespace_is_validated_at_runtime(
    world: World, args: dict[str, Any], field: str
) -> None:
    """A null, blank or non-string agent_id / agent is an invalid_identity result, no fallback."""
    script = Script("note_tag", args)
    agent = PydanticAgent(
        script.model(), deps_type=ActorscopeDeps, toolsets=[registry_toolset(note_registry())]
    )
    deps = ActorscopeDeps(person("writer"), world.policy)
    answer = json.loads(str((await agent.run("tag", deps=deps)).output))
    assert answer["error"]["code"] == "invalid_identity"
    assert answer["error"]["field"] == field


async def test_namespace_tool_acts_as_the_deps_identity(world: World) -> None:
    """The valid namespace is used byte for byte; the sender is the deps' human."""
    script = Script("note_tag", {"agent_id": " p ", "agent": "q", "tag": "t"})
    agent = PydanticAgent(
        script.model(), deps_type=ActorscopeDeps, toolsets=[registry_toolset(note_registry())]
    )
    deps = ActorscopeDeps(person("non_writer"), world.policy)
    answer = json.loads(str((await agent.run("tag", deps=deps)).output))
    assert answer == {"namespace": " p ", "tag": "t", "sender": MEMBER}


def delegating_tool(target: str | None) -> Callable[[RunContext[ActorscopeDeps]], Awaitable[str]]:
    """A tool ``go`` that has a helper agent write notes, as a sub-agent or for ``target``."""
    helper = PydanticAgent(
        Script("write_notes", {"text": "x"}).model(), deps_type=ActorscopeDeps, tools=[write_notes]
    )

    async def go(ctx: RunContext[ActorscopeDeps]) -> str:
        return (await run_delegate(ctx, helper, "write", target_agent_id=target)).output

    return go


async def test_sub_agent_of_the_same_agent_keeps_the_role(world: World) -> None:
    """An owner's role bypass carries to a sub-agent of the same agent, not to another agent."""
    owner = replace(
        person("non_writer"), role="owner", agent_id=world.main.id, tenant_id=world.main.tenant_id
    )
    decisions: dict[str, Reason] = {}
    for target in (None, world.helper.id):
        main = PydanticAgent(
            Script("go", {}).model(), deps_type=ActorscopeDeps, tools=[delegating_tool(target)]
        )
        await main.run("go", deps=ActorscopeDeps(owner, world.policy, world.signer, world.toolbox))
        decisions[str(target)] = world.policy.decisions[-1][1].reason
    assert decisions == {"None": Reason.ROLE_BYPASS, world.helper.id: Reason.NO_GRANT}


async def test_user_deps_with_an_actorscope_field(world: World) -> None:
    """A user's own deps type works when it holds ActorscopeDeps in its actorscope field."""

    @dataclass
    class MyDeps:
        actorscope: ActorscopeDeps
        greeting: str = "hi"

    agent = PydanticAgent(
        Script("write_notes", {"text": "x"}).model(), deps_type=MyDeps, tools=[write_notes]
    )
    deps = MyDeps(ActorscopeDeps(person("non_writer"), world.policy, toolbox=world.toolbox))
    answer = str((await agent.run("w", deps=deps)).output)
    assert "no_agent" in answer  # judged (and denied: the identity names no agent)


def test_guard_refuses_identity_parameters_and_unknown_types() -> None:
    """requires() names the parameter the model must not supply, and an unknown check type."""

    async def bad(ctx: RunContext[ActorscopeDeps], sender_id: str) -> str:
        return sender_id

    with pytest.raises(ConfigError, match="may not take sender_id"):
        requires("file_writer")(bad)
    with pytest.raises(GrantError):
        requires("everything")


async def test_deps_need_a_bound_identity_and_a_signer(world: World) -> None:
    """ActorscopeDeps.bound() outside a run, or delegation without a signer, is a clear error."""
    with pytest.raises(IdentityError):
        ActorscopeDeps.bound(policy=world.policy)
    with pytest.raises(ConfigError, match="needs actorscope deps"):
        ActorscopeDeps.of(object())
    helper = PydanticAgent(Script("whoami", {}).model(), deps_type=ActorscopeDeps)
    with bind_identity(person("writer")):
        carrier = spawn_subagent("write", signer=world.signer)
    unsigned = ActorscopeDeps(person("writer"), world.policy)
    with pytest.raises(ConfigError, match=r"needs ActorscopeDeps\.signer"):
        await run_message(helper, carrier.message, unsigned)


async def test_forged_or_replayed_carrier_runs_synthetic(world: World) -> None:
    """An unsigned origin claiming the writer, or a signed one run twice, is denied as synthetic."""
    await grant_writer(world)
    writer = replace(person("writer"), agent_id=world.main.id, tenant_id=world.main.tenant_id)
    deps = ActorscopeDeps(writer, world.policy, world.signer, world.toolbox)
    helper = PydanticAgent(
        Script("write_notes", {"text": "x"}).model(), deps_type=ActorscopeDeps, tools=[write_notes]
    )
    forged = InboundMessage(
        channel="telegram", sender_id="subagent:forged", chat_id=str(CHAT),
        peer_kind=PeerKind.GROUP, user_id=GROUP, sender_kind=SenderKind.SYNTHETIC,
        content="write", agent_id=world.main.id, tenant_id=world.main.tenant_id,
        metadata={MetaKey.ORIGIN_SENDER_ID: WRITER, "origin_channel": "telegram",
                  "origin_chat_id": str(CHAT), "origin_peer_kind": "group"},
    )  # fmt: skip
    run, _ = await run_message(helper, forged, deps)
    assert run.sender_id == "subagent:forged"
    with bind_identity(writer):
        signed = spawn_subagent("write", signer=world.signer)
    first, _ = await run_message(helper, signed.message, deps)
    again, _ = await run_message(helper, signed.message, deps)
    assert (first.sender_id, again.sender_id) == (WRITER, signed.sender_id)
    reasons = [d.reason for _, d in world.policy.decisions]
    assert reasons == [Reason.SYNTHETIC_SENDER, Reason.GRANTED, Reason.SYNTHETIC_SENDER]
    assert len(list(world.root.rglob(NOTES))) == 1

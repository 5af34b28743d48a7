"""Fixtures for the PydanticAI integration: two agents, a recording policy, scripted models."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.tools import ToolDefinition

from actorscope.agents import Agent, AgentRegistry
from actorscope.cli._mcp_serve import http_server
from actorscope.identity import Identity
from actorscope.permissions import Decision, GrantStore, PermissionPolicy
from actorscope.propagation import OriginSigner
from actorscope.store import Database
from actorscope.tools import Toolbox, builtin_tools
from actorscope.tools.mcp_server import create_mcp_server

KEY = b"k" * 32


@dataclass
class RecordingPolicy:
    """A :class:`PermissionPolicy` that also keeps every decision it made, with its identity."""

    inner: PermissionPolicy
    decisions: list[tuple[Identity | None, Decision]] = field(default_factory=list)

    async def check(self, config_type: str, identity: Identity | None = None) -> Decision:
        """The inner policy's check, recorded."""
        decision = await self.inner.check(config_type, identity)
        self.decisions.append((identity, decision))
        return decision

    async def check_file_writer(self, identity: Identity | None = None) -> Decision:
        """``file_writer``, recorded."""
        return await self.check("file_writer", identity)

    async def check_cron(self, identity: Identity | None = None) -> Decision:
        """``cron``, recorded."""
        return await self.check("cron", identity)


@dataclass
class World:
    """Two agents (``main`` delegates to ``helper``), grants, the policy, signer and toolbox."""

    db: Database
    store: GrantStore
    main: Agent
    helper: Agent
    policy: RecordingPolicy
    signer: OriginSigner
    toolbox: Toolbox
    root: Path


@pytest.fixture
async def world(db: Database, agent: Agent, store: GrantStore, tmp_path: Path) -> World:
    """``main`` (the project-wide agent) and ``helper``, over one database and workspace."""
    helper = await AgentRegistry(db).create("helper")
    policy = RecordingPolicy(PermissionPolicy(store))
    root = tmp_path / "ws"
    toolbox = Toolbox.create(db, policy=policy, workspace_root=root, default_agent=agent)
    return World(db, store, agent, helper, policy, OriginSigner(KEY), toolbox, root)


@pytest.fixture
async def mcp_url(world: World, serve_on_loopback: Callable[..., Any]) -> AsyncIterator[str]:
    """actorscope's built-in tools over streamable HTTP on loopback, identity from the header."""
    server = http_server(
        create_mcp_server(builtin_tools(world.toolbox), world.signer),
        host="127.0.0.1",
        port=0,
    )
    async with serve_on_loopback(server) as port:
        yield f"http://127.0.0.1:{port}/mcp"


def answer_text(part: object) -> str:
    """What a tool call came back as, in the words the model reads."""
    if isinstance(part, ToolReturnPart):
        return part.model_response_str()
    if isinstance(part, RetryPromptPart):
        return part.model_response()
    raise AssertionError(f"not a tool answer: {part!r}")


@dataclass
class Script:
    """A scripted model: call ``tool`` with ``args`` once, then say what came back.

    ``seen`` keeps the tool definitions each request offered (the schemas PydanticAI sends).
    """

    tool: str
    args: dict[str, Any]
    seen: list[ToolDefinition] = field(default_factory=list)

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        """One model turn."""
        self.seen.extend(info.function_tools)
        last = messages[-1].parts[-1]
        if isinstance(last, ToolReturnPart | RetryPromptPart):
            return ModelResponse(parts=[TextPart(answer_text(last))])
        return ModelResponse(parts=[ToolCallPart(self.tool, json.dumps(self.args))])

    def model(self) -> FunctionModel:
        """This script as a PydanticAI model."""
        return FunctionModel(self)

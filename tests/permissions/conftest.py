"""Fixtures for the permission tests: a database with one agent, its store and a policy."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import pytest

from actorscope.agents import Agent, AgentRegistry
from actorscope.identity import Identity, PeerKind
from actorscope.permissions import GrantStore, PermissionPolicy
from actorscope.store import Database

GROUP = "group:telegram:-100200"
GUILD = "guild:81234567890123456"

MakeIdentity = Callable[..., Identity]


@pytest.fixture
async def db(db_target: str) -> AsyncIterator[Database]:
    """A fresh migrated database."""
    async with Database.open(db_target) as database:
        yield database


@pytest.fixture
async def agent(db: Database) -> Agent:
    """The agent ``main`` of the default tenant."""
    return await AgentRegistry(db).create("main")


@pytest.fixture
def store(db: Database) -> GrantStore:
    """A grant store over the database."""
    return GrantStore(db)


@pytest.fixture
def policy(store: GrantStore) -> PermissionPolicy:
    """A non-strict policy over the store."""
    return PermissionPolicy(store)


@pytest.fixture
def ident(agent: Agent) -> MakeIdentity:
    """Build an identity of ``agent`` (group scope and sender "42" unless told otherwise)."""

    def make(
        sender_id: str = "42",
        user_id: str = GROUP,
        *,
        role: str = "",
        agent_id: str | None = agent.id,
        tenant_id: str | None = None,
    ) -> Identity:
        group = user_id.startswith(("group:", "guild:"))
        return Identity(
            user_id=user_id,
            sender_id=sender_id,
            peer_kind=PeerKind.GROUP if group else PeerKind.DIRECT,
            role=role,
            agent_id=agent_id,
            tenant_id=tenant_id,
        )

    return make

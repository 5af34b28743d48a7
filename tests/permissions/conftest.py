"""Fixtures for the permission tests: a policy and identities.

``db``, ``agent`` and ``store`` are the project-wide ones (tests/conftest.py).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from actorscope.agents import Agent
from actorscope.identity import Identity, PeerKind
from actorscope.permissions import GrantStore, PermissionPolicy

GROUP = "group:telegram:-100200"
GUILD = "guild:81234567890123456"

MakeIdentity = Callable[..., Identity]


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

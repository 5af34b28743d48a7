"""Security review: malformed identity text must never turn a group check into a fail-open allow."""

from __future__ import annotations

from pathlib import Path

import pytest

from actorscope.agents import AgentRegistry
from actorscope.identity import Identity, PeerKind
from actorscope.permissions import GrantStore, PermissionPolicy
from actorscope.store import Database

GROUP = "group:telegram:-100200"


@pytest.mark.parametrize(
    ("scope", "sender"),
    [(GROUP, "42\ud800"), ("group:telegram:\udc00", "42")],
)
async def test_unencodable_sender_or_scope_is_denied_not_failed_open(
    tmp_path: Path, scope: str, sender: str
) -> None:
    """A lone surrogate in sender or scope must deny, not raise inside the lookup and fail open."""
    async with Database.open(tmp_path / "t.db") as db:
        agent = await AgentRegistry(db).create("main")
        store = GrantStore(db)
        # Everyone is explicitly denied here; nothing may let this member write.
        await store.grant(
            agent_id=agent.id, scope=GROUP, config_type="*", sender_id="*", permission="deny"
        )
        identity = Identity(
            user_id=scope, sender_id=sender, peer_kind=PeerKind.GROUP, agent_id=agent.id
        )
        decision = await PermissionPolicy(store).check_file_writer(identity)
        assert not decision.allowed, f"allowed via {decision.reason.value} despite a '*' deny"

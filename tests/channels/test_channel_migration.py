"""A Telegram group migrating to a supergroup moves its grants to the new scope."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from actorscope.agents import AgentRegistry
from actorscope.channels._migration import move_grants
from actorscope.channels.telegram._normalize import chat_migration
from actorscope.identity import Identity
from actorscope.permissions import GrantStore, PermissionPolicy, Reason
from actorscope.store import Database

FIXTURES = Path(__file__).parent.parent / "fixtures" / "telegram"


async def test_grants_follow_the_migration(tmp_path: Path) -> None:
    """After migrate_to_chat_id the writer is a writer in the supergroup, not the old group."""
    move = chat_migration(json.loads((FIXTURES / "migrate_to.json").read_text()))
    assert move is not None
    async with Database.open(tmp_path / "t.db") as db:
        agent = await AgentRegistry(db).create("main")
        store = GrantStore(db)
        for user in ("4242", "5151"):
            await store.grant(
                agent_id=agent.id, scope=move.old_scope, config_type="file_writer", sender_id=user
            )
        await store.grant(
            agent_id=agent.id,
            scope=move.new_scope,
            config_type="file_writer",
            sender_id="5151",
            permission="deny",
        )
        assert await move_grants(store, move, moved_by="4242") == 1
        assert await store.list(scope=move.old_scope) == []
        moved = {g.sender_id: g.permission for g in await store.list(scope=move.new_scope)}
        assert moved == {"4242": "allow", "5151": "deny"}
        policy = PermissionPolicy(store)
        alice = Identity.chat("telegram", move.new_chat_id, 4242, group=True)
        decision = await policy.check_file_writer(identity=replace(alice, agent_id=agent.id))
        assert decision.reason is Reason.GRANTED
        assert await move_grants(store, move) == 0

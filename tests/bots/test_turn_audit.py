"""``actorscope run``'s turn: a denial is on record before the reply that tells of it."""

from __future__ import annotations

from pathlib import Path

from actorscope.agents import AgentRegistry
from actorscope.bots import BotServices
from actorscope.context import bind_identity
from actorscope.identity import Identity, PeerKind
from actorscope.messages import RunRequest
from actorscope.permissions import GrantStore, PermissionPolicy
from actorscope.store import Database
from actorscope.tools import Workspace

GROUP = "group:telegram:-100200"


async def test_the_handlers_denials_are_written_before_its_reply(tmp_path: Path) -> None:
    """When the wrapped handler returns, the audit row of the denial it was told is committed:
    a worker killed right after sends no decision the trail lost (denials are written in the
    background, in groups, so without the settle the row would still be queued here)."""
    async with Database.open(tmp_path / "bot.db") as db:
        agent = await AgentRegistry(db).ensure("main")
        grants = GrantStore(db)
        services = BotServices(db, agent, grants, PermissionPolicy(grants), Workspace(tmp_path))

        async def handler(request: RunRequest) -> str:
            decision = await BotServices.current().policy.check_file_writer()
            return str(decision.reason)

        member = Identity(
            user_id=GROUP, sender_id="42", peer_kind=PeerKind.GROUP, agent_id=agent.id
        )
        request = RunRequest(
            channel="telegram", sender_id="42", chat_id="-100200", user_id=GROUP,
            peer_kind=PeerKind.GROUP, session_key="agent:main:telegram:group:-100200",
        )  # fmt: skip
        with bind_identity(member):
            assert await services.wrap(handler)(request) == "no_grant"
        row = await db.fetchone("SELECT COUNT(*) FROM audit_log WHERE action = 'check.deny'")
        assert row is not None
        assert row[0] == 1

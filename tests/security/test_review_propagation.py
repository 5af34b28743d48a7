"""Security review: a signed origin must not survive being moved or replayed."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from actorscope.agents import AgentRegistry
from actorscope.context import bind_identity
from actorscope.identity import PeerKind, telegram_identity
from actorscope.messages import InboundMessage
from actorscope.permissions import GrantStore, PermissionPolicy
from actorscope.propagation import (
    OriginSigner,
    build_run_request,
    delegate,
    spawn_subagent,
)
from actorscope.store import Database


def _signed_task_message(signer: OriginSigner) -> InboundMessage:
    with bind_identity(telegram_identity(-100200, "supergroup", 42)):
        return spawn_subagent("summarise the thread", signer=signer).message


def test_origin_moved_onto_other_peer_kind_is_not_honoured() -> None:
    """Flipping the carrier's peer_kind (unsigned) must not keep the origin nor move the session."""
    signer = OriginSigner()
    message = _signed_task_message(signer)
    original = build_run_request(message, signer=signer)
    moved = message.model_copy(update={"peer_kind": PeerKind.DIRECT})
    request = build_run_request(moved, signer=signer)
    assert request.sender_id != "42" or request.session_key == original.session_key, (
        f"moved carrier still runs as 42, now in session {request.session_key!r}"
    )


def test_origin_moved_onto_other_message_id_is_not_honoured() -> None:
    """A carrier whose message_id was changed is another message: its origin must not verify."""
    signer = OriginSigner()
    message = _signed_task_message(signer)
    moved = message.model_copy(update={"message_id": "999"})
    request = build_run_request(moved, signer=signer)
    assert request.sender_id != "42", "origin lifted onto a different message_id was honoured"


def test_exact_replay_of_a_signed_carrier_is_not_honoured_twice() -> None:
    """docs/design.md: a replayed origin is ignored; a signed carrier attributes only once."""
    signer = OriginSigner()
    message = _signed_task_message(signer)
    first = build_run_request(message, signer=signer)
    assert first.sender_id == "42"
    again = build_run_request(message, signer=signer)
    assert again.sender_id != "42", "a replayed carrier ran as the human a second time"


async def test_owner_role_of_one_agent_does_not_carry_into_a_delegate(tmp_path: Path) -> None:
    """An owner of agent A who delegates to agent B must not bypass B's group checks."""
    async with Database.open(tmp_path / "t.db") as db:
        registry = AgentRegistry(db)
        home = await registry.create("home")
        other = await registry.create("other")
        signer = OriginSigner()
        owner_of_home = replace(
            telegram_identity(-100200, "supergroup", 42, role="owner"),
            agent_id=home.id,
            tenant_id=home.tenant_id,
        )
        with bind_identity(owner_of_home):
            task = delegate(other.id, "rewrite the group's files", signer=signer)
        request = build_run_request(task.message, signer=signer)
        assert request.agent_id == other.id
        decision = await PermissionPolicy(GrantStore(db)).check_file_writer(request.identity())
        assert not decision.allowed, (
            f"agent {other.key!r} let the run write via {decision.reason.value} "
            f"(role {request.role!r} came from agent {home.key!r})"
        )

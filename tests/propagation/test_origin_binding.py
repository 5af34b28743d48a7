"""What a signed origin is bound to: its role's agent and tenant, and every routing field."""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import replace
from pathlib import Path

import pytest

from actorscope.agents import AgentRegistry
from actorscope.context import bind_identity
from actorscope.identity import Identity, PeerKind, SenderKind
from actorscope.messages import InboundMessage
from actorscope.permissions import GrantStore, PermissionPolicy, Reason
from actorscope.propagation import (
    Origin,
    OriginSigner,
    delegate,
    session_send,
    spawn_subagent,
    teammate_dispatch,
)
from actorscope.propagation._keys import (
    META_ORIGIN_AGENT_ID,
    META_ORIGIN_SIGNATURE,
    META_ORIGIN_SIGNED_AT,
    META_ORIGIN_TENANT_ID,
    ORIGIN_AGENT_KEYS,
    ORIGIN_FIELD_KEYS,
    ORIGIN_KEYS,
)
from actorscope.propagation._origin import MIN_KEY_BYTES
from actorscope.store import Database

KEY = b"o" * MIN_KEY_BYTES
HOME = "00000000-0000-4000-8000-00000000000a"
OTHER = "00000000-0000-4000-8000-00000000000b"
TENANT = "00000000-0000-4000-8000-0000000000f1"
OTHER_TENANT = "00000000-0000-4000-8000-0000000000f2"


def owner(agent_id: str | None = HOME, tenant_id: str | None = TENANT) -> Identity:
    """Member 42 of group -100200, owner of ``agent_id`` in ``tenant_id``."""
    base = Identity.chat("telegram", -100200, 42, group=True, role="owner")
    return replace(base, agent_id=agent_id, tenant_id=tenant_id)


def retag(msg: InboundMessage, **metadata: str | None) -> InboundMessage:
    """``msg`` with metadata keys set (a value) or removed (``None``), signature untouched."""
    changed = {**msg.metadata, **{k: v for k, v in metadata.items() if v is not None}}
    for key in [k for k, v in metadata.items() if v is None]:
        changed.pop(key, None)
    return InboundMessage.model_validate({**msg.model_dump(), "metadata": changed})


def test_agent_keys_are_origin_keys_but_not_the_design_fields() -> None:
    """The agent and tenant keys are reserved origin_* keys, apart from the eight fields."""
    assert ORIGIN_AGENT_KEYS == ("origin_agent_id", "origin_tenant_id")
    assert set(ORIGIN_AGENT_KEYS) < ORIGIN_KEYS
    assert not set(ORIGIN_AGENT_KEYS) & set(ORIGIN_FIELD_KEYS)


def test_origin_records_the_agent_and_tenant_of_its_run() -> None:
    """from_identity keeps agent and tenant; metadata writes them only when set, round trip."""
    origin = Origin.from_identity(owner())
    assert (origin.agent_id, origin.tenant_id, origin.role) == (HOME, TENANT, "owner")
    metadata = origin.to_metadata()
    assert (metadata[META_ORIGIN_AGENT_ID], metadata[META_ORIGIN_TENANT_ID]) == (HOME, TENANT)
    assert Origin.from_metadata(metadata) == origin
    bare = Origin.from_identity(owner(None, None))
    assert not set(bare.to_metadata()) & set(ORIGIN_AGENT_KEYS)
    assert Origin.from_metadata(bare.to_metadata()) == bare


def test_delegate_to_another_agent_carries_the_human_but_not_the_role() -> None:
    """An owner of HOME who delegates to OTHER: the delegate runs as 42, with no role."""
    signer = OriginSigner(KEY)
    with bind_identity(owner()):
        task = delegate(OTHER, "rewrite the files", signer=signer)
    request = signer.run_request(task.message)
    assert (request.sender_id, request.agent_id, request.role) == ("42", OTHER, "")
    assert request.metadata[META_ORIGIN_AGENT_ID] == HOME


def test_runs_of_the_same_agent_and_tenant_keep_the_role() -> None:
    """Sub-agent, session_send and a teammate on the caller's own agent keep the owner role."""
    signer = OriginSigner(KEY)
    with bind_identity(owner()):
        messages = [
            spawn_subagent("sub", signer=signer).message,
            session_send("hi", signer=signer, channel="telegram", chat_id="-100300"),
            teammate_dispatch("bob", "hi", signer=signer),
            teammate_dispatch("bob", "hi", signer=signer, agent_id=HOME),
        ]
    for msg in messages:
        request = signer.run_request(msg)
        assert (request.sender_id, request.role, request.agent_id) == ("42", "owner", HOME)


def test_teammate_on_another_agent_gets_no_role() -> None:
    """A teammate dispatch to another agent carries the human only."""
    signer = OriginSigner(KEY)
    with bind_identity(owner()):
        msg = teammate_dispatch("bob", "hi", signer=signer, agent_id=OTHER)
    request = signer.run_request(msg)
    assert (request.sender_id, request.role) == ("42", "")


@pytest.mark.parametrize(
    ("origin_agent", "origin_tenant", "default_agent", "default_tenant", "role"),
    [
        (HOME, TENANT, HOME, TENANT, "owner"),
        (HOME, TENANT, None, None, "owner"),  # the carrier names HOME itself
        (None, None, None, None, "owner"),  # no agents anywhere: same (absent) agent
        (None, None, HOME, TENANT, ""),  # an agentless role does not become HOME's
        (None, TENANT, HOME, TENANT, ""),
        (HOME, None, HOME, TENANT, ""),
    ],
)
def test_role_needs_the_runs_resolved_agent_and_tenant_to_match(
    origin_agent: str | None,
    origin_tenant: str | None,
    default_agent: str | None,
    default_tenant: str | None,
    role: str,
) -> None:
    """The role comes along iff the request's agent and tenant (after defaults) are the origin's."""
    signer = OriginSigner(KEY)
    with bind_identity(owner(origin_agent, origin_tenant)):
        msg = spawn_subagent("sub", signer=signer).message
    request = signer.run_request(msg, agent_id=default_agent, tenant_id=default_tenant)
    assert (request.sender_id, request.role) == ("42", role)


def test_same_agent_id_in_another_tenant_gets_no_role() -> None:
    """An agent id is only the same agent within the same tenant."""
    signer = OriginSigner(KEY)
    origin = Origin.from_identity(owner())
    carrier = InboundMessage(
        channel="telegram", sender_id="subagent:t", chat_id="-100200", peer_kind=PeerKind.GROUP,
        user_id="group:telegram:-100200", sender_kind="synthetic", agent_id=HOME,
        tenant_id=OTHER_TENANT,
    )  # fmt: skip
    request = signer.run_request(signer.attach(carrier, origin))
    assert (request.sender_id, request.role) == ("42", "")


@pytest.mark.parametrize(
    "changes",
    [
        {META_ORIGIN_AGENT_ID: OTHER},  # claim the role was for the delegate's agent
        {META_ORIGIN_TENANT_ID: OTHER_TENANT},
        {META_ORIGIN_AGENT_ID: None},  # drop it
        {META_ORIGIN_TENANT_ID: None},
        {META_ORIGIN_AGENT_ID: ""},
    ],
)
def test_agent_and_tenant_of_the_origin_are_signed(changes: dict[str, str | None]) -> None:
    """Editing, dropping or blanking the origin's agent or tenant breaks the signature."""
    signer = OriginSigner(KEY)
    with bind_identity(owner()):
        msg = delegate(OTHER, "task", signer=signer).message
    tampered = retag(msg, **changes)
    assert signer.verify(tampered) is None
    assert signer.run_request(tampered).sender_id == msg.sender_id


def test_absent_agent_key_cannot_be_added() -> None:
    """An origin signed without an agent does not verify once an agent key is slipped in."""
    signer = OriginSigner(KEY)
    with bind_identity(owner(None, None)):
        msg = spawn_subagent("sub", signer=signer).message
    assert signer.verify(msg) is not None
    assert signer.verify(retag(msg, **{META_ORIGIN_AGENT_ID: ""})) is None
    assert signer.verify(retag(msg, **{META_ORIGIN_TENANT_ID: TENANT})) is None


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("peer_kind", PeerKind.DIRECT),
        ("peer_kind", "direct"),  # model_copy does not validate: a plain str must not pass either
        ("message_id", "999"),
        ("sender_kind", "user"),
        ("sender_kind", "bot"),
    ],
)
def test_carrier_routing_and_kind_fields_are_signed(field: str, value: object) -> None:
    """Moving a signed carrier to another peer kind, message id or sender kind breaks it."""
    signer = OriginSigner(KEY)
    with bind_identity(owner()):
        msg = spawn_subagent("sub", signer=signer).message
    moved = msg.model_copy(update={field: value})
    assert signer.verify(moved) is None
    assert signer.run_request(moved).sender_id != "42"


def test_a_v1_signature_no_longer_verifies() -> None:
    """A signature over the old (v1) encoding is refused: the domain prefix was bumped."""
    signer = OriginSigner(KEY)
    with bind_identity(owner(None, None)):
        msg = spawn_subagent("sub", signer=signer).message
    signed_at = msg.metadata[META_ORIGIN_SIGNED_AT]
    parts = (
        signed_at, msg.sender_id, msg.channel, msg.chat_id, msg.thread_id, msg.user_id, "", "",
        msg.content, *(msg.metadata[key] for key in ORIGIN_FIELD_KEYS),
    )  # fmt: skip
    v1 = b"actorscope.origin.v1.nul|" + bytes([0b11]) + "\x00".join(parts).encode()
    old = retag(msg, **{META_ORIGIN_SIGNATURE: hmac.new(KEY, v1, hashlib.sha256).hexdigest()})
    assert signer.verify(old) is None


@pytest.mark.parametrize(
    ("field", "value"), [("peer_kind", PeerKind.DIRECT), ("message_id", "999")]
)
def test_origin_moved_onto_another_carrier_runs_synthetic(field: str, value: object) -> None:
    """A carrier moved to a DM or another message id keeps neither the human nor the role."""
    signer = OriginSigner(KEY)
    with bind_identity(owner()):
        msg = spawn_subagent("summarise the thread", signer=signer).message
    request = signer.run_request(msg.model_copy(update={field: value}))
    assert (request.sender_id, request.sender_kind, request.role) == (
        msg.sender_id, SenderKind.SYNTHETIC, "",
    )  # fmt: skip


async def test_owner_role_of_one_agent_does_not_carry_into_a_delegate(tmp_path: Path) -> None:
    """An owner of agent A who delegates to agent B does not bypass B's group checks."""
    async with Database.open(tmp_path / "t.db") as db:
        registry = AgentRegistry(db)
        home = await registry.create("home")
        other = await registry.create("other")
        signer = OriginSigner()
        with bind_identity(owner(home.id, home.tenant_id)):
            task = delegate(other.id, "rewrite the group's files", signer=signer)
        request = signer.run_request(task.message)
        assert (request.agent_id, request.sender_id, request.role) == (other.id, "42", "")
        decision = await PermissionPolicy(GrantStore(db)).check_file_writer(request.identity())
        assert (decision.allowed, decision.reason) == (False, Reason.NO_GRANT)

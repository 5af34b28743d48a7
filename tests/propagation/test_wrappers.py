"""The wrappers: synthetic senders, origins taken from the bound run only, argument checks."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from actorscope.context import bind_identity
from actorscope.errors import IdentityError, PayloadError
from actorscope.identity import Identity, PeerKind, SenderKind
from actorscope.messages import InboundMessage, MetaKey
from actorscope.propagation import (
    OriginSigner,
    RunInfo,
    TickerJob,
    delegate,
    session_send,
    spawn_subagent,
    teammate_dispatch,
)
from actorscope.propagation._keys import (
    META_ORIGIN_ROLE,
    META_ORIGIN_SESSION_KEY,
    META_ORIGIN_TRACE_ID,
)
from actorscope.propagation._origin import MIN_KEY_BYTES

SIGNER = OriginSigner(b"w" * MIN_KEY_BYTES)
AGENT = "11111111-1111-4111-8111-111111111111"
OTHER_AGENT = "22222222-2222-4222-8222-222222222222"
TENANT = "33333333-3333-4333-8333-333333333333"
ALICE = Identity(
    user_id="group:telegram:-100123",
    sender_id="4242",
    channel="telegram",
    chat_id="-100123",
    peer_kind=PeerKind.GROUP,
    role="admin",
    agent_id=AGENT,
    tenant_id=TENANT,
)
RUN = RunInfo(session_key="agent:main:telegram:group:-100123:topic:7", trace_id="tr", thread_id="7")
FORGED = {MetaKey.ORIGIN_SENDER_ID: "6666", META_ORIGIN_ROLE: "owner", "origin_x": "y", "k": "v"}

CALLS: dict[str, Callable[[], InboundMessage]] = {
    "spawn": lambda: spawn_subagent("p", signer=SIGNER, metadata=FORGED).message,
    "announce": lambda: spawn_subagent("p", signer=SIGNER).announce(
        "r", signer=SIGNER, metadata=FORGED
    ),
    "delegate": lambda: delegate(OTHER_AGENT, "t", signer=SIGNER, metadata=FORGED).message,
    "delegate-announce": lambda: delegate(OTHER_AGENT, "t", signer=SIGNER).announce(
        "r", signer=SIGNER, metadata=FORGED
    ),
    "teammate": lambda: teammate_dispatch("scribe", "c", signer=SIGNER, metadata=FORGED),
    "session_send": lambda: session_send(
        "c", signer=SIGNER, channel="telegram", chat_id="-100123", metadata=FORGED
    ),
    "ticker": lambda: TickerJob.create("job1", "p").run(signer=SIGNER, metadata=FORGED),
}


@pytest.mark.parametrize("call", sorted(CALLS))
def test_origin_comes_from_the_bound_run_never_from_arguments(call: str) -> None:
    """Forged origin keys in arguments are dropped; the signed origin is the bound run's."""
    with bind_identity(ALICE), RUN.bind():
        msg = CALLS[call]()
    origin = SIGNER.verify(msg)
    assert origin is not None
    assert (origin.sender_id, origin.role, origin.user_id) == ("4242", "admin", ALICE.user_id)
    assert (origin.session_key, origin.trace_id) == (RUN.session_key, "tr")
    assert "origin_x" not in msg.metadata
    assert msg.metadata["k"] == "v"
    assert msg.sender_kind is SenderKind.SYNTHETIC
    assert msg.tenant_id == TENANT


@pytest.mark.parametrize("call", sorted(CALLS))
def test_every_wrapper_needs_a_bound_run(call: str) -> None:
    """Outside any run there is no origin to carry: IdentityError, nothing built."""
    with pytest.raises(IdentityError, match="inside a run"):
        CALLS[call]()


def test_subagent_task_and_announce_share_the_synthetic_sender_and_route() -> None:
    """Task message and announce come from subagent:<taskID> and go back to the parent's topic."""
    with bind_identity(ALICE), RUN.bind():
        task = spawn_subagent("write it", signer=SIGNER, label="writer")
    announce = task.announce("written", signer=SIGNER)
    assert task.sender_id == f"subagent:{task.task_id}" == announce.sender_id
    assert task.message.sender_id == task.sender_id
    assert task.origin_sender_id == "4242"
    assert (announce.channel, announce.chat_id, announce.thread_id) == ("telegram", "-100123", "7")
    assert (announce.content, task.message.content, task.label) == ("written", "write it", "writer")
    assert announce.agent_id == AGENT


def test_task_ids_are_unique() -> None:
    """Every spawn gets its own task id, so no two carriers share a sender."""
    with bind_identity(ALICE):
        ids = {spawn_subagent("p", signer=SIGNER).task_id for _ in range(50)}
    assert len(ids) == 50


def test_delegate_goes_to_the_target_and_announces_back_to_the_parent() -> None:
    """The delegation message addresses the target agent; the announce the delegating one."""
    with bind_identity(ALICE):
        task = delegate(OTHER_AGENT.upper(), "do it", signer=SIGNER)
    assert task.target_agent_id == OTHER_AGENT
    assert task.message.agent_id == OTHER_AGENT
    assert task.sender_id == f"subagent:delegate:{task.delegation_id}" == task.message.sender_id
    back = task.announce("done", signer=SIGNER)
    assert (back.agent_id, back.sender_id) == (AGENT, task.sender_id)


def test_teammate_dispatch_sender_and_target_agent() -> None:
    """A teammate dispatch comes from teammate:<name>, to the given agent or the caller's."""
    with bind_identity(ALICE):
        own = teammate_dispatch("scribe", "c", signer=SIGNER)
        other = teammate_dispatch("scribe", "c", signer=SIGNER, agent_id=OTHER_AGENT)
    assert own.sender_id == "teammate:scribe"
    assert (own.agent_id, other.agent_id) == (AGENT, OTHER_AGENT)


def test_session_send_routes_to_the_target_session_in_the_callers_scope() -> None:
    """session_send targets the given chat and thread; its scope and origin are the caller's."""
    with bind_identity(ALICE):
        msg = session_send(
            "hi", signer=SIGNER, channel="discord", chat_id="77", thread_id="78", peer_kind="direct"
        )
    assert (msg.sender_id, msg.channel, msg.chat_id, msg.thread_id) == (
        "session_send_tool",
        "discord",
        "77",
        "78",
    )
    assert msg.peer_kind is PeerKind.DIRECT
    assert msg.user_id == ALICE.user_id


def test_ticker_job_keeps_creator_and_scope_and_signs_each_run_fresh() -> None:
    """A ticker job records its creator and scope; each run is signed when it fires."""
    clock = [1_800_000_000.0]
    signer = OriginSigner(b"t" * MIN_KEY_BYTES, clock=lambda: clock[0])
    with bind_identity(ALICE):
        job = TickerJob.create("daily.report", "summarise")
    assert (job.origin.sender_id, job.route.user_id, job.sender_id) == (
        "4242",
        ALICE.user_id,
        "ticker:daily.report",
    )
    first = job.run(signer=signer)
    clock[0] += 86_400
    second = job.run(signer=signer)
    assert signer.verify(second) is not None
    assert signer.verify(first) is None  # a day old: past max age
    assert second.content == "summarise"


def test_without_a_bound_run_info_a_fresh_trace_is_started() -> None:
    """A run bound without RunInfo still gets a trace id, but no session key or thread."""
    with bind_identity(Identity.chat("telegram", 4242, 4242, group=False)):
        task = spawn_subagent("p", signer=SIGNER)
    assert task.message.metadata[META_ORIGIN_SESSION_KEY] == ""
    assert len(task.message.metadata[META_ORIGIN_TRACE_ID]) == 32
    assert task.route.thread_id == ""


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda: spawn_subagent(3, signer=SIGNER), PayloadError),  # type: ignore[arg-type]
        (lambda: spawn_subagent("p", signer=SIGNER, metadata={"k": 1}), PayloadError),  # type: ignore[dict-item]
        (lambda: spawn_subagent("p", signer=SIGNER, metadata=[("k", "v")]), PayloadError),  # type: ignore[arg-type]
        (lambda: spawn_subagent("p", signer="key"), TypeError),  # type: ignore[arg-type]
        (lambda: delegate("main", "t", signer=SIGNER), IdentityError),
        (lambda: teammate_dispatch("a b", "c", signer=SIGNER), IdentityError),
        (lambda: teammate_dispatch("", "c", signer=SIGNER), IdentityError),
        (lambda: teammate_dispatch("x", "c", signer=SIGNER, agent_id="x"), IdentityError),
        (lambda: session_send("c", signer=SIGNER, channel="Tele gram", chat_id="1"), IdentityError),
        (lambda: session_send("c", signer=SIGNER, channel="telegram", chat_id="@x"), IdentityError),
        (lambda: session_send("c", signer=SIGNER, channel="telegram", chat_id="1",
                              peer_kind="room"), IdentityError),
        (lambda: session_send("c", signer=SIGNER, channel="telegram", chat_id="1",
                              thread_id="t"), IdentityError),
        (lambda: TickerJob.create("a:b", "p"), IdentityError),
    ],
)  # fmt: skip
def test_bad_arguments_are_clear_errors(call: Callable[[], object], error: type[Exception]) -> None:
    """Malformed text, names, ids, targets or objects raise one clear error, building nothing."""
    with bind_identity(ALICE), pytest.raises(error):
        call()


def test_a_target_agent_that_is_no_uuid_is_named() -> None:
    """delegate and teammate_dispatch say which target is not a UUID, and what it was."""
    with bind_identity(ALICE):
        with pytest.raises(
            IdentityError, match="delegate target agent id must be a UUID, got 'main'"
        ):
            delegate("main", "t", signer=SIGNER)
        with pytest.raises(IdentityError, match="teammate agent id must be a UUID, got 'x'"):
            teammate_dispatch("x", "c", signer=SIGNER, agent_id="x")

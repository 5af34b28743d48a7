"""The whole chain, per wrapper, ending in a real permission check against a real database.

A Telegram group member's run spawns, delegates, dispatches, sends or schedules; the
synthesised message comes back through ``signer.run_request`` and the bound identity is checked
with ``PermissionPolicy.check_file_writer``: a writer is allowed, a non-writer denied, and the
check never runs against the group scope or a synthetic sender. Forged origins leave the run
synthetic, which is denied in a group.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import pytest

from actorscope.agents import Agent, AgentRegistry
from actorscope.context import bind_identity, current_identity
from actorscope.host import MessageBus
from actorscope.identity import PeerKind, SenderKind
from actorscope.messages import InboundMessage, MetaKey, RunRequest
from actorscope.permissions import Decision, GrantStore, PermissionPolicy, Reason
from actorscope.propagation import (
    Origin,
    OriginSigner,
    RunInfo,
    TickerJob,
    delegate,
    session_send,
    spawn_subagent,
    teammate_dispatch,
)
from actorscope.propagation._keys import (
    META_ORIGIN_CHANNEL,
    META_ORIGIN_CHAT_ID,
    META_ORIGIN_PEER_KIND,
    META_ORIGIN_ROLE,
    META_ORIGIN_SESSION_KEY,
    META_ORIGIN_SIGNATURE,
    META_ORIGIN_SIGNED_AT,
    META_ORIGIN_TRACE_ID,
    META_ORIGIN_USER_ID,
)
from actorscope.store import Database

WRITER = "4242"
NON_WRITER = "5151"
CHAT = "-1001234567890"
GROUP = f"group:telegram:{CHAT}"


class Clock:
    """A settable clock for the signer."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@dataclass
class Env:
    """One database, the agents in it, a policy over its grants, and the host's signer."""

    db: Database
    agent: Agent
    helper: Agent
    policy: PermissionPolicy
    signer: OriginSigner
    clock: Clock


@pytest.fixture
async def env(tmp_path: Any) -> AsyncIterator[Env]:
    """A database where WRITER may write files in GROUP for agent ``main``; NON_WRITER may not."""
    async with Database.open(tmp_path / "chain.db") as db:
        registry = AgentRegistry(db)
        agent = await registry.create("main")
        helper = await registry.create("helper")
        store = GrantStore(db)
        await store.grant(
            agent_id=agent.id, scope=GROUP, config_type="file_writer", sender_id=WRITER
        )
        clock = Clock()
        yield Env(db, agent, helper, PermissionPolicy(store), OriginSigner(clock=clock), clock)


def member_message(env: Env, sender: str, text: str = "please write notes.txt") -> InboundMessage:
    """What the Telegram adapter would put on the bus for a group member's message."""
    return InboundMessage(
        channel="telegram",
        sender_id=sender,
        chat_id=CHAT,
        content=text,
        peer_kind=PeerKind.GROUP,
        user_id=GROUP,
        sender_kind=SenderKind.USER,
        thread_id="7",
        message_id="99",
        agent_id=env.agent.id,
        tenant_id=env.agent.tenant_id,
    )


def build(env: Env, msg: InboundMessage) -> RunRequest:
    """The host's step: the run request for ``msg``."""
    return env.signer.run_request(msg, agent_key="main")


def in_run(request: RunRequest, action: Callable[[], InboundMessage]) -> InboundMessage:
    """Run ``action`` inside ``request``'s bound identity, as the host would."""
    info = RunInfo(session_key=request.session_key, thread_id=request.thread_id)
    with bind_identity(request.identity()), info.bind():
        return action()


async def check(env: Env, request: RunRequest) -> Decision:
    """The file-writer check of the run the host binds for ``request``."""
    with bind_identity(request.identity()):
        return await env.policy.check_file_writer()


def via_subagent(env: Env, parent: RunRequest) -> InboundMessage:
    """Spawn a sub-agent, run its first turn, and announce its result to the parent."""
    info = RunInfo(session_key=parent.session_key, thread_id=parent.thread_id)
    with bind_identity(parent.identity()), info.bind():
        task = spawn_subagent("write notes.txt", signer=env.signer)
    assert task.origin_sender_id == parent.sender_id
    assert task.origin.session_key == parent.session_key
    sub_run = build(env, task.message)
    assert sub_run.session_key == parent.session_key
    return task.announce("notes.txt is ready to write", signer=env.signer)


def via_delegate(env: Env, parent: RunRequest) -> InboundMessage:
    """Delegate to the helper agent, run the delegate's turn there, and announce back."""
    with bind_identity(parent.identity()):
        task = delegate(env.helper.id, "draft notes.txt", signer=env.signer)
    delegate_run = build(env, task.message)
    assert delegate_run.agent_id == env.helper.id
    assert delegate_run.sender_id == parent.sender_id
    back = task.announce("draft done", signer=env.signer)
    assert back.agent_id == env.agent.id
    assert back.sender_id == f"subagent:delegate:{task.delegation_id}"
    return back


def via_teammate(env: Env, parent: RunRequest) -> InboundMessage:
    """A teammate dispatch from the member's run."""
    return in_run(parent, lambda: teammate_dispatch("scribe", "write notes.txt", signer=env.signer))


def via_session_send(env: Env, parent: RunRequest) -> InboundMessage:
    """A session_send into the same group's topic 9."""
    return in_run(
        parent,
        lambda: session_send(
            "write notes.txt", signer=env.signer, channel="telegram", chat_id=CHAT, thread_id="9"
        ),
    )


def via_ticker(env: Env, parent: RunRequest) -> InboundMessage:
    """A ticker job created in the member's run, fired later outside any run."""
    with bind_identity(parent.identity()):
        job = TickerJob.create("nightly-notes", "write notes.txt")
    env.clock.now += 3600  # the job fires an hour later; the run is signed when it fires
    assert current_identity() is None
    return job.run(signer=env.signer)


WRAPPERS = {
    "subagent": via_subagent,
    "delegate": via_delegate,
    "teammate": via_teammate,
    "session_send": via_session_send,
    "ticker": via_ticker,
}
SENDER_PREFIX = {
    "subagent": "subagent:",
    "delegate": "subagent:delegate:",
    "teammate": "teammate:scribe",
    "session_send": "session_send_tool",
    "ticker": "ticker:nightly-notes",
}


@pytest.mark.parametrize("wrapper", sorted(WRAPPERS))
@pytest.mark.parametrize(
    ("member", "allowed", "reason"),
    [(WRITER, True, Reason.GRANTED), (NON_WRITER, False, Reason.NO_GRANT)],
)
async def test_chain_is_checked_for_the_member_who_asked(
    env: Env, wrapper: str, member: str, allowed: bool, reason: Reason
) -> None:
    """Each wrapper's chain ends in a check for the member: writer allowed, non-writer denied."""
    parent = build(env, member_message(env, member))
    carried = WRAPPERS[wrapper](env, parent)
    assert carried.sender_id.startswith(SENDER_PREFIX[wrapper])
    assert SenderKind.is_synthetic(carried.sender_id)
    assert carried.metadata[MetaKey.ORIGIN_SENDER_ID] == member
    request = build(env, carried)
    assert request.sender_id == member
    assert request.user_id == GROUP
    assert request.sender_kind is SenderKind.USER
    decision = await check(env, request)
    assert (decision.allowed, decision.reason) == (allowed, reason)
    assert decision.sender_id == member
    assert decision.scope == GROUP
    assert decision.sender_id not in (GROUP, carried.sender_id)


async def test_nested_chain_keeps_the_member_through_three_hops(env: Env) -> None:
    """Sub-agent of a delegate of a teammate dispatch: still the member, still allowed."""
    run = build(env, member_message(env, WRITER))
    for hop in (via_teammate, via_delegate, via_subagent):
        run = build(env, hop(env, run))
    assert run.sender_id == WRITER
    assert (await check(env, run)).reason is Reason.GRANTED


async def test_session_send_into_another_chat_keeps_the_original_scope(env: Env) -> None:
    """A run carried into another chat by session_send hands on its own group, not that chat."""
    parent = build(env, member_message(env, WRITER))
    carried = in_run(
        parent,
        lambda: session_send("go", signer=env.signer, channel="telegram", chat_id="-100777"),
    )
    elsewhere = build(env, carried)
    assert (elsewhere.chat_id, elsewhere.user_id) == ("-100777", GROUP)
    onward = build(env, via_teammate(env, elsewhere))
    assert (onward.sender_id, onward.user_id, onward.chat_id) == (WRITER, GROUP, "-100777")
    assert (await check(env, onward)).reason is Reason.GRANTED


async def test_chain_survives_json_through_a_bus(env: Env) -> None:
    """An announce serialised to JSON and back through the bounded bus still verifies."""
    parent = build(env, member_message(env, WRITER))
    carried = via_subagent(env, parent)
    bus = MessageBus(maxsize=4)
    await bus.publish(InboundMessage.model_validate_json(carried.model_dump_json()))
    hopped = await bus.get()
    bus.task_done()
    request = build(env, hopped)
    assert request.sender_id == WRITER
    assert (await check(env, request)).allowed


async def test_role_travels_with_a_verified_origin(env: Env) -> None:
    """An owner's role reaches the next turn only through the signed origin (role bypass)."""
    owner_run = build(env, member_message(env, NON_WRITER)).model_copy(update={"role": "owner"})
    request = build(env, via_subagent(env, owner_run))
    assert request.role == "owner"
    assert (await check(env, request)).reason is Reason.ROLE_BYPASS


def _replace_meta(msg: InboundMessage, **changes: str) -> InboundMessage:
    return InboundMessage.model_validate(
        {**msg.model_dump(), "metadata": {**msg.metadata, **changes}}
    )


def _drop_meta(msg: InboundMessage, *keys: str) -> InboundMessage:
    kept = {k: v for k, v in msg.metadata.items() if k not in keys}
    return InboundMessage.model_validate({**msg.model_dump(), "metadata": kept})


def _replace(msg: InboundMessage, **changes: Any) -> InboundMessage:
    return InboundMessage.model_validate({**msg.model_dump(), **changes})


def _flip(hex_text: str) -> str:
    return ("0" if hex_text[0] != "0" else "1") + hex_text[1:]


FORGERIES: dict[str, Callable[[Env, InboundMessage], InboundMessage]] = {
    "no signature": lambda env, m: _drop_meta(m, META_ORIGIN_SIGNATURE, META_ORIGIN_SIGNED_AT),
    "no timestamp": lambda env, m: _drop_meta(m, META_ORIGIN_SIGNED_AT),
    "flipped signature": lambda env, m: _replace_meta(
        m, **{META_ORIGIN_SIGNATURE: _flip(m.metadata[META_ORIGIN_SIGNATURE])}
    ),
    "wrong key": lambda env, m: OriginSigner(clock=env.clock).attach(
        _drop_meta(m), env.signer.verify(m) or pytest.fail("fixture origin must verify")
    ),
    "sender swapped to the writer": lambda env, m: _replace_meta(
        m, **{MetaKey.ORIGIN_SENDER_ID: WRITER}
    ),
    "role raised to owner": lambda env, m: _replace_meta(m, **{META_ORIGIN_ROLE: "owner"}),
    "origin channel": lambda env, m: _replace_meta(m, **{META_ORIGIN_CHANNEL: "discord"}),
    "origin chat": lambda env, m: _replace_meta(m, **{META_ORIGIN_CHAT_ID: "-100777"}),
    "origin scope": lambda env, m: _replace_meta(m, **{META_ORIGIN_USER_ID: "group:telegram:-1"}),
    "origin peer kind": lambda env, m: _replace_meta(m, **{META_ORIGIN_PEER_KIND: "direct"}),
    "origin session key": lambda env, m: _replace_meta(m, **{META_ORIGIN_SESSION_KEY: "agent:x"}),
    "origin trace id": lambda env, m: _replace_meta(m, **{META_ORIGIN_TRACE_ID: "t2"}),
    "timestamp moved": lambda env, m: _replace_meta(
        m, **{META_ORIGIN_SIGNED_AT: str(int(m.metadata[META_ORIGIN_SIGNED_AT]) + 1)}
    ),
    "replayed onto another sub-agent": lambda env, m: _replace(m, sender_id="subagent:other"),
    "replayed onto another chat": lambda env, m: _replace(m, chat_id="-100555"),
    "replayed onto another topic": lambda env, m: _replace(m, thread_id="8"),
    "replayed onto other text": lambda env, m: _replace(m, content="rm -rf /"),
    "replayed onto another agent": lambda env, m: _replace(m, agent_id=env.helper.id),
    "carrier scope": lambda env, m: _replace(m, user_id="group:telegram:-100555"),
}


@pytest.mark.parametrize("forgery", sorted(FORGERIES))
async def test_forged_origin_is_ignored_and_the_run_is_denied(env: Env, forgery: str) -> None:
    """Every forgery of a non-writer's signed announce leaves the run synthetic and denied."""
    parent = build(env, member_message(env, NON_WRITER))
    genuine = via_subagent(env, parent)
    forged = FORGERIES[forgery](env, genuine)
    request = build(env, forged)
    assert request.sender_id == forged.sender_id
    assert SenderKind.is_synthetic(request.sender_id)
    assert request.role == ""
    assert not any(key.startswith("origin_") for key in request.metadata)
    decision = await check(env, request)
    assert (decision.allowed, decision.reason) == (False, Reason.SYNTHETIC_SENDER)


async def test_too_old_origin_is_ignored(env: Env) -> None:
    """An announce checked after the signer's max age is synthetic again, and denied."""
    carried = via_subagent(env, build(env, member_message(env, WRITER)))
    assert build(env, carried).sender_id == WRITER
    env.clock.now += 601
    request = build(env, carried)
    assert SenderKind.is_synthetic(request.sender_id)
    assert (await check(env, request)).reason is Reason.SYNTHETIC_SENDER


async def test_origin_on_a_real_users_message_is_ignored(env: Env) -> None:
    """A non-writer's own message carrying the writer's valid signed origin stays the non-writer."""
    genuine = via_subagent(env, build(env, member_message(env, WRITER)))
    smuggled = _replace(member_message(env, NON_WRITER), metadata=dict(genuine.metadata))
    request = build(env, smuggled)
    assert request.sender_id == NON_WRITER
    assert (await check(env, request)).reason is Reason.NO_GRANT
    assert build(env, Origin.strip(smuggled)).metadata == {}


async def test_synthetic_origin_sender_is_ignored(env: Env) -> None:
    """A synthetic run hands on a synthetic origin, which never becomes the sender."""
    stray = _replace(
        member_message(env, WRITER), sender_id="subagent:stray", sender_kind=SenderKind.SYNTHETIC
    )
    synthetic_run = build(env, stray)
    assert synthetic_run.sender_id == "subagent:stray"
    carried = via_subagent(env, synthetic_run)
    assert carried.metadata[MetaKey.ORIGIN_SENDER_ID] == "subagent:stray"
    assert env.signer.verify(carried) is not None
    request = build(env, carried)
    assert request.sender_id == carried.sender_id != "subagent:stray"
    assert (await check(env, request)).reason is Reason.SYNTHETIC_SENDER


@pytest.mark.parametrize("placeholder", ["1087968824", "136817688", "777000", ""])
async def test_placeholder_or_empty_origin_sender_is_ignored(env: Env, placeholder: str) -> None:
    """An anonymous admin's (or nobody's) run hands on no person: the next turn stays synthetic."""
    anonymous = _replace(
        member_message(env, WRITER), sender_id=placeholder, sender_kind=SenderKind.ANONYMOUS_ADMIN
    )
    request = build(env, via_subagent(env, build(env, anonymous)))
    assert SenderKind.is_synthetic(request.sender_id)
    assert not (await check(env, request)).allowed


async def test_legacy_origin_sender_keeps_write_access_after_a_subagent_hop(env: Env) -> None:
    """A legacy ``42|bob`` member granted as 42 is still 42, and granted, after a sub-agent hop."""
    store = GrantStore(env.db)
    await store.grant(agent_id=env.agent.id, scope=GROUP, config_type="file_writer", sender_id="42")
    parent = build(env, member_message(env, "42|bob"))
    assert (await check(env, parent)).reason is Reason.GRANTED  # directly: split, granted
    carried = via_subagent(env, parent)
    assert carried.metadata[MetaKey.ORIGIN_SENDER_ID] == "42|bob"
    request = build(env, carried)
    assert (request.sender_id, request.user_id, request.sender_kind) == (
        "42",
        GROUP,
        SenderKind.USER,
    )
    decision = await check(env, request)
    assert (decision.allowed, decision.reason, decision.sender_id) == (True, Reason.GRANTED, "42")


@pytest.mark.parametrize(
    "lookalike", ["042", "42\u200b", "\uff14\uff12", "+42", "SUBAGENT:x", "\u200bsubagent:x"]
)
async def test_lookalike_origin_sender_stays_synthetic_and_denied(env: Env, lookalike: str) -> None:
    """A look-alike of a person id handed on by a run never becomes the next turn's sender."""
    store = GrantStore(env.db)
    await store.grant(agent_id=env.agent.id, scope=GROUP, config_type="file_writer", sender_id="*")
    request = build(env, via_subagent(env, build(env, member_message(env, lookalike))))
    assert SenderKind.is_synthetic(request.sender_id)
    assert (await check(env, request)).reason is Reason.SYNTHETIC_SENDER

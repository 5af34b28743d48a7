"""The host runtime: bound identities, reply routing, failing handlers, concurrency, shutdown."""

from __future__ import annotations

import asyncio
import logging
import re
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest

from actorscope.agents import AgentRegistry
from actorscope.context import bind_identity, current_identity, sender_id_from_context
from actorscope.errors import ConfigError, ReplyError
from actorscope.host import Host, MessageBus, OutboundSender, Reply, RunStep
from actorscope.host._sender import MemorySender
from actorscope.identity import Identity, PeerKind
from actorscope.messages import (
    Button,
    InboundMessage,
    MetaKey,
    OutboundMessage,
    RichReply,
    RunRequest,
)
from actorscope.permissions import GrantStore, PermissionPolicy, Reason
from actorscope.propagation import (
    OriginSigner,
    RunInfo,
    spawn_subagent,
)
from actorscope.store import Database

CHAT = "-1001234567890"
GROUP = f"group:telegram:{CHAT}"


def tg(sender: str, text: str = "hi", *, topic: str = "", message_id: str = "") -> InboundMessage:
    """A Telegram group message (optionally in a forum topic)."""
    return InboundMessage(
        channel="telegram", sender_id=sender, chat_id=CHAT, content=text,
        peer_kind=PeerKind.GROUP, user_id=GROUP, thread_id=topic, message_id=message_id,
    )  # fmt: skip


def dc(sender: str, text: str = "hi", *, thread: str = "") -> InboundMessage:
    """A Discord guild message (optionally in a thread)."""
    return InboundMessage(
        channel="discord", sender_id=sender, chat_id="555", content=text,
        peer_kind=PeerKind.GROUP, user_id=f"guild:81:user:{sender}", thread_id=thread,
    )  # fmt: skip


def host_for(handler: Any, **kwargs: Any) -> tuple[Host, MemorySender, MemorySender]:
    """A host over a fresh bus with in-memory Telegram and Discord senders; ``bus``,
    ``concurrency`` and ``on_done`` are the host's, the other keywords its run step's."""
    telegram, discord = MemorySender(), MemorySender()
    hosting = {name: kwargs.pop(name) for name in ("concurrency", "on_done") if name in kwargs}
    step = RunStep(
        handler,
        signer=kwargs.pop("signer", OriginSigner()),
        senders={"telegram": telegram, "discord": discord},
        **{name: value for name, value in kwargs.items() if name != "bus"},
    )
    host = Host(step, bus=kwargs.get("bus", MessageBus()), **hosting)
    return host, telegram, discord


async def echo(request: RunRequest) -> Reply:
    """Reply with who the bound context says acted."""
    return f"{sender_id_from_context()}:{request.content}"


async def test_text_replies_go_back_to_the_same_chat_and_topic_or_thread() -> None:
    """A text reply returns to the channel, chat and topic/thread it came from."""
    host, telegram, discord = host_for(echo)
    await host.process(tg("42", "a", topic="7", message_id="99"))
    await host.process(dc("43", "b", thread="556"))
    assert telegram.sent == [OutboundMessage(
        channel="telegram", chat_id=CHAT, content="42:a", thread_id="7", reply_to_message_id="99"
    )]  # fmt: skip
    assert discord.sent == [
        OutboundMessage(channel="discord", chat_id="555", content="43:b", thread_id="556")
    ]


async def test_a_worker_sends_a_text_reply_through_send_text() -> None:
    """On the bus a text reply goes to the sender's send_text (no reply message built); a
    sender without its own delivers what reply_to builds, as process() does."""
    texts: list[tuple[str, str, str]] = []

    class Quick(MemorySender):
        async def send_text(self, source: InboundMessage | RunRequest, text: str) -> None:
            texts.append((source.chat_id, source.thread_id, text))

    quick = Quick()
    host, _, discord = host_for(echo, concurrency=1)
    host.add_sender("telegram", quick)
    async with host:
        await host.bus.publish(tg("42", "a", topic="7", message_id="99"))
        await host.bus.publish(dc("43", "b", thread="556"))
    assert texts == [(CHAT, "7", "42:a")]
    assert quick.sent == []
    assert discord.sent == [
        OutboundMessage(channel="discord", chat_id="555", content="43:b", thread_id="556")
    ]
    assert await host.process(tg("42", "c")) == [
        OutboundMessage(channel="telegram", chat_id=CHAT, content="42:c")
    ]
    assert quick.sent == [OutboundMessage(channel="telegram", chat_id=CHAT, content="42:c")]


async def test_explicit_outbound_messages_are_routed_by_their_channel() -> None:
    """Handlers may answer elsewhere: each message goes to its own channel's sender."""

    async def fan_out(request: RunRequest) -> Reply:
        return [
            OutboundMessage(channel="discord", chat_id="1", content="x", thread_id="2"),
            OutboundMessage.reply_to(request, "y"),
        ]

    host, telegram, discord = host_for(fan_out)
    routed = await host.process(tg("42", topic="3"))
    assert [m.channel for m in routed] == ["discord", "telegram"]
    assert [(m.chat_id, m.thread_id) for m in discord.sent] == [("1", "2")]
    assert [(m.chat_id, m.thread_id) for m in telegram.sent] == [(CHAT, "3")]


async def test_rich_replies_become_outbound_messages_in_one_place() -> None:
    """A RichReply, alone or beside ready messages, is a reply to the request's chat."""

    async def rich(request: RunRequest) -> Reply:
        buttons = [Button("Yes", data="y")]
        if request.content == "one":
            return RichReply("*a*", format="markdown", buttons=buttons)
        return [RichReply("b"), OutboundMessage(channel="discord", chat_id="1", content="c")]

    host, telegram, discord = host_for(rich)
    await host.process(tg("42", "one", topic="7", message_id="99"))
    await host.process(tg("42", "two"))
    first, second = telegram.sent
    assert (first.content, first.format, first.thread_id) == ("*a*", "markdown", "7")
    assert (first.reply_to_message_id, first.buttons[0][0].data) == ("99", "y")
    assert (second.content, second.chat_id) == ("b", CHAT)
    assert [m.content for m in discord.sent] == ["c"]


async def test_a_reply_the_sender_refuses_is_one_log_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A sender's ReplyError (a platform limit) is logged as its message, without a traceback."""

    class Strict(OutboundSender):
        async def send(self, msg: OutboundMessage) -> None:
            raise ReplyError("button 'Go': too long")

    host, _, _ = host_for(echo)
    host.add_sender("telegram", Strict())
    with caplog.at_level(logging.ERROR, logger="actorscope.host"):
        await host.process(tg("42", "x"))
    (record,) = caplog.records
    expected = f"refused a reply to 'telegram' chat '{CHAT}': button 'Go': too long"
    assert record.getMessage() == expected
    assert record.exc_info is None


async def test_unknown_channel_failing_sender_and_bad_reply_are_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """No sender, a sender that raises, or a non-reply return: logged, the host goes on."""

    class Broken(OutboundSender):
        async def send(self, msg: OutboundMessage) -> None:
            raise ConnectionError("down")

    async def odd(request: RunRequest) -> Reply:
        if request.content == "bad":
            return 42  # type: ignore[return-value]
        return [OutboundMessage(channel=request.content, chat_id="1", content="x")]

    host, _, _ = host_for(odd)
    host.add_sender("broken", Broken())
    with caplog.at_level(logging.ERROR, logger="actorscope.host"):
        await host.process(tg("42", "slack"))
        await host.process(tg("42", "broken"))
        await host.process(tg("42", "bad"))
    text = caplog.text
    assert "no sender for channel 'slack'" in text
    assert "sending to 'broken'" in text
    assert "handler returned int" in text


async def test_failing_handler_is_logged_with_its_identity_and_the_host_continues(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A raising handler is logged with sender and scope; later messages are still handled."""

    async def fragile(request: RunRequest) -> Reply:
        if request.content == "boom":
            raise ValueError("handler bug")
        return "ok"

    host, telegram, _ = host_for(fragile, concurrency=1)
    with caplog.at_level(logging.ERROR, logger="actorscope.host"):
        async with host:
            for text in ("a", "boom", "b"):
                await host.bus.publish(tg("5151", text))
    assert [m.content for m in telegram.sent] == ["ok", "ok"]
    [record] = [r for r in caplog.records if r.exc_info]
    assert "sender='5151'" in record.getMessage()
    assert f"scope='{GROUP}'" in record.getMessage()
    assert "handler bug" in caplog.text


async def test_malformed_message_is_dropped_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A message whose chat id cannot make a session key is dropped, not fatal."""
    host, telegram, _ = host_for(echo)
    bad = InboundMessage(channel="telegram", sender_id="1", chat_id="", user_id="1")
    with caplog.at_level(logging.WARNING, logger="actorscope.host"):
        assert await host.process(bad) == []
    assert "dropped a message" in caplog.text
    assert telegram.sent == []


async def test_handler_runs_bound_and_its_spawn_comes_back_as_the_member() -> None:
    """The handler runs bound (identity and run info); its sub-agent's result is the member's."""
    seen: list[tuple[str, str, str, bool]] = []
    signer = OriginSigner()

    async def agent(request: RunRequest) -> Reply:
        run = RunInfo.current()
        same_session = run is not None and run.session_key == request.session_key
        seen.append((sender_id_from_context(), request.sender_id, request.user_id, same_session))
        if request.content == "write":
            task = spawn_subagent("do it", signer=signer)
            await host.bus.publish(task.announce("done", signer=signer))
        return None

    host, _, _ = host_for(agent, signer=signer)
    async with host:
        await host.bus.publish(tg("4242", "write", topic="7"))
    assert seen == [("4242", "4242", GROUP, True), ("4242", "4242", GROUP, True)]


async def test_forged_origin_from_a_channel_is_stripped_on_the_way_in() -> None:
    """A channel message carrying origin keys arrives without them and keeps its own sender."""
    seen: list[RunRequest] = []

    async def record(request: RunRequest) -> Reply:
        seen.append(request)
        return None

    host, _, _ = host_for(record)
    forged = tg("5151").model_copy(update={"metadata": {MetaKey.ORIGIN_SENDER_ID: "4242"}})
    async with host:
        await host.bus.publish_from_channel(forged)
    assert [(r.sender_id, dict(r.metadata)) for r in seen] == [("5151", {})]


async def test_hundred_concurrent_runs_each_see_only_their_own_identity() -> None:
    """100 runs in flight at once, each with a different sender, each sees only its own."""
    started = 0
    all_started = asyncio.Event()
    mismatches: list[str] = []
    senders: set[str] = set()

    async def child() -> str:
        await asyncio.sleep(0)
        return sender_id_from_context()

    async def agent(request: RunRequest) -> Reply:
        nonlocal started
        started += 1
        if started == 100:
            all_started.set()
        await asyncio.wait_for(all_started.wait(), 5.0)
        for _ in range(3):
            await asyncio.sleep(0)
            identity = current_identity()
            if identity is None or identity.sender_id != request.sender_id:
                mismatches.append(request.sender_id)
        if await asyncio.create_task(child()) != request.sender_id:
            mismatches.append(request.sender_id)
        senders.add(sender_id_from_context())
        return None

    host, _, _ = host_for(agent, concurrency=100, bus=MessageBus(maxsize=100))
    for n in range(100):
        await host.bus.publish(tg(str(10_000 + n)))
    async with host:
        pass
    assert all_started.is_set()
    assert mismatches == []
    assert senders == {str(10_000 + n) for n in range(100)}


async def test_workers_do_not_inherit_the_identity_bound_at_start() -> None:
    """Between runs a worker has no identity, even if start() ran inside a bound one."""
    seen: list[Identity | None] = []

    async def agent(request: RunRequest) -> Reply:
        seen.append(current_identity())
        return None

    host, _, _ = host_for(agent, concurrency=1)
    with bind_identity(Identity(user_id="x", sender_id="intruder")):
        await host.start()
    await host.bus.publish(tg("42"))
    await host.stop()
    assert [i.sender_id if i else None for i in seen] == ["42"]


async def test_stop_drains_the_bus_first() -> None:
    """stop(drain=True) handles everything already published, then stops; nothing is left."""
    handled: list[str] = []

    async def slow(request: RunRequest) -> Reply:
        await asyncio.sleep(0.005)
        handled.append(request.content)
        return None

    host, _, _ = host_for(slow, concurrency=2)
    await host.start()
    for n in range(10):
        await host.bus.publish(tg("42", str(n)))
    assert await host.stop(drain=True, grace=5.0) == 0
    assert sorted(handled, key=int) == [str(n) for n in range(10)]
    assert not host.running


async def test_on_done_is_told_each_turn_after_its_replies_went_out(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """on_done hears each message once its reply is sent, a failing handler's too; a turn a
    stop cancelled is not done, and a failing on_done is logged, not fatal."""
    done: list[tuple[str, int]] = []
    senders: list[MemorySender] = []
    entered = asyncio.Event()

    async def handler(request: RunRequest) -> Reply:
        if request.content == "boom":
            raise RuntimeError("boom")
        if request.content == "stuck":
            entered.set()
            await asyncio.sleep(60)
        return request.content

    async def on_done(msg: InboundMessage) -> None:
        done.append((msg.content, len(senders[0].sent)))
        if msg.content == "boom":
            raise RuntimeError("on_done failed")

    host, telegram, _ = host_for(handler, concurrency=1, on_done=on_done)
    senders.append(telegram)
    await host.start()
    for text in ("a", "boom", "b", "stuck"):
        await host.bus.publish(tg("42", text))
    await asyncio.wait_for(entered.wait(), 5.0)
    await host.stop(drain=False, grace=1.0)
    assert done == [("a", 1), ("boom", 1), ("b", 2)]
    assert "on_done failed for a message in chat" in caplog.text


async def test_stop_without_drain_cancels_in_flight_runs() -> None:
    """stop(drain=False) cancels the running handler and leaves queued messages on the bus."""
    entered = asyncio.Event()
    cancelled: list[str] = []

    async def stuck(request: RunRequest) -> Reply:
        entered.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.append(request.content)
            raise
        return None

    host, _, _ = host_for(stuck, concurrency=1)
    await host.start()
    for n in range(3):
        await host.bus.publish(tg("42", str(n)))
    await asyncio.wait_for(entered.wait(), 5.0)
    assert await host.stop(drain=False, grace=1.0) == 2
    assert cancelled == ["0"]


async def test_drain_that_times_out_cancels_within_the_grace(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A handler that never finishes cannot hold shutdown beyond the grace periods."""

    async def forever(request: RunRequest) -> Reply:
        await asyncio.Event().wait()
        return None

    host, _, _ = host_for(forever, concurrency=1)
    await host.start()
    await host.bus.publish(tg("42"))
    loop = asyncio.get_running_loop()
    began = loop.time()
    with caplog.at_level(logging.WARNING, logger="actorscope.host"):
        await host.stop(drain=True, grace=0.05)
    assert loop.time() - began < 2.0
    assert "drain timed out" in caplog.text


async def test_stop_before_start_and_double_start() -> None:
    """Stopping an idle host is harmless; starting a running one is a ConfigError."""
    host, _, _ = host_for(echo)
    assert await host.stop() == 0
    await host.start()
    with pytest.raises(ConfigError, match="already running"):
        await host.start()
    await host.stop()


@pytest.mark.parametrize("concurrency", [0, -1, 1.5])
def test_bad_settings_are_config_errors(concurrency: object) -> None:
    """Concurrency must be a positive integer; senders must be OutboundSenders."""
    step = RunStep(echo, signer=OriginSigner())
    with pytest.raises(ConfigError):
        Host(step, bus=MessageBus(), concurrency=concurrency)  # type: ignore[arg-type]
    host = Host(step, bus=MessageBus())
    with pytest.raises(ConfigError):
        host.add_sender("x", object())  # type: ignore[arg-type]


def test_a_host_runs_a_run_step_not_a_bare_handler() -> None:
    """A handler where the run step belongs is one ConfigError naming what to pass instead."""
    with pytest.raises(ConfigError, match=r"a Host runs a RunStep .* got function"):
        Host(echo, bus=MessageBus())  # type: ignore[arg-type]


@pytest.fixture
async def policy_db(tmp_path: Any) -> AsyncIterator[tuple[PermissionPolicy, str, str]]:
    """A policy where 4242 writes files in GROUP for agent ``main``; (policy, agent, tenant)."""
    async with Database.open(tmp_path / "host.db") as db:
        agent = await AgentRegistry(db).create("main")
        store = GrantStore(db)
        await store.grant(
            agent_id=agent.id, scope=GROUP, config_type="file_writer", sender_id="4242"
        )
        yield PermissionPolicy(store), agent.id, agent.tenant_id


@pytest.mark.parametrize(
    ("member", "reason"), [("4242", Reason.GRANTED), ("5151", Reason.NO_GRANT)]
)
async def test_host_checks_the_write_for_the_member_after_a_subagent(
    policy_db: tuple[PermissionPolicy, str, str], member: str, reason: Reason
) -> None:
    """Through the running host: member asks, sub-agent answers, the write is the member's."""
    policy, agent_id, tenant_id = policy_db
    signer = OriginSigner()
    decisions: list[tuple[str, Reason, str]] = []

    async def agent(request: RunRequest) -> Reply:
        if request.sender_id == member and not request.metadata:
            task = spawn_subagent("write notes.txt", signer=signer)
            await host.bus.publish(task.announce("ready", signer=signer))
            return "working on it"
        decision = await policy.check_file_writer()
        decisions.append((decision.sender_id, decision.reason, decision.scope))
        return "written" if decision.allowed else "denied"

    host, telegram, _ = host_for(agent, signer=signer, agent_id=agent_id, tenant_id=tenant_id)
    async with host:
        await host.bus.publish_from_channel(tg(member, "write notes.txt", topic="7"))
    assert decisions == [(member, reason, GROUP)]
    expected = "written" if reason is Reason.GRANTED else "denied"
    assert [(m.content, m.thread_id) for m in telegram.sent] == [
        ("working on it", "7"),
        (expected, "7"),
    ]


def test_role_for_prefers_the_request_then_configured_roles_then_owners() -> None:
    """The one owner→role rule: a request's role wins, then ``roles``, then ``owners``."""
    assert RunStep.role_for("42", "admin", owners=("42",)) == "admin"
    assert RunStep.role_for("42", owners=("42",), roles={"42": "mod"}) == "mod"
    assert RunStep.role_for("42", owners=("42",)) == "owner"
    assert RunStep.role_for("7", owners=("42",)) == ""
    assert RunStep.role_for("", owners=("",)) == ""


async def test_run_step_prepare_is_the_integration_point() -> None:
    """``RunStep.prepare`` gives the request and the identity ``bound`` binds, owner role set."""
    step = RunStep(echo, signer=OriginSigner(), owners=("42",), agent_id="a1")
    prepared = step.prepare(tg("42", message_id="9"))
    assert prepared is not None
    assert prepared.identity == prepared.request.identity()
    assert (prepared.identity.role, prepared.identity.agent_id) == ("owner", "a1")
    with step.bound(prepared):
        assert current_identity() is prepared.identity
    assert current_identity() is None


async def test_each_run_gets_its_own_trace_id_without_uuid4(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Trace ids are 32 hex digits, distinct per run and per step, and cost no uuid4 call."""

    def no_uuid4() -> uuid.UUID:
        raise AssertionError("uuid4 reads os.urandom on every run")

    monkeypatch.setattr(uuid, "uuid4", no_uuid4)
    steps = [RunStep(echo, signer=OriginSigner(), agent_id="a1") for _ in range(2)]
    ids = []
    for step in steps:
        for n in range(3):
            prepared = step.prepare(tg("42", message_id=str(n + 1)))
            assert prepared is not None
            ids.append(prepared.info.trace_id)
    assert all(re.fullmatch("[0-9a-f]{32}", trace) for trace in ids), ids
    assert len(set(ids)) == len(ids)


async def test_a_role_the_transport_vouches_for_comes_before_configured_roles() -> None:
    """``RunStep.run(msg, role=...)`` runs the turn with that role, request and bound identity."""
    seen: list[tuple[str, str]] = []

    async def handler(request: RunRequest) -> Reply:
        identity = current_identity()
        assert identity is not None
        seen.append((request.role, identity.role))
        return None

    step = RunStep(handler, signer=OriginSigner(), owners=("42",), roles={"42": "mod"})
    await step.run(tg("42"), role="viewer")
    await step.run(tg("42"))
    assert seen == [("viewer", "viewer"), ("mod", "mod")]


async def test_a_host_gives_configured_roles_as_its_step_does() -> None:
    """A host's run step with configured roles: the role reaches the handler through it."""
    roles: list[str] = []

    async def handler(request: RunRequest) -> Reply:
        roles.append(request.role)
        return None

    host, _, _ = host_for(handler, owners=("42",), roles={"42": "mod", "7": "editor"})
    assert await host.process(tg("7")) == []
    assert await host.process(tg("42")) == []
    assert roles == ["editor", "mod"]

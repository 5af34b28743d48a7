"""Random chains of spawns, delegations, dispatches, sends, tickers, queue hops and JSON hops,
interleaved with an attacker who controls text, tool arguments, display names, channel metadata
and any field of a message in flight.

Invariant: a run's effective sender is the human who started its chain (in that chain's
scope, with at most that human's role) or a synthetic/empty sender - never another human.
"""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    multiple,
    rule,
    run_state_machine_as_test,
)

from actorscope.context import bind_identity
from actorscope.errors import IdentityError
from actorscope.host import MessageBus
from actorscope.identity import PeerKind, SenderKind
from actorscope.messages import InboundMessage, RunRequest
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
from actorscope.propagation._keys import ORIGIN_KEYS
from actorscope.propagation._origin import MIN_KEY_BYTES

HUMANS = ("1001", "1002", "1003")
ROLES = {"1001": "admin", "1002": "", "1003": ""}
CHATS = ("-1001", "-1002")
AGENT = "11111111-1111-4111-8111-111111111111"
OTHER_AGENT = "22222222-2222-4222-8222-222222222222"
#: A chain: the human who started it and the scope they started it in.
Chain = tuple[str, str]
Item = tuple[InboundMessage, Chain]

texts = st.text(max_size=12)
names = st.from_regex(r"[a-z][a-z0-9_.-]{0,8}", fullmatch=True)
forged_values = st.one_of(
    st.sampled_from((*HUMANS, "owner", "group", "direct", "telegram", *CHATS, "subagent:x")), texts
)
attacker_metadata = st.dictionaries(
    st.sampled_from((*sorted(ORIGIN_KEYS), "display_name", "origin_extra", "lang")),
    forged_values,
    max_size=4,
)
CARRIER_FIELDS = ("sender_id", "channel", "chat_id", "thread_id", "user_id", "content", "agent_id")
SIGNED_CARRIER = ("sender_id", "channel", "chat_id", "thread_id", "user_id", "agent_id",
                  "tenant_id", "content")  # fmt: skip


def _same_carrier(a: InboundMessage, b: InboundMessage) -> bool:
    return all(getattr(a, f) == getattr(b, f) for f in SIGNED_CARRIER)


class Chains(RuleBasedStateMachine):
    """The propagation layer under an attacker; every run checks the invariant."""

    runs = Bundle("runs")
    pending = Bundle("pending")
    jobs = Bundle("jobs")

    def __init__(self) -> None:
        super().__init__()
        self.now = 1_800_000_000.0
        self.signer = OriginSigner(b"s" * MIN_KEY_BYTES, clock=self.clock)
        self.attacker_signer = OriginSigner(b"m" * MIN_KEY_BYTES, clock=self.clock)
        self.loop = asyncio.new_event_loop()
        self.bus = MessageBus(maxsize=2)

    def clock(self) -> float:
        return self.now

    def teardown(self) -> None:
        self.loop.close()

    # --- people and the channel -------------------------------------------------------------

    @initialize(target=runs, human=st.sampled_from(HUMANS), chat=st.sampled_from(CHATS))
    def first_run(self, human: str, chat: str) -> Any:
        msg = InboundMessage(
            channel="telegram", sender_id=human, chat_id=chat, peer_kind=PeerKind.GROUP,
            user_id=f"group:telegram:{chat}", agent_id=AGENT,
        )  # fmt: skip
        return self.run((msg, (human, msg.user_id)))

    @rule(target=pending, human=st.sampled_from(HUMANS), chat=st.sampled_from(CHATS),
          text=texts, display=texts, extra=attacker_metadata, sanitize=st.booleans())  # fmt: skip
    def channel_message(
        self, human: str, chat: str, text: str, display: str, extra: dict[str, str], sanitize: bool
    ) -> Item:
        scope = f"group:telegram:{chat}"
        msg = InboundMessage(
            channel="telegram", sender_id=human, chat_id=chat, content=text,
            peer_kind=PeerKind.GROUP, user_id=scope, agent_id=AGENT,
            metadata={**extra, "display_name": display},
        )  # fmt: skip
        return (Origin.strip(msg) if sanitize else msg), (human, scope)

    @rule(target=runs, item=pending)
    def run(self, item: Item) -> Any:
        msg, chain = item
        try:
            request = self.signer.run_request(msg)
        except IdentityError:  # a mangled chat id or channel: the host drops the message
            return multiple()
        human, scope = chain
        if msg.sender_id == human:  # a person's own message: the host resolves their role
            request = request.model_copy(update={"role": ROLES.get(human, "")})
        effective = request.sender_id
        assert effective in ("", human) or SenderKind.is_synthetic(effective), (effective, chain)
        if effective == human:
            assert request.user_id == scope
            assert request.role in ("", ROLES.get(human, ""))
            if msg.sender_id != human:
                assert request.sender_kind is SenderKind.USER
        else:
            assert request.role == ""
        return multiple((request, chain))

    # --- wrappers, called by a run with attacker-chosen tool arguments -----------------------

    def _in(self, run: tuple[RunRequest, Chain]) -> Any:
        request, _ = run
        info = RunInfo(session_key=request.session_key, thread_id=request.thread_id)
        return _Bound(request, info)

    @rule(target=pending, run=runs, text=texts, extra=attacker_metadata)
    def spawn(self, run: tuple[RunRequest, Chain], text: str, extra: dict[str, str]) -> Any:
        with self._in(run):
            task = spawn_subagent(text, signer=self.signer, metadata=extra)
        result = task.announce(text[::-1], signer=self.signer, metadata=extra)
        return multiple((task.message, run[1]), (result, run[1]))

    @rule(target=pending, run=runs, text=texts, extra=attacker_metadata)
    def delegate_task(self, run: tuple[RunRequest, Chain], text: str, extra: dict[str, str]) -> Any:
        with self._in(run):
            task = delegate(OTHER_AGENT, text, signer=self.signer, metadata=extra)
        back = task.announce(text, signer=self.signer, metadata=extra)
        return multiple((task.message, run[1]), (back, run[1]))

    @rule(target=pending, run=runs, name=names, text=texts, extra=attacker_metadata)
    def teammate(
        self, run: tuple[RunRequest, Chain], name: str, text: str, extra: dict[str, str]
    ) -> Item:
        with self._in(run):
            msg = teammate_dispatch(name, text, signer=self.signer, metadata=extra)
        return msg, run[1]

    @rule(target=pending, run=runs, chat=st.sampled_from(CHATS), text=texts,
          topic=st.sampled_from(("", "3")), extra=attacker_metadata)  # fmt: skip
    def send(
        self, run: tuple[RunRequest, Chain], chat: str, text: str, topic: str,
        extra: dict[str, str],
    ) -> Item:  # fmt: skip
        with self._in(run):
            msg = session_send(text, signer=self.signer, channel="telegram", chat_id=chat,
                               thread_id=topic, metadata=extra)  # fmt: skip
        return msg, run[1]

    @rule(target=jobs, run=runs, name=names, text=texts)
    def create_job(self, run: tuple[RunRequest, Chain], name: str, text: str) -> Any:
        with self._in(run):
            return TickerJob.create(name, text), run[1]

    @rule(target=pending, job=jobs)
    def fire_job(self, job: tuple[TickerJob, Chain]) -> Item:
        return job[0].run(signer=self.signer), job[1]

    # --- transport --------------------------------------------------------------------------

    @rule(target=pending, item=pending)
    def queue_hop(self, item: Item) -> Item:
        async def hop() -> InboundMessage:
            await self.bus.publish(item[0])
            got = await self.bus.get()
            self.bus.task_done()
            return got

        return self.loop.run_until_complete(hop()), item[1]

    @rule(target=pending, item=pending)
    def json_hop(self, item: Item) -> Item:
        return InboundMessage.model_validate_json(item[0].model_dump_json()), item[1]

    @rule(seconds=st.sampled_from((1.0, 120.0, 700.0)))
    def time_passes(self, seconds: float) -> None:
        self.now += seconds

    # --- the attacker -----------------------------------------------------------------------

    @rule(target=pending, item=pending, key=st.sampled_from(sorted(ORIGIN_KEYS)),
          value=forged_values)  # fmt: skip
    def tamper_metadata(self, item: Item, key: str, value: str) -> Item:
        msg, chain = item
        forged = {**msg.metadata, key: value}
        return InboundMessage.model_validate({**msg.model_dump(), "metadata": forged}), chain

    @rule(target=pending, item=pending, field=st.sampled_from(CARRIER_FIELDS),
          value=forged_values)  # fmt: skip
    def tamper_carrier(self, item: Item, field: str, value: str) -> Item:
        msg, chain = item
        changed = InboundMessage.model_validate({**msg.model_dump(), field: value})
        if not SenderKind.is_synthetic(changed.sender_id):
            # A person's own message: what it says about sender and scope is the channel's word.
            chain = (changed.sender_id, changed.user_id)
        return changed, chain

    @rule(target=pending, target_item=pending, source=pending)
    def graft_origin(self, target_item: Item, source: Item) -> Item:
        msg, chain = target_item
        lifted = {k: v for k, v in source[0].metadata.items() if k in ORIGIN_KEYS}
        kept = {k: v for k, v in msg.metadata.items() if k not in ORIGIN_KEYS}
        grafted = InboundMessage.model_validate(
            {**msg.model_dump(), "metadata": {**kept, **lifted}}
        )
        # A graft onto an identical carrier rebuilds the source message itself.
        return grafted, source[1] if _same_carrier(msg, source[0]) else chain

    @rule(target=pending, attacker=st.sampled_from(HUMANS), victim=st.sampled_from(HUMANS),
          chat=st.sampled_from(CHATS), role=st.sampled_from(("", "owner")),
          sender=st.sampled_from(("subagent:x", "ticker:j", "session_send_tool", "teammate:t")),
          own_key=st.booleans())  # fmt: skip
    def forge_carrier(
        self, attacker: str, victim: str, chat: str, role: str, sender: str, own_key: bool
    ) -> Item:
        scope = f"group:telegram:{chat}"
        carrier = InboundMessage(
            channel="telegram", sender_id=sender, chat_id=chat, peer_kind=PeerKind.GROUP,
            user_id=scope, sender_kind=SenderKind.SYNTHETIC, agent_id=AGENT,
        )  # fmt: skip
        claim = Origin(victim, role=role, channel="telegram", chat_id=chat, user_id=scope,
                       peer_kind=PeerKind.GROUP)  # fmt: skip
        if own_key:
            forged = self.attacker_signer.attach(carrier, claim)
        else:
            forged = carrier.model_copy(update={"metadata": claim.to_metadata()})
        return forged, (attacker, scope)


class _Bound:
    """Bind a run's identity and RunInfo for a ``with`` block."""

    def __init__(self, request: RunRequest, info: RunInfo) -> None:
        self._identity = bind_identity(request.identity())
        self._run = info.bind()

    def __enter__(self) -> None:
        self._identity.__enter__()
        self._run.__enter__()

    def __exit__(self, *exc: object) -> None:
        self._run.__exit__(None, None, None)
        self._identity.__exit__(None, None, None)


def test_effective_sender_is_the_chain_human_or_synthetic() -> None:
    """Under random chains and an attacker, no run is ever attributed to another human."""
    run_state_machine_as_test(
        Chains,
        settings=settings(
            max_examples=100,
            stateful_step_count=40,
            deadline=None,
            database=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        ),
    )

"""The ingress pipeline: one result per event, writer commands answered, claims, clicks."""

from __future__ import annotations

from typing import Any

import pytest
from tests._wiring import RecordingSender

from actorscope.channels import (
    ChannelConfig,
    IgnoreReason,
    Ingress,
    Outcome,
    Pipeline,
    WriterCommand,
)
from actorscope.channels._pipeline import STORE_AWAY
from actorscope.channels._shared_dedup import Claim, SharedDedup
from actorscope.channels._turns import TurnLedger
from actorscope.channels.telegram._normalize import inspect_update
from actorscope.errors import StoreError
from actorscope.identity import Identity
from actorscope.messages import InboundMessage
from actorscope.permissions import GrantStore
from actorscope.permissions._writers import WriterManager
from actorscope.store import Database

pytestmark = pytest.mark.sqlite_only(
    "the pipeline's subject is ingress, not the dialect: its claims run on both backends in "
    "test_shared_dedup.py and test_claim_leases.py"
)

CHAT = -1001234567890


def update(update_id: int, text: str, *, message_id: int = 0, sender: int = 42) -> Ingress:
    """A group message update (``message_id`` defaults to ``update_id``), normalised."""
    payload: dict[str, Any] = {
        "update_id": update_id,
        "message": {
            "message_id": message_id or update_id,
            "date": 1700000000,
            "chat": {"id": CHAT, "type": "supergroup", "title": "devs"},
            "from": {"id": sender, "is_bot": False, "first_name": "Ann", "username": "ann"},
            "text": text,
            **(
                {"entities": [{"type": "bot_command", "offset": 0, "length": len(text)}]}
                if text.startswith("/")
                else {}
            ),
        },
    }
    return inspect_update(payload, bot_username="notes_bot")


class Sink:
    """Collects what the pipeline publishes, and the acknowledgements it makes."""

    def __init__(self) -> None:
        self.published: list[InboundMessage] = []
        self.acks = 0

    async def publish(self, message: InboundMessage) -> None:
        """Take an admitted message."""
        self.published.append(message)

    async def ack(self) -> None:
        """Count an acknowledgement (a click answered)."""
        self.acks += 1


def pipeline(db: Database, sink: Sink, **kwargs: Any) -> Pipeline:
    """A Telegram pipeline publishing into ``sink``."""
    return Pipeline(
        ChannelConfig(platform="telegram", require_mention=False),
        writers=WriterManager(GrantStore(db)),
        publish=sink.publish,
        agent_id="00000000-0000-0000-0000-0000000000a1",
        **kwargs,
    )


async def test_admitted_then_duplicate(db: Database) -> None:
    """The first delivery is published and acknowledged; a redelivery is a duplicate."""
    sink, sender = Sink(), RecordingSender()
    pipe = pipeline(db, sink)
    first = await pipe.process(update(1, "hello"), acknowledge=sink.ack, sender=sender)
    again = await pipe.process(
        update(2, "hello", message_id=1), acknowledge=sink.ack, sender=sender
    )
    assert (first.outcome, first.admitted) == (Outcome.ADMITTED, True)
    assert (again.outcome, again.reason) == (Outcome.DUPLICATE, IgnoreReason.DUPLICATE)
    assert [m.content for m in sink.published] == ["hello"]
    assert sink.acks == 1


async def test_a_message_in_a_task_of_its_own_goes_to_run_here(db: Database) -> None:
    """With ``run_here``, an event whose caller is its own task (discord.py's events, a
    webhook request) goes there; any other (polling) is published, as without one."""
    sink, here = Sink(), Sink()
    pipe = pipeline(db, sink, run_here=here.publish)
    await pipe.process(update(1, "polled"))
    await pipe.process(update(2, "own task"), own_task=True)
    await pipeline(db, other := Sink()).process(update(3, "no run_here"), own_task=True)
    assert [m.content for m in sink.published] == ["polled"]
    assert [m.content for m in here.published] == ["own task"]
    assert [m.content for m in other.published] == ["no run_here"]


async def test_writer_command_is_answered_never_published(db: Database) -> None:
    """``/writers`` is answered by the pipeline through the sender; the handler never sees it."""
    sink, sender = Sink(), RecordingSender()
    seen: list[tuple[WriterCommand, Identity]] = []

    async def run(command: WriterCommand, identity: Identity) -> str:
        seen.append((command, identity))
        return "writers: none"

    result = await pipeline(db, sink).process(update(3, "/writers"), run_command=run, sender=sender)
    assert result.outcome is Outcome.WRITER_COMMAND
    assert result.answer is not None
    assert [(o.content, o.reply_to_message_id) for o in sender.sent] == [("writers: none", "3")]
    assert sink.published == []
    assert seen[0][0] is WriterCommand.LIST
    assert seen[0][1].agent_id == "00000000-0000-0000-0000-0000000000a1"


async def test_writer_command_without_a_platform_runner_is_still_answered(db: Database) -> None:
    """No ``run_command``: an add without a target is refused in the chat, not published."""
    sink, sender = Sink(), RecordingSender()
    result = await pipeline(db, sink).process(update(4, "/addwriter"), sender=sender)
    assert result.outcome is Outcome.WRITER_COMMAND
    assert sender.sent[0].content.startswith("refused (")
    assert sink.published == []


async def test_writer_command_while_the_store_is_away_is_answered_so(
    db: Database, caplog: pytest.LogCaptureFixture
) -> None:
    """A writer command whose store fails is answered that it cannot be done now (and logged
    once), never a traceback out of the pipeline and silence in the chat."""
    sink, sender = Sink(), RecordingSender()

    async def run(command: WriterCommand, identity: Identity) -> str:
        raise StoreError("database read failed: the database system is starting up")

    result = await pipeline(db, sink).process(update(5, "/writers"), run_command=run, sender=sender)
    assert result.outcome is Outcome.WRITER_COMMAND
    assert [o.content for o in sender.sent] == [STORE_AWAY]
    assert "channels.writer_command_failed command=writers" in caplog.text


async def test_with_a_ledger_a_claim_is_a_lease_done_when_the_turn_or_answer_is(
    db: Database,
) -> None:
    """With a turn ledger the claim of a published message stays open until its turn is
    finished; a writer command's is done once answered."""
    sink, sender = Sink(), RecordingSender()
    shared = SharedDedup(db)
    async with TurnLedger(shared) as ledger:
        pipe = pipeline(db, sink, shared_dedup=shared, ledger=ledger)
        await pipe.process(update(8, "hello"), sender=sender)
        await pipe.process(update(9, "/writers"), sender=sender)
        other = SharedDedup(db)
        (published,) = sink.published
        key = ("telegram", str(CHAT), "8:message")
        assert await other.take(*key, lease=True) is Claim.HELD
        assert await other.take("telegram", str(CHAT), "9:message", lease=True) is Claim.DONE
        await ledger.finish(published)
        assert await other.take(*key, lease=True) is Claim.DONE
        again = pipeline(db, Sink(), shared_dedup=other, ledger=ledger)
        held = await again.process(update(10, "hi"), sender=sender)
        assert held.outcome is Outcome.ADMITTED
        assert (
            await pipe.process(update(10, "hi"), sender=sender)
        ).reason is IgnoreReason.CLAIM_HELD
        assert (
            await pipe.process(update(10, "hi"), sender=sender)
        ).reason is IgnoreReason.CLAIM_HELD


async def test_edited_command_is_not_answered(db: Database) -> None:
    """A runner that leaves a command unanswered (an edit) gets no reply and no publish."""
    sink, sender = Sink(), RecordingSender()

    async def run(command: WriterCommand, identity: Identity) -> None:
        return None

    result = await pipeline(db, sink).process(update(5, "/writers"), run_command=run, sender=sender)
    assert (result.outcome, result.answer) == (Outcome.WRITER_COMMAND, None)
    assert sender.sent == []
    assert sink.published == []


async def test_refused_message_keeps_the_message_and_reason(db: Database) -> None:
    """Admission's refusal comes back as the same result type, with the refused message."""
    sink, sender = Sink(), RecordingSender()
    pipe = Pipeline(
        ChannelConfig(platform="telegram", group_policy="disabled"),
        writers=WriterManager(GrantStore(db)),
        publish=sink.publish,
    )
    result = await pipe.process(update(6, "hello"), acknowledge=sink.ack, sender=sender)
    assert (result.outcome, result.reason) == (Outcome.IGNORED, IgnoreReason.GROUP_DISABLED)
    assert result.message is not None
    assert result.message.content == "hello"
    assert sink.acks == 0
    assert sink.published == []


async def test_claim_lost_to_another_worker(db: Database) -> None:
    """Two pipelines on one store: the second claim loses and says so (not a duplicate)."""
    sinks = (Sink(), Sink())
    pipes = [pipeline(db, sink, shared_dedup=SharedDedup(db)) for sink in sinks]
    won = await pipes[0].process(update(7, "hi"))
    lost = await pipes[1].process(update(7, "hi"))
    assert won.outcome is Outcome.ADMITTED
    assert (lost.outcome, lost.reason) == (
        Outcome.CLAIMED_ELSEWHERE,
        IgnoreReason.CLAIMED_ELSEWHERE,
    )
    assert [len(s.published) for s in sinks] == [1, 0]

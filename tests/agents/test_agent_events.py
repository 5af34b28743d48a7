"""Domain events: UUID agent ids pass; a non-UUID is logged at publish and rejected."""

from __future__ import annotations

import logging
import uuid

import pytest

from actorscope.agents import (
    NIL_UUID,
    NON_UUID_AGENT_ID,
    AgentUUID,
    DomainEvent,
    EventBus,
    EventConsumer,
    check_event,
)
from actorscope.errors import EventRejectedError


class Recorder:
    """An event handler that remembers what it processed."""

    def __init__(self) -> None:
        self.seen: list[DomainEvent] = []

    async def __call__(self, event: DomainEvent) -> None:
        """Record the event."""
        self.seen.append(event)


async def test_uuid_events_reach_matching_consumers() -> None:
    """An event with a UUID agent id is delivered to `*` and to its name's consumers only."""
    bus = EventBus()
    every, renamed, other = Recorder(), Recorder(), Recorder()
    bus.subscribe(every)
    bus.subscribe(renamed, "agent.renamed")
    bus.subscribe(other, "agent.removed")
    event = DomainEvent("agent.renamed", AgentUUID(str(uuid.uuid4())), data={"key": "helper"})
    assert await bus.publish(event) == 2
    assert every.seen == [event]
    assert renamed.seen == [event]
    assert other.seen == []


async def test_non_uuid_agent_id_is_observed_and_rejected(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Publishing a key as agent_id logs eventbus.non_uuid_agent_id with the value; nobody runs."""
    bus = EventBus()
    handler = Recorder()
    bus.subscribe(handler)
    event = DomainEvent("agent.renamed", AgentUUID("support-bot"))
    with (
        caplog.at_level(logging.WARNING, logger="actorscope.agents.events"),
        pytest.raises(EventRejectedError, match="support-bot"),
    ):
        await bus.publish(event)
    assert handler.seen == []
    [record] = [r for r in caplog.records if r.getMessage() == NON_UUID_AGENT_ID]
    assert record.levelno == logging.WARNING
    assert record.__dict__["agent_id"] == "support-bot"
    assert record.__dict__["event_name"] == "agent.renamed"
    assert record.__dict__["event"] == NON_UUID_AGENT_ID


@pytest.mark.parametrize("bad", ["", "bot", NIL_UUID, "{" + str(uuid.uuid4()) + "}", 42, None])
async def test_consumer_rejects_every_non_uuid_and_processes_nothing(bad: object) -> None:
    """A consumer called directly refuses a non-UUID (or nil) agent id before its handler runs."""
    handler = Recorder()
    consumer = EventConsumer(handler)
    event = DomainEvent("agent.created", bad)  # type: ignore[arg-type]
    with pytest.raises(EventRejectedError, match=r"agent\.created"):
        await consumer.handle(event)
    assert handler.seen == []


async def test_uppercase_uuid_is_delivered_canonical(caplog: pytest.LogCaptureFixture) -> None:
    """An upper-case UUID is a UUID: no drift logged, and handlers see it in lower case."""
    bus = EventBus()
    handler = Recorder()
    bus.subscribe(handler)
    agent_id = str(uuid.uuid4())
    with caplog.at_level(logging.WARNING, logger="actorscope.agents.events"):
        await bus.publish(DomainEvent("agent.created", AgentUUID(agent_id.upper())))
    assert [e.agent_id for e in handler.seen] == [agent_id]
    assert caplog.records == []


def test_check_event_names_the_problem() -> None:
    """check_event says whether the id is not a UUID or is the nil UUID."""
    with pytest.raises(EventRejectedError, match="not a UUID"):
        check_event(DomainEvent("x", AgentUUID("bot")))
    with pytest.raises(EventRejectedError, match="nil UUID"):
        check_event(DomainEvent("x", AgentUUID(NIL_UUID)))


async def test_bus_logs_to_the_logger_it_is_given(caplog: pytest.LogCaptureFixture) -> None:
    """A bus built with its own logger reports drift there."""
    bus = EventBus(log=logging.getLogger("custom.bus"))
    with (
        caplog.at_level(logging.WARNING, logger="custom.bus"),
        pytest.raises(EventRejectedError),
    ):
        await bus.publish(DomainEvent("x", AgentUUID("main")))
    assert [r.name for r in caplog.records] == ["custom.bus"]

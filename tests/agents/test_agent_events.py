"""Domain events: UUID agent and tenant ids pass; a non-UUID is logged at publish and rejected."""

from __future__ import annotations

import logging
import uuid

import pytest

from actorscope._input import NIL_UUID
from actorscope.agents import AgentUUID
from actorscope.agents._events import (
    NON_UUID_AGENT_ID,
    NON_UUID_TENANT_ID,
    DomainEvent,
    EventBus,
    EventConsumer,
    EventRejectedError,
    check_event,
)
from actorscope.agents._types import TenantUUID


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
    assert record.__dict__["non_uuid_agent_id"] == "support-bot"
    assert "agent_id" not in record.__dict__  # log tooling parses agent_id as a UUID
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


async def test_non_uuid_tenant_id_is_observed_and_rejected_like_agent_id(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A slug as tenant_id is logged under non_uuid_tenant_id and refused before any handler."""
    bus = EventBus()
    handler = Recorder()
    bus.subscribe(handler)
    event = DomainEvent("agent.renamed", AgentUUID(str(uuid.uuid4())), TenantUUID("acme"))
    with (
        caplog.at_level(logging.WARNING, logger="actorscope.agents.events"),
        pytest.raises(EventRejectedError, match="tenant_id 'acme' is not a UUID"),
    ):
        await bus.publish(event)
    assert handler.seen == []
    [record] = caplog.records
    assert record.getMessage() == NON_UUID_TENANT_ID
    assert record.__dict__["event"] == NON_UUID_TENANT_ID
    assert record.__dict__["non_uuid_tenant_id"] == "acme"
    assert "tenant_id" not in record.__dict__
    assert "agent_id" not in record.__dict__


@pytest.mark.parametrize("bad", ["", "default", NIL_UUID, "{" + str(uuid.uuid4()) + "}", 42])
async def test_consumer_rejects_every_non_uuid_tenant_and_processes_nothing(bad: object) -> None:
    """The mirror of the agent_id test: a consumer refuses a non-UUID (or nil) tenant id."""
    handler = Recorder()
    consumer = EventConsumer(handler)
    event = DomainEvent("agent.created", AgentUUID(str(uuid.uuid4())), bad)  # type: ignore[arg-type]
    with pytest.raises(EventRejectedError, match=r"agent\.created.*tenant_id"):
        await consumer.handle(event)
    assert handler.seen == []


async def test_tenant_uuid_is_delivered_canonical_and_none_passes() -> None:
    """An upper-case tenant UUID reaches handlers in lower case; no tenant (None) is fine."""
    bus = EventBus()
    handler = Recorder()
    bus.subscribe(handler)
    agent_id, tenant_id = str(uuid.uuid4()), str(uuid.uuid4())
    await bus.publish(DomainEvent("x", AgentUUID(agent_id), TenantUUID(tenant_id.upper())))
    await bus.publish(DomainEvent("y", AgentUUID(agent_id)))
    assert [e.tenant_id for e in handler.seen] == [tenant_id, None]


async def test_both_ids_bad_logs_each_under_its_own_key(caplog: pytest.LogCaptureFixture) -> None:
    """An event with a bad agent and a bad tenant logs two records, each value under non_uuid_*."""
    bus = EventBus()
    with (
        caplog.at_level(logging.WARNING, logger="actorscope.agents.events"),
        pytest.raises(EventRejectedError, match="agent_id 'main'"),
    ):
        await bus.publish(DomainEvent("x", AgentUUID("main"), TenantUUID("acme")))
    logged = [
        (r.getMessage(), r.__dict__.get("non_uuid_agent_id"), r.__dict__.get("non_uuid_tenant_id"))
        for r in caplog.records
    ]
    assert logged == [(NON_UUID_AGENT_ID, "main", None), (NON_UUID_TENANT_ID, None, "acme")]

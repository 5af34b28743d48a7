"""Domain events name agents by UUID; the bus watches for drift and consumers refuse it.

``DomainEvent.agent_id`` is typed :data:`AgentUUID`, which mypy enforces for typed callers.
Events also arrive from untyped code (JSON, plugins, ``cast``), so the constructor does not
validate: a drifted event must reach the bus, where the publish-time observer logs
``eventbus.non_uuid_agent_id`` with the offending value, and then every consumer rejects
it with :class:`EventRejectedError` before its handler runs.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace

from actorscope.agents.types import NIL_UUID, AgentUUID, TenantUUID, looks_like_uuid, parse_uuid
from actorscope.errors import EventRejectedError
from actorscope.store import utc_now

__all__ = [
    "NON_UUID_AGENT_ID",
    "DomainEvent",
    "EventBus",
    "EventConsumer",
    "EventHandler",
    "check_event",
]

#: The log message (and ``extra["event"]``) of the publish-time observer.
NON_UUID_AGENT_ID = "eventbus.non_uuid_agent_id"

logger = logging.getLogger(__name__)

EventHandler = Callable[["DomainEvent"], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class DomainEvent:
    """Something that happened to an agent, e.g. ``agent.renamed``."""

    name: str
    agent_id: AgentUUID
    tenant_id: TenantUUID | None = None
    data: Mapping[str, str] = field(default_factory=dict)
    occurred_at: str = field(default_factory=utc_now)


def _problem(agent_id: object) -> str:
    """Why ``agent_id`` is not an agent UUID, or ``""`` if it is one."""
    if not looks_like_uuid(agent_id):
        return "not a UUID"
    if parse_uuid(agent_id) == NIL_UUID:
        return "the nil UUID, which names no agent"
    return ""


def check_event(event: DomainEvent) -> DomainEvent:
    """``event`` with its agent id canonical, or :class:`EventRejectedError` if it is no UUID."""
    problem = _problem(event.agent_id)
    if problem:
        raise EventRejectedError(
            f"event {event.name!r} rejected: agent_id {event.agent_id!r} is {problem}"
        )
    return replace(event, agent_id=AgentUUID(parse_uuid(event.agent_id)))


class EventConsumer:
    """Wraps a handler so that it only ever sees events whose agent id is a UUID."""

    def __init__(self, handler: EventHandler, name: str = "*") -> None:
        self.handler = handler
        self.name = name

    def wants(self, event: DomainEvent) -> bool:
        """Whether this consumer subscribed to ``event``'s name (``*``: every event)."""
        return self.name in ("*", event.name)

    async def handle(self, event: DomainEvent) -> None:
        """Check the event, then run the handler; a non-UUID agent id runs nothing."""
        await self.handler(check_event(event))


class EventBus:
    """In-process publish/subscribe of :class:`DomainEvent` with a UUID guard."""

    def __init__(self, *, log: logging.Logger | None = None) -> None:
        self._consumers: list[EventConsumer] = []
        self._log = log if log is not None else logger

    def subscribe(self, handler: EventHandler, name: str = "*") -> EventConsumer:
        """Register ``handler`` for events named ``name`` (``*``: all), behind the guard."""
        consumer = EventConsumer(handler, name)
        self._consumers.append(consumer)
        return consumer

    def _observe(self, event: DomainEvent) -> None:
        problem = _problem(event.agent_id)
        if problem:
            self._log.warning(
                NON_UUID_AGENT_ID,
                extra={
                    "event": NON_UUID_AGENT_ID,
                    "event_name": event.name,
                    "agent_id": event.agent_id,
                    "problem": problem,
                },
            )

    async def publish(self, event: DomainEvent) -> int:
        """Deliver ``event`` to its consumers in order; return how many handled it.

        A non-UUID agent id is logged here, then refused: :class:`EventRejectedError` is
        raised before any consumer's handler runs, so nothing is processed.
        """
        self._observe(event)
        checked = check_event(event)
        delivered = 0
        for consumer in [c for c in self._consumers if c.wants(checked)]:
            await consumer.handle(checked)
            delivered += 1
        return delivered

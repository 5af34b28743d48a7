"""Domain events name agents and tenants by UUID; the bus watches for drift and consumers refuse it.

``DomainEvent.agent_id`` is typed :data:`AgentUUID` (and ``tenant_id`` :data:`TenantUUID`),
which mypy enforces for typed callers. Events also arrive from untyped code (JSON, plugins,
``cast``), so the constructor does not validate: a drifted event must reach the bus, where the
publish-time observer logs ``eventbus.non_uuid_agent_id`` (or ``eventbus.non_uuid_tenant_id``)
with the offending value under ``non_uuid_agent_id`` (``non_uuid_tenant_id``), never under
``agent_id``, which log tooling parses as a UUID. Then every consumer rejects it with
:class:`EventRejectedError` before its handler runs. ``tenant_id`` may be ``None`` (no tenant
named); any other value must be a UUID, exactly like ``agent_id``.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace

from actorscope._input import NIL_UUID, is_uuid, parse_uuid
from actorscope.agents._types import AgentUUID, TenantUUID
from actorscope.errors import ActorscopeError
from actorscope.store import Database

__all__ = [
    "NON_UUID_AGENT_ID",
    "NON_UUID_TENANT_ID",
    "DomainEvent",
    "EventBus",
    "EventConsumer",
    "EventHandler",
    "EventRejectedError",
    "check_event",
]


class EventRejectedError(ActorscopeError):
    """A domain event names an agent by something other than its UUID."""


#: The log message (and ``extra["event"]``) of the publish-time observer for a bad agent id.
NON_UUID_AGENT_ID = "eventbus.non_uuid_agent_id"
#: The same for a bad tenant id.
NON_UUID_TENANT_ID = "eventbus.non_uuid_tenant_id"

logger = logging.getLogger("actorscope.agents.events")

EventHandler = Callable[["DomainEvent"], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class DomainEvent:
    """Something that happened to an agent, e.g. ``agent.renamed``."""

    name: str
    agent_id: AgentUUID
    tenant_id: TenantUUID | None = None
    data: Mapping[str, str] = field(default_factory=dict)
    occurred_at: str = field(default_factory=Database.utc_now)


@dataclass(frozen=True, slots=True)
class _Drift:
    """One id of an event that is not a UUID: which field, its value, why, and the log message."""

    field: str
    value: object
    problem: str
    message: str


def _problem(value: object, names: str) -> str:
    """Why ``value`` is not a UUID naming ``names``, or ``""`` if it is one."""
    if not is_uuid(value, canonical=False):
        return "not a UUID"
    if parse_uuid(value) == NIL_UUID:
        return f"the nil UUID, which names no {names}"
    return ""


def _drift(event: DomainEvent) -> list[_Drift]:
    """The event's ids that are not UUIDs, agent first (a ``None`` tenant names no tenant)."""
    ids: list[tuple[str, object, str, str]] = [
        ("agent_id", event.agent_id, "agent", NON_UUID_AGENT_ID)
    ]
    if event.tenant_id is not None:
        ids.append(("tenant_id", event.tenant_id, "tenant", NON_UUID_TENANT_ID))
    found = [
        _Drift(name, value, _problem(value, names), message) for name, value, names, message in ids
    ]
    return [drift for drift in found if drift.problem]


def check_event(event: DomainEvent) -> DomainEvent:
    """``event`` with its ids canonical, or :class:`EventRejectedError` if one is no UUID."""
    drift = _drift(event)
    if drift:
        first = drift[0]
        raise EventRejectedError(
            f"event {event.name!r} rejected: {first.field} {first.value!r} is {first.problem}"
        )
    tenant_id = None if event.tenant_id is None else TenantUUID(parse_uuid(event.tenant_id))
    return replace(event, agent_id=AgentUUID(parse_uuid(event.agent_id)), tenant_id=tenant_id)


class EventConsumer:
    """Wraps a handler so that it only ever sees events whose agent and tenant ids are UUIDs."""

    def __init__(self, handler: EventHandler, name: str = "*") -> None:
        self.handler = handler
        self.name = name

    def wants(self, event: DomainEvent) -> bool:
        """Whether this consumer subscribed to ``event``'s name (``*``: every event)."""
        return self.name in ("*", event.name)

    async def handle(self, event: DomainEvent) -> None:
        """Check the event, then run the handler; a non-UUID agent or tenant id runs nothing."""
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
        # The bad value goes under non_uuid_<field>, never under agent_id / tenant_id: log
        # tooling parses those as UUIDs.
        for drift in _drift(event):
            self._log.warning(
                drift.message,
                extra={
                    "event": drift.message,
                    "event_name": event.name,
                    f"non_uuid_{drift.field}": drift.value,
                    "problem": drift.problem,
                },
            )

    async def publish(self, event: DomainEvent) -> int:
        """Deliver ``event`` to its consumers in order; return how many handled it.

        A non-UUID agent or tenant id is logged here, then refused: :class:`EventRejectedError` is
        raised before any consumer's handler runs, so nothing is processed.
        """
        self._observe(event)
        checked = check_event(event)
        delivered = 0
        for consumer in [c for c in self._consumers if c.wants(checked)]:
            await consumer.handle(checked)
            delivered += 1
        return delivered

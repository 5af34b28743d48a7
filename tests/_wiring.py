"""A channel's pipeline for tests that drive a runner directly, without an agent's assembly.

Production code gets every pipeline from the composition root (``Assembly.pipeline``); a
runner test needs only a database's grants and a bus, so it builds the same pipeline here.
"""

from __future__ import annotations

from actorscope.agents import Agent
from actorscope.channels import ChannelConfig, Pipeline
from actorscope.channels._shared_dedup import SharedDedup
from actorscope.channels._turns import TurnLedger
from actorscope.host import MessageBus, OutboundSender
from actorscope.messages import OutboundMessage
from actorscope.permissions import GrantStore, WriterManager
from actorscope.store import Database


def channel_pipeline(
    db: Database,
    config: ChannelConfig,
    *,
    bus: MessageBus | None = None,
    agent: Agent | None = None,
    shared_dedup: SharedDedup | None = None,
    ledger: TurnLedger | None = None,
    run_here: bool = False,
) -> Pipeline:
    """``config``'s pipeline over ``db``'s grants, publishing to ``bus`` (default: a new
    one), for ``agent`` (default: none, as a runner built without one); with ``run_here``
    an event in a task of its own may run its turn there, as under ``actorscope run``."""
    bus = bus if bus is not None else MessageBus()
    return Pipeline(
        config,
        writers=WriterManager(GrantStore(db), owners=config.owners),
        publish=bus.publish_from_channel,
        run_here=bus.run_from_channel if run_here else None,
        agent_key=agent.key if agent is not None else "main",
        agent_id=agent.id if agent is not None else None,
        tenant_id=agent.tenant_id if agent is not None else None,
        shared_dedup=shared_dedup,
        ledger=ledger,
    )


class RecordingSender(OutboundSender):
    """A channel's sender for tests: keeps every message it is given, in order (``sent``)."""

    def __init__(self) -> None:
        self.sent: list[OutboundMessage] = []

    async def send(self, msg: OutboundMessage) -> None:
        """Record ``msg``."""
        self.sent.append(msg)

"""The small surface every running channel offers: start, stop, send.

A :class:`ChannelAdapter` owns one platform connection (a Telegram polling loop, a Discord
gateway session). It publishes what it receives to a :class:`~actorscope.host.MessageBus`
and is itself the :class:`~actorscope.host.OutboundSender` the host routes replies to, so a new
platform needs these three methods and nothing else (:meth:`status`, a line for the operator,
and :attr:`native`, the platform library's own object, are optional).
"""

from __future__ import annotations

from abc import abstractmethod

from actorscope.host import OutboundSender
from actorscope.messages import OutboundMessage

__all__ = ["ChannelAdapter"]


class ChannelAdapter(OutboundSender):
    """A running channel: ``name`` is the channel name replies are routed by."""

    name: str

    @abstractmethod
    async def start(self) -> None:
        """Connect and start delivering inbound messages; returns once running."""

    def status(self) -> str:
        """Once started, one line for the operator about where it takes events in (a webhook
        receiver's URL); ``""`` when there is nothing to say (polling, a gateway session)."""
        return ""

    @property
    def native(self) -> object:
        """The platform library's own object this channel runs on, for what a reply cannot
        express (python-telegram-bot's ``Bot``, discord.py's ``Client``); ``None`` when it
        has none. A handler asks for it by its class:
        :meth:`actorscope.bots.BotServices.native`."""
        return None

    async def stop_receiving(self) -> None:
        """Take in no new events but keep sending (shutdown: before the host drains)."""

    @abstractmethod
    async def stop(self) -> None:
        """Disconnect; bounded in time, safe to call twice or before :meth:`start`."""

    @abstractmethod
    async def send(self, msg: OutboundMessage) -> None:
        """Deliver ``msg`` to its chat, and to its topic or thread when it names one."""

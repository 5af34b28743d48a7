"""Where outbound messages go: one :class:`OutboundSender` per channel name.

A sender is the small piece a host needs from a channel adapter: deliver one
:class:`~actorscope.messages.OutboundMessage` to its chat and thread. A plain-text answer
to a message (what most handlers return) goes through :meth:`OutboundSender.send_text`,
which a sender may do without building that message (the runners do). ``MemorySender``
(internal) keeps them in a list, for the host's tests.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from actorscope.messages import InboundMessage, OutboundMessage, RunRequest

__all__ = ["MemorySender", "OutboundSender"]


class OutboundSender(ABC):
    """Delivers outbound messages of one channel."""

    @abstractmethod
    async def send(self, msg: OutboundMessage) -> None:
        """Deliver ``msg`` to ``msg.chat_id`` (and ``msg.thread_id`` when set)."""

    async def send_text(self, source: InboundMessage | RunRequest, text: str) -> None:
        """Deliver ``text`` as a plain reply to ``source``: what
        ``send(OutboundMessage.reply_to(source, text))`` delivers, which is what this does unless a
        sender knows a quicker way."""
        await self.send(OutboundMessage.reply_to(source, text))


class MemorySender(OutboundSender):
    """Keeps every message it is given, in order (``sent``)."""

    def __init__(self) -> None:
        self.sent: list[OutboundMessage] = []

    async def send(self, msg: OutboundMessage) -> None:
        """Record ``msg``."""
        self.sent.append(msg)

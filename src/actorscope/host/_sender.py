"""Where outbound messages go: one :class:`OutboundSender` per channel name.

A sender is the small piece a host needs from a channel adapter: deliver one
:class:`~actorscope.messages.OutboundMessage` to its chat and thread. :class:`MemorySender`
keeps them in a list, for tests and offline examples.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from actorscope.messages import OutboundMessage

__all__ = ["MemorySender", "OutboundSender"]


class OutboundSender(ABC):
    """Delivers outbound messages of one channel."""

    @abstractmethod
    async def send(self, msg: OutboundMessage) -> None:
        """Deliver ``msg`` to ``msg.chat_id`` (and ``msg.thread_id`` when set)."""


class MemorySender(OutboundSender):
    """Keeps every message it is given, in order (``sent``)."""

    def __init__(self) -> None:
        self.sent: list[OutboundMessage] = []

    async def send(self, msg: OutboundMessage) -> None:
        """Record ``msg``."""
        self.sent.append(msg)

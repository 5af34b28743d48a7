"""Outbound senders: the abstract interface and the in-memory one."""

from __future__ import annotations

import pytest

from actorscope.host import OutboundSender
from actorscope.host._sender import MemorySender
from actorscope.messages import OutboundMessage


async def test_memory_sender_keeps_messages_in_order() -> None:
    """MemorySender records every message it is asked to send, in order."""
    sender = MemorySender()
    first = OutboundMessage(channel="telegram", chat_id="1", content="a")
    second = OutboundMessage(channel="telegram", chat_id="1", content="b", thread_id="3")
    await sender.send(first)
    await sender.send(second)
    assert sender.sent == [first, second]


def test_outbound_sender_is_abstract() -> None:
    """A sender without send() cannot be instantiated."""

    class Incomplete(OutboundSender):
        pass

    with pytest.raises(TypeError):
        Incomplete()  # type: ignore[abstract]

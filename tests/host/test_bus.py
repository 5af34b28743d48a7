"""The bounded message bus: FIFO order, back-pressure, channel sanitising, type checks."""

from __future__ import annotations

import asyncio

import pytest

from actorscope.errors import ConfigError, PayloadError
from actorscope.host import MessageBus
from actorscope.messages import InboundMessage, MetaKey


def message(n: int, **metadata: str) -> InboundMessage:
    """A direct-chat message numbered ``n``."""
    return InboundMessage(
        channel="telegram", sender_id="42", chat_id="42", user_id="42", content=str(n),
        metadata=metadata,
    )  # fmt: skip


async def test_messages_come_out_in_order() -> None:
    """What is published is consumed first in, first out."""
    bus = MessageBus(maxsize=3)
    for n in range(3):
        await bus.publish(message(n))
    got = [(await bus.get()).content for _ in range(3)]
    assert got == ["0", "1", "2"]


async def test_full_bus_refuses_try_publish_and_makes_publish_wait() -> None:
    """A full bus returns False from try_publish and holds publish until a slot frees."""
    bus = MessageBus(maxsize=1)
    assert bus.try_publish(message(0))
    assert not bus.try_publish(message(1))
    waiting = asyncio.create_task(bus.publish(message(2)))
    await asyncio.sleep(0)
    assert not waiting.done()
    assert (await bus.get()).content == "0"
    await asyncio.wait_for(waiting, 1.0)
    assert (bus.qsize(), bus.maxsize) == (1, 1)


async def test_join_waits_for_task_done() -> None:
    """join() returns once every published message was marked done."""
    bus = MessageBus()
    await bus.publish(message(0))
    joiner = asyncio.create_task(bus.join())
    await asyncio.sleep(0)
    assert not joiner.done()
    await bus.get()
    bus.task_done()
    await asyncio.wait_for(joiner, 1.0)


async def test_publish_from_channel_strips_origin_keys() -> None:
    """A channel's message loses every origin_* key on the way in; a wrapper's keeps them."""
    bus = MessageBus()
    await bus.publish_from_channel(message(0, **{MetaKey.ORIGIN_SENDER_ID: "1", "lang": "en"}))
    await bus.publish(message(1, **{MetaKey.ORIGIN_SENDER_ID: "1"}))
    assert dict((await bus.get()).metadata) == {"lang": "en"}
    assert dict((await bus.get()).metadata) == {MetaKey.ORIGIN_SENDER_ID: "1"}


@pytest.mark.parametrize("size", [0, -1, 1.5, True])
def test_bad_size_is_a_config_error(size: object) -> None:
    """The bus size must be a positive integer."""
    with pytest.raises(ConfigError):
        MessageBus(size)  # type: ignore[arg-type]


async def test_only_inbound_messages_ride_the_bus() -> None:
    """Anything but an InboundMessage is refused with a PayloadError, in every publish path."""
    bus = MessageBus()
    with pytest.raises(PayloadError):
        await bus.publish({"content": "x"})  # type: ignore[arg-type]
    with pytest.raises(PayloadError):
        await bus.publish_from_channel("x")  # type: ignore[arg-type]
    with pytest.raises(PayloadError):
        bus.try_publish(None)  # type: ignore[arg-type]
    assert bus.qsize() == 0

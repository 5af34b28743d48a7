"""A channel's message run in its publisher's task: turn slots shared with the workers, start
order and backpressure as through the bus, and a stop that waits for such turns or cancels them."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from types import MappingProxyType

from tests._wait import wait_until

from actorscope.host import Host, MessageBus, Reply, RunStep
from actorscope.host._sender import MemorySender
from actorscope.identity import PeerKind
from actorscope.messages import InboundMessage, MetaKey, RunRequest
from actorscope.propagation import OriginSigner

CHAT = "-1001234567890"


def tg(text: str, **metadata: str) -> InboundMessage:
    """A Telegram group message from sender 42."""
    return InboundMessage(
        channel="telegram", sender_id="42", chat_id=CHAT, content=text,
        peer_kind=PeerKind.GROUP, user_id=f"group:telegram:{CHAT}",
        metadata=MappingProxyType(dict(metadata)),
    )  # fmt: skip


class Turns:
    """A handler that records each turn's start, holds the turns named in ``held`` until
    :meth:`release`, and counts the turns running at once."""

    def __init__(self, *held: str) -> None:
        self.started: list[str] = []
        self.senders: list[str] = []
        self.tasks: dict[str, asyncio.Task[object] | None] = {}
        self.running = 0
        self.most = 0
        self.cancelled: list[str] = []
        self._held = set(held)
        self._gate = asyncio.Event()

    def release(self) -> None:
        """Let every held turn go on."""
        self._gate.set()

    async def __call__(self, request: RunRequest) -> Reply:
        self.started.append(request.content)
        self.senders.append(request.sender_id)
        self.tasks[request.content] = asyncio.current_task()
        self.running += 1
        self.most = max(self.most, self.running)
        try:
            if request.content in self._held or "*" in self._held:
                await self._gate.wait()
        except asyncio.CancelledError:
            self.cancelled.append(request.content)
            raise
        finally:
            self.running -= 1
        return request.content


def host_for(
    turns: Turns, *, concurrency: int, bus: MessageBus | None = None
) -> tuple[Host, Callable[[], list[str]]]:
    """A host over ``bus`` (default: a fresh one), and what its Telegram sender has sent."""
    sender = MemorySender()
    step = RunStep(turns, signer=OriginSigner(), senders={"telegram": sender})
    host = Host(step, bus=bus or MessageBus(), concurrency=concurrency)
    return host, lambda: [m.content for m in sender.sent]


async def test_a_message_runs_in_its_publishers_task_while_a_slot_is_free() -> None:
    """run_from_channel returns once the turn is over, run in the caller's own task; origin
    keys a channel cannot vouch for are stripped on this path too."""
    turns = Turns()
    host, sent = host_for(turns, concurrency=2)
    await host.start()
    me = asyncio.current_task()
    await host.bus.run_from_channel(tg("hi", **{MetaKey.ORIGIN_SENDER_ID: "99"}))
    assert turns.tasks["hi"] is me
    assert turns.senders == ["42"]
    assert sent() == ["hi"]
    assert host.bus.qsize() == 0
    await host.stop()


async def test_a_message_waiting_on_the_bus_starts_before_a_later_one() -> None:
    """A message already on the bus (a wrapper's) is not overtaken by a channel's message
    published after it, though a slot is free for that one."""
    turns = Turns()
    host, sent = host_for(turns, concurrency=2)
    await host.start()
    await host.bus.publish(tg("first"))
    await host.bus.run_from_channel(tg("second"))  # no await point in between: first waits
    await wait_until(lambda: len(sent()) == 2)
    assert turns.started == ["first", "second"]
    await host.stop()


async def test_a_freed_slot_goes_to_the_waiting_worker_before_a_new_message() -> None:
    """With every slot taken, a worker holding a message waits for one; the slot freed next
    is its own, even for a message published the instant it is freed."""
    turns = Turns("one")
    host, sent = host_for(turns, concurrency=1)
    await host.start()

    async def publisher() -> None:
        await host.bus.run_from_channel(tg("one"))  # runs here, holding the only slot
        await host.bus.run_from_channel(tg("three"))  # at once after the slot is freed

    task = asyncio.create_task(publisher())
    await wait_until(lambda: turns.started == ["one"])
    await host.bus.publish(tg("two"))
    await wait_until(lambda: host.bus.qsize() == 0)  # a worker took it and waits for a slot
    turns.release()
    await task
    await wait_until(lambda: len(sent()) == 3)
    assert turns.started == ["one", "two", "three"]
    await host.stop()


async def test_turns_never_exceed_concurrency_and_a_full_bus_holds_publishers_back() -> None:
    """Eight publishers at once, two slots, room for two on the bus: two turns run, each
    worker holds one message, two wait on the bus and the last two publishers wait to
    publish; once released, every turn starts in publishing order."""
    turns = Turns("*")
    host, sent = host_for(turns, concurrency=2, bus=MessageBus(2))
    await host.start()
    names = [f"m{n}" for n in range(8)]
    tasks = [asyncio.create_task(host.bus.run_from_channel(tg(name))) for name in names]
    await wait_until(
        lambda: turns.running == 2 and host.bus.qsize() == 2 and sum(t.done() for t in tasks) == 4
    )
    assert [t.done() for t in tasks] == [False, False, True, True, True, True, False, False]
    assert turns.started == ["m0", "m1"]
    turns.release()
    await asyncio.gather(*tasks)
    await wait_until(lambda: len(sent()) == 8)
    assert turns.most == 2
    assert turns.started == names
    await host.stop()


async def test_stop_waits_for_a_turn_running_in_a_publishers_task() -> None:
    """stop(drain=True) returns only after a turn running in a publisher's task has sent its
    reply; from the moment it is called, messages wait on the bus instead."""
    turns = Turns("held")
    host, sent = host_for(turns, concurrency=2)
    await host.start()
    events: list[str] = []

    async def publisher() -> None:
        await host.bus.run_from_channel(tg("held"))
        events.append("turn over")

    task = asyncio.create_task(publisher())
    await wait_until(lambda: turns.started == ["held"])
    stopping = asyncio.create_task(host.stop(drain=True, grace=5.0))
    await wait_until(lambda: not host.running)
    await host.bus.run_from_channel(tg("late"))  # queued, not run here: the host is stopping
    assert turns.started == ["held"]
    turns.release()
    left = await stopping
    events.append("stopped")
    await task
    assert events == ["turn over", "stopped"]
    assert sorted(sent()) == ["held", "late"]  # the drain ran the queued one on a worker
    assert turns.tasks["late"] is not asyncio.current_task()
    assert left == 0


async def test_stop_without_drain_cancels_a_turn_running_in_a_publishers_task() -> None:
    """stop(drain=False) cancels a turn running in a publisher's task as a worker's: no reply."""
    turns = Turns("held")
    host, sent = host_for(turns, concurrency=1)
    await host.start()
    task = asyncio.create_task(host.bus.run_from_channel(tg("held")))
    await wait_until(lambda: turns.started == ["held"])
    assert await host.stop(drain=False, grace=1.0) == 0
    assert turns.cancelled == ["held"]
    assert task.cancelled()
    assert sent() == []


async def test_before_start_a_channel_message_waits_on_the_bus() -> None:
    """A host that is not running runs nothing here: the message is published."""
    turns = Turns()
    host, sent = host_for(turns, concurrency=1)
    await host.bus.run_from_channel(tg("early"))
    assert host.bus.qsize() == 1
    assert turns.started == []
    await host.start()
    await wait_until(lambda: sent() == ["early"])
    await host.stop()

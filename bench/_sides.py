"""The sides of the throughput lines, and the harness that times them in alternation.

A :class:`Side` builds one bot over a stub transport (:mod:`bench._stubs`) and hands back
its ``feed``: the stream goes in through the library's own entry point (PTB's
``Update.de_json`` + ``Application.process_update``, discord.py's gateway parser) and the
feed returns once the last reply is sent. :func:`alternate` runs every side of a line on the
same stream, a chunk at a time in rotating order, with a full garbage collection before each
timed chunk, so a pause of the collector or a load spike of the machine lands on no side in
particular; the lines are the per-run ratios' median and min-max.

Same work on every side: the stubs record each reply and :func:`~bench._stubs.same_work`
refuses a line whose sides answered differently. Writer commands (``/addwriter``,
``/writers``: ~3 % of the Telegram stream) are left out of every feed: ``actorscope run``
answers them from the grant store, which a bare bot has no counterpart for. Every bot,
like any group bot, answers only people and ignores a command addressed to another bot
(``/status@other_bot``).
"""

from __future__ import annotations

import asyncio
import copy
import gc
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

import discord
from telegram import Message, ReplyParameters, Update
from telegram.ext import Application, ApplicationBuilder, ContextTypes, MessageHandler, filters

from actorscope.assembly import AgentSettings, Assembly, assemble
from actorscope.channels import ChannelConfig
from actorscope.channels._writer_commands import parse_writer_command
from actorscope.channels.discord import bot_intents
from actorscope.channels.discord._runner import DiscordRunner
from actorscope.channels.telegram._runner import TelegramRunner
from actorscope.host import MessageBus
from actorscope.messages import RunRequest
from actorscope.store import Database
from bench._streams import BOT_USERNAME, DiscordStream
from bench._stubs import TOKEN, DiscordStub, Sends, StubRequest, same_work
from bench._timing import goal_line

__all__ = [
    "GENERAL_TOPIC",
    "REPLY",
    "Feed",
    "Payloads",
    "Run",
    "Side",
    "alternate",
    "bare_discord",
    "bare_ptb",
    "discord_feed",
    "discord_runner",
    "for_another_bot",
    "from_person",
    "members",
    "offline_client",
    "ptb_app",
    "ptb_feed",
    "ratio_line",
    "telegram_payloads",
    "telegram_runner",
    "versions",
]

REPLY = "noted"
GENERAL_TOPIC = 1

#: The fewest updates a timed chunk holds: a shorter one would time the collection before it.
_MIN_CHUNK = 10

Payloads = list[dict[str, Any]]
Feed = Callable[[Payloads], Awaitable[None]]
PTBApp = Application[Any, Any, Any, Any, Any, Any]


@dataclass(frozen=True, slots=True)
class Side:
    """One bot of a line: ``start(sends)`` builds it (untimed) and yields its feed."""

    label: str
    start: Callable[[Sends], AbstractAsyncContextManager[Feed]]


@dataclass(slots=True)
class Run:
    """Seconds per run of each side (by label) and the replies of each side's last run."""

    updates: int
    seconds: dict[str, list[float]] = field(default_factory=dict)
    sends: dict[str, Sends] = field(default_factory=dict)

    def ratios(self, side: str, base: str) -> list[float]:
        """Per run: ``side``'s throughput over ``base``'s (``base`` seconds / ``side`` seconds)."""
        return [b / s for b, s in zip(self.seconds[base], self.seconds[side], strict=True)]

    def rate(self, side: str) -> float:
        """``side``'s median updates per second."""
        times = sorted(self.seconds[side])
        return self.updates / times[len(times) // 2]


async def _timed(side: Side, payloads: Payloads) -> tuple[float, Sends]:
    """One feed of a fresh copy of ``payloads`` to a new ``side``: seconds and replies."""
    batch = copy.deepcopy(payloads)  # some libraries consume the dicts they parse
    sends: Sends = []
    async with side.start(sends) as feed:
        gc.collect()
        start = time.perf_counter()
        await feed(batch)
        seconds = time.perf_counter() - start
    return seconds, sends


async def alternate(
    sides: Sequence[Side], payloads: Payloads, runs: int, *, warmup: int = 200, chunks: int = 12
) -> Run:
    """Time each side's feed of ``payloads`` ``runs`` times, in alternation.

    First each side takes ``warmup`` updates untimed: what a library does once per process
    (imports, schemas, caches of classes) is not a cost per message. Then each run starts
    every side and feeds them the stream in ``chunks`` parts, side after side in
    rotating order, with a full collection before each timed chunk: a load spike of a busy
    machine (seconds long) lands on every side alike, not on the one being timed.
    """
    for side in sides:
        await _timed(side, payloads[:warmup])
    result = Run(len(payloads))
    for side in sides:
        result.seconds[side.label] = []
    # The stream in ``chunks`` parts (the last shorter), each of at least _MIN_CHUNK updates.
    chunk = max(-(-len(payloads) // chunks), _MIN_CHUNK)
    for number in range(runs):
        seconds = {side.label: 0.0 for side in sides}
        sends: dict[str, Sends] = {side.label: [] for side in sides}
        async with AsyncExitStack() as stack:
            feeds = {
                side.label: await stack.enter_async_context(side.start(sends[side.label]))
                for side in sides
            }
            for index, begin in enumerate(range(0, len(payloads), chunk)):
                part = payloads[begin : begin + chunk]
                shift = (number + index) % len(sides)
                for side in [*sides[shift:], *sides[:shift]]:
                    batch = copy.deepcopy(part)  # some libraries consume the dicts they parse
                    gc.collect()
                    start = time.perf_counter()
                    await feeds[side.label](batch)
                    seconds[side.label] += time.perf_counter() - start
        for side in sides:
            result.seconds[side.label].append(seconds[side.label])
            result.sends[side.label] = sends[side.label]
    return result


def ratio_line(
    run: Run, side: str, base: str, label: str, goal: float | None, *, at_least: bool = True
) -> None:
    """Print ``side`` over ``base`` (median, min-max, goal), then that both did the same work."""
    counts = same_work(side, run.sends[side], base, run.sends[base])
    ratios = run.ratios(side, base)
    goal_line(f"{label} ({run.rate(side):,.0f} upd/s)", ratios, goal, at_least=at_least)
    print(f"  {counts}, {run.updates} updates ({side} / {base})")


def versions(*distributions: str) -> str:
    """``name version`` of each installed distribution, ``name -`` when it is not installed."""
    found = []
    for name in distributions:
        try:
            found.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            found.append(f"{name} -")
    return ", ".join(found)


# -- Telegram --------------------------------------------------------------------------------


def for_another_bot(text: str) -> bool:
    """True for a ``/command@name`` whose ``name`` is not this bot's."""
    command = text.split(maxsplit=1)[0] if text.startswith("/") else ""
    _, at, name = command.partition("@")
    return bool(at) and name.lower() != BOT_USERNAME.lower()


def telegram_payloads(stream: Payloads, updates: int) -> Payloads:
    """The first ``updates`` updates of ``stream`` that are not writer commands."""
    kept = [p for p in stream if parse_writer_command(p["message"].get("text", "")) is None]
    return kept[:updates]


def members(payloads: Payloads) -> dict[int, bool]:
    """Every person who sends one of ``payloads``, allowed: the peers' permission dict."""
    found: dict[int, bool] = {}
    for payload in payloads:
        sender = payload["message"].get("from") or {}
        if not sender.get("is_bot", True):
            found[int(sender["id"])] = True
    return found


class _FromPerson(filters.MessageFilter):
    """A message a person wrote, not a command for another bot: what every bot answers."""

    __slots__ = ()

    def filter(self, message: Message) -> bool:
        user = message.from_user
        return (
            message.sender_chat is None
            and user is not None
            and not user.is_bot
            and not for_another_bot(message.text or "")
        )


from_person = _FromPerson(name="from_person")


async def reply(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """The bare PTB bot's answer: ``noted`` in the chat and topic, replying."""
    message = update.effective_message
    assert message is not None
    thread = message.message_thread_id if message.is_topic_message else None
    await context.bot.send_message(
        chat_id=message.chat_id,
        text=REPLY,
        message_thread_id=None if thread == GENERAL_TOPIC else thread,
        reply_parameters=ReplyParameters(
            message_id=message.message_id, allow_sending_without_reply=True
        ),
    )


def ptb_app(sends: Sends) -> PTBApp:
    """A PTB application over the stub transport (not initialized)."""
    return (
        ApplicationBuilder()
        .token(TOKEN)
        .request(StubRequest(sends))
        .get_updates_request(StubRequest(sends))
        .build()
    )


def ptb_feed(app: PTBApp) -> Feed:
    """Each update through ``Update.de_json`` and ``app.process_update``."""

    async def feed(payloads: Payloads) -> None:
        bot = app.bot
        for payload in payloads:
            await app.process_update(Update.de_json(payload, bot))

    return feed


@asynccontextmanager
async def _bare_ptb(sends: Sends) -> AsyncIterator[Feed]:
    app = ptb_app(sends)
    app.add_handler(MessageHandler(from_person, reply))
    await app.initialize()
    try:
        yield ptb_feed(app)
    finally:
        await app.shutdown()


bare_ptb = Side("bare PTB", _bare_ptb)


async def _turn(request: RunRequest) -> str:
    return REPLY


async def _assembly(db: Database, prefix: str) -> Assembly:
    """A new agent each run, wired by the composition root: no decision, dedup or identity
    memo carries over."""
    settings = AgentSettings(agent=f"{prefix}-{time.perf_counter_ns()}", shared_dedup=False)
    return await assemble(db, settings)


def telegram_runner(db: Database) -> Side:
    """``actorscope run``'s Telegram wiring: runner, bus, host whose handler returns the reply."""

    @asynccontextmanager
    async def start(sends: Sends) -> AsyncIterator[Feed]:
        assembly = await _assembly(db, "tg")
        bus = MessageBus()
        config = ChannelConfig(platform="telegram", require_mention=False)
        runner = TelegramRunner(  # polling: every turn goes through the bus
            assembly.pipeline(
                config, publish=bus.publish_from_channel, run_here=bus.run_from_channel
            ),
            token=TOKEN,
            request=StubRequest(sends),
            get_updates_request=StubRequest(sends),
        )
        host = assembly.host(_turn, bus=bus)
        host.add_sender(runner.name, runner)
        await runner.initialize()
        await host.start()
        process = ptb_feed(runner.app)

        async def feed(payloads: Payloads) -> None:
            await process(payloads)
            await bus.join()

        try:
            yield feed
        finally:
            await host.stop()
            await runner.stop()

    return Side("telegram pipeline", start)


# -- Discord ---------------------------------------------------------------------------------


async def offline_client(client: discord.Client, stream: DiscordStream, sends: Sends) -> None:
    """What logging in sets up, without a socket (as the testing kit's ``DiscordSim``)."""
    await client._async_setup_hook()
    client.http.request = DiscordStub(stream.bot_id, sends).request  # type: ignore[method-assign]
    state = client._connection
    me: Any = {
        "id": str(stream.bot_id),
        "username": "actorscope",
        "discriminator": "0",
        "avatar": None,
        "bot": True,
    }
    state.user = discord.ClientUser(state=state, data=me)
    for guild in stream.guilds:
        state.parse_guild_create(copy.deepcopy(guild))


async def _dispatched() -> None:
    """Wait for the event handlers discord.py has scheduled (its ``discord.py: ...`` tasks)."""
    tasks = [t for t in asyncio.all_tasks() if t.get_name().startswith("discord.py: ")]
    await asyncio.gather(*tasks)


def discord_feed(client: discord.Client) -> Feed:
    """Each payload through discord.py's ``MESSAGE_CREATE`` parser, one gateway frame a step."""

    async def feed(payloads: Payloads) -> None:
        parse: Any = client._connection.parse_message_create  # takes the gateway's raw dict
        for payload in payloads:
            parse(payload)
            await asyncio.sleep(0)  # the gateway reads one frame at a time; let handlers run
        await _dispatched()

    return feed


class _Bare(discord.Client):
    async def on_message(self, message: discord.Message) -> None:
        if message.author.bot or message.webhook_id is not None:
            return
        await message.channel.send(REPLY, reference=message)


def bare_discord(stream: DiscordStream) -> Side:
    """A bare ``discord.Client`` whose ``on_message`` answers every person."""

    @asynccontextmanager
    async def start(sends: Sends) -> AsyncIterator[Feed]:
        client = _Bare(intents=bot_intents())
        await offline_client(client, stream, sends)
        try:
            yield discord_feed(client)
        finally:
            await client.close()

    return Side("bare discord.py", start)


def discord_runner(db: Database, stream: DiscordStream) -> Side:
    """``actorscope run``'s Discord wiring: runner, bus, host whose handler returns the reply."""

    @asynccontextmanager
    async def start(sends: Sends) -> AsyncIterator[Feed]:
        assembly = await _assembly(db, "dc")
        bus = MessageBus()
        config = ChannelConfig(platform="discord", require_mention=False)
        runner = DiscordRunner(
            assembly.pipeline(
                config, publish=bus.publish_from_channel, run_here=bus.run_from_channel
            ),
            token="offline",  # noqa: S106 - never logs in
            sync_commands=False,
        )
        host = assembly.host(_turn, bus=bus)
        host.add_sender(runner.name, runner)
        await offline_client(runner.client, stream, sends)
        await host.start()
        process = discord_feed(runner.client)

        async def feed(payloads: Payloads) -> None:
            await process(payloads)
            await bus.join()

        try:
            yield feed
        finally:
            await host.stop()
            await runner.client.close()

    return Side("discord pipeline", start)

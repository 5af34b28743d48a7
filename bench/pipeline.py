"""Whole-pipeline throughput: ``actorscope run``'s runners against the bare libraries.

Telegram: the realistic stream (``bench/_streams.py``) goes, update by update, through
``Update.de_json`` and ``Application.process_update`` of (a) the production
:class:`~actorscope.channels._telegram_runner.TelegramRunner` (ingress pipeline, bus,
:class:`~actorscope.host.Host` with the production run step, a handler that returns a reply,
sent through the runner) and (b) a bare PTB ``Application`` whose handler sends the same reply
(``send_message`` to the chat and topic, replying). Both talk to an in-process Bot API
emulator (:class:`~actorscope.sandbox.EmulatorRequest`, as the testing kit's
``TelegramSim`` does) populated with the stream's chats and topics.

Discord: the Discord stream's ``MESSAGE_CREATE`` payloads go through discord.py's gateway
parser (``ConnectionState.parse_message_create``) of (a) the production
:class:`~actorscope.channels._discord_runner.DiscordRunner` (its ``on_message``, the pipeline,
the host, the reply sent through the runner) and (b) a bare ``discord.Client`` whose
``on_message`` sends the same reply; sends go to an in-memory HTTP stub.

Same work on both sides: every update either side gets is one the other could answer the same
way. Writer commands (``/addwriter``, ``/writers``: about 3 % of the Telegram stream) are left
out of both sides' feed: ``actorscope run`` answers them in the pipeline from the grant store (a
permission check and an audit row, what the permission lines measure), which a bare bot has
no counterpart for. The bare PTB bot, like any group bot, does not answer a command addressed
to another bot (``/status@other_bot``), which the pipeline ignores as not for this bot.

Each run times the whole stream (until the last reply is sent) on both sides, alternating;
the line shows the median ratio ours/bare in updates per second and its min-max. Goal >= 0.85.
"""

from __future__ import annotations

import asyncio
import copy
import tempfile
import time
from pathlib import Path
from typing import Any

import discord
from discord.http import Route
from telegram import ReplyParameters, Update
from telegram.ext import Application, ApplicationBuilder, ContextTypes, TypeHandler

from actorscope.agents import AgentRegistry
from actorscope.channels import ChannelConfig
from actorscope.channels._discord_runner import DiscordRunner
from actorscope.channels._telegram_runner import TelegramRunner
from actorscope.channels._writer_commands import parse_writer_command
from actorscope.host import Host
from actorscope.messages import RunRequest
from actorscope.permissions import GrantStore
from actorscope.propagation import MessageBus, OriginSigner
from actorscope.sandbox import BotApiEmulator, ChatType, EmulatorRequest, RecordedCall
from actorscope.store import Database
from bench._streams import BOT_USERNAME, DiscordStream, discord_stream, telegram_stream
from bench._timing import goal_line

__all__ = ["main"]

#: Updates per run (a prefix of the realistic stream) and runs per side.
UPDATES = 3_000
RUNS = 5
REPLY = "noted"
GENERAL_TOPIC = 1

PTBApp = Application[Any, Any, Any, Any, Any, Any]


def _emulator(payloads: list[dict[str, Any]]) -> BotApiEmulator:
    """An emulator that knows every chat and forum topic of ``payloads``."""
    emu = BotApiEmulator(bot_username=BOT_USERNAME, bot_name="actorscope")
    topics: dict[int, set[int]] = {}
    for payload in payloads:
        message = payload["message"]
        chat = message["chat"]
        if chat["id"] not in topics:
            topics[chat["id"]] = set()
            emu.state.add_chat(
                ChatType.SUPERGROUP,
                title=chat["title"],
                chat_id=chat["id"],
                is_forum=bool(chat.get("is_forum")),
            )
        if message.get("is_topic_message"):
            topics[chat["id"]].add(message["message_thread_id"])
    for chat_id, threads in topics.items():
        for thread in sorted(threads):
            emu.state.add_topic(chat_id, f"topic {thread}", thread_id=thread)
    return emu


class _Replies:
    """Counts the emulator's answered and failed ``sendMessage`` calls."""

    def __init__(self) -> None:
        self.sent = self.failed = 0

    def __call__(self, record: RecordedCall) -> None:
        if record.method != "sendMessage":
            return
        if record.response is not None and record.response.ok:
            self.sent += 1
        else:
            self.failed += 1


async def _timed_feed(app: PTBApp, payloads: list[dict[str, Any]]) -> float:
    start = time.perf_counter()
    for payload in payloads:
        await app.process_update(Update.de_json(payload, app.bot))
    return time.perf_counter() - start


def _for_another_bot(text: str) -> bool:
    """True for a ``/command@name`` whose ``name`` is not this bot's."""
    command = text.split(maxsplit=1)[0] if text.startswith("/") else ""
    _, at, name = command.partition("@")
    return bool(at) and name.lower() != BOT_USERNAME.lower()


def _not_a_writer_command(payload: dict[str, Any]) -> bool:
    """False for an update whose text is a writer command (answered from the grant store)."""
    return parse_writer_command(payload["message"].get("text", "")) is None


async def _bare_ptb(emu: BotApiEmulator) -> PTBApp:
    """A bare PTB application replying to every message from a person."""
    app: PTBApp = (
        ApplicationBuilder()
        .token(emu.token)
        .request(EmulatorRequest(emu))
        .get_updates_request(EmulatorRequest(emu))
        .build()
    )

    async def reply(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message = update.message
        if message is None or message.sender_chat is not None or message.from_user is None:
            return
        if message.from_user.is_bot or _for_another_bot(message.text or ""):
            return
        thread = message.message_thread_id if message.is_topic_message else None
        await context.bot.send_message(
            chat_id=message.chat_id,
            text=REPLY,
            message_thread_id=None if thread == GENERAL_TOPIC else thread,
            reply_parameters=ReplyParameters(
                message_id=message.message_id, allow_sending_without_reply=True
            ),
        )

    app.add_handler(TypeHandler(Update, reply))
    await app.initialize()
    return app


async def _ours(emu: BotApiEmulator, db: Database) -> tuple[TelegramRunner, Host]:
    """``actorscope run``'s Telegram wiring: runner, bus, host with a replying handler."""
    agent = await AgentRegistry(db).create(f"bench-{len(emu.calls)}-{time.perf_counter_ns()}")
    bus = MessageBus()

    async def handler(request: RunRequest) -> str:
        return REPLY

    runner = TelegramRunner(
        ChannelConfig(platform="telegram", require_mention=False),
        token=emu.token,
        bus=bus,
        grants=GrantStore(db),
        agent_key=agent.key,
        agent_id=agent.id,
        tenant_id=agent.tenant_id,
        request=EmulatorRequest(emu),
        get_updates_request=EmulatorRequest(emu),
    )
    host = Host(
        handler,
        bus=bus,
        signer=OriginSigner(),
        agent_key=agent.key,
        agent_id=agent.id,
        tenant_id=agent.tenant_id,
    )
    host.add_sender(runner.name, runner)
    await runner.initialize()
    await host.start()
    return runner, host


async def _telegram_run(db: Database, payloads: list[dict[str, Any]]) -> tuple[float, float, str]:
    """One run of each side over ``payloads``: (our seconds, bare seconds, reply counts)."""
    bare_emu, our_emu = _emulator(payloads), _emulator(payloads)
    bare_replies, our_replies = _Replies(), _Replies()
    bare_emu.add_listener(bare_replies)
    our_emu.add_listener(our_replies)
    bare = await _bare_ptb(bare_emu)
    try:
        bare_time = await _timed_feed(bare, payloads)
    finally:
        await bare.shutdown()
    runner, host = await _ours(our_emu, db)
    try:
        start = time.perf_counter()
        for payload in payloads:
            await runner.app.process_update(Update.de_json(payload, runner.app.bot))
        await host.bus.join()
        our_time = time.perf_counter() - start
    finally:
        await host.stop()
        await runner.stop()
    counts = (
        f"replies {our_replies.sent}/{bare_replies.sent}, "
        f"failed {our_replies.failed}/{bare_replies.failed}"
    )
    return our_time, bare_time, counts


async def _telegram(runs: int) -> tuple[list[float], float, str]:
    payloads = [p for p in telegram_stream() if _not_a_writer_command(p)][:UPDATES]
    ratios, rates, counts = [], [], ""
    with tempfile.TemporaryDirectory() as tmp:
        async with Database.open(Path(tmp) / "bench.db") as db:
            for _ in range(runs):
                # Fresh payload dicts each run: PTB keeps no reference, but be safe.
                ours, bare, counts = await _telegram_run(db, [dict(p) for p in payloads])
                ratios.append(bare / ours)  # throughput ratio: ours/bare updates per second
                rates.append(len(payloads) / ours)
    return ratios, sorted(rates)[len(rates) // 2], counts


def _line(label: str, result: tuple[list[float], float, str]) -> None:
    ratios, rate, counts = result
    goal_line(f"{label} ({rate:,.0f} upd/s)", ratios, 0.85, at_least=True)
    print(f"  {counts} (ours/bare)")


class _DiscordHttp:
    """Stand-in for discord.py's ``HTTPClient.request``: answers message sends, counts them."""

    def __init__(self, bot_id: int) -> None:
        self.sent = 0
        self._author = {
            "id": str(bot_id),
            "username": "actorscope",
            "discriminator": "0",
            "avatar": None,
            "bot": True,
        }

    async def request(self, route: Route, **kwargs: Any) -> Any:
        if route.method != "POST" or route.path != "/channels/{channel_id}/messages":
            return {}
        self.sent += 1
        return {
            "id": str(90_000_000_000_000_000 + self.sent),
            "type": 0,
            "channel_id": str(route.channel_id),
            "author": self._author,
            "content": (kwargs.get("json") or {}).get("content", ""),
            "timestamp": "2024-01-01T00:00:00+00:00",
            "edited_timestamp": None,
            "tts": False,
            "mention_everyone": False,
            "mentions": [],
            "mention_roles": [],
            "attachments": [],
            "embeds": [],
            "pinned": False,
        }


async def _offline(client: discord.Client, stream: DiscordStream) -> _DiscordHttp:
    """What logging in sets up, without a socket (as the testing kit's ``DiscordSim``)."""
    await client._async_setup_hook()
    http = _DiscordHttp(stream.bot_id)
    client.http.request = http.request  # type: ignore[method-assign]
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
    return http


async def _dispatched() -> None:
    """Wait for the event handlers discord.py has scheduled (its ``discord.py: ...`` tasks)."""
    tasks = [t for t in asyncio.all_tasks() if t.get_name().startswith("discord.py: ")]
    await asyncio.gather(*tasks)


async def _feed_gateway(client: discord.Client, payloads: list[dict[str, Any]]) -> None:
    parse: Any = client._connection.parse_message_create  # takes the gateway's raw dict
    for payload in payloads:
        parse(copy.deepcopy(payload))
        await asyncio.sleep(0)  # the gateway reads one frame at a time; let handlers run
    await _dispatched()


async def _discord_run(
    db: Database, stream: DiscordStream, payloads: list[dict[str, Any]]
) -> tuple[float, float, str]:
    """One run of each side over ``payloads``: (our seconds, bare seconds, reply counts)."""

    class Bare(discord.Client):
        async def on_message(self, message: discord.Message) -> None:
            if message.author.bot or message.webhook_id is not None:
                return
            await message.channel.send(REPLY, reference=message)

    bare = Bare(intents=discord.Intents.default())
    bare_http = await _offline(bare, stream)
    try:
        start = time.perf_counter()
        await _feed_gateway(bare, payloads)
        bare_time = time.perf_counter() - start
    finally:
        await bare.close()
    agent = await AgentRegistry(db).create(f"bench-dc-{time.perf_counter_ns()}")
    bus = MessageBus()

    async def handler(request: RunRequest) -> str:
        return REPLY

    runner = DiscordRunner(
        ChannelConfig(platform="discord", require_mention=False),
        token="offline",  # noqa: S106 - never logs in
        bus=bus,
        grants=GrantStore(db),
        agent_key=agent.key,
        agent_id=agent.id,
        tenant_id=agent.tenant_id,
        sync_commands=False,
    )
    host = Host(
        handler,
        bus=bus,
        signer=OriginSigner(),
        agent_key=agent.key,
        agent_id=agent.id,
        tenant_id=agent.tenant_id,
    )
    host.add_sender(runner.name, runner)
    our_http = await _offline(runner.client, stream)
    await host.start()
    try:
        start = time.perf_counter()
        await _feed_gateway(runner.client, payloads)
        await bus.join()
        our_time = time.perf_counter() - start
    finally:
        await host.stop()
        await runner.client.close()
    return our_time, bare_time, f"replies {our_http.sent}/{bare_http.sent}"


async def _discord(runs: int) -> tuple[list[float], float, str]:
    stream = discord_stream()
    payloads = [p for event, p in stream.events if event == "MESSAGE_CREATE"][:UPDATES]
    ratios, rates, counts = [], [], ""
    with tempfile.TemporaryDirectory() as tmp:
        async with Database.open(Path(tmp) / "bench.db") as db:
            for _ in range(runs):
                ours, bare, counts = await _discord_run(db, stream, payloads)
                ratios.append(bare / ours)
                rates.append(len(payloads) / ours)
    return ratios, sorted(rates)[len(rates) // 2], counts


def main() -> None:
    """Print the Telegram and Discord throughput goal lines."""
    _line("telegram run pipeline / bare PTB, stream", asyncio.run(_telegram(RUNS)))
    _line("discord run pipeline / bare discord.py, stream", asyncio.run(_discord(RUNS)))

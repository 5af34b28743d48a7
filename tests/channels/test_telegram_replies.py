"""Rich replies on Telegram: a handler's format, buttons and media through the Bot API emulator."""

from __future__ import annotations

import logging
import struct
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import telegram
from tests._wait import wait_until
from tests._wiring import channel_pipeline

from actorscope.agents import AgentRegistry
from actorscope.bots import BotServices
from actorscope.channels._config import ChannelConfig
from actorscope.channels.telegram._runner import TelegramRunner
from actorscope.host import Host, MessageBus, Reply, RunStep
from actorscope.messages import Attachment, Button, MetaKey, RichReply, RunRequest
from actorscope.permissions import GrantStore, PermissionPolicy
from actorscope.propagation import OriginSigner
from actorscope.sandbox import BotApiEmulator
from actorscope.sandbox._telegram import MemberStatus as TelegramMemberStatus
from actorscope.store import Database
from actorscope.tools._workspace import Workspace

Turn = Callable[[RunRequest], Awaitable[Reply]]


_POSTING = frozenset({"sendmessage", "sendphoto", "senddocument"})


def posted(emu: BotApiEmulator) -> list[dict[str, Any]]:
    """Every message, photo and document the bot posted successfully, in order."""
    calls = [c for c in emu.calls if c.method.lower() in _POSTING]
    return [c.result for c in calls if c.response is not None and c.response.ok]


def png(path: Path) -> Path:
    """Write a valid 1x1 PNG at ``path``."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    path.write_bytes(
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )
    return path


@dataclass
class Bot:
    """A runner polling the emulator, a host running ``turn`` with the bot's services bound."""

    emu: BotApiEmulator
    runner: TelegramRunner
    turn: Turn | None = None
    seen: list[RunRequest] = field(default_factory=list)


@pytest.fixture
async def bot(tmp_path: Path) -> AsyncIterator[Bot]:
    """@ops: a group with bob; the handler is each test's ``turn``."""
    emu = BotApiEmulator(max_poll_timeout=1.0)
    bob = emu.state.add_user("Bob", username="bob")
    ops = emu.state.add_chat("group", title="Ops", username="ops")
    emu.state.set_member(ops, bob, TelegramMemberStatus.MEMBER)
    async with Database.open(tmp_path / "t.db") as db:
        agent = await AgentRegistry(db).create("main")
        grants = GrantStore(db)
        bus = MessageBus()
        runner = TelegramRunner(
            channel_pipeline(db, ChannelConfig(platform="telegram"), bus=bus, agent=agent),
            token=emu.token,
            request=emu.request(),
            get_updates_request=emu.request(),
            poll_timeout=1,
        )
        state = Bot(emu, runner)

        async def handler(request: RunRequest) -> Reply:
            state.seen.append(request)
            assert state.turn is not None
            return await state.turn(request)

        services = BotServices(
            db,
            agent,
            grants,
            PermissionPolicy(grants),
            Workspace(tmp_path / "ws"),
            {runner.name: runner},
        )
        step = RunStep(
            services.wrap(handler),
            signer=OriginSigner(),
            agent_id=agent.id,
            tenant_id=agent.tenant_id,
        )
        host = Host(step, bus=bus)
        host.add_sender("telegram", runner)
        await host.start()
        await runner.start()
        try:
            yield state
        finally:
            emu.close()
            await runner.stop()
            await host.stop()


async def test_markdown_buttons_and_photo_then_a_click_comes_back(bot: Bot, tmp_path: Path) -> None:
    """Markdown + two buttons + a photo is one captioned photo; a click returns its data."""
    photo = png(tmp_path / "chart.png")

    async def turn(request: RunRequest) -> Reply:
        if request.metadata.get(MetaKey.CALLBACK_DATA) == "yes":
            return f"you chose {request.content}"
        return RichReply(
            "*Ship it?*",
            format="markdown",
            buttons=[Button("Yes", data="yes"), Button("Docs", url="https://example.org/docs")],
            media=[Attachment.photo(photo)],
        )

    bot.turn = turn
    emu = bot.emu
    emu.user_message("bob", "/ship@actorscope_sandbox_bot", "@ops")
    await wait_until(lambda: bool(posted(emu)))
    (call,) = emu.calls_to("sendPhoto")
    assert call.params["parse_mode"] == "MarkdownV2"
    assert emu.calls_to("sendMessage") == []
    (sent,) = posted(emu)
    assert sent["caption"] == "Ship it?"  # as users see it: MarkdownV2 parsed
    assert sent["caption_entities"] == [{"type": "bold", "offset": 0, "length": 8}]
    assert sent["photo"][0]["width"] == 1
    assert sent["reply_markup"]["inline_keyboard"] == [
        [
            {"text": "Yes", "callback_data": "yes"},
            {"text": "Docs", "url": "https://example.org/docs"},
        ]
    ]
    emu.callback_click("bob", "@ops", sent["message_id"], "yes")
    await wait_until(lambda: bool(emu.sent_messages()))
    click = bot.seen[-1]
    assert (click.content, click.metadata[MetaKey.CALLBACK_DATA]) == ("yes", "yes")
    assert click.sender_id == str(emu.state.user("bob").id)
    assert emu.sent_messages()[-1]["text"] == "you chose yes"
    assert "callback_data" not in bot.seen[0].metadata  # typed text never carries it


async def test_html_text_with_document_goes_after_the_file(bot: Bot, tmp_path: Path) -> None:
    """A caption too long for a photo: the document first, then the HTML text with the buttons."""
    report = tmp_path / "report.txt"
    report.write_text("all good\n")
    text = "<b>report</b> " + "x" * 1100

    async def turn(request: RunRequest) -> Reply:
        return RichReply(
            text,
            format="html",
            buttons=[[Button("Again", data="again")]],
            media=[Attachment.document(report)],
        )

    bot.turn = turn
    emu = bot.emu
    emu.user_message("bob", "report", None)
    await wait_until(lambda: bool(emu.sent_messages()))
    document, message = posted(emu)
    assert document["document"]["file_name"] == "report.txt"
    assert "reply_markup" not in document
    assert message["text"] == "report " + "x" * 1100  # as users see it: HTML parsed
    assert message["entities"] == [{"type": "bold", "offset": 0, "length": 6}]
    assert message["reply_markup"]["inline_keyboard"] == [
        [{"text": "Again", "callback_data": "again"}]
    ]
    assert emu.calls_to("sendMessage")[0].params["parse_mode"] == "HTML"


async def test_handler_uses_the_native_bot(bot: Bot) -> None:
    """BotServices.current().native(telegram.Bot) is the PTB Bot: any Bot API call, here a
    chat action."""
    answers: list[bool] = []

    async def turn(request: RunRequest) -> Reply:
        native = BotServices.current().native(telegram.Bot)
        answers.append(await native.send_chat_action(int(request.chat_id), "typing"))
        return "done"

    bot.turn = turn
    emu = bot.emu
    emu.user_message("bob", "hello", None)
    await wait_until(lambda: bool(emu.sent_messages()))
    assert answers == [True]
    (action,) = emu.calls_to("sendChatAction")
    assert action.params["action"] == "typing"


async def test_callback_data_over_64_bytes_is_refused_with_one_error(
    bot: Bot, caplog: pytest.LogCaptureFixture
) -> None:
    """A button whose data Telegram cannot carry: nothing is sent, one error line names it."""

    async def turn(request: RunRequest) -> Reply:
        return RichReply("pick", buttons=[Button("Long", data="é" * 33)])

    bot.turn = turn
    caplog.set_level(logging.ERROR, logger="actorscope.host")
    bot.emu.user_message("bob", "hello", None)
    await wait_until(lambda: any(r.name == "actorscope.host" for r in caplog.records))
    (record,) = [r for r in caplog.records if r.name == "actorscope.host"]
    assert "button 'Long': Telegram allows 64 bytes of callback data, this has 66" in (
        record.getMessage()
    )
    assert record.exc_info is None
    assert posted(bot.emu) == []

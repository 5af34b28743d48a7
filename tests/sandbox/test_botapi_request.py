"""A real python-telegram-bot Application driven offline through BotApiEmulator.request()."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from telegram import InlineKeyboardButton, InlineKeyboardMarkup, InputFile, Update
from telegram.error import BadRequest, Forbidden, NetworkError, TimedOut
from telegram.ext import (
    Application,
    ApplicationBuilder,
    CallbackQueryHandler,
    CommandHandler,
    ContextTypes,
    MessageHandler,
    filters,
)
from telegram.request import RequestData
from telegram.request._requestparameter import RequestParameter
from tests._wait import wait_until
from tests._world import devs_forum

from actorscope.sandbox import BotApiEmulator
from actorscope.sandbox._telegram.files import Upload
from actorscope.sandbox._telegram.request import decode_request_data, split_bot_url

Seen = list[tuple[str, str]]


@pytest.fixture
def emu() -> BotApiEmulator:
    """The @devs forum with topic "ideas" (thread 2); alice is an admin, bob a member."""
    return devs_forum(BotApiEmulator(max_poll_timeout=2.0))


def build_app(emu: BotApiEmulator, seen: Seen) -> Application:  # type: ignore[type-arg]
    """A bot with /start, an echo handler and a callback handler, wired to the emulator."""

    async def start(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.effective_message is not None
        assert update.effective_user is not None
        seen.append(("start", update.effective_message.text or ""))
        keyboard = InlineKeyboardMarkup([[InlineKeyboardButton("Go", callback_data="go")]])
        await update.effective_message.reply_text(
            f"hello {update.effective_user.first_name}", reply_markup=keyboard
        )

    async def echo(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.effective_message is not None
        seen.append(("echo", update.effective_message.text or ""))
        await update.effective_message.reply_text(f"echo: {update.effective_message.text}")

    async def clicked(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.callback_query is not None
        seen.append(("click", update.callback_query.data or ""))
        await update.callback_query.answer("went")

    app = (
        ApplicationBuilder()
        .token(emu.token)
        .request(emu.request())
        .get_updates_request(emu.request())
        .build()
    )
    app.add_handler(CommandHandler("start", start))
    app.add_handler(MessageHandler(filters.TEXT & ~filters.COMMAND, echo))
    app.add_handler(CallbackQueryHandler(clicked))
    return app


@pytest.fixture
async def polling(emu: BotApiEmulator) -> AsyncIterator[Seen]:
    """The bot, initialized and long polling the emulator; stopped cleanly afterwards."""
    seen: Seen = []
    app = build_app(emu, seen)
    async with app:
        await app.start()
        assert app.updater is not None
        await app.updater.start_polling(poll_interval=0.0, timeout=1)
        try:
            yield seen
        finally:
            await asyncio.wait_for(app.updater.stop(), 5.0)
            await asyncio.wait_for(app.stop(), 5.0)


async def test_topic_command_reply_lands_in_same_chat_and_topic(
    emu: BotApiEmulator, polling: Seen
) -> None:
    """/start in a forum topic reaches the handler; reply_text goes to that chat and topic."""
    emu.user_message("alice", "/start", "@devs", topic="ideas")
    await wait_until(lambda: bool(emu.sent_messages()))
    assert polling == [("start", "/start")]
    (call,) = emu.calls_to("sendMessage")
    assert call.params["chat_id"] == emu.state.chat("@devs").id
    assert call.params["message_thread_id"] == 2
    assert call.params["text"] == "hello Alice"
    assert call.params["reply_markup"] == {
        "inline_keyboard": [[{"text": "Go", "callback_data": "go"}]]
    }
    sent = emu.sent_messages()[0]
    assert (sent["message_thread_id"], sent["is_topic_message"]) == (2, True)


async def test_message_handler_and_callback_query(emu: BotApiEmulator, polling: Seen) -> None:
    """A plain message is echoed; a click on the bot's button is answered once."""
    emu.user_message("bob", "hi there", "@devs")
    await wait_until(lambda: len(emu.sent_messages()) == 1)
    emu.user_message("bob", "/start")
    await wait_until(lambda: len(emu.sent_messages()) == 2)
    menu = emu.sent_messages()[1]
    assert menu["chat"]["type"] == "private"
    update = emu.callback_click("bob", menu["chat"]["id"], menu["message_id"])
    assert update is not None
    await wait_until(lambda: bool(emu.calls_to("answerCallbackQuery")))
    assert polling == [("echo", "hi there"), ("start", "/start"), ("click", "go")]
    assert emu.sent_messages()[0]["text"] == "echo: hi there"
    assert "message_thread_id" not in emu.calls_to("sendMessage")[0].params
    assert emu.callback_answers[update["callback_query"]["id"]] == {
        "text": "went",
        "show_alert": False,
        "url": None,
    }


async def test_process_update_without_polling(emu: BotApiEmulator) -> None:
    """An emulator update fed to process_update is handled and its reply recorded."""
    seen: Seen = []
    app = build_app(emu, seen)
    async with app:
        update = emu.user_message("bob", "direct", "@devs", topic=2)
        assert update is not None
        await app.process_update(Update.de_json(update, app.bot))
    assert seen == [("echo", "direct")]
    assert emu.calls_to("sendMessage")[0].params["message_thread_id"] == 2
    assert [c.method for c in emu.calls] == ["getMe", "sendMessage"]


async def test_bot_api_errors_become_ptb_exceptions(emu: BotApiEmulator) -> None:
    """400 and 403 answers raise PTB's BadRequest and Forbidden with the description."""
    app = build_app(emu, [])
    async with app:
        with pytest.raises(BadRequest, match="Chat not found"):
            await app.bot.send_message(chat_id=-1, text="x")
        with pytest.raises(Forbidden, match="initiate conversation"):
            await app.bot.send_message(chat_id=emu.state.user("alice").id, text="x")
        member = await app.bot.get_chat_member(
            emu.state.chat("@devs").id, emu.state.user("alice").id
        )
        assert member.status == "administrator"
        admins = await app.bot.get_chat_administrators("@devs")
        assert [a.user.username for a in admins] == ["alice"]
        chat = await app.bot.get_chat("@devs")
        assert chat.is_forum is True


async def test_slow_answer_times_out_and_uninitialized_request_fails(
    emu: BotApiEmulator,
) -> None:
    """A long poll past the read timeout raises TimedOut; an unopened request refuses."""
    request = emu.request(read_timeout=0.1)
    url = f"https://api.telegram.org/bot{emu.token}/getUpdates"
    data = RequestData([RequestParameter.from_input("timeout", 5)])
    with pytest.raises(NetworkError, match="not initialized"):
        await request.post(url, data)
    async with request:
        with pytest.raises(TimedOut):
            await asyncio.wait_for(request.post(url, data), 3.0)


def test_request_data_is_decoded_like_httpx_sends_it() -> None:
    """Strings stay raw, objects are JSON text, files become Upload parts with their bytes."""
    data = RequestData(
        [
            RequestParameter.from_input("chat_id", 5),
            RequestParameter.from_input("text", "hi"),
            RequestParameter.from_input("reply_parameters", {"message_id": 3}),
            RequestParameter.from_input("document", InputFile(b"abc", filename="a.txt")),
        ]
    )
    decoded = decode_request_data(data)
    assert decoded["chat_id"] == "5"
    assert decoded["text"] == "hi"
    assert decoded["reply_parameters"] == '{"message_id": 3}'
    assert decoded["document"] == Upload("a.txt", "text/plain", b"abc")
    assert decode_request_data(None) == {}


def test_split_bot_url() -> None:
    """Token and method come from /bot<token>/<method>; other paths give empty strings."""
    assert split_bot_url("http://127.0.0.1:1/bot12:ab/sendMessage?x=1") == ("12:ab", "sendMessage")
    assert split_bot_url("https://api.telegram.org/file/bot1:a/") == ("", "")

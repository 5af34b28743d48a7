"""The emulator's group and LLM-bot methods, called through PTB's own ``Bot`` (its shapes).

Each method is exercised with python-telegram-bot's ``Bot`` over the emulator's ``request()``, so
the answers are what PTB parses; the error descriptions are Telegram's (PTB drops the
``Bad Request:`` prefix and capitalises the rest). Uploads and the file download path are
also checked over loopback HTTP with PTB's default ``HTTPXRequest``.
"""

from __future__ import annotations

import asyncio
import struct
from collections.abc import AsyncIterator

import httpx
import pytest
from telegram import (
    Bot,
    BotCommand,
    BotCommandScopeChat,
    BotCommandScopeChatMember,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    InlineQueryResultArticle,
    InputFile,
    InputTextMessageContent,
    MessageOriginUser,
    ReactionTypeEmoji,
    Update,
)
from telegram.constants import ChatAction
from telegram.error import BadRequest
from telegram.ext import ApplicationBuilder, ContextTypes, MessageHandler, filters
from tests._world import devs_forum

from actorscope.sandbox import BotApiCall, BotApiEmulator, BotApiServer
from actorscope.sandbox._telegram import MemberStatus as TelegramMemberStatus

# A 3x2 PNG header is all image_size reads.
PNG = b"\x89PNG\r\n\x1a\n" + struct.pack(">I4sII", 13, b"IHDR", 3, 2) + b"\x08\x02\x00\x00\x00"


@pytest.fixture
def emu() -> BotApiEmulator:
    """The @devs forum (topic "ideas" = 2): alice admin, bob member, the bot a plain member."""
    return devs_forum(BotApiEmulator(max_poll_timeout=2.0))


@pytest.fixture
async def bot(emu: BotApiEmulator) -> AsyncIterator[Bot]:
    """A PTB ``Bot`` answered by the emulator in process."""
    async with Bot(emu.token, request=emu.request()) as ptb_bot:
        yield ptb_bot


def devs_id(emu: BotApiEmulator) -> int:
    """The id of @devs."""
    return emu.state.chat("@devs").id


def make_admin(emu: BotApiEmulator) -> None:
    """Promote the bot to administrator of @devs."""
    emu.state.set_member("@devs", emu.bot, TelegramMemberStatus.ADMINISTRATOR)


async def test_plain_ptb_bot_sends_typing_then_answers_over_http(emu: BotApiEmulator) -> None:
    """An unchanged PTB Application calling send_chat_action(TYPING) before replying works."""

    async def answer(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message = update.effective_message
        assert message is not None
        await context.bot.send_chat_action(
            message.chat_id, ChatAction.TYPING, message_thread_id=message.message_thread_id
        )
        await message.reply_text("thinking done")

    answered = asyncio.Event()

    def on_call(call: BotApiCall) -> None:
        if call.method == "sendMessage":
            answered.set()

    emu.add_listener(on_call)
    async with BotApiServer(emu) as server:
        app = ApplicationBuilder().token(emu.token).base_url(server.base_url).build()
        app.add_handler(MessageHandler(filters.TEXT, answer))
        async with app:
            await app.start()
            assert app.updater is not None
            await app.updater.start_polling(poll_interval=0.0, timeout=1)
            try:
                emu.user_message("alice", "hello", "@devs", topic="ideas")
                await asyncio.wait_for(answered.wait(), 5.0)
            finally:
                await asyncio.wait_for(app.updater.stop(), 10.0)
                await asyncio.wait_for(app.stop(), 10.0)
    action, sent = emu.bot_calls()[-2:]
    assert action.method == "sendChatAction"
    assert action.params == {"chat_id": devs_id(emu), "action": "typing", "message_thread_id": 2}
    assert action.result is True
    assert sent.method == "sendMessage"
    assert sent.result["text"] == "thinking done"


async def test_send_chat_action_errors(emu: BotApiEmulator, bot: Bot) -> None:
    """An unknown action, chat or topic is refused with Telegram's description."""
    with pytest.raises(BadRequest, match=r"^Wrong parameter action in request$"):
        await bot.send_chat_action(devs_id(emu), "dancing")
    with pytest.raises(BadRequest, match=r"^Chat not found$"):
        await bot.send_chat_action(-5, ChatAction.TYPING)
    with pytest.raises(BadRequest, match=r"^Message thread not found$"):
        await bot.send_chat_action(devs_id(emu), ChatAction.TYPING, message_thread_id=99)
    assert await bot.send_chat_action(devs_id(emu), ChatAction.UPLOAD_DOCUMENT)


async def test_delete_message_rules_and_errors(emu: BotApiEmulator, bot: Bot) -> None:
    """The bot deletes its own messages; others' only in private chats or as an admin."""
    own = await bot.send_message(devs_id(emu), "oops")
    assert await bot.delete_message(devs_id(emu), own.message_id)
    assert emu.state.message("@devs", own.message_id) is None
    with pytest.raises(BadRequest, match=r"^Message to delete not found$"):
        await bot.delete_message(devs_id(emu), own.message_id)
    update = emu.user_message("bob", "spam", "@devs")
    assert update is not None
    spam = update["message"]["message_id"]
    with pytest.raises(BadRequest, match=r"^Message can't be deleted$"):
        await bot.delete_message(devs_id(emu), spam)
    make_admin(emu)
    assert await bot.delete_message(devs_id(emu), spam)
    private = emu.user_message("bob", "secret")
    assert private is not None
    bob_id = emu.state.user("bob").id
    assert await bot.delete_message(bob_id, private["message"]["message_id"])
    with pytest.raises(BadRequest, match=r"^Chat not found$"):
        await bot.delete_message(-5, 1)


async def test_edit_message_reply_markup(emu: BotApiEmulator, bot: Bot) -> None:
    """A bot message's keyboard is replaced, then removed; no-ops and others' messages fail."""
    first = InlineKeyboardMarkup([[InlineKeyboardButton("A", callback_data="a")]])
    second = InlineKeyboardMarkup([[InlineKeyboardButton("B", callback_data="b")]])
    sent = await bot.send_message(devs_id(emu), "pick", reply_markup=first)
    edited = await bot.edit_message_reply_markup(devs_id(emu), sent.message_id, reply_markup=second)
    assert not isinstance(edited, bool)
    assert edited.reply_markup == second
    assert edited.edit_date is not None
    with pytest.raises(BadRequest, match=r"^Message is not modified"):
        await bot.edit_message_reply_markup(devs_id(emu), sent.message_id, reply_markup=second)
    removed = await bot.edit_message_reply_markup(devs_id(emu), sent.message_id)
    assert not isinstance(removed, bool)
    assert removed.reply_markup is None
    update = emu.user_message("bob", "mine", "@devs")
    assert update is not None
    with pytest.raises(BadRequest, match=r"^Message can't be edited$"):
        await bot.edit_message_reply_markup(devs_id(emu), update["message"]["message_id"])
    with pytest.raises(BadRequest, match=r"^Message to edit not found$"):
        await bot.edit_message_reply_markup(devs_id(emu), 999)


async def test_send_photo_and_document_upload_file_id_and_get_file(
    emu: BotApiEmulator, bot: Bot
) -> None:
    """Uploads get file ids that can be sent again; getFile's path downloads the same bytes."""
    photo = await bot.send_photo(devs_id(emu), PNG, caption="a #chart", message_thread_id=2)
    (size,) = photo.photo
    assert (size.width, size.height, size.file_size) == (3, 2, len(PNG))
    assert photo.caption == "a #chart"
    assert [e.type for e in photo.caption_entities] == ["hashtag"]
    assert photo.message_thread_id == 2
    again = await bot.send_photo(devs_id(emu), size.file_id)
    assert again.photo[0].file_unique_id == size.file_unique_id
    document = await bot.send_document(
        devs_id(emu), InputFile(b"col\n1\n", filename="data.csv"), caption="the data"
    )
    assert document.document is not None
    assert document.document.file_name == "data.csv"
    assert document.document.mime_type == "text/csv"
    file = await bot.get_file(document.document.file_id)
    assert file.file_path is not None
    assert file.file_path.startswith("https://api.telegram.org/file/bot")
    assert file.file_path.endswith("/documents/file_2.csv")
    assert bytes(await file.download_as_bytearray()) == b"col\n1\n"
    with pytest.raises(BadRequest, match=r"^Wrong file identifier/http url specified$"):
        await bot.send_document(devs_id(emu), "nosuchfileid")
    with pytest.raises(BadRequest, match=r"^Failed to get http url content$"):
        await bot.send_photo(devs_id(emu), "https://example.invalid/cat.png")
    with pytest.raises(BadRequest, match=r"^Wrong file identifier/http url specified$"):
        await bot.get_file("nosuchfileid")
    with pytest.raises(BadRequest, match=r"^Message caption is too long$"):
        await bot.send_photo(devs_id(emu), size.file_id, caption="x" * 1025)


async def test_upload_and_download_over_http(emu: BotApiEmulator) -> None:
    """Multipart uploads from PTB's HTTPXRequest, and /file/bot<token>/<path> downloads."""
    async with BotApiServer(emu) as server:
        file_url = server.base_url.replace("/bot", "/file/bot")
        async with Bot(emu.token, base_url=server.base_url, base_file_url=file_url) as ptb_bot:
            sent = await ptb_bot.send_photo(devs_id(emu), PNG)
            file = await ptb_bot.get_file(sent.photo[0].file_id)
            assert bytes(await file.download_as_bytearray()) == PNG
        async with httpx.AsyncClient(timeout=5.0) as http:
            missing = await http.get(f"{file_url}{emu.token}/photos/nope.png")
            wrong_token = await http.get(f"{file_url}1:x/{file.file_path}")
    assert (missing.status_code, missing.json()["description"]) == (404, "Not Found")
    assert wrong_token.status_code == 401


async def test_forward_and_copy_message(emu: BotApiEmulator, bot: Bot) -> None:
    """Forwards carry a forward_origin; copies do not and answer a MessageId."""
    update = emu.user_message("alice", "release at 5", "@devs")
    assert update is not None
    source = update["message"]["message_id"]
    alice = emu.state.user("alice")
    emu.state.private_chat(alice)
    forwarded = await bot.forward_message(alice.id, devs_id(emu), source)
    assert forwarded.text == "release at 5"
    assert isinstance(forwarded.forward_origin, MessageOriginUser)
    assert forwarded.forward_origin.sender_user.id == alice.id
    copied = await bot.copy_message(alice.id, devs_id(emu), source)
    stored = emu.state.message(alice.id, copied.message_id)
    assert stored is not None
    assert stored["text"] == "release at 5"
    assert "forward_origin" not in stored
    with pytest.raises(BadRequest, match=r"^Message to forward not found$"):
        await bot.forward_message(alice.id, devs_id(emu), 999)
    with pytest.raises(BadRequest, match=r"^Message to copy not found$"):
        await bot.copy_message(alice.id, devs_id(emu), 999)
    with pytest.raises(BadRequest, match=r"^Chat not found$"):
        await bot.forward_message(alice.id, -5, source)
    joined = emu.member_joins(emu.state.add_user("Dave", username="dave"), "@devs")
    assert joined is not None
    with pytest.raises(BadRequest, match=r"^Message can't be copied$"):
        await bot.copy_message(alice.id, devs_id(emu), joined["message"]["message_id"])


async def test_pin_and_unpin_need_admin_rights(emu: BotApiEmulator, bot: Bot) -> None:
    """Pinning needs an admin bot in groups; getChat shows the pin; unpinning twice fails."""
    sent = await bot.send_message(devs_id(emu), "rules")
    with pytest.raises(BadRequest, match=r"^Not enough rights to manage pinned messages"):
        await bot.pin_chat_message(devs_id(emu), sent.message_id)
    make_admin(emu)
    assert await bot.pin_chat_message(devs_id(emu), sent.message_id)
    chat = await bot.get_chat(devs_id(emu))
    assert chat.pinned_message is not None
    assert chat.pinned_message.text == "rules"
    notice = emu.state.messages("@devs")[-1]
    assert notice["pinned_message"]["message_id"] == sent.message_id
    assert await bot.unpin_chat_message(devs_id(emu))
    assert (await bot.get_chat(devs_id(emu))).pinned_message is None
    with pytest.raises(BadRequest, match=r"^Message to unpin not found$"):
        await bot.unpin_chat_message(devs_id(emu), sent.message_id)
    with pytest.raises(BadRequest, match=r"^Message to pin not found$"):
        await bot.pin_chat_message(devs_id(emu), 999)


async def test_set_message_reaction(emu: BotApiEmulator, bot: Bot) -> None:
    """One allowed emoji per message; unknown emoji and several reactions are refused."""
    update = emu.user_message("bob", "shipped", "@devs")
    assert update is not None
    mid = update["message"]["message_id"]
    assert await bot.set_message_reaction(devs_id(emu), mid, ReactionTypeEmoji("👍"))
    assert emu.reactions[(devs_id(emu), mid)] == [{"type": "emoji", "emoji": "👍"}]
    assert await bot.set_message_reaction(devs_id(emu), mid, [])
    assert emu.reactions[(devs_id(emu), mid)] == []
    with pytest.raises(BadRequest, match=r"^Reaction_invalid$"):
        await bot.set_message_reaction(devs_id(emu), mid, "🦖")
    with pytest.raises(BadRequest, match=r"^Reactions_too_many$"):
        await bot.set_message_reaction(devs_id(emu), mid, ["👍", "🔥"])
    with pytest.raises(BadRequest, match=r"^Message to react not found$"):
        await bot.set_message_reaction(devs_id(emu), 999, "👍")


async def test_create_forum_topic(emu: BotApiEmulator, bot: Bot) -> None:
    """An admin bot opens a topic it can then post in; otherwise Telegram's refusals."""
    with pytest.raises(BadRequest, match=r"^Not enough rights to create a topic$"):
        await bot.create_forum_topic(devs_id(emu), "releases")
    make_admin(emu)
    topic = await bot.create_forum_topic(devs_id(emu), "releases", icon_color=16766590)
    assert (topic.name, topic.icon_color) == ("releases", 16766590)
    posted = await bot.send_message(devs_id(emu), "v1", message_thread_id=topic.message_thread_id)
    assert posted.is_topic_message
    assert posted.message_thread_id == topic.message_thread_id
    with pytest.raises(BadRequest, match=r"^Invalid icon_color specified$"):
        await bot.create_forum_topic(devs_id(emu), "x", icon_color=1)
    ops = emu.state.add_chat(
        "supergroup", title="Ops", bot_status=TelegramMemberStatus.ADMINISTRATOR
    )
    with pytest.raises(BadRequest, match=r"^The chat is not a forum$"):
        await bot.create_forum_topic(ops.id, "x")


async def test_send_poll_regular_and_quiz(emu: BotApiEmulator, bot: Bot) -> None:
    """Regular polls and quizzes come back as PTB Polls; bad options are refused."""
    message = await bot.send_poll(devs_id(emu), "Lunch?", ["pizza", "sushi"], is_anonymous=False)
    assert message.poll is not None
    assert [o.text for o in message.poll.options] == ["pizza", "sushi"]
    assert (message.poll.type, message.poll.is_anonymous) == ("regular", False)
    quiz = await bot.send_poll(
        devs_id(emu), "2+2?", ["3", "4"], type="quiz", correct_option_ids=[1], explanation="math"
    )
    assert quiz.poll is not None
    assert (quiz.poll.correct_option_ids, quiz.poll.explanation) == ((1,), "math")
    older = await emu.call(
        "sendPoll",
        {"chat_id": devs_id(emu), "question": "1+1?", "options": ["2", "3"], "type": "quiz"}
        | {"correct_option_id": 0},
    )
    assert older.body["result"]["poll"]["correct_option_ids"] == [0]
    with pytest.raises(BadRequest, match=r"^Poll must have at least 2 option$"):
        await bot.send_poll(devs_id(emu), "One?", ["only"])
    with pytest.raises(BadRequest, match=r"^Wrong correct option id specified$"):
        await bot.send_poll(devs_id(emu), "2+2?", ["3", "4"], type="quiz")
    with pytest.raises(BadRequest, match=r"^Poll question must be non-empty$"):
        await bot.send_poll(devs_id(emu), " ", ["a", "b"])


async def test_answer_inline_query_once(emu: BotApiEmulator, bot: Bot) -> None:
    """A user's inline query is answered once with unique result ids."""
    update = emu.inline_query("alice", "cats")
    assert update is not None
    query_id = update["inline_query"]["id"]
    article = InlineQueryResultArticle("1", "Cats", InputTextMessageContent("meow"))
    with pytest.raises(BadRequest, match=r"^Result_id_duplicate$"):
        await bot.answer_inline_query(query_id, [article, article])
    assert await bot.answer_inline_query(query_id, [article], cache_time=0)
    answer = emu.inline_answers[query_id]
    assert answer is not None
    assert answer["results"][0]["id"] == "1"
    assert answer["cache_time"] == 0
    with pytest.raises(BadRequest, match=r"^Query is too old"):
        await bot.answer_inline_query(query_id, [article])
    assert (await bot.get_me()).supports_inline_queries is True


async def test_set_my_commands_per_scope(emu: BotApiEmulator, bot: Bot) -> None:
    """Command lists are kept per scope (a chat by id or @name is one scope); bad scopes fail."""
    bob = emu.state.user("bob")
    await bot.set_my_commands([BotCommand("help", "Help")])
    await bot.set_my_commands([BotCommand("note", "Add a note")], BotCommandScopeChat("@devs"))
    member = BotCommandScopeChatMember(devs_id(emu), bob.id)
    await bot.set_my_commands([BotCommand("mine", "Bob only")], member)
    in_devs = await bot.get_my_commands(BotCommandScopeChat(devs_id(emu)))
    assert [c.command for c in in_devs] == ["note"]
    assert [c.command for c in await bot.get_my_commands(member)] == ["mine"]
    assert [c.command for c in await bot.get_my_commands()] == ["help"]
    with pytest.raises(BadRequest, match=r"^Chat not found$"):
        await bot.set_my_commands([BotCommand("x", "X")], BotCommandScopeChat(-5))
    carol = emu.state.add_user("Carol", username="carol")
    with pytest.raises(BadRequest, match=r"^User not found$"):
        await bot.set_my_commands(
            [BotCommand("x", "X")], BotCommandScopeChatMember(devs_id(emu), carol.id)
        )

"""The Bot API emulator's newer user actions and methods: polls and votes, payments, members
and the bot's own membership, media from users, web app data, deep links, Telegram Passport.

Every update an action produces is parsed by python-telegram-bot (``Update.de_json``) with no
field left over in ``api_kwargs``: that is the test of its shape.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
from telegram import (
    Bot,
    IdDocumentData,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    KeyboardButton,
    KeyboardButtonPollType,
    LabeledPrice,
    Message,
    PersonalDetails,
    ReplyKeyboardMarkup,
    ReplyKeyboardRemove,
    ShippingOption,
    TelegramObject,
    Update,
    WebAppInfo,
)

from actorscope.sandbox import BotApiEmulator, BotApiError
from actorscope.sandbox._telegram import ChatType as TelegramChatType
from actorscope.sandbox._telegram import MemberStatus as TelegramMemberStatus
from actorscope.sandbox._telegram import make_token

JSON = dict[str, Any]
# Fields real updates still carry beside their successors, which PTB keeps in api_kwargs.
LEGACY_FIELDS = frozenset({"new_chat_participant", "new_chat_member", "left_chat_participant"})
# Fields of a Bot API newer than PTB 22.8's, which PTB keeps in api_kwargs and aiogram 3.31
# requires (an administrator's answer without them does not parse there).
NEWER_FIELDS = frozenset({"can_send_welcome_messages"})


def png(width: int = 3, height: int = 2) -> bytes:
    """A small valid PNG image."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    rows = b"".join(b"\x00" + b"\x00\x80\xff" * width for _ in range(height))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def fields_left_over(value: object, seen: set[int] | None = None) -> list[str]:
    """Every ``api_kwargs`` key PTB kept (fields it does not know) anywhere in ``value``."""
    seen = set() if seen is None else seen
    if id(value) in seen:
        return []
    seen.add(id(value))
    if isinstance(value, tuple | list):
        return [f for item in value for f in fields_left_over(item, seen)]
    if not isinstance(value, TelegramObject):
        return []
    known = LEGACY_FIELDS | NEWER_FIELDS
    found = [f"{type(value).__name__}.{k}" for k in value.api_kwargs if k not in known]
    for cls in type(value).__mro__:
        for slot in getattr(cls, "__slots__", ()):
            if not slot.startswith("_"):
                found += fields_left_over(getattr(value, slot, None), seen)
    return found


def parsed(update: JSON | None, bot: Bot | None = None) -> Update:
    """``update`` as PTB reads it; fails when PTB finds a field it does not know."""
    assert update is not None
    result = Update.de_json(update, bot)
    assert fields_left_over(result) == []
    return result


def kind_of(update: JSON) -> str:
    """The update's type: the key beside ``update_id``."""
    return next(key for key in update if key != "update_id")


def pending_kinds(emu: BotApiEmulator) -> list[str]:
    """The types of the pending updates, oldest first."""
    return [kind_of(update) for update in emu.queue.pending()]


@pytest.fixture
def emu() -> BotApiEmulator:
    """alice (creator of @club, a supergroup the bot is not in), bob, carol (each has started
    the bot); the bot admins @friends, where all three are members."""
    emu = BotApiEmulator(make_token(424242, "s" * 35), bot_username="test_bot")
    emu.queue.set_allowed(
        [
            "message",
            "callback_query",
            "poll",
            "poll_answer",
            "my_chat_member",
            "chat_member",
            "shipping_query",
            "pre_checkout_query",
        ]
    )
    for name in ("alice", "bob", "carol"):
        emu.state.private_chat(emu.state.add_user(name.title(), username=name))
    club = emu.state.add_chat(
        TelegramChatType.SUPERGROUP,
        title="Club",
        username="club",
        bot_status=TelegramMemberStatus.LEFT,
    )
    emu.state.set_member(club, "alice", TelegramMemberStatus.CREATOR)
    friends = emu.state.add_chat(
        TelegramChatType.SUPERGROUP,
        title="Friends",
        username="friends",
        bot_status=TelegramMemberStatus.ADMINISTRATOR,
    )
    for name in ("alice", "bob", "carol"):
        emu.state.set_member(friends, name, TelegramMemberStatus.MEMBER)
    return emu


@pytest.fixture
async def bot(emu: BotApiEmulator) -> AsyncIterator[Bot]:
    """A PTB ``Bot`` answered by the emulator in process."""
    async with Bot(emu.token, request=emu.request()) as ptb_bot:
        yield ptb_bot


def friends(emu: BotApiEmulator) -> int:
    """The id of @friends."""
    return emu.state.chat("@friends").id


# -- parse_mode ------------------------------------------------------------------------------


async def test_html_is_parsed_into_text_and_entities(emu: BotApiEmulator, bot: Bot) -> None:
    """HTML markup becomes what users see: plain text, entities, a known user's mention."""
    alice = emu.state.user("alice")
    text = (
        f'<b>Hi</b> <a href="tg://user?id={alice.id}">Alice</a> &amp; '
        '<a href="https://example.org">docs</a> <pre><code class="language-python">x = 1'
        "</code></pre> /help"
    )
    sent = await bot.send_message(friends(emu), text, parse_mode="HTML")
    assert sent.text == "Hi Alice & docs x = 1 /help"
    assert [(e.type, e.offset, e.length) for e in sent.entities] == [
        ("bold", 0, 2),
        ("text_mention", 3, 5),
        ("text_link", 11, 4),
        ("pre", 16, 5),
        ("bot_command", 22, 5),
    ]
    assert sent.entities[1].user is not None
    assert sent.entities[1].user.username == "alice"
    assert sent.entities[2].url == "https://example.org/"
    assert sent.entities[3].language == "python"


async def test_a_mention_of_an_unknown_user_is_plain_text(emu: BotApiEmulator, bot: Bot) -> None:
    """``tg://user?id=`` of a user the emulator does not know leaves no entity, as on Telegram."""
    sent = await bot.send_message(
        friends(emu), '<a href="tg://user?id=99">Ghost</a>', parse_mode="HTML"
    )
    assert (sent.text, sent.entities) == ("Ghost", ())


@pytest.mark.parametrize(
    ("text", "mode", "error"),
    [
        ("<blink>hi</blink>", "HTML", 'Unsupported start tag "blink" at byte offset 0'),
        ("<b>hi", "HTML", 'Can\'t find end tag corresponding to start tag "b"'),
        ("hi</i>", "HTML", "Unexpected end tag at byte offset 2"),
        ("a & b", "HTML", "unsupported HTML entity at byte offset 2"),
        ("Done.", "MarkdownV2", "Character '.' is reserved"),
        ("*bold", "MarkdownV2", "Can't find end of bold entity"),
        ("*bold", "Markdown", "Can't find end of the entity starting at byte offset 0"),
    ],
)
async def test_bad_markup_is_refused_as_telegram_refuses_it(
    emu: BotApiEmulator, text: str, mode: str, error: str
) -> None:
    """Markup Telegram cannot parse is a 400 ``can't parse entities`` naming the problem."""
    response = await emu.call(
        "sendMessage", {"chat_id": friends(emu), "text": text, "parse_mode": mode}
    )
    assert response.status == 400
    assert response.body["description"].startswith("Bad Request: can't parse entities: ")
    assert error in response.body["description"]


async def test_markdown_v2_and_legacy_markdown(emu: BotApiEmulator, bot: Bot) -> None:
    """MarkdownV2 nests and escapes; legacy Markdown has bold, italic, code and links."""
    v2 = await bot.send_message(
        friends(emu), r"*bold _both_* \- `a\`b` [x](https://a.example/\))", parse_mode="MarkdownV2"
    )
    assert v2.text == "bold both - a`b x"
    assert [(e.type, e.offset, e.length) for e in v2.entities] == [
        ("bold", 0, 9),
        ("italic", 5, 4),
        ("code", 12, 3),
        ("text_link", 16, 1),
    ]
    assert v2.entities[3].url == "https://a.example/)"
    legacy = await bot.send_message(
        friends(emu), "*b* _i_ `c` [l](https://l.example)", parse_mode="Markdown"
    )
    assert legacy.text == "b i c l"
    assert [e.type for e in legacy.entities] == ["bold", "italic", "code", "text_link"]


async def test_the_length_limit_counts_the_parsed_text(emu: BotApiEmulator, bot: Bot) -> None:
    """4096 characters of text in markup that makes it longer is still one message."""
    sent = await bot.send_message(friends(emu), "<b>" + "x" * 4096 + "</b>", parse_mode="HTML")
    assert len(sent.text or "") == 4096


async def test_an_edit_with_parse_mode_changes_the_entities(emu: BotApiEmulator, bot: Bot) -> None:
    """editMessageText parses like sendMessage; the same text with other markup is an edit."""
    sent = await bot.send_message(friends(emu), "<b>hi</b>", parse_mode="HTML")
    edited = await bot.edit_message_text(
        "<i>hi</i>", friends(emu), sent.message_id, parse_mode="HTML"
    )
    assert isinstance(edited, Message)
    assert [e.type for e in edited.entities] == ["italic"]


# -- polls -----------------------------------------------------------------------------------


async def test_votes_in_the_bots_poll_reach_the_bot(emu: BotApiEmulator, bot: Bot) -> None:
    """A vote in the bot's non-anonymous poll: a poll_answer, then the poll's new state."""
    message = await bot.send_poll(
        friends(emu),
        "Lunch?",
        ["pizza", "sushi", "salad"],
        is_anonymous=False,
        allows_multiple_answers=True,
    )
    emu.queue.drop_pending()
    first = parsed(emu.vote("alice", "@friends", message.message_id, [0, 2]), bot)
    assert first.poll_answer is not None
    assert first.poll_answer.option_ids == (0, 2)
    assert first.poll_answer.option_persistent_ids == ("0", "2")
    assert first.poll_answer.user is not None
    assert first.poll_answer.user.username == "alice"
    state = parsed(emu.queue.pending()[-1], bot).poll
    assert state is not None
    assert (state.total_voter_count, [o.voter_count for o in state.options]) == (1, [1, 0, 1])
    emu.vote("bob", "@friends", message.message_id, [2])
    emu.vote("alice", "@friends", message.message_id, [])  # retracts
    stored = emu.state.message("@friends", message.message_id)
    assert stored is not None
    assert [o["voter_count"] for o in stored["poll"]["options"]] == [0, 0, 1]
    assert pending_kinds(emu) == ["poll_answer", "poll"] * 3


async def test_an_anonymous_quiz_tells_the_bot_counts_only(emu: BotApiEmulator, bot: Bot) -> None:
    """An anonymous quiz: only poll updates; one answer each, never changed or retracted."""
    quiz = await bot.send_poll(
        friends(emu), "2+2?", ["3", "4"], type="quiz", correct_option_ids=[1]
    )
    emu.queue.drop_pending()
    update = parsed(emu.vote("bob", "@friends", quiz.message_id, [1]), bot)
    assert update.poll is not None
    assert update.poll.total_voter_count == 1
    assert pending_kinds(emu) == ["poll"]
    with pytest.raises(BotApiError, match="can't be changed"):
        emu.vote("bob", "@friends", quiz.message_id, [0])
    with pytest.raises(BotApiError, match="can't be retracted"):
        emu.vote("carol", "@friends", quiz.message_id, [])
    with pytest.raises(BotApiError, match="one answer only"):
        emu.vote("carol", "@friends", quiz.message_id, [0, 1])
    with pytest.raises(BotApiError, match="options 0 to 1"):
        emu.vote("carol", "@friends", quiz.message_id, [2])


async def test_stop_poll_closes_it_for_good(emu: BotApiEmulator, bot: Bot) -> None:
    """stopPoll answers the final poll and sends it as an update; later votes and stops fail."""
    message = await bot.send_poll(friends(emu), "Go?", ["yes", "no"])
    emu.vote("alice", "@friends", message.message_id, [0])
    emu.queue.drop_pending()
    stopped = await bot.stop_poll(friends(emu), message.message_id)
    assert (stopped.is_closed, stopped.total_voter_count) == (True, 1)
    assert parsed(emu.queue.pending()[-1], bot).poll == stopped
    with pytest.raises(BotApiError, match="the poll is closed"):
        emu.vote("bob", "@friends", message.message_id, [1])
    response = await emu.call(
        "stopPoll", {"chat_id": friends(emu), "message_id": message.message_id}
    )
    assert response.body["description"] == "Bad Request: poll has already been closed"
    plain = await bot.send_message(friends(emu), "no poll here")
    response = await emu.call("stopPoll", {"chat_id": friends(emu), "message_id": plain.message_id})
    assert response.body["description"] == "Bad Request: message with poll to stop not found"


async def test_a_user_poll_in_private_needs_the_bots_request_poll_button(
    emu: BotApiEmulator, bot: Bot
) -> None:
    """In the private chat a user sends a poll only through a request_poll keyboard button;
    in groups they just send it (the bot hears no votes in polls it did not send)."""
    with pytest.raises(BotApiError, match="no keyboard button that asks for a regular poll"):
        emu.user_poll("bob", "Tea?", ["yes", "no"])
    bob = emu.state.user("bob")
    button = KeyboardButton("Poll", request_poll=KeyboardButtonPollType())
    await bot.send_message(bob.id, "make one", reply_markup=ReplyKeyboardMarkup([[button]]))
    update = parsed(emu.user_poll("bob", "Tea?", ["yes", "no"], correct_option=0), bot)
    assert update.message is not None
    assert update.message.poll is not None
    assert (update.message.poll.type, update.message.poll.correct_option_ids) == ("quiz", (0,))
    group = parsed(emu.user_poll("carol", "Cake?", ["yes", "no"], "@friends"), bot)
    assert group.message is not None
    assert group.message.poll is not None
    assert group.message.poll.correct_option_ids == ()
    assert emu.vote("alice", "@friends", group.message.message_id, [0]) is None


# -- payments --------------------------------------------------------------------------------


async def _invoice(bot: Bot, chat: int, **options: Any) -> int:
    message = await bot.send_invoice(
        chat,
        "Owl",
        "A stuffed owl",
        "owl-1",
        "EUR",
        [LabeledPrice("Owl", 1500)],
        provider_token="test-provider",  # noqa: S106 - the sandbox's test provider
        **options,
    )
    return message.message_id


async def test_a_payment_with_shipping_follows_the_bots_answers(
    emu: BotApiEmulator, bot: Bot
) -> None:
    """shipping_query -> options -> pre_checkout_query with the total -> successful_payment."""
    bob = emu.state.user("bob")
    invoice = await _invoice(
        bot, bob.id, need_name=True, need_shipping_address=True, is_flexible=True
    )
    emu.queue.drop_pending()
    shipping = parsed(emu.pay("bob", bob.id, invoice), bot).shipping_query
    assert shipping is not None
    assert shipping.invoice_payload == "owl-1"
    assert shipping.shipping_address.city == "Springfield"
    options = [ShippingOption("post", "Post", [LabeledPrice("Post", 300)])]
    assert await bot.answer_shipping_query(shipping.id, True, shipping_options=options)
    checkout = parsed(emu.queue.pending()[-1], bot).pre_checkout_query
    assert checkout is not None
    assert (checkout.total_amount, checkout.shipping_option_id) == (1800, "post")
    assert checkout.order_info is not None
    assert checkout.order_info.name == "Bob"
    assert await bot.answer_pre_checkout_query(checkout.id, True)
    paid = parsed(emu.queue.pending()[-1], bot).message
    assert paid is not None
    assert paid.successful_payment is not None
    assert (paid.successful_payment.total_amount, paid.chat.id) == (1800, bob.id)
    (done,) = emu.checkouts
    assert done.stage == "paid"
    with pytest.raises(BotApiError, match="paid already"):
        emu.pay("bob", bob.id, invoice)


async def test_a_refused_checkout_ends_with_the_bots_error(emu: BotApiEmulator, bot: Bot) -> None:
    """ok=False needs an error_message; the checkout fails with it and the query is closed."""
    carol = emu.state.user("carol")
    invoice = await _invoice(bot, carol.id)
    query = parsed(emu.pay("carol", carol.id, invoice), bot).pre_checkout_query
    assert query is not None
    response = await emu.call(
        "answerPreCheckoutQuery", {"pre_checkout_query_id": query.id, "ok": False}
    )
    assert response.body["description"] == "Bad Request: error_message is required when ok is false"
    assert await bot.answer_pre_checkout_query(query.id, False, error_message="Sold out")
    assert [(c.stage, c.error) for c in emu.checkouts] == [("failed", "Sold out")]
    response = await emu.call(
        "answerPreCheckoutQuery", {"pre_checkout_query_id": query.id, "ok": True}
    )
    assert "query is too old" in response.body["description"]


async def test_an_unanswered_query_expires_after_ten_seconds() -> None:
    """Telegram gives the bot 10 seconds to answer; a late answer is refused."""
    now = [1_000.0]
    emu = BotApiEmulator(clock=lambda: now[0])
    dave = emu.state.add_user("Dave", username="dave")
    emu.state.private_chat(dave)
    async with Bot(emu.token, request=emu.request()) as bot:
        invoice = await _invoice(bot, dave.id)
        query = parsed(emu.pay(dave, dave.id, invoice), bot).pre_checkout_query
        assert query is not None
        now[0] += 11
        response = await emu.call(
            "answerPreCheckoutQuery", {"pre_checkout_query_id": query.id, "ok": True}
        )
    assert "query is too old" in response.body["description"]
    assert [(c.stage, c.error) for c in emu.checkouts] == [
        ("failed", "the bot did not answer in time")
    ]


@pytest.mark.parametrize(
    ("params", "error"),
    [
        ({"currency": "euro"}, "CURRENCY_INVALID"),
        ({"provider_token": ""}, "PAYMENT_PROVIDER_INVALID"),
        ({"prices": []}, "prices must be a non-empty array"),
        ({"title": "x" * 33}, "title must be 1-32 characters long"),
        ({"currency": "XTR"}, "a Stars invoice has one price, no provider"),
    ],
)
async def test_send_invoice_checks_what_telegram_checks(
    emu: BotApiEmulator, params: JSON, error: str
) -> None:
    """Invalid invoices are refused with Telegram's reasons."""
    call = {
        "chat_id": emu.state.user("bob").id,
        "title": "Owl",
        "description": "A stuffed owl",
        "payload": "owl-1",
        "currency": "EUR",
        "provider_token": "test-provider",
        "prices": [{"label": "Owl", "amount": 1500}],
        **params,
    }
    emu.state.private_chat("bob")
    response = await emu.call("sendInvoice", call)
    assert response.status == 400
    assert error in response.body["description"]


# -- membership ------------------------------------------------------------------------------


async def test_adding_and_removing_the_bot(emu: BotApiEmulator, bot: Bot) -> None:
    """add_bot: my_chat_member (left -> member) and the join message; remove_bot: kicked."""
    update = parsed(emu.add_bot("alice", "@club"), bot)
    change = update.my_chat_member
    assert change is not None
    assert (change.old_chat_member.status, change.new_chat_member.status) == ("left", "member")
    assert change.from_user.username == "alice"
    joined = parsed(emu.queue.pending()[-1], bot).message
    assert joined is not None
    assert [u.username for u in joined.new_chat_members] == ["test_bot"]
    with pytest.raises(BotApiError, match="USER_ALREADY_PARTICIPANT"):
        emu.add_bot("alice", "@club")
    removed = parsed(emu.remove_bot("alice", "@club"), bot).my_chat_member
    assert removed is not None
    assert removed.new_chat_member.status == "kicked"
    response = await emu.call("sendMessage", {"chat_id": "@club", "text": "still here?"})
    assert response.body["description"] == "Forbidden: bot was kicked from the supergroup chat"
    with pytest.raises(BotApiError, match="can't add the bot here"):
        emu.add_bot("bob", "@club")  # bob is not in @club


async def test_a_channel_gets_the_bot_as_an_admin(emu: BotApiEmulator, bot: Bot) -> None:
    """Bots join channels as administrators only, added by an admin."""
    news = emu.state.add_chat(
        TelegramChatType.CHANNEL,
        title="News",
        username="news",
        bot_status=TelegramMemberStatus.LEFT,
    )
    emu.state.set_member(news, "carol", TelegramMemberStatus.CREATOR)
    change = parsed(emu.add_bot("carol", news), bot).my_chat_member
    assert change is not None
    assert change.new_chat_member.status == "administrator"


async def test_members_join_and_leave_where_the_bot_is_admin(emu: BotApiEmulator, bot: Bot) -> None:
    """chat_member updates go to an admin bot; the service messages to every bot."""
    dave = emu.state.add_user("Dave", username="dave")
    emu.queue.drop_pending()
    emu.member_joins(dave, "@friends")
    left = parsed(emu.member_leaves(dave, "@friends"), bot).message
    assert left is not None
    assert left.left_chat_member is not None
    assert left.left_chat_member.username == "dave"
    assert pending_kinds(emu) == ["chat_member", "message", "chat_member", "message"]
    change = parsed(emu.queue.pending()[2], bot).chat_member
    assert change is not None
    assert (change.old_chat_member.status, change.new_chat_member.status) == ("member", "left")
    with pytest.raises(BotApiError, match="USER_NOT_PARTICIPANT"):
        emu.member_leaves(dave, "@friends")


async def test_a_user_who_blocks_the_bot_gets_nothing(emu: BotApiEmulator, bot: Bot) -> None:
    """block_bot: my_chat_member (member -> kicked) in the private chat; sends then fail 403."""
    bob = emu.state.user("bob")
    change = parsed(emu.block_bot("bob"), bot).my_chat_member
    assert change is not None
    assert (change.chat.id, change.new_chat_member.status) == (bob.id, "kicked")
    response = await emu.call("sendMessage", {"chat_id": bob.id, "text": "hello?"})
    assert (response.status, response.body["description"]) == (
        403,
        "Forbidden: bot was blocked by the user",
    )
    with pytest.raises(BotApiError, match="blocked the bot"):
        emu.user_message("bob", "hi")
    emu.unblock_bot("bob")
    assert (await bot.send_message(bob.id, "welcome back")).text == "welcome back"


# -- what users send -------------------------------------------------------------------------


async def test_a_users_photo_can_be_downloaded(emu: BotApiEmulator, bot: Bot) -> None:
    """user_photo: a photo message whose file the bot downloads byte for byte."""
    image = png()
    message = parsed(emu.user_photo("carol", image, caption="/scan #owls"), bot).message
    assert message is not None
    (size,) = message.photo
    assert (size.width, size.height) == (3, 2)
    assert [e.type for e in message.caption_entities] == ["bot_command", "hashtag"]
    file = await size.get_file()
    assert bytes(await file.download_as_bytearray()) == image
    with pytest.raises(BotApiError, match="PNG or JPEG"):
        emu.user_photo("carol", b"not an image")


async def test_documents_and_locations(emu: BotApiEmulator, bot: Bot) -> None:
    """user_document keeps the name and type; user_location checks the coordinates."""
    sent = parsed(
        emu.user_document("bob", b"a,b\n", "owls.csv", "@friends", mime_type="text/csv"), bot
    ).message
    assert sent is not None
    assert sent.document is not None
    assert (sent.document.file_name, sent.document.mime_type) == ("owls.csv", "text/csv")
    where = parsed(emu.user_location("bob", 48.85, 2.35), bot).message
    assert where is not None
    assert where.location is not None
    assert (where.location.latitude, where.location.longitude) == (48.85, 2.35)
    with pytest.raises(BotApiError, match=r"latitude is -90\.\.90"):
        emu.user_location("bob", 91, 0)


def test_privacy_mode_shows_a_captioned_command_and_hides_a_plain_photo() -> None:
    """With privacy mode, a photo whose caption is a command reaches the bot; others do not."""
    emu = BotApiEmulator(privacy_mode=True)
    emu.state.add_user("Erin", username="erin")
    group = emu.state.add_chat(TelegramChatType.SUPERGROUP, title="G", username="gee")
    assert emu.user_photo("erin", png(), group) is None
    assert emu.user_photo("erin", png(), group, caption="/scan") is not None


async def test_keyboard_buttons_and_web_apps(emu: BotApiEmulator, bot: Bot) -> None:
    """press_button sends a shown button's text; web_app_data needs a shown web app button;
    ReplyKeyboardRemove takes the keyboard away."""
    carol = emu.state.user("carol")
    keyboard = ReplyKeyboardMarkup(
        [["Yes", "No"], [KeyboardButton("Pick", web_app=WebAppInfo("https://app.example"))]]
    )
    await bot.send_message(carol.id, "choose", reply_markup=keyboard)
    update = parsed(emu.press_button("carol", "No"), bot)
    assert update.message is not None
    assert update.message.text == "No"
    with pytest.raises(BotApiError, match="is a web_app button: web_app_data"):
        emu.press_button("carol", "Pick")
    data = parsed(emu.web_app_data("carol", "Pick", '{"v": 1}'), bot).message
    assert data is not None
    assert data.web_app_data is not None
    assert (data.web_app_data.data, data.web_app_data.button_text) == ('{"v": 1}', "Pick")
    await bot.send_message(carol.id, "done", reply_markup=ReplyKeyboardRemove())
    with pytest.raises(BotApiError, match="no keyboard button 'Yes'"):
        emu.press_button("carol", "Yes")
    with pytest.raises(BotApiError, match="no web app button 'Pick'"):
        emu.web_app_data("carol", "Pick", "{}")


async def test_a_click_by_the_buttons_label(emu: BotApiEmulator, bot: Bot) -> None:
    """callback_click(button=...) clicks the button a user sees by its label."""
    menu = await bot.send_message(
        friends(emu),
        "menu",
        reply_markup=InlineKeyboardMarkup(
            [
                [
                    InlineKeyboardButton("Add", callback_data="\x01"),
                    InlineKeyboardButton("Done", callback_data="-1"),
                ]
            ]
        ),
    )
    click = parsed(emu.callback_click("bob", "@friends", menu.message_id, button="Done"), bot)
    assert click.callback_query is not None
    assert click.callback_query.data == "-1"
    with pytest.raises(BotApiError, match="no button 'Quit' \\(buttons: 'Add', 'Done'\\)"):
        emu.callback_click("bob", "@friends", menu.message_id, button="Quit")


async def test_a_click_says_what_the_message_was_when_clicked(
    emu: BotApiEmulator, bot: Bot
) -> None:
    """The click's update carries the message as it was clicked: the bot editing it afterwards
    changes the world, not the update already sent (or pending)."""
    keyboard = InlineKeyboardMarkup([[InlineKeyboardButton("Confirm", callback_data="ok")]])
    menu = await bot.send_message(friends(emu), "deploy?", reply_markup=keyboard)
    update = emu.callback_click("bob", "@friends", menu.message_id, "ok")
    await bot.edit_message_text("deployed", chat_id=friends(emu), message_id=menu.message_id)
    click = parsed(update, bot).callback_query
    assert click is not None
    assert isinstance(click.message, Message)
    assert (click.message.text, click.message.edit_date) == ("deploy?", None)
    [pending] = emu.queue.pending()
    assert pending["callback_query"]["message"]["text"] == "deploy?"


# -- deep links ------------------------------------------------------------------------------


async def test_start_links_open_the_private_chat_or_add_the_bot(
    emu: BotApiEmulator, bot: Bot
) -> None:
    """?start= sends /start PAYLOAD in private; ?startgroup= adds the bot to the group and
    sends /start@bot PAYLOAD there."""
    private = parsed(emu.open_link("bob", "https://t.me/test_bot?start=ref-42"), bot).message
    assert private is not None
    assert (private.text, private.chat.type) == ("/start ref-42", "private")
    emu.queue.drop_pending()
    group = parsed(
        emu.open_link("alice", "tg://resolve?domain=test_bot&startgroup=team", group="@club"),
        bot,
    ).message
    assert group is not None
    assert group.text == "/start@test_bot team"
    assert pending_kinds(emu) == ["my_chat_member", "message", "message"]
    for url, error in (
        ("https://t.me/other_bot?start=x", "a link to @other_bot, not this bot"),
        ("https://t.me/test_bot?start=no spaces", "up to 64 of A-Z a-z 0-9 _ -"),
        ("https://example.org/test_bot?start=x", "is not a t.me or tg://resolve link"),
        ("https://t.me/test_bot?startgroup=x", "a startgroup link needs the group"),
    ):
        with pytest.raises(BotApiError, match=error):
            emu.open_link("bob", url)


# -- Telegram Passport -----------------------------------------------------------------------


async def test_shared_passport_data_decrypts_with_the_bots_key() -> None:
    """share_passport encrypts for the bot's public key; PTB decrypts it with the private key."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    emu = BotApiEmulator(passport_public_key=public)
    emu.state.add_user("Fay", username="fay")
    details = {
        "first_name": "Fay",
        "last_name": "Doe",
        "birth_date": "01.02.1990",
        "gender": "female",
        "country_code": "FR",
        "residence_country_code": "FR",
    }
    scan = b"\xff\xd8 a scan"
    update = emu.share_passport(
        "fay",
        "n0nce",
        {
            "email": "fay@example.com",
            "personal_details": details,
            "passport": {"data": {"document_no": "X1", "expiry_date": ""}, "front_side": scan},
        },
    )
    async with Bot(emu.token, request=emu.request(), private_key=private) as bot:
        message = parsed(update, bot).message
        assert message is not None
        assert message.passport_data is not None
        data = message.passport_data
        assert data.decrypted_credentials.nonce == "n0nce"
        email, personal, passport = data.decrypted_data
        assert email.email == "fay@example.com"
        assert isinstance(personal.data, PersonalDetails)
        assert personal.data.first_name == "Fay"
        assert isinstance(passport.data, IdDocumentData)
        assert passport.data.document_no == "X1"
        assert passport.front_side is not None
        front = await passport.front_side.get_file()
        assert bytes(await front.download_as_bytearray()) == scan
    with pytest.raises(BotApiError, match="no passport public key"):
        BotApiEmulator().share_passport("fay", "n", {"email": "x@y.z"})
    with pytest.raises(BotApiError, match="unknown passport element type 'visa'"):
        emu.share_passport("fay", "n", {"visa": {}})

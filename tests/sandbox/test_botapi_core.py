"""The Bot API emulator core: methods, errors, update shapes and long polling."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from tests._world import devs_forum

from actorscope.sandbox import BotApiEmulator, BotApiError
from actorscope.sandbox._telegram import (
    ANONYMOUS_ADMIN_ID,
    CHANNEL_BOT_ID,
    SERVICE_USER_ID,
    make_token,
)
from actorscope.sandbox._telegram import MemberStatus as TelegramMemberStatus
from actorscope.sandbox._telegram.entities import parse_entities

JSON = dict[str, Any]


@pytest.fixture
def emu() -> BotApiEmulator:
    """An emulator with alice (admin of the @devs forum, topic "ideas") and bob."""
    return devs_forum(BotApiEmulator(make_token(111222, "x" * 35), max_poll_timeout=2.0))


async def ok(emu: BotApiEmulator, method: str, **params: Any) -> Any:
    response = await emu.call(method, params)
    assert response.status == 200, response.body
    assert response.body["ok"] is True
    return response.body["result"]


async def error(emu: BotApiEmulator, method: str, **params: Any) -> tuple[int, str]:
    response = await emu.call(method, params)
    assert response.body["ok"] is False
    assert response.body["error_code"] == response.status
    return response.status, response.body["description"]


async def test_get_me_describes_the_bot_from_its_token(emu: BotApiEmulator) -> None:
    """getMe returns the bot user whose id is the token's numeric prefix."""
    me = await ok(emu, "getMe")
    assert me["id"] == 111222
    assert me["is_bot"] is True
    assert me["username"] == "actorscope_sandbox_bot"
    assert me["can_join_groups"] is True


async def test_unknown_method_is_a_bot_api_404(emu: BotApiEmulator) -> None:
    """An unknown method answers 404 "Not Found: method not found" and is still recorded."""
    response = await emu.call("sendTelepathy", {"chat_id": 1})
    assert response.status == 404
    assert response.body == {
        "ok": False,
        "error_code": 404,
        "description": "Not Found: method not found",
    }
    assert [c.method for c in emu.calls] == ["sendTelepathy"]


async def test_method_names_are_case_insensitive(emu: BotApiEmulator) -> None:
    """Telegram matches method names case-insensitively; so does the emulator."""
    assert (await ok(emu, "GETME"))["id"] == 111222


async def test_wrong_token_is_unauthorized(emu: BotApiEmulator) -> None:
    """A call with another token gets 401 Unauthorized."""
    other = make_token(1, "w" * 35)
    response = await emu.call("getMe", {}, token=other)
    assert (response.status, response.body["description"]) == (401, "Unauthorized")


def test_malformed_token_is_refused() -> None:
    """A token without a numeric bot id is refused when the emulator is built."""
    with pytest.raises(BotApiError, match="bot id"):
        BotApiEmulator("not-a-token")


async def test_send_message_bad_parameters_get_400(emu: BotApiEmulator) -> None:
    """Missing or malformed parameters answer 400 with a Bot API-style description."""
    devs = emu.state.chat("@devs").id
    assert await error(emu, "sendMessage", text="hi") == (400, "Bad Request: chat_id is empty")
    assert await error(emu, "sendMessage", chat_id=devs) == (
        400,
        "Bad Request: message text is empty",
    )
    assert await error(emu, "sendMessage", chat_id=-5, text="hi") == (
        400,
        "Bad Request: chat not found",
    )
    assert await error(emu, "sendMessage", chat_id=devs, text="x" * 4097) == (
        400,
        "Bad Request: message is too long",
    )
    assert await error(emu, "sendMessage", chat_id=devs, text="hi", message_thread_id=99) == (
        400,
        "Bad Request: message thread not found",
    )
    assert await error(emu, "sendMessage", chat_id=devs, text="hi", reply_to_message_id=77) == (
        400,
        "Bad Request: message to be replied not found",
    )
    assert await error(emu, "sendMessage", chat_id=devs, text="hi", message_thread_id="x") == (
        400,
        "Bad Request: parameter 'message_thread_id' must be an integer",
    )


async def test_bot_cannot_start_a_private_conversation(emu: BotApiEmulator) -> None:
    """Writing to a user who never wrote to the bot is 403, as on Telegram."""
    alice = emu.state.user("alice").id
    assert await error(emu, "sendMessage", chat_id=alice, text="hi") == (
        403,
        "Forbidden: bot can't initiate conversation with a user",
    )


async def test_send_message_to_topic_with_keyboard_by_username(emu: BotApiEmulator) -> None:
    """sendMessage by @username into a topic returns a topic message with its keyboard."""
    keyboard = {"inline_keyboard": [[{"text": "Yes", "callback_data": "y"}]]}
    sent = await ok(
        emu,
        "sendMessage",
        chat_id="@devs",
        text="vote /now",
        message_thread_id="2",
        reply_markup='{"inline_keyboard": [[{"text": "Yes", "callback_data": "y"}]]}',
    )
    assert sent["chat"]["id"] == emu.state.chat("@devs").id
    assert sent["from"]["id"] == 111222
    assert (sent["message_thread_id"], sent["is_topic_message"]) == (2, True)
    assert sent["reply_to_message"]["forum_topic_created"]["name"] == "ideas"
    assert sent["reply_markup"] == keyboard
    assert sent["entities"] == [{"offset": 5, "length": 4, "type": "bot_command"}]
    assert emu.calls[-1].params["message_thread_id"] == 2
    assert emu.sent_messages() == [sent]


async def test_reply_parameters_and_reply_keyboards(emu: BotApiEmulator) -> None:
    """reply_parameters quote the message; reply keyboards are not echoed in the message."""
    update = emu.user_message("alice", "question", "@devs")
    assert update is not None
    asked = update["message"]["message_id"]
    sent = await ok(
        emu,
        "sendMessage",
        chat_id=update["message"]["chat"]["id"],
        text="answer",
        reply_parameters={"message_id": asked},
        reply_markup={"keyboard": [[{"text": "a"}]]},
    )
    assert sent["reply_to_message"]["message_id"] == asked
    assert "reply_markup" not in sent
    assert "message_thread_id" not in sent


async def test_edit_message_text_rules(emu: BotApiEmulator) -> None:
    """Only the bot's messages can be edited, and only into something different."""
    devs = emu.state.chat("@devs").id
    sent = await ok(emu, "sendMessage", chat_id=devs, text="draft")
    edited = await ok(
        emu, "editMessageText", chat_id=devs, message_id=sent["message_id"], text="final"
    )
    assert (edited["text"], edited["message_id"]) == ("final", sent["message_id"])
    assert "edit_date" in edited
    status, description = await error(
        emu, "editMessageText", chat_id=devs, message_id=sent["message_id"], text="final"
    )
    assert status == 400
    assert description.startswith("Bad Request: message is not modified")
    user_message = emu.user_message("bob", "mine", "@devs")
    assert user_message is not None
    mine = user_message["message"]["message_id"]
    assert await error(emu, "editMessageText", chat_id=devs, message_id=mine, text="x") == (
        400,
        "Bad Request: message can't be edited",
    )
    assert await error(emu, "editMessageText", chat_id=devs, message_id=999, text="x") == (
        400,
        "Bad Request: message to edit not found",
    )


async def test_callback_click_and_answer(emu: BotApiEmulator) -> None:
    """A click yields a callback_query update; it can be answered exactly once."""
    devs = emu.state.chat("@devs").id
    markup = {"inline_keyboard": [[{"text": "A", "callback_data": "a"}]]}
    sent = await ok(emu, "sendMessage", chat_id=devs, text="pick", reply_markup=markup)
    update = emu.callback_click("bob", "@devs", sent["message_id"])
    assert update is not None
    query = update["callback_query"]
    assert query["from"]["username"] == "bob"
    assert query["data"] == "a"
    assert query["message"]["message_id"] == sent["message_id"]
    assert await ok(emu, "answerCallbackQuery", callback_query_id=query["id"], text="done")
    assert emu.callback_answers[query["id"]] == {"text": "done", "show_alert": False, "url": None}
    status, description = await error(emu, "answerCallbackQuery", callback_query_id=query["id"])
    assert status == 400
    assert "query ID is invalid" in description
    with pytest.raises(BotApiError, match="no button"):
        emu.callback_click("bob", "@devs", sent["message_id"], data="zzz")


def test_a_user_edits_their_own_message(emu: BotApiEmulator) -> None:
    """user_edit: an edited_message with the new text and entities and an edit_date; only the
    author edits, and only a message that exists."""
    sent = emu.user_message("bob", "hello", "@devs")
    assert sent is not None
    message_id = sent["message"]["message_id"]
    edited = emu.user_edit("bob", "@devs", message_id, "hello @alice")
    assert edited is not None
    body = edited["edited_message"]
    assert (body["message_id"], body["text"]) == (message_id, "hello @alice")
    assert body["entities"] == [{"type": "mention", "offset": 6, "length": 6}]
    assert isinstance(body["edit_date"], int)
    stored = emu.state.message("@devs", message_id)
    assert stored is not None
    assert stored["text"] == "hello @alice"
    with pytest.raises(BotApiError, match="can't be edited"):
        emu.user_edit("alice", "@devs", message_id, "mine now")
    with pytest.raises(BotApiError, match="not found"):
        emu.user_edit("bob", "@devs", 999_999, "x")
    with pytest.raises(BotApiError, match="text is empty"):
        emu.user_edit("bob", "@devs", message_id, "")


async def test_chat_members_and_administrators(emu: BotApiEmulator) -> None:
    """getChatMember reports statuses; getChatAdministrators lists admins only."""
    devs = emu.state.chat("@devs")
    carol = emu.state.add_user("Carol", username="carol")
    emu.state.set_member(devs, carol, TelegramMemberStatus.CREATOR)
    alice = await ok(emu, "getChatMember", chat_id=devs.id, user_id=emu.state.user("alice").id)
    assert alice["status"] == "administrator"
    assert alice["can_manage_topics"] is True
    assert (await ok(emu, "getChatMember", chat_id=devs.id, user_id=carol.id))["status"] == (
        "creator"
    )
    dave = emu.state.add_user("Dave")
    assert (await ok(emu, "getChatMember", chat_id=devs.id, user_id=dave.id))["status"] == "left"
    assert await error(emu, "getChatMember", chat_id=devs.id, user_id=42) == (
        400,
        "Bad Request: user not found",
    )
    admins = await ok(emu, "getChatAdministrators", chat_id="@devs")
    assert sorted(a["user"]["username"] for a in admins) == ["alice", "carol"]
    private = emu.state.private_chat("alice").id
    status, _ = await error(emu, "getChatAdministrators", chat_id=private)
    assert status == 400


async def test_commands_webhook_close_and_logout(emu: BotApiEmulator) -> None:
    """Commands are stored per scope; webhook, close and logOut answer sensibly."""
    commands = [{"command": "start", "description": "Start"}]
    assert await ok(emu, "setMyCommands", commands=commands) is True
    assert await ok(emu, "getMyCommands") == commands
    assert await ok(emu, "getMyCommands", scope={"type": "all_group_chats"}) == []
    bad = [{"command": "Bad Command", "description": "x"}]
    assert await error(emu, "setMyCommands", commands=bad) == (
        400,
        "Bad Request: BOT_COMMAND_INVALID",
    )
    emu.user_message("bob", "pending")
    assert (await ok(emu, "getWebhookInfo"))["pending_update_count"] == 1
    assert await ok(emu, "deleteWebhook", drop_pending_updates="true") is True
    assert emu.queue.pending() == []
    assert await ok(emu, "close") is True
    assert await ok(emu, "logOut") is True


def test_user_message_in_topic_has_the_real_shape(emu: BotApiEmulator) -> None:
    """A topic message carries thread id, is_topic_message, entities and the topic root."""
    update = emu.user_message("bob", "/help@actorscope_sandbox_bot ask @alice", "@devs", topic=2)
    assert update is not None
    message: JSON = update["message"]
    assert message["from"]["username"] == "bob"
    assert message["chat"] == {
        "id": emu.state.chat("@devs").id,
        "title": "Devs",
        "username": "devs",
        "type": "supergroup",
        "is_forum": True,
    }
    assert (message["message_thread_id"], message["is_topic_message"]) == (2, True)
    assert message["reply_to_message"]["message_id"] == 2
    assert message["reply_to_message"]["from"]["username"] == "alice"
    assert [e["type"] for e in message["entities"]] == ["bot_command", "mention"]
    assert isinstance(message["date"], int)


def test_general_topic_messages_have_no_thread_id(emu: BotApiEmulator) -> None:
    """Messages in General (thread 1) carry neither message_thread_id nor is_topic_message."""
    update = emu.user_message("bob", "hi", "@devs", topic="General")
    assert update is not None
    assert "message_thread_id" not in update["message"]
    assert "is_topic_message" not in update["message"]


def test_private_message_and_supergroup_reply_thread(emu: BotApiEmulator) -> None:
    """A private message's chat is the user; a reply in a plain supergroup has a thread id."""
    dm = emu.user_message("alice", "hello")
    assert dm is not None
    assert dm["message"]["chat"]["type"] == "private"
    assert dm["message"]["chat"]["id"] == dm["message"]["from"]["id"]
    plain = emu.state.add_chat("supergroup", title="Plain")
    first = emu.user_message("alice", "root", plain)
    assert first is not None
    reply = emu.user_message("bob", "re", plain, reply_to=first["message"]["message_id"])
    assert reply is not None
    assert reply["message"]["message_thread_id"] == first["message"]["message_id"]
    assert "is_topic_message" not in reply["message"]
    assert emu.state.status(plain, "bob") is TelegramMemberStatus.MEMBER


def test_anonymous_admin_and_channel_post(emu: BotApiEmulator) -> None:
    """Anonymous admins write as GroupAnonymousBot with sender_chat; posts have no from."""
    anon = emu.anonymous_admin_message("@devs", "notice", signature="Ops")
    assert anon is not None
    message = anon["message"]
    assert message["from"]["id"] == ANONYMOUS_ADMIN_ID
    assert message["sender_chat"]["id"] == emu.state.chat("@devs").id
    assert message["author_signature"] == "Ops"
    news = emu.state.add_chat("channel", title="News", username="newsroom")
    post = emu.channel_post(news, "released")
    assert post is not None
    assert "from" not in post["channel_post"]
    assert post["channel_post"]["sender_chat"]["type"] == "channel"


def test_member_join_respects_allowed_updates(emu: BotApiEmulator) -> None:
    """A join sends the service message; chat_member only when allowed_updates asks for it
    and only to a bot that administers the chat."""
    carol = emu.state.add_user("Carol", username="carol")
    update = emu.member_joins(carol, "@devs")
    assert update is not None
    assert update["message"]["new_chat_members"][0]["username"] == "carol"
    assert [next(k for k in u if k != "update_id") for u in emu.queue.pending()] == ["message"]
    emu.queue.set_allowed(["message", "chat_member"])
    emu.member_joins(emu.state.add_user("Erin", username="erin"), "@devs")
    kinds = [next(k for k in u if k != "update_id") for u in emu.queue.pending()]
    assert kinds == ["message", "message"]  # a plain member bot hears of no one else's change
    emu.state.set_member("@devs", emu.bot, TelegramMemberStatus.ADMINISTRATOR)
    dave = emu.state.add_user("Dave", username="dave")
    emu.member_joins(dave, "@devs")
    kinds = [next(k for k in u if k != "update_id") for u in emu.queue.pending()]
    assert kinds == ["message", "message", "chat_member", "message"]
    with pytest.raises(BotApiError, match="USER_ALREADY_PARTICIPANT"):
        emu.member_joins(dave, "@devs")


def test_entities_count_utf16_code_units() -> None:
    """Entity offsets count UTF-16 code units, so an emoji before a command counts twice."""
    assert parse_entities("👋 /start x #tag https://example.org/a.") == [
        {"offset": 3, "length": 6, "type": "bot_command"},
        {"offset": 12, "length": 4, "type": "hashtag"},
        {"offset": 17, "length": 21, "type": "url"},
    ]
    assert parse_entities("mail a@b.cd and path/x") == []


async def test_get_updates_offset_limit_and_negative_offset(emu: BotApiEmulator) -> None:
    """offset confirms earlier updates, limit caps the batch, a negative offset keeps the tail."""
    for n in range(3):
        emu.user_message("bob", f"m{n}")
    updates = await ok(emu, "getUpdates", limit=2)
    assert [u["message"]["text"] for u in updates] == ["m0", "m1"]
    rest = await ok(emu, "getUpdates", offset=updates[1]["update_id"] + 1)
    assert [u["message"]["text"] for u in rest] == ["m2"]
    emu.user_message("bob", "m3")
    tail = await ok(emu, "getUpdates", offset=-1)
    assert [u["message"]["text"] for u in tail] == ["m3"]
    assert await error(emu, "getUpdates", limit=0) == (
        400,
        "Bad Request: limit must be between 1 and 100",
    )


async def test_long_poll_returns_when_an_update_arrives(emu: BotApiEmulator) -> None:
    """A waiting getUpdates is woken by a user's message and returns it: a poll that ran out
    its timeout (capped at 2 s here) would return no update at all."""
    poll = asyncio.create_task(emu.call("getUpdates", {"timeout": 10}))
    await asyncio.wait_for(emu.queue.first_poll(), 10.0)  # the poll is waiting now
    assert not poll.done()
    emu.user_message("bob", "wake up")
    response = await asyncio.wait_for(poll, 10.0)  # bounds a hang only
    assert [u["message"]["text"] for u in response.body["result"]] == ["wake up"]


async def test_long_poll_times_out_empty(emu: BotApiEmulator) -> None:
    """With nothing to deliver, getUpdates waits its timeout and returns an empty list."""
    started = time.monotonic()
    response = await asyncio.wait_for(emu.call("getUpdates", {"timeout": 0.3}), 3.0)
    assert response.body == {"ok": True, "result": []}
    assert time.monotonic() - started >= 0.25


async def test_long_poll_wait_is_capped_by_the_emulator() -> None:
    """A poll asking for 60 s waits no longer than max_poll_timeout."""
    emu = BotApiEmulator(max_poll_timeout=0.2)
    started = time.monotonic()
    response = await asyncio.wait_for(emu.call("getUpdates", {"timeout": 60}), 3.0)
    assert response.body == {"ok": True, "result": []}
    assert time.monotonic() - started < 2.0


async def test_newer_poll_conflicts_and_close_ends_polls(emu: BotApiEmulator) -> None:
    """A second getUpdates ends the first with 409; close() ends waiting polls at once."""
    first = asyncio.create_task(emu.call("getUpdates", {"timeout": 60}))
    await asyncio.wait_for(emu.queue.first_poll(), 2.0)  # the first poll is waiting now
    second = asyncio.create_task(emu.call("getUpdates", {"timeout": 60}))
    conflict = await asyncio.wait_for(first, 2.0)
    assert conflict.status == 409
    assert conflict.body["description"].startswith("Conflict: terminated by other getUpdates")
    emu.close()
    assert (await asyncio.wait_for(second, 2.0)).body == {"ok": True, "result": []}


async def test_calls_are_recorded_in_order_with_listeners(emu: BotApiEmulator) -> None:
    """Every call is logged in order with decoded params; listeners see each answered call."""
    seen: list[str] = []
    emu.add_listener(lambda call: seen.append(call.method))
    devs = emu.state.chat("@devs").id
    await emu.call("getMe")
    await emu.call("sendMessage", {"chat_id": str(devs), "text": "a", "disable_notification": "1"})
    await emu.call("nope")
    assert [c.method for c in emu.calls] == ["getMe", "sendMessage", "nope"]
    assert emu.calls[1].params == {"chat_id": devs, "text": "a", "disable_notification": True}
    assert seen == ["getMe", "sendMessage", "nope"]
    assert [c.method for c in emu.bot_calls()] == ["getMe", "sendMessage", "nope"]


async def test_privacy_mode_hides_plain_group_messages() -> None:
    """In privacy mode a non-admin bot gets group commands and replies to itself only."""
    emu = BotApiEmulator(privacy_mode=True)
    emu.state.add_user("Bob", username="bob")
    group = emu.state.add_chat("group", title="G", username="gang")
    assert (await emu.call("getMe")).body["result"]["can_read_all_group_messages"] is False
    assert emu.user_message("bob", "chatter", group) is None
    assert emu.user_message("bob", "/cmd", group) is not None
    sent = (await emu.call("sendMessage", {"chat_id": group.id, "text": "q"})).body["result"]
    assert emu.user_message("bob", "answer", group, reply_to=sent["message_id"]) is not None
    assert emu.user_message("bob", "dm") is not None
    emu.state.set_member(group, emu.bot, TelegramMemberStatus.ADMINISTRATOR)
    assert emu.user_message("bob", "chatter again", group) is not None
    assert [u["message"]["text"] for u in emu.queue.pending()] == [
        "/cmd",
        "answer",
        "dm",
        "chatter again",
    ]


def test_writing_as_a_channel_and_automatic_forwards() -> None:
    """Channel_Bot and the 777000 service account appear with the channel as sender_chat."""
    emu = BotApiEmulator()
    emu.state.add_user("Bob", username="bob")
    news = emu.state.add_chat("channel", title="News", username="newsroom")
    talk = emu.state.add_chat("supergroup", title="Talk", username="talk")
    as_channel = emu.message_as_channel(news, talk, "official")
    assert as_channel is not None
    assert as_channel["message"]["from"]["id"] == CHANNEL_BOT_ID
    assert as_channel["message"]["sender_chat"]["username"] == "newsroom"
    post = emu.channel_post(news, "launch")
    assert post is not None
    forward = emu.automatic_forward(news, post["channel_post"]["message_id"], talk)
    assert forward is not None
    message = forward["message"]
    assert message["from"] == {"id": SERVICE_USER_ID, "is_bot": False, "first_name": "Telegram"}
    assert message["is_automatic_forward"] is True
    assert message["forward_origin"]["chat"]["id"] == news.id
    assert message["text"] == "launch"
    with pytest.raises(BotApiError, match="not as a group"):
        emu.message_as_channel(talk, talk, "x")


def test_message_where_the_bot_is_absent_changes_nothing(emu: BotApiEmulator) -> None:
    """A message in a chat the bot left is refused with 403 and the writer does not join."""
    other = emu.state.add_chat("group", title="Elsewhere", bot_status=TelegramMemberStatus.LEFT)
    with pytest.raises(BotApiError, match="not a member") as caught:
        emu.user_message("bob", "hello", other)
    assert caught.value.error_code == 403
    assert emu.state.status(other, "bob") is TelegramMemberStatus.LEFT
    assert emu.state.messages(other) == []
    assert emu.queue.pending() == []

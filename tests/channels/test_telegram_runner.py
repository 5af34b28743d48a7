"""The Telegram runner end to end: a real PTB Application polling the Bot API emulator."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Update
from tests._wait import wait_until
from tests._wiring import channel_pipeline
from tests._world import devs_forum

from actorscope.agents import AgentRegistry
from actorscope.channels import IgnoreReason, Outcome
from actorscope.channels._config import ChannelConfig
from actorscope.channels.telegram._runner import TelegramRunner
from actorscope.context import current_identity
from actorscope.errors import ConfigError
from actorscope.host import Host, MessageBus, RunStep
from actorscope.identity import Identity, PeerKind, SenderKind
from actorscope.messages import InboundMessage, OutboundMessage, RunRequest
from actorscope.propagation import OriginSigner
from actorscope.sandbox import BotApiEmulator
from actorscope.sandbox._telegram import MemberStatus as TelegramMemberStatus
from actorscope.store import Database


@dataclass
class Bot:
    """A running runner + host on an emulator, and what the handler saw."""

    emu: BotApiEmulator
    runner: TelegramRunner
    agent_id: str
    seen: list[tuple[RunRequest, Identity | None]] = field(default_factory=list)
    ignored: dict[int, IgnoreReason] = field(default_factory=dict)


@pytest.fixture
def emu() -> BotApiEmulator:
    """The shared @devs forum (topic "ideas" = 2, alice and bob); @ops: a plain group with bob."""
    emu = devs_forum(BotApiEmulator(max_poll_timeout=1.0))
    ops = emu.state.add_chat("group", title="Ops", username="ops")
    emu.state.set_member(ops, emu.state.user("bob"), TelegramMemberStatus.MEMBER)
    return emu


@pytest.fixture
async def bot(emu: BotApiEmulator, tmp_path: Path) -> AsyncIterator[Bot]:
    """The runner polling the emulator, feeding a host whose handler echoes the sender."""
    async with Database.open(tmp_path / "t.db") as db:
        agent = await AgentRegistry(db).create("main")
        bus = MessageBus()
        ignored: dict[int, IgnoreReason] = {}
        runner = TelegramRunner(
            channel_pipeline(db, ChannelConfig(platform="telegram"), bus=bus, agent=agent),
            token=emu.token,
            request=emu.request(),
            get_updates_request=emu.request(),
            poll_timeout=1,
            on_ignored=ignored.__setitem__,
        )
        state = Bot(emu, runner, agent.id, ignored=ignored)

        async def handler(request: RunRequest) -> str:
            state.seen.append((request, current_identity()))
            return f"hi {request.sender_id}"

        step = RunStep(handler, signer=OriginSigner(), agent_id=agent.id, tenant_id=agent.tenant_id)
        host = Host(step, bus=bus)
        host.add_sender("telegram", runner)
        await host.start()
        await runner.start()
        try:
            yield state
        finally:
            emu.close()  # ends the long poll now, so stopping takes no poll timeout
            await runner.stop()
            await host.stop()


async def test_forum_topic_message_reaches_handler_and_reply_lands_in_topic(bot: Bot) -> None:
    """A mention in topic "ideas": the handler runs as alice in the group; the reply goes to 2."""
    emu = bot.emu
    update = emu.user_message("alice", "@actorscope_sandbox_bot hello", "@devs", topic="ideas")
    assert update is not None
    await wait_until(lambda: bool(emu.sent_messages()))
    devs, alice = emu.state.chat("@devs"), emu.state.user("alice")
    ((request, bound),) = bot.seen
    assert bound is not None
    assert (bound.user_id, bound.sender_id) == (f"group:telegram:{devs.id}", str(alice.id))
    assert (bound.peer_kind, bound.sender_kind) == (PeerKind.GROUP, SenderKind.USER)
    assert bound.agent_id == bot.agent_id
    assert request.session_key == f"agent:main:telegram:group:{devs.id}:topic:2"
    assert request.content == "hello"  # the bot's mention is stripped
    (sent,) = emu.sent_messages()
    assert sent["chat"]["id"] == devs.id
    assert (sent["message_thread_id"], sent["is_topic_message"]) == (2, True)
    assert sent["text"] == f"hi {alice.id}"
    assert sent["reply_to_message"]["message_id"] == update["message"]["message_id"]


async def test_general_topic_and_plain_group_replies_carry_no_thread(bot: Bot) -> None:
    """A command in General and one in a plain group are answered without a thread id."""
    emu = bot.emu
    emu.user_message("alice", "/start", "@devs")
    emu.user_message("bob", "/start@actorscope_sandbox_bot", "@ops")
    await wait_until(lambda: len(emu.sent_messages()) == 2)
    calls = emu.calls_to("sendMessage")
    assert {call.params["chat_id"] for call in calls} == {
        emu.state.chat("@devs").id,
        emu.state.chat("@ops").id,
    }
    assert all("message_thread_id" not in call.params for call in calls)
    devs, ops = emu.state.chat("@devs").id, emu.state.chat("@ops").id
    assert {request.session_key for request, _ in bot.seen} == {
        f"agent:main:telegram:group:{devs}:topic:1",
        f"agent:main:telegram:group:{ops}",
    }


async def test_unaddressed_group_message_and_duplicates_are_dropped(bot: Bot) -> None:
    """Group chatter without a mention never reaches the handler; a redelivery is dropped."""
    emu = bot.emu
    emu.user_message("bob", "just chatting", "@ops")
    update = emu.user_message("bob", "hello", None)  # private chat: always addressed
    assert update is not None
    await wait_until(lambda: len(emu.sent_messages()) == 1)
    again = await bot.runner.handle_update(Update.de_json(update, bot.runner.bot))
    assert again.outcome is Outcome.DUPLICATE  # delivered again: never published
    ((request, bound),) = bot.seen
    assert bound is not None
    bob = str(emu.state.user("bob").id)
    assert (bound.user_id, bound.sender_id, request.content) == (bob, bob, "hello")
    assert len(emu.sent_messages()) == 1


async def test_anonymous_admin_is_ignored_by_default(bot: Bot) -> None:
    """An anonymous admin's command never reaches the handler (ignore_bots defaults on)."""
    emu = bot.emu
    admin = emu.anonymous_admin_message("@ops", "/start")
    assert admin is not None
    await wait_until(lambda: admin["update_id"] in bot.ignored)  # the marker: decided
    assert bot.ignored[admin["update_id"]] is IgnoreReason.NONPERSON_SENDER
    emu.user_message("bob", "/start", "@ops")
    await wait_until(lambda: len(emu.sent_messages()) == 1)
    assert [request.sender_id for request, _ in bot.seen] == [str(emu.state.user("bob").id)]


async def test_send_splits_long_text_and_replies_leniently(bot: Bot) -> None:
    """send() splits text over 4096 characters and tolerates a missing reply target."""
    emu = bot.emu
    ops = emu.state.chat("@ops")
    await bot.runner.send(
        OutboundMessage(
            channel="telegram",
            chat_id=str(ops.id),
            content="x" * 5000,
            reply_to_message_id="999",
        )
    )
    sent = emu.sent_messages()
    assert [len(message["text"]) for message in sent] == [4096, 904]
    assert all(message["chat"]["id"] == ops.id for message in sent)


async def test_send_text_sends_what_a_built_reply_sends(bot: Bot) -> None:
    """A plain-text reply (a topic, General, a plain group, no message id, long text) makes
    the same Bot API calls as sending the reply message built for it."""
    emu = bot.emu
    devs, ops = str(emu.state.chat("@devs").id), str(emu.state.chat("@ops").id)
    alice = str(emu.state.user("alice").id)

    def source(chat: str, thread: str, message: str) -> InboundMessage:
        return InboundMessage(
            channel="telegram",
            sender_id=alice,
            chat_id=chat,
            user_id=f"group:telegram:{chat}",
            peer_kind=PeerKind.GROUP,
            thread_id=thread,
            message_id=message,
        )

    for message, text in [
        (source(devs, "2", "7"), "in the topic"),
        (source(devs, "1", "8"), "in General"),
        (source(ops, "", "9"), "x" * 5000),
        (source(ops, "", ""), "no reply"),
    ]:
        before = len(emu.calls_to("sendMessage"))
        await bot.runner.send(OutboundMessage.reply_to(message, text))
        built = len(emu.calls_to("sendMessage"))
        await bot.runner.send_text(message, text)
        calls = [call.params for call in emu.calls_to("sendMessage")]
        assert calls[built:] == calls[before:built]
        assert built > before


async def test_group_migration_moves_grants_to_the_supergroup(bot: Bot) -> None:
    """migrate_to_chat_id: the agent's grants of the old group scope move to the new one."""
    grants = bot.runner.writers.store
    old, new = "group:telegram:-4100200300", "group:telegram:-1004100200300"
    await grants.grant(
        agent_id=bot.agent_id, scope=old, config_type="file_writer", sender_id="4242"
    )
    update = {
        "update_id": 99,
        "message": {
            "message_id": 14,
            "date": 1_700_000_000,
            "chat": {"id": -4100200300, "type": "group", "title": "friends"},
            "from": {"id": 4242, "is_bot": False, "first_name": "Alice"},
            "migrate_to_chat_id": -1004100200300,
        },
    }
    await bot.runner.handle_update(Update.de_json(update, bot.runner.bot))
    moved = await grants.list(agent_id=bot.agent_id)
    assert [(g.scope, g.sender_id, g.config_type) for g in moved] == [(new, "4242", "file_writer")]
    assert bot.seen == []


async def test_button_click_is_answered_and_runs_as_the_clicker(bot: Bot) -> None:
    """A click on a bot button in a group: answered at once; the handler runs as the clicker."""
    emu = bot.emu
    ops = emu.state.chat("@ops")
    keyboard = InlineKeyboardMarkup([[InlineKeyboardButton("Go", callback_data="go")]])
    sent = await bot.runner.bot.send_message(chat_id=ops.id, text="pick", reply_markup=keyboard)
    emu.callback_click("bob", "@ops", sent.message_id)
    await wait_until(lambda: bool(bot.seen) and bool(emu.calls_to("answerCallbackQuery")))
    ((request, bound),) = bot.seen
    assert bound is not None
    bob = str(emu.state.user("bob").id)
    assert (bound.user_id, bound.sender_id, request.content) == (
        f"group:telegram:{ops.id}",
        bob,
        "go",
    )


async def test_a_reply_to_a_click_replies_to_the_message_clicked(bot: Bot) -> None:
    """The handler's answer to a click replies to the message whose button was clicked (the
    recorded sendMessage's ``reply_parameters``), never to the click's own id."""
    emu = bot.emu
    ops = emu.state.chat("@ops")
    keyboard = InlineKeyboardMarkup([[InlineKeyboardButton("Go", callback_data="go")]])
    sent = await bot.runner.bot.send_message(chat_id=ops.id, text="pick", reply_markup=keyboard)
    emu.callback_click("bob", "@ops", sent.message_id)
    await wait_until(lambda: len(emu.calls_to("sendMessage")) == 2)
    answer = emu.calls_to("sendMessage")[1].params
    assert answer["text"] == f"hi {emu.state.user('bob').id}"
    assert answer["reply_parameters"]["message_id"] == sent.message_id
    ((request, _),) = bot.seen
    assert request.message_id != str(sent.message_id)  # the click's id, kept for dedup


async def test_a_reply_to_a_click_on_an_inline_message_replies_to_none(bot: Bot) -> None:
    """A click on an inline-mode message (no chat, no message) is answered in the clicker's
    private chat, replying to no message."""
    emu = bot.emu
    alice = emu.state.user("alice")
    update = {
        "update_id": 900001,
        "callback_query": {
            "id": "4000000000000077",
            "chat_instance": "ci",
            "data": "page:2",
            "from": {"id": alice.id, "is_bot": False, "first_name": "Alice"},
            "inline_message_id": "AAE-inline",
        },
    }
    await bot.runner.handle_update(Update.de_json(update, bot.runner.bot))
    await wait_until(lambda: bool(emu.calls_to("sendMessage")))
    (answer,) = (call.params for call in emu.calls_to("sendMessage"))
    assert (answer["chat_id"], answer["text"]) == (alice.id, f"hi {alice.id}")
    assert "reply_parameters" not in answer


async def test_a_refused_token_or_an_unreachable_api_is_one_config_error(
    emu: BotApiEmulator, db: Database
) -> None:
    """start() turns the Bot API refusing the token, or no Bot API at the address, into one
    ConfigError naming the channel, as the Discord runner does: never a library error."""
    agent = await AgentRegistry(db).create("main")
    pipeline = channel_pipeline(db, ChannelConfig(platform="telegram"), agent=agent)
    refused = TelegramRunner(
        pipeline,
        token="123456:" + "x" * 35,
        request=emu.request(),
        get_updates_request=emu.request(),
    )
    with pytest.raises(ConfigError, match=r"^telegram: the bot token was rejected: "):
        await refused.start()
    nowhere = TelegramRunner(pipeline, token=emu.token, base_url="http://127.0.0.1:1/bot")
    with pytest.raises(ConfigError, match=r"^telegram: cannot reach the Bot API: "):
        await nowhere.start()

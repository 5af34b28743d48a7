"""The Telegram simulator: real PTB processing, the adapter, turns, replies and expectations."""

from __future__ import annotations

from dataclasses import replace

import pytest
from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.ext import ApplicationBuilder, CommandHandler, ContextTypes

from actorscope.channels import IgnoreReason, Outcome
from actorscope.identity import Identity, PeerKind, SenderKind
from actorscope.platforms import IdForm, PlatformSpec, platform_specs, register
from actorscope.testing import Grants, TelegramSim, Turn
from actorscope.testing._expect import ExpectationError
from actorscope.testing._grants import Binder


def writer_bot(sim: TelegramSim) -> None:
    """A bot that checks file_writer and replies with the decision."""

    @sim.handler
    async def bot(turn: Turn) -> None:
        decision = await turn.check("file_writer")
        await turn.reply(f"{'ok' if decision.allowed else 'no'}: {decision.reason}")


async def test_forum_topic_member_writes_and_reply_lands_in_the_topic(
    telegram_sim: TelegramSim, actorscope_grants: Grants
) -> None:
    """A writer in a forum topic is allowed; the reply goes to the same chat and topic."""
    alice = telegram_sim.user("alice")
    devs = telegram_sim.supergroup("devs", forum=True)
    ideas = telegram_sim.topic(devs, "ideas")
    await actorscope_grants.allow(f"group:telegram:{devs.id}", alice)
    writer_bot(telegram_sim)
    telegram_sim.should_allow("file_writer", reason="granted", sender=alice)
    telegram_sim.should_send(text="ok: granted", chat="devs", topic="ideas")
    event = await telegram_sim.message(alice, "write notes", devs, topic=ideas)
    assert event.request is not None
    assert event.request.user_id == f"group:telegram:{devs.id}"
    assert event.request.sender_id == str(alice.id)
    assert event.request.session_key.endswith(f":topic:{ideas.thread_id}")
    sent = telegram_sim.emu.sent_messages()
    assert sent[-1]["message_thread_id"] == ideas.thread_id
    assert [c.method for c in telegram_sim.emu.bot_calls()] == ["getMe", "sendMessage"]


async def test_basic_group_non_writer_is_denied(
    telegram_sim: TelegramSim, actorscope_grants: Grants
) -> None:
    """In a basic group a member without a grant is denied (no_grant), judged as themselves."""
    alice, bob = telegram_sim.user("alice"), telegram_sim.user("bob")
    family = telegram_sim.group("family")
    await actorscope_grants.allow(f"group:telegram:{family.id}", alice)
    writer_bot(telegram_sim)
    telegram_sim.should_deny("file_writer", reason="no_grant", sender=bob)
    telegram_sim.should_send(text="no: no_grant", chat=family)
    await telegram_sim.message(bob, "write", family)


async def test_a_denied_event_has_its_audit_row_when_it_returns(telegram_sim: TelegramSim) -> None:
    """The kit settles the audit queue on event finish: the denial's row is read right after."""
    bob, devs = telegram_sim.user("bob"), telegram_sim.supergroup("devs")
    writer_bot(telegram_sim)
    await telegram_sim.message(bob, "write", devs)
    rows = await telegram_sim.env.db.fetchall(
        "SELECT sender_id, scope, reason FROM audit_log WHERE action = 'check.deny'"
    )
    assert [(r["sender_id"], r["scope"], r["reason"]) for r in rows] == [
        (str(bob.id), f"group:telegram:{devs.id}", "no_grant")
    ]


async def test_wrong_expectation_fails_with_a_diff(telegram_sim: TelegramSim) -> None:
    """Expecting an allow where the bot is denied fails, naming the event and the field."""
    bob = telegram_sim.user("bob")
    devs = telegram_sim.supergroup("devs")
    writer_bot(telegram_sim)
    telegram_sim.should_allow("file_writer")
    telegram_sim.should_send(text="ok: granted")
    with pytest.raises(ExpectationError) as failure:
        await telegram_sim.message(bob, "write", devs)
    text = str(failure.value)
    assert text.startswith("expectations not met for step 1 (telegram message by @bob in devs):")
    assert "allowed: expected 'true', got 'false'" in text
    assert "text: expected 'ok: granted', got 'no: no_grant'" in text


async def test_non_person_senders_are_ignored_by_default(telegram_sim: TelegramSim) -> None:
    """Anonymous admins, posts as a channel and channel posts never reach the bot by default."""
    devs = telegram_sim.supergroup("devs")
    news = telegram_sim.channel("news")
    writer_bot(telegram_sim)
    events = [
        await telegram_sim.anonymous_admin(devs, "hi"),
        await telegram_sim.as_channel(news, devs, "hi"),
        await telegram_sim.channel_post(news, "post"),
    ]
    assert [e.ignored for e in events] == [IgnoreReason.NONPERSON_SENDER] * 3
    assert all(not e.admitted and e.observations == [] for e in events)


async def test_private_chat_is_a_direct_context(telegram_sim: TelegramSim) -> None:
    """A private chat's scope is the sender; the check allows as not_group_context."""
    alice = telegram_sim.user("alice")
    writer_bot(telegram_sim)
    telegram_sim.should_allow(reason="not_group_context")
    telegram_sim.should_send(text="ok: not_group_context", chat=alice.id)
    event = await telegram_sim.message(alice, "hello")
    assert event.identity is not None
    assert (event.identity.user_id, event.identity.sender_kind) == (
        str(alice.id),
        SenderKind.USER,
    )


async def test_subagent_announce_is_judged_for_the_member(
    telegram_sim: TelegramSim, actorscope_grants: Grants
) -> None:
    """A sub-agent's announce runs as the member who asked: writer allowed, non-writer denied."""
    alice, bob = telegram_sim.user("alice"), telegram_sim.user("bob")
    devs = telegram_sim.supergroup("devs", forum=True)
    telegram_sim.topic(devs, "ideas")
    await actorscope_grants.allow(f"group:telegram:{devs.id}", alice)
    asked_alice = await telegram_sim.message(alice, "write", devs, topic="ideas")
    asked_bob = await telegram_sim.message(bob, "write", devs, topic="ideas")
    writer_bot(telegram_sim)
    telegram_sim.should_allow("file_writer", reason="granted", sender=alice)
    telegram_sim.should_send(text="ok: granted", chat=devs, topic="ideas")
    await telegram_sim.subagent_announce(asked_alice, "done")
    telegram_sim.should_deny("file_writer", reason="no_grant", sender=bob)
    telegram_sim.should_send(text="no: no_grant", chat=devs, topic="ideas")
    announced = await telegram_sim.subagent_announce(asked_bob, "done")
    assert announced.message is not None
    assert announced.message.sender_id.startswith("subagent:")
    assert announced.decisions[0].fields["scope"] == f"group:telegram:{devs.id}"


async def test_bind_runs_code_as_an_identity(
    actorscope_bind: Binder, actorscope_grants: Grants
) -> None:
    """actorscope_bind(sender=..., scope=...) binds an identity of the test's agent in the block."""
    from actorscope.context import current_identity

    with actorscope_bind(sender="4242", scope="group:telegram:-100123", role="admin") as identity:
        assert current_identity() == identity
        assert identity.agent_id == actorscope_grants.agent.id
        assert identity.role == "admin"
    assert current_identity() is None


def test_a_bound_identitys_channel_is_its_scopes_or_the_registrys_default(
    actorscope_bind: Binder,
) -> None:
    """Without a channel, a group scope names it; a direct one is on the first registered chat
    platform (the registry's default, Telegram), not on a name the kit keeps."""
    identity = actorscope_bind.identity
    assert identity("4242", "group:telegram:-100123").channel == "telegram"
    assert identity("4242", "guild:81:user:4242").channel == "discord"
    assert identity("4242").channel == platform_specs()[0].name == "telegram"
    with register(PlatformSpec("fakefirst", IdForm.OPAQUE, contract="tests.fakechat:PLATFORM")):
        assert identity("ann", "group:fakefirst:room").channel == "fakefirst"
    assert identity("4242", channel="http").channel == "http"


def recording_bot(sim: TelegramSim) -> list[str]:
    """A silent bot that records the text of every turn it runs."""
    turns: list[str] = []

    @sim.handler
    async def bot(turn: Turn) -> None:
        turns.append(turn.text)

    return turns


async def test_addwriter_is_answered_by_the_runner_never_the_handler(
    telegram_sim: TelegramSim,
) -> None:
    """As in production, ``/addwriter`` is answered by the pipeline; the bot never runs it."""
    alice, bob = telegram_sim.user("alice"), telegram_sim.user("bob")
    devs = telegram_sim.supergroup("devs")
    telegram_sim.make_admin(devs, alice)
    turns = recording_bot(telegram_sim)
    said = await telegram_sim.message(bob, "hello", devs)
    telegram_sim.should_send(text=f"added @bob ({bob.id}) as a writer", chat=devs)
    command = await telegram_sim.message(
        alice, "/addwriter", devs, reply_to=said.payload["message"]["message_id"]
    )
    assert command.outcome is Outcome.WRITER_COMMAND
    assert command.request is None
    assert turns == ["hello"]
    bob_there = Identity(f"group:telegram:{devs.id}", str(bob.id), peer_kind=PeerKind.GROUP)
    decision = await telegram_sim.env.policy.check_file_writer(
        replace(bob_there, agent_id=telegram_sim.env.agent.id)
    )
    assert decision.allowed


async def test_redelivered_update_is_a_duplicate(telegram_sim: TelegramSim) -> None:
    """A webhook retry of the same update runs no second turn (the runner's dedup)."""
    alice = telegram_sim.user("alice")
    turns = recording_bot(telegram_sim)
    first = await telegram_sim.message(alice, "hi")
    again = await telegram_sim.redeliver(first)
    assert (first.outcome, again.outcome) == (Outcome.ADMITTED, Outcome.DUPLICATE)
    assert again.ignored is IgnoreReason.DUPLICATE
    assert again.request is None
    assert turns == ["hi"]


async def test_button_click_is_answered(telegram_sim: TelegramSim) -> None:
    """A click runs a turn and its callback query is answered (the spinner stops)."""
    alice = telegram_sim.user("alice")
    devs = telegram_sim.supergroup("devs")
    turns = recording_bot(telegram_sim)
    posted = await telegram_sim.app.bot.send_message(
        chat_id=devs.id,
        text="choose",
        reply_markup=InlineKeyboardMarkup([[InlineKeyboardButton("yes", callback_data="yes")]]),
    )
    event = await telegram_sim.click(alice, devs, "yes", message=posted.message_id)
    assert event.request is not None
    assert turns == ["yes"]
    assert len(telegram_sim.emu.calls_to("answerCallbackQuery")) == 1


async def test_a_plain_application_is_served_as_it_is(telegram_sim: TelegramSim) -> None:
    """An application without install() has no gate to adopt: it is served as it is (None for
    the gate), and its own handler answers everyone."""

    async def note(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.effective_message is not None
        await update.effective_message.reply_text("saved")

    app = telegram_sim.application_builder().build()
    app.add_handler(CommandHandler("note", note))
    assert await telegram_sim.serve_application(app) is None
    bob = telegram_sim.user("bob")
    devs = telegram_sim.supergroup("devs")
    telegram_sim.should_send(text="saved", chat=devs)
    await telegram_sim.message(bob, "/note hi", devs)


async def test_an_application_of_another_builder_is_refused(telegram_sim: TelegramSim) -> None:
    """An application not built from ``application_builder()`` (its bot would call Telegram)
    is refused with one error naming the builder, not a network error of its first request."""
    app = ApplicationBuilder().token("123456:elsewhere").build()
    with pytest.raises(RuntimeError, match=r"telegram_sim\.application_builder\(\)"):
        await telegram_sim.serve_application(app)

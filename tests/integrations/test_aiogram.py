"""actorscope.integrations.aiogram: the aiogram notes bot (examples/aiogram_notes_bot.py)
through the kit, and the gate in the ways aiogram bots are written (routers, flags, FSM)."""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import re
import runpy
import signal
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from aiogram import Bot, Dispatcher, F, Router, flags
from aiogram.dispatcher.event.bases import SkipHandler
from aiogram.filters import Command, StateFilter
from aiogram.fsm.context import FSMContext
from aiogram.fsm.state import State, StatesGroup
from aiogram.types import (
    CallbackQuery,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    Message,
    PollAnswer,
)
from tests._process import interrupted
from tests._wait import wait_until

from actorscope.channels import IgnoreReason, Outcome
from actorscope.context import current_identity
from actorscope.errors import ConfigError, IdentityError
from actorscope.identity import Identity
from actorscope.integrations.aiogram import gate, install, requires, run_sandbox
from actorscope.messages import RunRequest
from actorscope.permissions import GrantStore
from actorscope.store import Database
from actorscope.testing import AgentEnv, Grants, SimulatedEvent, TelegramSim

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "aiogram_notes_bot.py"
GUIDE = ROOT / "docs" / "guides" / "aiogram.md"
Build = Callable[..., Dispatcher]


@pytest.fixture(scope="module")
def build_dispatcher() -> Build:
    """The example's ``build_dispatcher``."""
    build: Build = runpy.run_path(str(EXAMPLE), run_name="aiogram_notes_bot")["build_dispatcher"]
    return build


@pytest.fixture
def dp(build_dispatcher: Build, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Dispatcher:
    """The example bot as the guide builds it (no overrides), run from ``tmp_path``: served,
    it is adopted onto the sim's database, agent ``main`` and workspace (``tmp/workspace``)."""
    monkeypatch.chdir(tmp_path)
    return build_dispatcher()


def _notes(root: Path) -> str:
    return "".join(p.read_text() for p in sorted(root.rglob("notes.md")))


async def test_writer_is_allowed_and_the_note_is_saved(
    telegram_sim: TelegramSim, dp: Dispatcher, actorscope_grants: Grants, tmp_path: Path
) -> None:
    """A writer's /note in a group is allowed (granted), saved in the group's notes, answered."""
    alice = telegram_sim.user("alice")
    devs = telegram_sim.supergroup("devs")
    await actorscope_grants.allow(f"group:telegram:{devs.id}", alice)
    await telegram_sim.serve_dispatcher(dp)
    telegram_sim.should_allow("file_writer", reason="granted", sender=alice)
    telegram_sim.should_send(text="saved", chat=devs)
    event = await telegram_sim.message(alice, "/note ship it", devs)
    assert event.outcome is Outcome.ADMITTED
    assert event.identity is not None
    assert event.identity.user_id == f"group:telegram:{devs.id}"
    assert event.identity.sender_id == str(alice.id)
    assert f"- ship it (by {alice.id})" in _notes(tmp_path / "workspace")


async def test_a_stranger_is_denied_with_no_grant_and_told(
    telegram_sim: TelegramSim, dp: Dispatcher, tmp_path: Path
) -> None:
    """A member without a grant is denied (no_grant) and told so as a reply; nothing is
    written."""
    bob = telegram_sim.user("bob")
    devs = telegram_sim.supergroup("devs")
    await telegram_sim.serve_dispatcher(dp)
    telegram_sim.should_deny("file_writer", reason="no_grant", sender=bob)
    telegram_sim.should_send(text="denied: no_grant", chat=devs)
    event = await telegram_sim.message(bob, "/note sneaky", devs)
    [denial] = telegram_sim.emu.sent_messages()
    assert denial["reply_to_message"]["message_id"] == event.payload["message"]["message_id"]
    assert _notes(tmp_path / "workspace") == ""


async def _non_person_events(telegram_sim: TelegramSim, expect: bool) -> list[SimulatedEvent]:
    """An anonymous admin, a post as a channel and a bot, each ``/note`` (``expect``: each is
    declared denied with empty_sender), then a channel post (no message handler's)."""
    devs = telegram_sim.supergroup("devs")
    news = telegram_sim.channel("news")
    robot = telegram_sim.emu.state.add_user("Robot", username="robot_bot", is_bot=True)
    events = []
    sends: list[Callable[[], Awaitable[SimulatedEvent]]] = [
        functools.partial(telegram_sim.anonymous_admin, devs, "/note anon"),
        functools.partial(telegram_sim.as_channel, news, devs, "/note as channel"),
        functools.partial(telegram_sim.message, robot, "/note beep", devs),
    ]
    for send in sends:
        if expect:
            telegram_sim.should_deny("file_writer", reason="empty_sender")
            telegram_sim.should_send(text="denied: empty_sender", chat=devs)
        events.append(await send())
    events.append(await telegram_sim.channel_post(news, "/note post"))
    return events


async def test_an_anonymous_admin_and_a_post_as_a_channel_never_write(
    telegram_sim: TelegramSim, dp: Dispatcher, tmp_path: Path
) -> None:
    """install() drops no non-person: each reaches the bot's routers with its identity (no
    sender, its kind), and ``requires`` denies them (empty_sender); nothing is written."""
    seen: list[tuple[str, str]] = []
    watch = Router(name="watch")

    @watch.message()
    @watch.channel_post()
    async def anything(message: Message, identity: Identity) -> None:
        seen.append((identity.sender_id, identity.sender_kind.value))

    dp.include_router(watch)
    await telegram_sim.serve_dispatcher(dp)
    events = await _non_person_events(telegram_sim, expect=True)
    assert [e.ignored for e in events] == [None] * 4
    # The /note ones stop at note() (denied); the channel post reaches the watcher.
    assert seen == [("", "channel")]
    assert _notes(tmp_path / "workspace") == ""


async def test_drop_non_persons_is_an_option(
    telegram_sim: TelegramSim, build_dispatcher: Build
) -> None:
    """install(drop_non_persons=True) stops non-persons in the gate: no handler sees them."""
    dp = build_dispatcher(drop_non_persons=True)
    seen: list[int] = []
    watch = Router(name="watch")

    @watch.message()
    @watch.channel_post()
    async def anything(message: Message) -> None:
        seen.append(message.message_id)

    dp.include_router(watch)
    await telegram_sim.serve_dispatcher(dp)
    events = await _non_person_events(telegram_sim, expect=False)
    assert [e.ignored for e in events] == [
        IgnoreReason.NONPERSON_SENDER,
        IgnoreReason.NONPERSON_SENDER,
        IgnoreReason.BOT_SENDER,
        IgnoreReason.NONPERSON_SENDER,
    ]
    assert seen == []
    assert all(e.decisions == [] and e.request is None for e in events)
    assert telegram_sim.emu.sent_messages() == []


async def test_unmentioned_group_text_reaches_a_group_text_handler(
    telegram_sim: TelegramSim, dp: Dispatcher
) -> None:
    """A handler on group text (``F.text``, ``F.chat.type``) still sees text that does not
    mention the bot, with the identity in its data and bound (``current_identity()``)."""
    heard: list[tuple[str, str, str]] = []
    chat = Router(name="chat")

    @chat.message(F.text, F.chat.type.in_({"group", "supergroup"}))
    async def chatter(message: Message, identity: Identity, run_request: RunRequest) -> None:
        bound = current_identity()
        assert bound is not None
        assert run_request.sender_id == identity.sender_id
        heard.append((message.text or "", identity.sender_id, bound.sender_id))

    dp.include_router(chat)
    alice = telegram_sim.user("alice")
    devs = telegram_sim.supergroup("devs")
    await telegram_sim.serve_dispatcher(dp)
    event = await telegram_sim.message(alice, "lunch at noon?", devs)
    assert heard == [("lunch at noon?", str(alice.id), str(alice.id))]
    assert event.outcome is Outcome.ADMITTED


async def test_require_mention_is_an_option(
    telegram_sim: TelegramSim, build_dispatcher: Build
) -> None:
    """install(require_mention=True) stops un-addressed group text, as `actorscope run` does;
    a mention still gets through."""
    dp = build_dispatcher(require_mention=True)
    heard: list[str] = []
    chat = Router(name="chat")

    @chat.message(F.text)
    async def chatter(message: Message) -> None:
        heard.append(message.text or "")

    dp.include_router(chat)
    alice = telegram_sim.user("alice")
    devs = telegram_sim.supergroup("devs")
    await telegram_sim.serve_dispatcher(dp)
    quiet = await telegram_sim.message(alice, "lunch at noon?", devs)
    await telegram_sim.message(alice, "lunch @actorscope_bot?", devs)
    assert quiet.ignored is IgnoreReason.NOT_MENTIONED
    assert heard == ["lunch @actorscope_bot?"]


async def test_the_show_button_answers_its_own_click(
    telegram_sim: TelegramSim, dp: Dispatcher, actorscope_grants: Grants
) -> None:
    """The example's button handler calls ``await callback.answer()`` (aiogram's pattern): the
    gate leaves an allowed click unanswered, so it works, once, and the notes are shown."""
    alice, bob = telegram_sim.user("alice"), telegram_sim.user("bob")
    devs = telegram_sim.supergroup("devs")
    await actorscope_grants.allow(f"group:telegram:{devs.id}", alice)
    await telegram_sim.serve_dispatcher(dp)
    await telegram_sim.message(alice, "/note ship it", devs)
    saved = telegram_sim.emu.sent_messages()[-1]
    assert saved["reply_markup"]["inline_keyboard"][0][0]["callback_data"] == "show"
    event = await telegram_sim.click(bob, devs, "show")
    answers = [c for c in telegram_sim.emu.bot_calls() if c.method == "answerCallbackQuery"]
    assert len(answers) == 1
    assert answers[0].response is not None
    assert answers[0].response.ok
    assert event.identity is not None
    assert event.identity.sender_id == str(bob.id)
    edits = [c for c in telegram_sim.emu.bot_calls() if c.method == "editMessageText"]
    assert [c.params["text"] for c in edits] == [f"- ship it (by {alice.id})\n"]


def _danger_router(ran: list[str]) -> Router:
    """``/danger`` offers a "wipe" button, whose handler is writer-only."""
    router = Router(name="danger")

    @router.message(Command("danger"))
    async def danger(message: Message) -> None:
        button = InlineKeyboardButton(text="wipe", callback_data="wipe")
        await message.answer(
            "danger", reply_markup=InlineKeyboardMarkup(inline_keyboard=[[button]])
        )

    @router.callback_query(F.data == "wipe")
    @requires("file_writer")
    async def wipe(callback: CallbackQuery) -> None:
        ran.append("wipe")
        await callback.answer("wiped")

    return router


async def test_a_denied_click_is_answered_with_the_reason_as_an_alert(
    telegram_sim: TelegramSim, dp: Dispatcher
) -> None:
    """``requires`` on a button handler answers a denied click itself: ``denied: <reason>``
    as an alert, and the handler does not run."""
    ran: list[str] = []
    dp.include_router(_danger_router(ran))
    bob = telegram_sim.user("bob")
    devs = telegram_sim.supergroup("devs")
    await telegram_sim.serve_dispatcher(dp)
    await telegram_sim.message(bob, "/danger", devs)
    telegram_sim.should_deny("file_writer", reason="no_grant", sender=bob)
    await telegram_sim.click(bob, devs, "wipe")
    answers = [c for c in telegram_sim.emu.bot_calls() if c.method == "answerCallbackQuery"]
    assert [(c.params.get("text"), c.params.get("show_alert")) for c in answers] == [
        ("denied: no_grant", True)
    ]
    assert ran == []


async def test_addwriter_then_the_writer_notes_and_a_revoke_is_seen_on_the_next_message(
    telegram_sim: TelegramSim, dp: Dispatcher
) -> None:
    """An admin's /addwriter (a reply) is answered by the gate's router, even past a
    catch-all of the dispatcher's own, which never sees it; bob then notes and adds carol;
    carol's /removewriter revokes bob, and his next /note is denied."""
    seen: list[str] = []

    @dp.message(~F.text.startswith("/note"))  # everything else, before any router's handler
    async def anything(message: Message) -> None:
        seen.append(message.text or "")

    alice, bob, carol = (telegram_sim.user(n) for n in ("alice", "bob", "carol"))
    devs = telegram_sim.supergroup("devs")
    telegram_sim.make_admin(devs, alice)
    await telegram_sim.serve_dispatcher(dp)
    said = await telegram_sim.message(bob, "hi all", devs)
    told = await telegram_sim.message(carol, "me too", devs)
    telegram_sim.should_send(text=f"added @bob ({bob.id}) as a writer", chat=devs)
    added = await telegram_sim.message(
        alice, "/addwriter", devs, reply_to=said.payload["message"]["message_id"]
    )
    assert added.outcome is Outcome.WRITER_COMMAND
    telegram_sim.should_allow("file_writer", reason="granted", sender=bob)
    telegram_sim.should_send(text="saved", chat=devs)
    await telegram_sim.message(bob, "/note mine", devs)
    telegram_sim.should_send(text=f"added @carol ({carol.id}) as a writer", chat=devs)
    await telegram_sim.message(
        bob, "/addwriter", devs, reply_to=told.payload["message"]["message_id"]
    )
    telegram_sim.should_send(text=f"removed @bob ({bob.id}) from the writers", chat=devs)
    await telegram_sim.message(
        carol, "/removewriter", devs, reply_to=said.payload["message"]["message_id"]
    )
    telegram_sim.should_deny("file_writer", reason="no_grant", sender=bob)
    telegram_sim.should_send(text="denied: no_grant", chat=devs)
    await telegram_sim.message(bob, "/note again", devs)
    telegram_sim.should_send(text=f"writers: @carol ({carol.id})", chat=devs)
    await telegram_sim.message(bob, "/writers", devs)
    assert seen == ["hi all", "me too"]  # the writer commands went to the gate's router only


async def test_a_redelivered_update_is_dropped(
    telegram_sim: TelegramSim, dp: Dispatcher, actorscope_grants: Grants
) -> None:
    """The very same update delivered twice (a webhook retry) reaches the handlers once."""
    alice = telegram_sim.user("alice")
    devs = telegram_sim.supergroup("devs")
    await actorscope_grants.allow(f"group:telegram:{devs.id}", alice)
    await telegram_sim.serve_dispatcher(dp)
    first = await telegram_sim.message(alice, "/note once", devs)
    again = await telegram_sim.redeliver(first)
    assert again.outcome is Outcome.DUPLICATE
    assert again.decisions == []
    assert [m["text"] for m in telegram_sim.emu.sent_messages()] == ["saved"]


async def test_revoke_elsewhere_is_seen_within_one_second(
    telegram_sim: TelegramSim, dp: Dispatcher, actorscope_grants: Grants, actorscope_env: AgentEnv
) -> None:
    """A grant revoked through another connection denies within 1 s (the Database's feed)."""
    alice = telegram_sim.user("alice")
    devs = telegram_sim.supergroup("devs")
    scope = f"group:telegram:{devs.id}"
    await actorscope_grants.allow(scope, alice)
    await telegram_sim.serve_dispatcher(dp)
    event = await telegram_sim.message(alice, "/note one", devs)
    assert [d.fields["allowed"] for d in event.decisions] == ["true"]
    async with Database.open(actorscope_env.db.path) as other:
        await GrantStore(other).revoke(
            agent_id=actorscope_env.agent.id,
            scope=scope,
            config_type="file_writer",
            sender_id=str(alice.id),
        )
    revoked = time.monotonic()
    allowed_after: list[float] = []  # for each note still allowed: when it was sent
    reasons: list[str] = []

    async def denied() -> bool:
        sent = time.monotonic()
        fields = (await telegram_sim.message(alice, "/note again", devs)).decisions[-1].fields
        if fields["allowed"] == "true":
            allowed_after.append(sent - revoked)
            return False
        reasons.append(fields["reason"])
        return True

    await wait_until(denied)
    assert reasons == ["no_grant"]
    # The promise (docs/design.md, freshness): no allow more than 1 s after the change.
    assert all(after <= 1.0 for after in allowed_after), allowed_after


def _nested(ran: list[str]) -> Router:
    """A router inside a router inside a router, gated three ways: the decorator under the
    router's, the decorator above it, the handler flag (aiogram's ``flags`` too)."""
    outer, middle, inner = Router(name="outer"), Router(name="middle"), Router(name="inner")
    outer.include_router(middle)
    middle.include_router(inner)

    @inner.message(Command("under"))
    @requires("file_writer")
    async def under(message: Message, identity: Identity) -> None:
        ran.append(f"under {identity.sender_id}")

    @requires("file_writer")
    @inner.message(Command("above"))
    async def above(message: Message) -> None:
        ran.append("above")

    @inner.message(Command("flagged"), flags={"requires": "file_writer"})
    async def flagged(message: Message) -> None:
        ran.append("flagged")

    @inner.message(Command("flags"))
    @flags.requires("heartbeat")
    async def with_flags(message: Message) -> None:
        ran.append("flags")

    @inner.message(Command("open"))
    async def open_to_all(message: Message) -> None:
        ran.append("open")

    return outer


async def test_nested_routers_are_gated_every_way_a_handler_can_say_it(
    telegram_sim: TelegramSim, dp: Dispatcher, actorscope_grants: Grants
) -> None:
    """In a router nested two deep, ``requires`` under or above the router's decorator and
    the ``requires`` flag (``flags=`` or aiogram's ``flags.requires``) all gate; an ungated
    handler beside them runs for anyone."""
    ran: list[str] = []
    dp.include_router(_nested(ran))
    alice, bob = telegram_sim.user("alice"), telegram_sim.user("bob")
    devs = telegram_sim.supergroup("devs")
    await actorscope_grants.allow(f"group:telegram:{devs.id}", alice)
    await telegram_sim.serve_dispatcher(dp)
    for command, action in (
        ("/under", "file_writer"),
        ("/above", "file_writer"),
        ("/flagged", "file_writer"),
        ("/flags", "heartbeat"),
    ):
        telegram_sim.should_deny(action, reason="no_grant", sender=bob)
        telegram_sim.should_send(text="denied: no_grant", chat=devs)
        await telegram_sim.message(bob, command, devs)
        if action == "file_writer":
            telegram_sim.should_allow(action, reason="granted", sender=alice)
        else:
            telegram_sim.should_deny(action, reason="no_grant", sender=alice)
            telegram_sim.should_send(text="denied: no_grant", chat=devs)
        await telegram_sim.message(alice, command, devs)
    await telegram_sim.message(bob, "/open", devs)
    assert ran == [f"under {alice.id}", "above", "flagged", "open"]


class Rename(StatesGroup):
    """A two-step FSM conversation."""

    title = State()


def _rename(titles: list[str]) -> Router:
    router = Router(name="rename")

    @router.message(Command("rename"))
    @requires("file_writer")
    async def start(message: Message, state: FSMContext) -> None:
        await state.set_state(Rename.title)
        await message.answer("new title?")

    @router.message(Rename.title, F.text)
    @requires("file_writer")
    async def title(message: Message, state: FSMContext, identity: Identity) -> None:
        titles.append(f"{message.text} by {identity.sender_id}")
        await state.clear()
        await message.answer("renamed")

    @router.message(StateFilter(None), F.text)
    async def chatter(message: Message) -> None:
        titles.append(f"chatter {message.text}")

    return router


async def test_an_fsm_conversation_keeps_working_and_a_revoke_denies_its_next_step(
    telegram_sim: TelegramSim, dp: Dispatcher, actorscope_grants: Grants
) -> None:
    """An FSM conversation runs as in plain aiogram (its state, its steps); a writer revoked
    between two steps is denied the next one, whose state stays as it was."""
    titles: list[str] = []
    dp.include_router(_rename(titles))
    alice = telegram_sim.user("alice")
    devs = telegram_sim.supergroup("devs")
    scope = f"group:telegram:{devs.id}"
    await actorscope_grants.allow(scope, alice)
    await telegram_sim.serve_dispatcher(dp)
    telegram_sim.should_allow("file_writer", reason="granted", sender=alice)
    telegram_sim.should_send(text="new title?", chat=devs)
    await telegram_sim.message(alice, "/rename", devs)
    telegram_sim.should_allow("file_writer", reason="granted", sender=alice)
    telegram_sim.should_send(text="renamed", chat=devs)
    await telegram_sim.message(alice, "Plans", devs)
    await telegram_sim.message(alice, "after", devs)  # the conversation is over
    assert titles == [f"Plans by {alice.id}", "chatter after"]
    await telegram_sim.message(alice, "/rename", devs)
    await actorscope_grants.revoke(scope, alice)
    telegram_sim.should_deny("file_writer", reason="no_grant", sender=alice)
    telegram_sim.should_send(text="denied: no_grant", chat=devs)
    await telegram_sim.message(alice, "Secret", devs)
    telegram_sim.should_deny("file_writer", reason="no_grant", sender=alice)
    telegram_sim.should_send(text="denied: no_grant", chat=devs)
    await telegram_sim.message(alice, "Still", devs)  # still in the state: denied again
    assert titles == [f"Plans by {alice.id}", "chatter after"]


async def test_a_gated_handler_in_a_dispatcher_without_the_gate_never_runs(
    telegram_sim: TelegramSim,
) -> None:
    """``requires`` fails closed where install() is missing: the handler does not run and
    the error names the fix; the plain dispatcher is served as it is (no gate)."""
    ran: list[str] = []
    dp = Dispatcher()
    dp.include_router(_danger_router(ran))
    assert await telegram_sim.serve_dispatcher(dp) is None
    bob = telegram_sim.user("bob")
    devs = telegram_sim.supergroup("devs")
    await telegram_sim.message(bob, "/danger", devs)
    with pytest.raises(ConfigError, match=r"call install\(dp\)"):
        await telegram_sim.click(bob, devs, "wipe")
    assert ran == []


async def test_the_guides_two_lines_judge_on_the_tests_grants_and_write_no_bot_file(
    telegram_sim: TelegramSim,
    actorscope_grants: Grants,
    actorscope_env: AgentEnv,
    build_dispatcher: Build,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``serve_dispatcher(build_dispatcher())``, no overrides: the gate is adopted onto the
    test's database, agent and workspace, the test's grant decides, and no notes.db is made."""
    monkeypatch.chdir(tmp_path)
    alice = telegram_sim.user("alice")
    devs = telegram_sim.supergroup("devs")
    await actorscope_grants.allow(f"group:telegram:{devs.id}", alice)
    served = await telegram_sim.serve_dispatcher(build_dispatcher())
    assert served is not None
    opened = served.opened
    assert opened.database is actorscope_env.db
    assert opened.agent.id == actorscope_env.agent.id
    assert opened.adopted is not None
    assert opened.workspace == tmp_path / "workspace"
    telegram_sim.should_allow("file_writer", reason="granted", sender=alice)
    telegram_sim.should_send(text="saved", chat=devs)
    await telegram_sim.message(alice, "/note adopted", devs)
    assert not (tmp_path / "notes.db").exists()
    assert "adopted" in _notes(tmp_path / "workspace")


async def test_a_test_keeps_the_dispatchers_own_database_only_when_it_says_so(
    telegram_sim: TelegramSim, actorscope_grants: Grants, dp: Dispatcher, tmp_path: Path
) -> None:
    """``serve_dispatcher(dp, adopt=False)`` opens the bot's own notes.db at startup, where
    the test's grant does not exist (the writer is denied there), and closes it at shutdown."""
    alice = telegram_sim.user("alice")
    devs = telegram_sim.supergroup("devs")
    await actorscope_grants.allow(f"group:telegram:{devs.id}", alice)
    served = await telegram_sim.serve_dispatcher(dp, adopt=False)
    assert served is not None
    assert served.opened.adopted is None
    assert served.opened.url == "notes.db"
    assert served.opened.agent.key == "notes"
    telegram_sim.should_deny("file_writer", reason="no_grant", sender=alice)
    telegram_sim.should_send(text="denied: no_grant", chat=devs)
    await telegram_sim.message(alice, "/note mine", devs)
    assert (tmp_path / "notes.db").exists()
    await telegram_sim.stop()
    assert not served.is_open


async def test_a_dispatcher_started_before_serving_is_refused(
    telegram_sim: TelegramSim, dp: Dispatcher
) -> None:
    """A gate opened before serve_dispatcher cannot be adopted: one clear error."""
    the_gate = gate(dp)
    await the_gate.open()
    try:
        with pytest.raises(RuntimeError, match="open already"):
            await telegram_sim.serve_dispatcher(dp)
    finally:
        await the_gate.close()


async def test_the_gate_opens_first_and_closes_after_the_dispatchers_shutdown(
    telegram_sim: TelegramSim,
) -> None:
    """The bot's own startup handler, registered before install(), finds the gate open and
    its services on the agent; its shutdown handler, registered after, still finds it open;
    then the gate closes."""
    seen: list[str] = []
    dp = Dispatcher()

    @dp.startup()
    async def hello(bot: Bot) -> None:
        seen.append(f"start {the_gate.services.agent.key} as {(await bot.me()).username}")

    the_gate = install(dp, database="notes.db")

    @dp.shutdown()
    async def bye() -> None:
        seen.append(f"stop open={the_gate.is_open}")

    await telegram_sim.serve_dispatcher(dp)
    await telegram_sim.stop()
    assert seen == ["start main as actorscope_bot", "stop open=True"]
    assert not the_gate.is_open


async def test_a_denial_logs_one_info_line_and_no_traceback(
    telegram_sim: TelegramSim, dp: Dispatcher, caplog: pytest.LogCaptureFixture
) -> None:
    """A denied /note is an answer, not a failure: one INFO line of actorscope's, no error."""
    bob = telegram_sim.user("bob")
    devs = telegram_sim.supergroup("devs")
    await telegram_sim.serve_dispatcher(dp)
    caplog.set_level(logging.INFO)
    await telegram_sim.message(bob, "/note sneaky", devs)
    ours = [r for r in caplog.records if r.name == "actorscope.integrations.aiogram"]
    assert [r.levelno for r in ours] == [logging.INFO]
    assert ours[0].getMessage().startswith("aiogram.denied file_writer sender=")
    assert all(r.exc_info is None and r.levelno < logging.WARNING for r in caplog.records)


async def test_bad_install_arguments_are_one_clear_error(actorscope_env: AgentEnv) -> None:
    """install() and requires() refuse bad input with a ConfigError naming the problem."""
    dp = Dispatcher()
    with pytest.raises(ConfigError, match="Dispatcher"):
        install(object(), database="x.db")  # type: ignore[arg-type]  # the wrong type on purpose
    with pytest.raises(ConfigError, match="owners"):
        install(dp, database="x.db", owners="42")
    with pytest.raises(IdentityError):
        install(dp, database="x.db", agent="not a key!")
    with pytest.raises(ConfigError, match="require_mention"):
        install(dp, database="x.db", require_mention="yes")  # type: ignore[arg-type]
    install(dp, database=actorscope_env.db)
    with pytest.raises(ConfigError, match="already installed"):
        install(dp, database=actorscope_env.db)
    with pytest.raises(ConfigError, match="permission name"):
        requires("file_wrtier")
    with pytest.raises(ConfigError, match="not installed"):
        gate(Dispatcher())


async def test_a_bad_requires_flag_runs_no_handler(
    telegram_sim: TelegramSim, dp: Dispatcher
) -> None:
    """A ``requires`` flag naming no permission is the bot's error, never an open door: the
    handler does not run."""
    ran: list[str] = []
    router = Router(name="typo")

    @router.message(Command("wipe"), flags={"requires": "file_wrtier"})
    async def wipe(message: Message) -> None:
        ran.append("wipe")

    dp.include_router(router)
    await telegram_sim.serve_dispatcher(dp)
    with pytest.raises(ConfigError, match="file_wrtier"):
        await telegram_sim.message(telegram_sim.user("bob"), "/wipe")
    assert ran == []


def test_example_runs_offline_in_the_sandbox(
    tmp_path: Path, build_dispatcher: Build, monkeypatch: pytest.MonkeyPatch
) -> None:
    """python examples/aiogram_notes_bot.py --sandbox: a writer-less group denies, a DM
    saves."""
    monkeypatch.chdir(tmp_path)
    lines = ["/as bob @devs /note hi", "/anon @devs /note x", "/as bob /note private"]

    async def typed() -> AsyncIterator[str]:
        for line in lines:
            yield line

    out: list[str] = []
    status = run_sandbox(build_dispatcher, lines=typed(), out=out.append)
    text = "\n".join(out)
    assert status == 0
    assert "denied: no_grant" in text
    assert "denied: empty_sender" in text  # the anonymous admin reached note(): requires
    assert "saved" in text
    assert "private" in _notes(tmp_path / "workspace")
    assert (tmp_path / "notes.db").exists()  # the bot's own database, as it runs


def test_example_without_a_token_says_so(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The example with no TELEGRAM_BOT_TOKEN exits 2 with one line naming the variable."""
    monkeypatch.delenv("TELEGRAM_BOT_TOKEN", raising=False)
    main = runpy.run_path(str(EXAMPLE), run_name="aiogram_notes_bot")["main"]
    assert main([]) == 2
    err = capsys.readouterr().err
    assert err == "aiogram_notes_bot: error: set TELEGRAM_BOT_TOKEN (or use --sandbox)\n"


async def test_ctrl_c_stops_the_examples_sandbox_cleanly(tmp_path: Path) -> None:
    """``python examples/aiogram_notes_bot.py --sandbox``, Ctrl-C once the bot answered: exit
    0, ``stopped``, and nothing on stderr (no traceback)."""
    status, out, err = await interrupted(
        [sys.executable, str(EXAMPLE), "--sandbox"], tmp_path, "/as bob /note hi", b"saved"
    )
    assert status == 0
    assert out.splitlines()[-1] == "stopped"
    assert err == ""


def _guide_block(after: str) -> str:
    """The python block of the aiogram guide that follows the text ``after``."""
    text = GUIDE.read_text(encoding="utf-8")
    match = re.search(r"```python\n(.*?)```", text[text.index(after) :], re.DOTALL)
    assert match is not None, f"no python block after {after!r}"
    return match.group(1)


async def test_the_guides_flag_router_gates_both_handlers(
    telegram_sim: TelegramSim, dp: Dispatcher, actorscope_grants: Grants
) -> None:
    """The guide's router, as typed there (``flags={"requires": ...}`` and aiogram's
    ``flags.requires``), included in the example's dispatcher: a stranger is denied both
    commands, a writer gets both answers."""
    namespace: dict[str, Any] = {}
    code = compile(_guide_block("the flag `requires` is the same gate"), str(GUIDE), "exec")
    exec(code, namespace)  # noqa: S102 - the guide's own code, as a user types it
    dp.include_router(namespace["router"])
    alice, bob = telegram_sim.user("alice"), telegram_sim.user("bob")
    devs = telegram_sim.supergroup("devs")
    await actorscope_grants.allow(f"group:telegram:{devs.id}", alice)
    await telegram_sim.serve_dispatcher(dp)
    for command, answer in (("/wipe", "wiped"), ("/archive", "archived")):
        telegram_sim.should_deny("file_writer", reason="no_grant", sender=bob)
        telegram_sim.should_send(text="denied: no_grant", chat=devs)
        await telegram_sim.message(bob, command, devs)
        telegram_sim.should_allow("file_writer", reason="granted", sender=alice)
        telegram_sim.should_send(text=answer, chat=devs)
        await telegram_sim.message(alice, command, devs)


BOT_PROCESS = """
import asyncio, os, sys

from aiogram import Bot
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer

sys.path.insert(0, os.environ["EXAMPLES"])
from aiogram_notes_bot import build_dispatcher

api = TelegramAPIServer.from_base(os.environ["ROOT"])
bot = Bot(os.environ["TOKEN"], session=AiohttpSession(api=api))
asyncio.run(build_dispatcher().start_polling(bot, polling_timeout=1))
"""


async def _line_with(stream: asyncio.StreamReader, marker: str) -> str:
    """Read lines until one contains ``marker`` (the caller bounds the wait)."""
    text = ""
    while marker not in text:
        line = await stream.readline()
        if not line:
            raise AssertionError(f"output ended before {marker!r}: {text}")
        text += line.decode()
    return text


async def test_an_aiogram_bots_own_process_talks_through_actorscope_sandbox(
    tmp_path: Path,
) -> None:
    """``actorscope sandbox`` prints the root an aiogram ``Bot`` takes; the notes bot, in its
    own process pointed there, answers what is typed at the prompt, and stops on SIGINT."""
    sandbox = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "actorscope",
        "sandbox",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    bot: asyncio.subprocess.Process | None = None
    assert sandbox.stdin is not None
    assert sandbox.stdout is not None
    try:
        header = await asyncio.wait_for(_line_with(sandbox.stdout, "aiogram:"), 15.0)
        root, token = re.search(r"root: +(\S+)", header), re.search(r"token: +(\S+)", header)
        assert root is not None
        assert token is not None
        env = {**os.environ, "ROOT": root[1], "TOKEN": token[1], "EXAMPLES": str(EXAMPLE.parent)}
        bot = await asyncio.create_subprocess_exec(
            sys.executable, "-c", BOT_PROCESS, env=env, cwd=tmp_path
        )
        sandbox.stdin.write(b"/as alice /note from its own process\n")
        await sandbox.stdin.drain()
        shown = await asyncio.wait_for(_line_with(sandbox.stdout, "[bot ->"), 30.0)
        assert re.search(r"\[bot -> private @alice msg \d+\] saved", shown), shown
        bot.send_signal(signal.SIGINT)  # aiogram's polling stops on it, shutdown runs
        assert await asyncio.wait_for(bot.wait(), 20.0) == 0
        sandbox.stdin.write(b"/quit\n")
        await sandbox.stdin.drain()
        rest = await asyncio.wait_for(sandbox.stdout.read(), 10.0)
        assert await asyncio.wait_for(sandbox.wait(), 10.0) == 0
        assert rest.decode().endswith("sandbox stopped\n")
        assert "from its own process" in _notes(tmp_path / "workspace")
    finally:
        for proc in (bot, sandbox):
            if proc is not None and proc.returncode is None:
                proc.kill()
                await proc.wait()


async def test_an_update_naming_no_person_reaches_its_handler_and_requires_denies_it(
    telegram_sim: TelegramSim, dp: Dispatcher, caplog: pytest.LogCaptureFixture
) -> None:
    """A poll answer names no person the adapter knows: it reaches the bot's poll_answer
    handlers with ``identity`` None; a gated one is denied (one INFO line, nothing sent); the
    very same update delivered again reaches none."""
    answers: list[str] = []
    polls = Router(name="polls")

    @polls.message(Command("poll"))
    async def ask(message: Message) -> None:
        await message.answer_poll("lunch?", options=["yes", "no"], is_anonymous=False)

    @polls.poll_answer()
    async def seen(poll_answer: PollAnswer, identity: Identity | None) -> None:
        answers.append(f"seen identity={identity}")
        raise SkipHandler  # and on to the next handler

    @polls.poll_answer()
    @requires("file_writer")
    async def counted(poll_answer: PollAnswer) -> None:
        answers.append("counted")

    dp.include_router(polls)
    bob = telegram_sim.user("bob")
    devs = telegram_sim.supergroup("devs")
    await telegram_sim.serve_dispatcher(dp)
    await telegram_sim.message(bob, "/poll", devs)
    caplog.set_level(logging.INFO)
    vote = await telegram_sim.vote(bob, devs, ["yes"])
    assert vote.identity is None
    assert answers == ["seen identity=None"]
    assert [r.getMessage() for r in caplog.records if r.name.endswith(".aiogram")] == [
        f"aiogram.denied update={vote.payload['update_id']} file_writer: it carries no identity"
    ]
    await telegram_sim.redeliver(vote)
    assert answers == ["seen identity=None"]
    sent = [c.method for c in telegram_sim.emu.bot_calls() if c.method.startswith("send")]
    assert sent == ["sendPoll"]  # no answer to the vote


async def test_a_closed_gate_hands_no_update_on(
    telegram_sim: TelegramSim, dp: Dispatcher, caplog: pytest.LogCaptureFixture
) -> None:
    """An update reaching a dispatcher whose gate is not open is dropped, with one ERROR line:
    it never reaches a handler unjudged."""
    ran: list[str] = []
    chat = Router(name="chat")

    @chat.message()
    async def anything(message: Message) -> None:
        ran.append(message.text or "")

    dp.include_router(chat)
    the_gate = await telegram_sim.serve_dispatcher(dp)
    assert the_gate is not None
    await the_gate.close()
    await telegram_sim.message(telegram_sim.user("bob"), "hello")
    assert ran == []
    dropped = [r for r in caplog.records if "aiogram.update_dropped" in r.getMessage()]
    assert [r.levelno for r in dropped] == [logging.ERROR]

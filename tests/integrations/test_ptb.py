"""actorscope.integrations.ptb: the PTB notes bot (examples/ptb_notes_bot.py) through the kit."""

from __future__ import annotations

import asyncio
import functools
import logging
import runpy
import sqlite3
import sys
import time
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.ext import (
    Application,
    ApplicationBuilder,
    CallbackQueryHandler,
    CommandHandler,
    ContextTypes,
    ConversationHandler,
    Defaults,
    Job,
    JobQueue,
    MessageHandler,
    TypeHandler,
    filters,
)
from tests._process import interrupted
from tests._wait import wait_until

from actorscope.channels import ChannelConfig, IgnoreReason, Ingress, Outcome
from actorscope.context import current_identity
from actorscope.errors import ConfigError, IdentityError
from actorscope.host import Prepared
from actorscope.integrations.ptb import (
    ActorscopeContext,
    Gate,
    bound,
    identity_of,
    install,
    requires,
    run_sandbox,
)
from actorscope.integrations.ptb import gate as ptb_gate
from actorscope.permissions import Decision, GrantStore
from actorscope.sandbox import BotApiEmulator
from actorscope.store import Database
from actorscope.testing import AgentEnv, Grants, SimulatedEvent, TelegramSim

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "ptb_notes_bot.py"
App = Application[Any, Any, Any, Any, Any, Any]
Builder = Callable[..., App]
ASK_TITLE = 1


@pytest.fixture(scope="module")
def build_application() -> Builder:
    """The example's ``build_application``."""
    namespace = runpy.run_path(str(EXAMPLE), run_name="ptb_notes_bot")
    build: Builder = namespace["build_application"]
    return build


@pytest.fixture
async def app(
    telegram_sim: TelegramSim,
    build_application: Builder,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> App:
    """The example bot as the guide builds it (no overrides), run from ``tmp_path``: served,
    it is adopted onto the sim's database, agent ``main`` and workspace (``tmp/workspace``)."""
    monkeypatch.chdir(tmp_path)
    return build_application(telegram_sim.application_builder())


def _bare_builder(emu: BotApiEmulator) -> ApplicationBuilder[Any, Any, Any, Any, Any, Any]:
    return (
        ApplicationBuilder()
        .token(emu.token)
        .request(emu.request())
        .get_updates_request(emu.request())
    )


async def _serve(sim: TelegramSim, application: App) -> Gate:
    served = await sim.serve_application(application)
    assert served is not None, "the application has no gate"
    return served


def _notes(root: Path) -> str:
    return "".join(p.read_text() for p in sorted(root.rglob("notes.md")))


async def test_writer_is_allowed_and_the_note_is_saved(
    telegram_sim: TelegramSim, app: App, actorscope_grants: Grants, tmp_path: Path
) -> None:
    """A writer's /note in a group is allowed (granted), saved in the group's notes, answered."""
    alice = telegram_sim.user("alice")
    devs = telegram_sim.supergroup("devs")
    await actorscope_grants.allow(f"group:telegram:{devs.id}", alice)
    await _serve(telegram_sim, app)
    telegram_sim.should_allow("file_writer", reason="granted", sender=alice)
    telegram_sim.should_send(text="saved", chat=devs)
    event = await telegram_sim.message(alice, "/note ship it", devs)
    assert event.outcome is Outcome.ADMITTED
    assert event.identity is not None
    assert event.identity.user_id == f"group:telegram:{devs.id}"
    assert event.identity.sender_id == str(alice.id)
    assert f"- ship it (by {alice.id})" in _notes(tmp_path / "workspace")


async def test_non_writer_is_denied_with_the_reason(
    telegram_sim: TelegramSim, app: App, tmp_path: Path
) -> None:
    """A member without a grant is denied (no_grant) and told so; nothing is written."""
    bob = telegram_sim.user("bob")
    devs = telegram_sim.supergroup("devs")
    await _serve(telegram_sim, app)
    telegram_sim.should_deny("file_writer", reason="no_grant", sender=bob)
    telegram_sim.should_send(text="denied: no_grant", chat=devs)
    await telegram_sim.message(bob, "/note sneaky", devs)
    assert _notes(tmp_path / "workspace") == ""


async def _non_person_events(
    telegram_sim: TelegramSim, expect: Callable[[BotApiEmulator.Chat], None] | None = None
) -> list[SimulatedEvent]:
    """An anonymous admin, a post as a channel, a channel post and a bot, each ``/note``;
    ``expect`` declares what each /note in a group brings, before it is sent."""
    devs = telegram_sim.supergroup("devs")
    news = telegram_sim.channel("news")
    robot = telegram_sim.emu.state.add_user("Robot", username="robot_bot", is_bot=True)
    events = []
    for send in (
        functools.partial(telegram_sim.anonymous_admin, devs, "/note anon"),
        functools.partial(telegram_sim.as_channel, news, devs, "/note as channel"),
        functools.partial(telegram_sim.message, robot, "/note beep", devs),
    ):
        if expect is not None:
            expect(devs)
        events.append(await send())
    # A channel post is no message of a CommandHandler's: nothing is checked for it.
    events.append(await telegram_sim.channel_post(news, "/note post"))
    return events


async def test_non_persons_reach_the_handlers_and_requires_denies_them(
    telegram_sim: TelegramSim, app: App, tmp_path: Path
) -> None:
    """install() drops no non-person: each reaches the bot's handlers with its identity (no
    sender, its kind), and ``requires`` denies them (empty_sender); nothing is written."""
    seen: list[tuple[str, str]] = []

    async def anything(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        who = identity_of(update, context)
        seen.append((who.sender_id, who.sender_kind.value))

    def denied(devs: BotApiEmulator.Chat) -> None:
        telegram_sim.should_deny("file_writer", reason="empty_sender")
        telegram_sim.should_send(text="denied: empty_sender", chat=devs)

    app.add_handler(MessageHandler(filters.ALL, anything), group=1)
    await _serve(telegram_sim, app)
    events = await _non_person_events(telegram_sim, denied)
    assert [e.ignored for e in events] == [None] * 4
    assert seen == [("", "anonymous_admin"), ("", "channel"), ("", "bot"), ("", "channel")]
    assert _notes(tmp_path / "workspace") == ""


async def test_drop_non_persons_is_an_option(
    telegram_sim: TelegramSim, actorscope_env: AgentEnv, build_application: Builder
) -> None:
    """install(drop_non_persons=True) stops non-persons in group -1: no handler sees them."""
    app = build_application(telegram_sim.application_builder(), drop_non_persons=True)
    seen: list[int] = []

    async def anything(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        seen.append(update.update_id)

    app.add_handler(MessageHandler(filters.ALL, anything), group=1)
    await _serve(telegram_sim, app)
    events = await _non_person_events(telegram_sim)
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
    telegram_sim: TelegramSim, app: App
) -> None:
    """A bot's MessageHandler(filters.TEXT & filters.ChatType.GROUPS) still sees group text
    that does not mention the bot after install(), with the identity attached."""
    heard: list[tuple[str, str]] = []

    async def chatter(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.effective_message is not None
        heard.append((update.effective_message.text or "", identity_of(update, context).sender_id))

    app.add_handler(MessageHandler(filters.TEXT & filters.ChatType.GROUPS, chatter))
    alice = telegram_sim.user("alice")
    devs = telegram_sim.supergroup("devs")
    await _serve(telegram_sim, app)
    event = await telegram_sim.message(alice, "lunch at noon?", devs)
    assert heard == [("lunch at noon?", str(alice.id))]
    assert event.outcome is Outcome.ADMITTED


async def test_require_mention_is_an_option(
    telegram_sim: TelegramSim, build_application: Builder
) -> None:
    """install(require_mention=True) stops un-addressed group text, as `actorscope run` does;
    a mention still gets through."""
    app = build_application(telegram_sim.application_builder(), require_mention=True)
    heard: list[str] = []

    async def chatter(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.effective_message is not None
        heard.append(update.effective_message.text or "")

    app.add_handler(MessageHandler(filters.TEXT & filters.ChatType.GROUPS, chatter))
    alice = telegram_sim.user("alice")
    devs = telegram_sim.supergroup("devs")
    await _serve(telegram_sim, app)
    quiet = await telegram_sim.message(alice, "lunch at noon?", devs)
    await telegram_sim.message(alice, "lunch @actorscope_bot?", devs)
    assert quiet.ignored is IgnoreReason.NOT_MENTIONED
    assert heard == ["lunch @actorscope_bot?"]


async def test_the_show_button_answers_its_own_click(
    telegram_sim: TelegramSim, app: App, actorscope_grants: Grants
) -> None:
    """The example's button handler calls ``await query.answer()`` (PTB's pattern): the gate
    leaves an allowed click unanswered, so it works, once, and the notes are shown."""
    alice, bob = telegram_sim.user("alice"), telegram_sim.user("bob")
    devs = telegram_sim.supergroup("devs")
    await actorscope_grants.allow(f"group:telegram:{devs.id}", alice)
    await _serve(telegram_sim, app)
    await telegram_sim.message(alice, "/note ship it", devs)
    saved = telegram_sim.emu.sent_messages()[-1]
    assert saved["reply_markup"]["inline_keyboard"][0][0]["callback_data"] == "show"
    event = await telegram_sim.click(bob, devs, "show")  # the bot's message that has it
    answers = [c for c in telegram_sim.emu.bot_calls() if c.method == "answerCallbackQuery"]
    assert len(answers) == 1
    assert answers[0].response is not None
    assert answers[0].response.ok
    assert event.identity is not None
    assert event.identity.sender_id == str(bob.id)
    edits = [c for c in telegram_sim.emu.bot_calls() if c.method == "editMessageText"]
    assert [c.params["text"] for c in edits] == [f"- ship it (by {alice.id})\n"]


async def test_a_denied_click_is_answered_with_the_reason_as_an_alert(
    telegram_sim: TelegramSim, app: App
) -> None:
    """``requires`` on a button handler answers a denied click itself: ``denied: <reason>``
    as an alert, and the handler does not run."""
    ran: list[str] = []

    @requires("file_writer")
    async def wipe(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        ran.append("wipe")

    app.add_handler(CallbackQueryHandler(wipe, pattern="^wipe$"))
    bob = telegram_sim.user("bob")
    devs = telegram_sim.supergroup("devs")
    await _serve(telegram_sim, app)
    keyboard = InlineKeyboardMarkup([[InlineKeyboardButton("wipe", callback_data="wipe")]])
    message = await app.bot.send_message(devs.id, "danger", reply_markup=keyboard)
    telegram_sim.should_deny("file_writer", reason="no_grant", sender=bob)
    await telegram_sim.click(bob, devs, "wipe", message=message.message_id)
    answers = [c for c in telegram_sim.emu.bot_calls() if c.method == "answerCallbackQuery"]
    assert [(c.params.get("text"), c.params.get("show_alert")) for c in answers] == [
        ("denied: no_grant", True)
    ]
    assert ran == []


async def test_addwriter_by_a_platform_admin_then_the_writer_saves(
    telegram_sim: TelegramSim, app: App
) -> None:
    """An admin's /addwriter (a reply) is answered by the CommandHandler; then bob may write."""
    seen: list[str] = []

    async def anything(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        seen.append(update.effective_message.text or "" if update.effective_message else "")

    app.add_handler(MessageHandler(filters.ALL, anything), group=1)
    alice, bob = telegram_sim.user("alice"), telegram_sim.user("bob")
    devs = telegram_sim.supergroup("devs")
    telegram_sim.make_admin(devs, alice)
    await _serve(telegram_sim, app)
    first = await telegram_sim.message(bob, "hi all @actorscope_bot", devs)
    telegram_sim.should_send(text=f"added @bob ({bob.id}) as a writer", chat=devs)
    added = await telegram_sim.message(
        alice, "/addwriter", devs, reply_to=first.payload["message"]["message_id"]
    )
    assert added.outcome is Outcome.WRITER_COMMAND
    assert seen == ["hi all @actorscope_bot"]  # the writer command stopped after its answer
    telegram_sim.should_allow("file_writer", reason="granted", sender=bob)
    telegram_sim.should_send(text="saved", chat=devs)
    await telegram_sim.message(bob, "/note mine", devs)


async def test_conversation_handler_reply_markup_and_clicks_still_work(
    telegram_sim: TelegramSim, app: App
) -> None:
    """A ConversationHandler with an inline keyboard and a button click run as in plain PTB."""
    identities: list[str] = []

    @bound
    async def start(update: Update, context: ContextTypes.DEFAULT_TYPE) -> int:
        who = current_identity()
        identities.append(who.sender_id if who is not None else "")
        keyboard = InlineKeyboardMarkup([[InlineKeyboardButton("keep", callback_data="keep")]])
        assert update.effective_message is not None
        await update.effective_message.reply_text("new title?", reply_markup=keyboard)
        return ASK_TITLE

    async def title(update: Update, context: ContextTypes.DEFAULT_TYPE) -> int:
        assert update.effective_message is not None
        identities.append(identity_of(update, context).sender_id)
        await update.effective_message.reply_text(f"renamed to {update.effective_message.text}")
        return ConversationHandler.END

    async def clicked(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.callback_query is not None
        prepared = ptb_gate(context).prepared(update)
        assert prepared is not None
        identities.append(prepared.request.sender_id)
        await context.bot.send_message(update.callback_query.from_user.id, "kept")

    app.add_handler(
        ConversationHandler(
            entry_points=[CommandHandler("rename", start)],
            states={ASK_TITLE: [MessageHandler(filters.TEXT & ~filters.COMMAND, title)]},
            fallbacks=[],
        )
    )
    app.add_handler(CallbackQueryHandler(clicked))
    alice = telegram_sim.user("alice")
    await _serve(telegram_sim, app)
    await telegram_sim.message(alice, "/rename")
    asked = telegram_sim.emu.sent_messages()[-1]
    assert asked["reply_markup"]["inline_keyboard"][0][0]["callback_data"] == "keep"
    telegram_sim.should_send(text="renamed to Plans")
    await telegram_sim.message(alice, "Plans")
    telegram_sim.should_send(text="kept")
    await telegram_sim.click(
        alice, telegram_sim.chat_id(alice), "keep", message=asked["message_id"]
    )
    assert identities == [str(alice.id)] * 3
    # The click is the handler's to answer (it does not here): the gate answers none.
    assert [c.method for c in telegram_sim.emu.bot_calls()].count("answerCallbackQuery") == 0


async def test_revoke_elsewhere_is_seen_within_one_second(
    telegram_sim: TelegramSim, app: App, actorscope_grants: Grants, actorscope_env: AgentEnv
) -> None:
    """A grant revoked through another connection denies within 1 s (the Database's feed)."""
    alice = telegram_sim.user("alice")
    devs = telegram_sim.supergroup("devs")
    scope = f"group:telegram:{devs.id}"
    await actorscope_grants.allow(scope, alice)
    await _serve(telegram_sim, app)
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


async def test_allows_filter_passes_only_writers(
    telegram_sim: TelegramSim, app: App, actorscope_grants: Grants
) -> None:
    """gate.allows("file_writer") lets a writer's update through and holds a non-writer's."""
    gate = ptb_gate(app)
    passed: list[str] = []

    async def echo(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        passed.append(identity_of(update, context).sender_id)

    app.add_handler(MessageHandler(filters.TEXT & gate.allows("file_writer"), echo), group=1)
    alice, bob = telegram_sim.user("alice"), telegram_sim.user("bob")
    devs = telegram_sim.supergroup("devs")
    await actorscope_grants.allow(f"group:telegram:{devs.id}", alice)
    await _serve(telegram_sim, app)
    telegram_sim.should_allow("file_writer", reason="granted", sender=alice)
    await telegram_sim.message(alice, "hello @actorscope_bot", devs)
    telegram_sim.should_deny("file_writer", reason="no_grant", sender=bob)
    await telegram_sim.message(bob, "hello @actorscope_bot", devs)
    assert passed == [str(alice.id)]


async def test_actorscope_context_carries_the_identity(actorscope_env: AgentEnv) -> None:
    """With ActorscopeContext.types() a handler reads context.identity; no task is left over."""
    emu = BotApiEmulator()
    before = asyncio.all_tasks()
    application = _bare_builder(emu).context_types(ActorscopeContext.types()).build()
    install(application, database=actorscope_env.db.path, owners=["7"])
    seen: list[tuple[str, str]] = []

    async def hello(update: Update, context: ActorscopeContext) -> None:
        assert context.identity is not None
        assert context.run_request is not None
        seen.append((context.identity.sender_id, context.identity.role))

    application.add_handler(CommandHandler("hello", hello))
    owner = emu.state.add_user("Owner", username="owner", user_id=7)
    await application.initialize()
    assert application.post_init is not None
    assert application.post_shutdown is not None
    await application.post_init(application)
    await application.start()
    update = emu.user_message(owner, "/hello")
    assert update is not None
    await application.process_update(Update.de_json(update, application.bot))
    await application.stop()
    await application.post_shutdown(application)
    await application.shutdown()
    emu.close()
    assert seen == [("7", "owner")]
    assert asyncio.all_tasks() == before


async def test_a_redelivery_during_processing_keeps_the_original_identity(
    actorscope_env: AgentEnv,
) -> None:
    """A duplicate of an update still being handled is dropped without unbinding the original."""
    emu = BotApiEmulator()
    application = _bare_builder(emu).build()
    install(application, database=actorscope_env.db)
    entered, release = asyncio.Event(), asyncio.Event()
    seen: list[str] = []

    async def hello(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        entered.set()
        await release.wait()
        seen.append(identity_of(update, context).sender_id)

    application.add_handler(CommandHandler("hello", hello))
    alice = emu.state.add_user("Alice", username="alice")
    payload = emu.user_message(alice, "/hello")
    assert payload is not None
    async with application:
        assert application.post_init is not None
        await application.post_init(application)
        first = asyncio.create_task(
            application.process_update(Update.de_json(payload, application.bot))
        )
        await asyncio.wait_for(entered.wait(), 5)
        await application.process_update(Update.de_json(payload, application.bot))
        release.set()
        await asyncio.wait_for(first, 5)
        assert application.post_shutdown is not None
        await application.post_shutdown(application)
    emu.close()
    assert seen == [str(alice.id)]


async def test_bad_install_arguments_are_one_clear_error(actorscope_env: AgentEnv) -> None:
    """install() and requires() refuse bad input with a ConfigError naming the problem."""
    application = ApplicationBuilder().token("1:x").build()
    with pytest.raises(ConfigError, match="Application"):
        install(object(), database="x.db")  # type: ignore[arg-type]  # the wrong type on purpose
    with pytest.raises(ConfigError, match="owners"):
        install(application, database="x.db", owners="42")
    with pytest.raises(IdentityError):
        install(application, database="x.db", agent="not a key!")
    with pytest.raises(ConfigError, match="telegram config"):
        install(application, database="x.db", config=ChannelConfig(platform="discord"))
    install(application, database=actorscope_env.db)
    with pytest.raises(ConfigError, match="already installed"):
        install(application, database=actorscope_env.db)
    with pytest.raises(ConfigError, match="permission name"):
        requires("")


def test_example_runs_offline_in_the_sandbox(
    tmp_path: Path, build_application: Builder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """python examples/ptb_notes_bot.py --sandbox: a writer-less group denies, a DM saves."""
    monkeypatch.chdir(tmp_path)
    lines = ["/as bob @devs /note hi", "/anon @devs /note x", "/as bob /note private"]

    async def typed() -> AsyncIterator[str]:
        for line in lines:
            yield line

    out: list[str] = []
    status = run_sandbox(build_application, lines=typed(), out=out.append)
    text = "\n".join(out)
    assert status == 0
    assert "denied: no_grant" in text
    assert "denied: empty_sender" in text  # the anonymous admin reached note(): requires
    assert "saved" in text
    assert "private" in _notes(tmp_path / "workspace")


def test_a_piped_click_waits_for_the_answer_it_clicks(
    tmp_path: Path, build_application: Builder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lines piped into the sandbox wait for the bot: a /click right after /note finds the
    answer's button (it was an error when the click outran the bot's reply)."""
    monkeypatch.chdir(tmp_path)
    lines = ["/as bob /note private", "/click show"]

    async def typed() -> AsyncIterator[str]:
        for line in lines:
            yield line

    out: list[str] = []
    assert run_sandbox(build_application, lines=typed(), out=out.append) == 0
    text = "\n".join(out)
    assert "error:" not in text, text
    assert "callback_query" in text
    assert "private (by" in text  # the button's handler edited the answer into the notes


def test_example_without_a_token_says_so(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The example with no TELEGRAM_BOT_TOKEN exits 2 with one line naming the variable."""
    monkeypatch.delenv("TELEGRAM_BOT_TOKEN", raising=False)
    main = runpy.run_path(str(EXAMPLE), run_name="ptb_notes_bot")["main"]
    assert main([]) == 2
    err = capsys.readouterr().err
    assert err == "ptb_notes_bot: error: set TELEGRAM_BOT_TOKEN (or use --sandbox)\n"


async def test_the_guides_two_lines_judge_on_the_tests_grants_and_write_no_bot_file(
    telegram_sim: TelegramSim,
    actorscope_grants: Grants,
    actorscope_env: AgentEnv,
    build_application: Builder,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``app = build_application(telegram_sim.application_builder())`` and
    ``serve_application(app)``, no overrides: the gate is adopted onto the test's database,
    agent and workspace, the test's grant decides, and no notes.db is created."""
    monkeypatch.chdir(tmp_path)
    app = build_application(telegram_sim.application_builder())
    alice = telegram_sim.user("alice")
    devs = telegram_sim.supergroup("devs")
    await actorscope_grants.allow(f"group:telegram:{devs.id}", alice)
    gate = await _serve(telegram_sim, app)
    opened = gate.opened
    assert opened.database is actorscope_env.db
    assert opened.agent.id == actorscope_env.agent.id
    assert opened.adopted is not None
    assert opened.workspace == tmp_path / "workspace"
    telegram_sim.should_allow("file_writer", reason="granted", sender=alice)
    telegram_sim.should_send(text="saved", chat=devs)
    await telegram_sim.message(alice, "/note adopted", devs)
    assert not (tmp_path / "notes.db").exists()
    assert "adopted" in _notes(tmp_path / "workspace")


async def test_a_test_keeps_the_apps_own_database_only_when_it_says_so(
    telegram_sim: TelegramSim,
    actorscope_grants: Grants,
    build_application: Builder,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``serve_application(app, adopt=False)`` opens the app's own notes.db, where the test's
    grant does not exist: the writer is denied there."""
    monkeypatch.chdir(tmp_path)
    app = build_application(telegram_sim.application_builder())
    alice = telegram_sim.user("alice")
    devs = telegram_sim.supergroup("devs")
    await actorscope_grants.allow(f"group:telegram:{devs.id}", alice)
    gate = await telegram_sim.serve_application(app, adopt=False)
    assert gate is not None
    assert gate.opened.adopted is None
    assert gate.opened.url == "notes.db"  # the app's own, relative to its directory
    telegram_sim.should_deny("file_writer", reason="no_grant", sender=alice)
    telegram_sim.should_send(text="denied: no_grant", chat=devs)
    await telegram_sim.message(alice, "/note mine", devs)


async def test_an_application_started_before_serving_is_refused(
    telegram_sim: TelegramSim, app: App
) -> None:
    """A gate opened before serve_application cannot be adopted: one clear error."""
    assert app.post_init is not None
    await app.initialize()
    await app.post_init(app)
    try:
        with pytest.raises(RuntimeError, match="open already"):
            await telegram_sim.serve_application(app)
    finally:
        assert app.post_shutdown is not None
        await app.post_shutdown(app)
        await app.shutdown()


async def test_the_gate_holds_in_a_non_blocking_application(
    telegram_sim: TelegramSim, actorscope_grants: Grants, build_application: Builder
) -> None:
    """Under ``Defaults(block=False)`` the gate still runs first and its stops hold: a writer
    is allowed, a duplicate and a writer command never reach handlers in groups 0 and 1."""
    builder = telegram_sim.application_builder().defaults(Defaults(block=False))
    app = build_application(builder, drop_non_persons=True)
    seen: list[str] = []

    async def anything(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message = update.effective_message
        seen.append(message.text or "" if message is not None else "")

    app.add_handler(MessageHandler(filters.ALL, anything), group=1)
    alice, bob = telegram_sim.user("alice"), telegram_sim.user("bob")
    devs = telegram_sim.supergroup("devs")
    await actorscope_grants.allow(f"group:telegram:{devs.id}", alice)
    await _serve(telegram_sim, app)
    telegram_sim.should_allow("file_writer", reason="granted", sender=alice)
    telegram_sim.should_send(text="saved", chat=devs)
    first = await telegram_sim.message(alice, "/note fast", devs)
    again = await telegram_sim.redeliver(first)
    anonymous = await telegram_sim.anonymous_admin(devs, "/note anon")
    telegram_sim.should_send(text="writers: " + str(alice.id), chat=devs)
    await telegram_sim.message(bob, "/writers", devs)
    assert again.outcome is Outcome.DUPLICATE
    assert anonymous.ignored is IgnoreReason.NONPERSON_SENDER
    assert seen == ["/note fast"]


async def test_ctrl_c_stops_the_examples_sandbox_cleanly(tmp_path: Path) -> None:
    """``python examples/ptb_notes_bot.py --sandbox``, Ctrl-C once the bot answered: exit 0,
    ``stopped``, and nothing on stderr (no traceback)."""
    status, out, err = await interrupted(
        [sys.executable, str(EXAMPLE), "--sandbox"], tmp_path, "/as bob /note hi", b"saved"
    )
    assert status == 0
    assert out.splitlines()[-1] == "stopped"
    assert err == ""


class _Decisions:
    """A gate observer keeping the decisions (the jobs' too: they run outside any event)."""

    def __init__(self) -> None:
        self.made: list[tuple[str, bool, str]] = []

    def on_ingress(self, update: Update, result: Ingress, prepared: Prepared | None) -> None:
        """Not needed here."""

    def on_decision(self, config_type: str, decision: Decision) -> None:
        self.made.append((decision.sender_id, decision.allowed, str(decision.reason)))


async def test_a_job_judges_the_writer_who_scheduled_it_each_time_it_runs(
    telegram_sim: TelegramSim, app: App, actorscope_grants: Grants
) -> None:
    """A repeating job scheduled by a writer's gated handler carries that writer: ``requires``
    on the job allows it while the grant holds, and once the writer is revoked the next run
    is denied and writes nothing more."""
    writes: list[str] = []

    @requires("file_writer")
    async def tick(context: ContextTypes.DEFAULT_TYPE) -> None:
        writes.append("tick")

    @requires("file_writer")
    async def every(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert context.job_queue is not None
        context.job_queue.run_repeating(tick, interval=0.05, first=0, name="tick")

    app.add_handler(CommandHandler("every", every))
    alice = telegram_sim.user("alice")
    devs = telegram_sim.supergroup("devs")
    scope = f"group:telegram:{devs.id}"
    await actorscope_grants.allow(scope, alice)
    gate = await _serve(telegram_sim, app)
    decisions = _Decisions()
    gate.observe(decisions)
    await telegram_sim.message(alice, "/every", devs)
    await wait_until(lambda: len(writes) >= 1)
    await actorscope_grants.revoke(scope, alice)
    await wait_until(lambda: (str(alice.id), False, "no_grant") in decisions.made)
    runs = decisions.made[1:]  # the first is /every's own check
    assert {who for who, _, _ in runs} == {str(alice.id)}
    denied_at = runs.index((str(alice.id), False, "no_grant"))
    assert denied_at >= 1
    assert all(allowed for _, allowed, _ in runs[:denied_at])
    assert len(writes) == denied_at  # every allowed run wrote once; the denied one did not
    assert app.job_queue is not None
    for job in app.job_queue.get_jobs_by_name("tick"):
        job.schedule_removal()


async def test_a_job_scheduled_outside_a_gated_handler_has_no_actor(
    telegram_sim: TelegramSim, app: App
) -> None:
    """``requires`` on a job scheduled where no handler bound an identity (at start) denies
    it: there is nobody to judge."""
    ran: list[str] = []
    done = asyncio.Event()

    @requires("file_writer", denied="denied")
    async def orphan(context: ContextTypes.DEFAULT_TYPE) -> str:
        ran.append("orphan")
        return "ran"

    async def run_and_tell(context: ContextTypes.DEFAULT_TYPE) -> None:
        result = await orphan(context)
        ran.append(result)
        done.set()

    await _serve(telegram_sim, app)
    assert app.job_queue is not None
    job = app.job_queue.run_once(run_and_tell, when=0)
    assert ptb_gate(app).job_actor(job) is None
    await asyncio.wait_for(done.wait(), 5)
    assert ran == ["denied"]


def _one_shot(kind: str) -> Callable[[JobQueue[Any], Any], Job[Any]]:
    """How a handler schedules a job that runs once (soon), by PTB's front doors."""

    def schedule(queue: JobQueue[Any], callback: Any) -> Job[Any]:
        if kind == "run_once(0)":
            return queue.run_once(callback, 0)
        if kind == "run_once(0.01)":
            return queue.run_once(callback, 0.01)
        if kind == "run_once(job_kwargs)":
            return queue.run_once(
                callback, 0, job_kwargs={"id": "once-with-kwargs", "misfire_grace_time": 30}
            )
        if kind == "run_custom(date)":
            when = datetime.now(UTC) + timedelta(milliseconds=10)
            return queue.run_custom(callback, job_kwargs={"trigger": "date", "run_date": when})
        # run_daily: fires at the next whole second after the next one (a cron trigger).
        at = (datetime.now(UTC) + timedelta(seconds=1)).replace(microsecond=0)
        return queue.run_daily(callback, time=at.timetz())

    return schedule


@pytest.mark.parametrize(
    "kind",
    ["run_once(0)", "run_once(0.01)", "run_once(job_kwargs)", "run_custom(date)", "run_daily"],
)
async def test_a_job_run_once_carries_the_writer_who_scheduled_it(
    telegram_sim: TelegramSim, app: App, actorscope_grants: Grants, kind: str
) -> None:
    """A job a writer's gated handler scheduled to run once (or daily) runs as that writer:
    APScheduler removes a one-shot job as its run starts, and the actor stays until the run
    is over; then (or once a repeating job is removed) the gate forgets it."""
    ran: list[str | None] = []
    scheduled: list[Job[Any]] = []

    @requires("file_writer", denied="denied")
    async def tick(context: ContextTypes.DEFAULT_TYPE) -> str | None:
        who = current_identity()
        return None if who is None else who.sender_id

    async def run_and_tell(context: ContextTypes.DEFAULT_TYPE) -> None:
        ran.append(await tick(context))

    @requires("file_writer")
    async def later(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert context.job_queue is not None
        scheduled.append(_one_shot(kind)(context.job_queue, run_and_tell))

    app.add_handler(CommandHandler("later", later))
    alice = telegram_sim.user("alice")
    devs = telegram_sim.supergroup("devs")
    await actorscope_grants.allow(f"group:telegram:{devs.id}", alice)
    gate = await _serve(telegram_sim, app)
    await telegram_sim.message(alice, "/later", devs)
    await wait_until(lambda: bool(ran))
    assert ran == [str(alice.id)]
    (job,) = scheduled
    if kind == "run_daily":
        assert gate.job_actor(job) is not None  # it runs again tomorrow
        job.schedule_removal()
    await wait_until(lambda: gate.job_actor(job) is None)


async def test_a_job_replaced_from_outside_a_gated_handler_loses_the_actor(
    telegram_sim: TelegramSim, app: App, actorscope_grants: Grants
) -> None:
    """A job scheduled with a fixed id (``job_kwargs``) by a writer's gated handler, replaced
    (same id, ``replace_existing``) by one scheduled at start, does not pass the writer on."""
    scheduled: list[Job[Any]] = []
    kwargs = {"id": "nightly", "replace_existing": True}

    async def report(context: ContextTypes.DEFAULT_TYPE) -> None:
        """Never due in this test."""

    @requires("file_writer")
    async def later(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert context.job_queue is not None
        scheduled.append(context.job_queue.run_once(report, 3600, job_kwargs=kwargs))

    app.add_handler(CommandHandler("later", later))
    alice = telegram_sim.user("alice")
    devs = telegram_sim.supergroup("devs")
    await actorscope_grants.allow(f"group:telegram:{devs.id}", alice)
    gate = await _serve(telegram_sim, app)
    await telegram_sim.message(alice, "/later", devs)
    await wait_until(lambda: bool(scheduled))
    first = gate.job_actor(scheduled[0])
    assert first is not None
    assert first.sender_id == str(alice.id)
    assert app.job_queue is not None
    replacement = app.job_queue.run_once(report, 3600, job_kwargs=kwargs)
    assert gate.job_actor(replacement) is None
    replacement.schedule_removal()


async def test_a_migration_while_the_store_is_locked_reaches_no_handler(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A group → supergroup migration while another connection holds the write lock: moving
    the grants fails, so the gate stops the update (one ERROR line) and no handler sees it
    unjudged; the grant stays where it was, for a later move to finish."""
    old, new = -4242, -1004242
    emu = BotApiEmulator()
    seen: list[int] = []

    async def anything(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        seen.append(update.update_id)

    async with Database.open(tmp_path / "bot.db", busy_timeout=0.2) as db:
        application = _bare_builder(emu).build()
        gate = install(application, database=db)
        application.add_handler(TypeHandler(Update, anything), group=1)
        async with application:
            assert application.post_init is not None
            await application.post_init(application)
            agent_id = gate.agent.id
            await GrantStore(db).grant(
                agent_id=agent_id,
                scope=f"group:telegram:{old}",
                config_type="file_writer",
                sender_id="42",
            )
            migrated = {
                "update_id": 9001,
                "message": {
                    "message_id": 7,
                    "date": 1,
                    "chat": {"id": old, "type": "group", "title": "devs"},
                    "from": {"id": 42, "is_bot": False, "first_name": "Alice"},
                    "migrate_to_chat_id": new,
                },
            }
            locker = sqlite3.connect(tmp_path / "bot.db", isolation_level=None)
            try:
                locker.execute("BEGIN IMMEDIATE")
                await application.process_update(Update.de_json(migrated, application.bot))
            finally:
                locker.execute("ROLLBACK")
                locker.close()
            assert application.post_shutdown is not None
            await application.post_shutdown(application)
        grants = await GrantStore(db).list(agent_id=agent_id)
    emu.close()
    assert seen == []
    assert [g.scope for g in grants] == [f"group:telegram:{old}"]
    stopped = [r for r in caplog.records if "ptb.update_stopped" in r.getMessage()]
    assert len(stopped) == 1
    assert stopped[0].levelno == logging.ERROR
    assert stopped[0].exc_info is None


async def test_a_revoke_in_the_middle_of_a_conversation_denies_the_next_step(
    telegram_sim: TelegramSim, app: App, actorscope_grants: Grants, tmp_path: Path
) -> None:
    """A ConversationHandler whose steps are ``requires``-gated: the writer starts it, is
    revoked, and the next step is denied (the conversation ends); nothing is written."""
    titles: list[str] = []

    @requires("file_writer", denied=ConversationHandler.END)
    async def start(update: Update, context: ContextTypes.DEFAULT_TYPE) -> int:
        assert update.effective_message is not None
        await update.effective_message.reply_text("new title?")
        return ASK_TITLE

    @requires("file_writer", denied=ConversationHandler.END)
    async def title(update: Update, context: ContextTypes.DEFAULT_TYPE) -> int:
        assert update.effective_message is not None
        titles.append(update.effective_message.text or "")
        await update.effective_message.reply_text("renamed")
        return ConversationHandler.END

    conversation = ConversationHandler(
        entry_points=[CommandHandler("rename", start)],
        states={ASK_TITLE: [MessageHandler(filters.TEXT & ~filters.COMMAND, title)]},
        fallbacks=[],
    )
    app.add_handler(conversation)
    alice = telegram_sim.user("alice")
    devs = telegram_sim.supergroup("devs")
    scope = f"group:telegram:{devs.id}"
    await actorscope_grants.allow(scope, alice)
    await _serve(telegram_sim, app)
    telegram_sim.should_allow("file_writer", reason="granted", sender=alice)
    telegram_sim.should_send(text="new title?", chat=devs)
    await telegram_sim.message(alice, "/rename", devs)
    await actorscope_grants.revoke(scope, alice)
    telegram_sim.should_deny("file_writer", reason="no_grant", sender=alice)
    telegram_sim.should_send(text="denied: no_grant", chat=devs)
    await telegram_sim.message(alice, "Plans", devs)
    assert titles == []
    # The conversation ended with the denial: the same text later is no step of it.
    await telegram_sim.message(alice, "Plans again", devs)
    assert titles == []


async def test_an_application_without_a_job_queue_warns_nothing(
    telegram_sim: TelegramSim, tmp_path: Path
) -> None:
    """A bot built without PTB's job queue (``.job_queue(None)``, or no ``job-queue`` extra)
    opens and closes its gate without PTB's "No JobQueue set up" warning (an error under
    ``-W error``): the bot did not ask for jobs, so the gate does not touch them."""
    application = telegram_sim.application_builder().job_queue(None).build()
    install(application, database=tmp_path / "bot.db")
    await _serve(telegram_sim, application)
    event = await telegram_sim.message(telegram_sim.user("ann"), "hello")
    assert event.ignored is None

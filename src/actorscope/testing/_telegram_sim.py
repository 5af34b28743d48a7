"""Telegram simulator: realistic updates through the production Telegram runner, offline.

Users, basic groups, supergroups with forum topics and channels live in a
:class:`~actorscope.sandbox.BotApiEmulator`; each user action there produces the
``Update`` JSON Telegram would deliver, which the production
:class:`~actorscope.channels.telegram._runner.TelegramRunner` (its PTB ``Application`` talking
to the emulator through ``BotApiEmulator.request()``) handles as it
handles a polled update: the ingress pipeline (dedup, admission, shared claim; writer commands
answered by the runner, button clicks answered) and then the production run step with the
bot's turn. Replies go back through the runner's ``send`` and every Bot API call is recorded
(``sim.emu.calls``)::

    alice = telegram_sim.user("alice")
    devs = telegram_sim.supergroup("devs", forum=True)
    telegram_sim.topic(devs, "ideas")
    telegram_sim.should_deny("file_writer", reason="no_grant")
    await telegram_sim.message(alice, "write notes.txt", devs, topic="ideas")

A PTB ``Application`` built with :func:`actorscope.integrations.ptb.install` can be the bot
instead: build it from :meth:`TelegramSim.application_builder` and hand it to
:meth:`TelegramSim.serve_application`; each event is then processed by that application (its
gate runs the same pipeline and run step) and the decisions its ``requires`` checks make are
recorded for ``should_allow`` / ``should_deny``. An aiogram ``Dispatcher`` likewise:
:meth:`TelegramSim.serve_dispatcher` runs it with a ``Bot`` whose session talks to this
world's Bot API emulator over loopback.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any

from telegram import Update
from telegram.ext import Application, ApplicationBuilder, CallbackContext

from actorscope.channels import ChannelConfig, Ingress
from actorscope.channels.telegram import TelegramRunner
from actorscope.host import OutboundSender, Prepared
from actorscope.integrations.ptb import Gate
from actorscope.permissions import Decision
from actorscope.sandbox import (
    BotApiCall,
    BotApiEmulator,
    BotApiServer,
)
from actorscope.testing._expect import hide_on_expectation_failure
from actorscope.testing._harness import AgentEnv, SimulatedEvent, Simulator

if TYPE_CHECKING:
    from aiogram import Dispatcher

    from actorscope.integrations.aiogram import Gate as DispatcherGate
    from actorscope.testing._served_dispatcher import ServedDispatcher

__all__ = ["TelegramSim", "gate_of"]

#: A failed expectation's traceback ends at the test's line, not in this module.
__tracebackhide__ = hide_on_expectation_failure

App = Application[Any, Any, Any, Any, Any, Any]
#: How python-telegram-bot names the tasks it starts for an update (non-blocking handlers,
#: error handlers).
_APP_TASKS = "Application:"
_WAIT = 10.0  # seconds the application's non-blocking handlers may take for one event
TelegramUser = BotApiEmulator.User
TelegramChat = BotApiEmulator.Chat
TelegramForumTopic = BotApiEmulator.ForumTopic
UserLike = TelegramUser | int | str
ChatLike = TelegramChat | int | str
TopicLike = TelegramForumTopic | int | str


class TelegramSim(Simulator):
    """A Telegram world, the production runner fed from it in memory, and the bot's turns."""

    platform = "telegram"

    def __init__(
        self,
        env: AgentEnv,
        *,
        config: ChannelConfig | None = None,
        bot_username: str = "actorscope_bot",
    ) -> None:
        super().__init__(env, config or ChannelConfig(platform="telegram", require_mention=False))
        self.emu = BotApiEmulator(bot_username=bot_username, bot_name="actorscope")
        self.emu.add_listener(self._on_call)
        self._runner: TelegramRunner | None = None
        self._application: App | None = None
        self._dispatcher: ServedDispatcher | None = None
        self._server: BotApiServer | None = None
        self._app_event: SimulatedEvent | None = None
        self._app_errors: list[Exception] = []
        self._users: dict[str, TelegramUser] = {}
        self._chats: dict[str, TelegramChat] = {}

    @property
    def bot_username(self) -> str:
        """The bot's username (without ``@``)."""
        return self.emu.bot.username or ""

    def _configure(self, config: ChannelConfig) -> None:
        if self._runner is not None:
            self._runner.config = self._runner.pipeline.config = config

    @property
    def runner(self) -> TelegramRunner:
        """The production Telegram runner the simulator feeds."""
        if self._runner is None:
            raise RuntimeError("TelegramSim is not started (use `async with` or start())")
        return self._runner

    @property
    def app(self) -> App:
        """The runner's PTB ``Application``."""
        return self.runner.app

    @property
    def sender(self) -> OutboundSender:
        """The runner: it sends the bot's replies."""
        return self.runner

    async def start(self) -> TelegramSim:
        """Build the runner on the emulator and initialise it (``getMe``); no polling."""
        runner = TelegramRunner(
            self.assembly.pipeline(
                self.config, publish=self.bus.publish_from_channel, owners=self.env.owners
            ),
            token=self.emu.token,
            request=self.emu.request(),
            get_updates_request=self.emu.request(),
        )
        await runner.initialize()
        self.step.add_sender(runner.name, runner)
        self._runner = runner
        return self

    def application_builder(self) -> ApplicationBuilder[Any, Any, Any, Any, Any, Any]:
        """An ``ApplicationBuilder`` for this world's bot (its token, the emulator as
        transport): build the application under test with it."""
        return (
            ApplicationBuilder()
            .token(self.emu.token)
            .request(self.emu.request())
            .get_updates_request(self.emu.request())
        )

    async def serve_application(self, application: App, *, adopt: bool = True) -> Gate | None:
        """Make ``application`` the bot; return its gate (``None`` for a plain application,
        without ``install()``, which is served as it is).

        The gate is *adopted* (:meth:`~actorscope.integrations.Adoption.bind`): it opens on this
        simulator's database, agent, workspace and signer whatever ``install()`` was given,
        so the test's grants decide and no file of the bot's is written. ``adopt=False``
        keeps the application's own database (the test says so). It is initialised and
        started as ``run_polling`` would (``post_init`` too) and stopped with the simulator;
        each event goes to ``application.process_update``. A handler that raises fails the
        test. An application built from another builder (its bot calls Telegram) is refused.
        """
        if self._application is not None or self._dispatcher is not None:
            raise RuntimeError("this simulator already serves a bot")
        if application.bot.token != self.emu.token:
            raise RuntimeError(
                "the application was not built from the simulator's ApplicationBuilder "
                "(telegram_sim.application_builder(), the builder the probe passes to a build "
                "function): its bot would call Telegram, not the emulator"
            )
        the_gate = gate_of(application)
        adoption = self.env.adoption() if adopt and the_gate is not None else None
        if adoption is not None and the_gate is not None and the_gate.is_open:
            if the_gate.opened.database is not adoption.database:
                raise RuntimeError(
                    "the application's gate is open already, on its own database: hand it "
                    "to serve_application before initialising it"
                )
            adoption = None  # opened on the test's database by the test itself
        if the_gate is not None:
            the_gate.observe(_Recorder(self))
        application.add_error_handler(self._on_app_error, block=True)
        with adoption.bind() if adoption is not None else nullcontext():
            await application.initialize()
            self._application = application
            if application.post_init is not None:
                await application.post_init(application)
            await application.start()
        if (
            adoption is not None
            and the_gate is not None
            and the_gate.opened.adopted is not adoption
        ):
            raise RuntimeError("the application's gate did not open on the test's database")
        return the_gate

    async def serve_dispatcher(
        self, dispatcher: Dispatcher, *, adopt: bool = True
    ) -> DispatcherGate | None:
        """Make the aiogram ``dispatcher`` the bot; return its gate (``None`` for a dispatcher
        without :func:`~actorscope.integrations.aiogram.install`, served as it is).

        The simulator makes the ``Bot``: an aiogram session pointed at this world's Bot API
        emulator, served on 127.0.0.1 (its calls are recorded in :attr:`emu`). The dispatcher
        starts as ``start_polling`` starts it (its startup handlers, where the gate opens) and
        stops with the simulator (its shutdown handlers). The gate is *adopted*, as in
        :meth:`serve_application`: it opens on this simulator's database, agent, workspace
        and signer whatever ``install()`` was given (``adopt=False`` keeps its own). Each
        event goes to ``dispatcher.feed_update`` and is finished when the dispatcher is; a
        handler that raises (and no error handler of the bot's takes it) fails the test.
        """
        if self._application is not None or self._dispatcher is not None:
            raise RuntimeError("this simulator already serves a bot")
        # Imported here: aiogram is the extra ``aiogram``.
        from actorscope.testing._served_dispatcher import ServedDispatcher

        if self._server is None:
            server = BotApiServer(self.emu)
            await server.start()
            self._server = server
        served = ServedDispatcher(dispatcher, self._server, self.emu.token)
        self._dispatcher = served
        adoption = self.env.adoption() if adopt else None
        return await served.start(self, adoption)

    def on_ingress(self, result: Ingress, prepared: Prepared | None) -> None:
        """A served bot's gate made ``result`` of the event being processed."""
        self._on_ingress(result, prepared)

    async def _on_app_error(
        self, update: object, context: CallbackContext[Any, Any, Any, Any]
    ) -> None:
        if context.error is not None:
            self._app_errors.append(context.error)

    async def _stop_application(self) -> None:
        app, self._application = self._application, None
        if app is None:
            return
        try:
            if app.running:
                await app.stop()
        finally:
            try:
                if app.post_shutdown is not None:
                    await app.post_shutdown(app)
            finally:
                await app.shutdown()

    async def stop(self) -> None:
        """Shut the served application or dispatcher and the runner down."""
        try:
            await self._stop_application()
            dispatcher, self._dispatcher = self._dispatcher, None
            if dispatcher is not None:
                await dispatcher.stop()
        finally:
            if self._runner is not None:
                await self._runner.stop()
                self._runner = None
            server, self._server = self._server, None
            if server is not None:
                await server.stop()
            self.emu.close()

    async def __aenter__(self) -> TelegramSim:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # -- the world -------------------------------------------------------------------------

    def user(
        self, name: str, *, user_id: int | None = None, username: str | None = None
    ) -> TelegramUser:
        """A person called ``name`` (username defaults to ``name`` when it is a valid one)."""
        if name in self._users:
            return self._users[name]
        if username is None and len(name) >= 3 and name.isidentifier() and name.isascii():
            username = name
        person = self.emu.state.add_user(name, username=username, user_id=user_id)
        self._users[name] = person
        return person

    def _chat(
        self,
        kind: str,
        title: str,
        chat_id: int | None,
        forum: bool,
        username: str | None,
    ) -> TelegramChat:
        chat = self.emu.state.add_chat(
            kind, title=title, chat_id=chat_id, is_forum=forum, username=username
        )
        self._chats[title] = chat
        return chat

    def group(self, title: str, *, chat_id: int | None = None) -> TelegramChat:
        """A basic group with the bot in it."""
        return self._chat("group", title, chat_id, False, None)

    def supergroup(
        self,
        title: str,
        *,
        forum: bool = False,
        chat_id: int | None = None,
        username: str | None = None,
    ) -> TelegramChat:
        """A supergroup (a forum with topics when ``forum``) with the bot in it."""
        return self._chat("supergroup", title, chat_id, forum, username)

    def channel(self, title: str, *, chat_id: int | None = None) -> TelegramChat:
        """A channel the bot is an admin of (so it receives channel posts)."""
        chat = self._chat("channel", title, chat_id, False, None)
        self.emu.state.set_member(chat, self.emu.bot, "administrator")
        return chat

    def topic(
        self, chat: ChatLike, name: str, *, thread_id: int | None = None
    ) -> TelegramForumTopic:
        """Open a forum topic in ``chat``."""
        return self.emu.state.add_topic(self.find_chat(chat), name, thread_id=thread_id)

    def make_admin(self, chat: ChatLike, user: UserLike) -> None:
        """Make ``user`` an administrator of ``chat``."""
        self.emu.state.set_member(self.find_chat(chat), self.find_user(user), "administrator")

    def find_user(self, user: UserLike) -> TelegramUser:
        """A user by sim name, id, ``@username`` or object."""
        if isinstance(user, str) and user in self._users:
            return self._users[user]
        return self.emu.state.user(user)

    def find_chat(self, chat: ChatLike) -> TelegramChat:
        """A chat by sim title, id, ``@username`` or object."""
        if isinstance(chat, str) and chat in self._chats:
            return self._chats[chat]
        return self.emu.state.chat(chat)

    def chat_id(self, chat: object) -> str:
        """The chat's id as a string; a user stands for their private chat with the bot."""
        if isinstance(chat, TelegramUser):
            return str(chat.id)
        if not isinstance(chat, TelegramChat | int | str):
            return str(chat)
        if isinstance(chat, str) and chat in self._users:
            return str(self._users[chat].id)
        if isinstance(chat, int | str) and self.emu.state.find_chat(chat) is None:
            person = self.emu.state.find_user(chat)
            if person is not None:
                return str(person.id)
        return str(self.find_chat(chat).id)

    def topic_id(self, chat: object, topic: object) -> str:
        """The topic's thread id as a string (``"1"`` is General)."""
        if isinstance(topic, TelegramForumTopic):
            return str(topic.thread_id)
        if isinstance(topic, int | str) and isinstance(chat, TelegramChat | int | str):
            return str(self.emu.state.topic(self.find_chat(chat), topic).thread_id)
        if isinstance(topic, str) and not topic.isdigit():
            raise ValueError(f"topic {topic!r} is a name: give its chat too")
        return str(topic)

    def user_id(self, user: object) -> str:
        """The user's id as a string."""
        return (
            str(self.find_user(user).id)
            if isinstance(user, TelegramUser | int | str)
            else str(user)
        )

    # -- events ----------------------------------------------------------------------------

    async def message(
        self,
        user: UserLike,
        text: str,
        chat: ChatLike | None = None,
        *,
        topic: TopicLike | None = None,
        reply_to: int | None = None,
    ) -> SimulatedEvent:
        """``user`` writes ``text`` in ``chat`` (default: the private chat with the bot)."""
        person = self.find_user(user)
        target = None if chat is None else self.find_chat(chat)
        where = "private chat" if target is None else target.label
        update = self.emu.user_message(
            person, text, target, topic=self._topic_ref(topic), reply_to=reply_to
        )
        return await self._dispatch(update, f"telegram message by {person.display_name} in {where}")

    async def anonymous_admin(
        self, chat: ChatLike, text: str, *, topic: TopicLike | None = None
    ) -> SimulatedEvent:
        """An anonymous admin of ``chat`` writes (``from`` is GroupAnonymousBot)."""
        target = self.find_chat(chat)
        update = self.emu.anonymous_admin_message(target, text, topic=self._topic_ref(topic))
        return await self._dispatch(update, f"telegram anonymous admin in {target.label}")

    async def as_channel(self, channel: ChatLike, chat: ChatLike, text: str) -> SimulatedEvent:
        """A user writes in ``chat`` as ``channel`` (``from`` is Channel_Bot)."""
        source, target = self.find_chat(channel), self.find_chat(chat)
        update = self.emu.message_as_channel(source, target, text)
        return await self._dispatch(update, f"telegram post as {source.label} in {target.label}")

    async def channel_post(self, channel: ChatLike, text: str) -> SimulatedEvent:
        """A post in a channel the bot administers."""
        target = self.find_chat(channel)
        update = self.emu.channel_post(target, text)
        return await self._dispatch(update, f"telegram channel post in {target.label}")

    async def automatic_forward(
        self, channel: ChatLike, message_id: int, chat: ChatLike
    ) -> SimulatedEvent:
        """Telegram copies channel post ``message_id`` into its discussion group ``chat``."""
        source, target = self.find_chat(channel), self.find_chat(chat)
        update = self.emu.automatic_forward(source, message_id, target)
        return await self._dispatch(update, f"telegram automatic forward into {target.label}")

    async def edit(self, event: SimulatedEvent, text: str) -> SimulatedEvent:
        """The author of ``event``'s message edits it to ``text`` (an ``edited_message``)."""
        original = event.payload.get("message")
        if not isinstance(original, dict):
            raise ValueError(f"{event.label} was not a user's message: nothing to edit")
        edited = {**original, "text": text, "edit_date": int(original["date"]) + 1}
        update = self.emu.queue.push("edited_message", edited)
        return await self._dispatch(update, f"edit of {event.label}")

    async def click(
        self,
        user: UserLike,
        chat: ChatLike,
        data: str | None = None,
        *,
        message: int | None = None,
    ) -> SimulatedEvent:
        """``user`` presses the inline button with callback ``data`` (default: the first) on
        the bot's latest message in ``chat`` that has it, or on the bot's ``message`` (its id:
        ``event.sent[0].message_id``)."""
        if data is not None and not isinstance(data, str):
            raise TypeError(
                "click(user, chat, data, message=ID): data is the button's callback data;"
                " the message id goes in message="
            )
        person, target = self.find_user(user), self.find_chat(chat)
        update = self.emu.callback_click(person, target, message, data)
        return await self._dispatch(update, f"telegram click by {person.display_name}")

    async def photo(
        self,
        user: UserLike,
        chat: ChatLike | None = None,
        *,
        caption: str | None = None,
        topic: TopicLike | None = None,
        image: bytes | None = None,
    ) -> SimulatedEvent:
        """``user`` sends a photo (``image``, PNG or JPEG; default: a small sample) with
        ``caption`` in ``chat`` (default: the private chat): a command in the caption reaches
        the bot as a typed one does, and is judged the same way."""
        person = self.find_user(user)
        target = None if chat is None else self.find_chat(chat)
        update = self.emu.user_photo(
            person, image, target, caption=caption, topic=self._topic_ref(topic)
        )
        where = "private chat" if target is None else target.label
        return await self._dispatch(update, f"telegram photo by {person.display_name} in {where}")

    async def vote(
        self,
        user: UserLike,
        chat: ChatLike,
        options: Sequence[int | str],
        *,
        message: int | None = None,
    ) -> SimulatedEvent:
        """``user`` votes for ``options`` (indexes, or the options' texts; empty: retracts) in
        the bot's latest poll in ``chat`` (or the poll of ``message``). The bot gets the
        ``poll_answer`` (its poll's new state when the poll is anonymous)."""
        person, target = self.find_user(user), self.find_chat(chat)
        poll = self._poll(target, message)
        texts = [option["text"] for option in poll["options"]]
        chosen = [texts.index(o) if isinstance(o, str) and o in texts else o for o in options]
        if not all(isinstance(i, int) for i in chosen):
            raise LookupError(f"the poll has no option {options!r} (options: {texts})")
        mid = self._poll_message(target, message)
        if target.is_group and not self.emu.state.status(target, person).is_present:
            self.emu.state.set_member(target, person, "member")  # as writing does
        update = self.emu.vote(person, target, mid, [int(i) for i in chosen])
        return await self._dispatch(update, f"telegram vote by {person.display_name}")

    def _poll_message(self, chat: TelegramChat, message: int | None) -> int:
        if message is not None:
            return message
        for stored in reversed(self.emu.state.messages(chat)):
            if "poll" in stored and stored.get("from", {}).get("id") == self.emu.bot.id:
                return int(stored["message_id"])
        raise LookupError(f"the bot has sent no poll in {chat.label}")

    def _poll(self, chat: TelegramChat, message: int | None) -> dict[str, Any]:
        stored = self.emu.state.message(chat, self._poll_message(chat, message))
        if stored is None or "poll" not in stored:
            raise LookupError(f"message {message} of {chat.label} is no poll")
        poll: dict[str, Any] = stored["poll"]
        return poll

    async def redeliver(self, event: SimulatedEvent) -> SimulatedEvent:
        """Telegram delivers ``event``'s update again (a webhook retry): the same JSON."""
        update = dict(event.payload)
        return await self._dispatch(update or None, f"redelivery of {event.label}")

    @staticmethod
    def _topic_ref(topic: TopicLike | None) -> int | str | None:
        return topic.thread_id if isinstance(topic, TelegramForumTopic) else topic

    # -- the bot side ----------------------------------------------------------------------

    async def _dispatch(self, update: dict[str, Any] | None, label: str) -> SimulatedEvent:
        __tracebackhide__ = True
        self._start()
        event = SimulatedEvent(label, update or {})
        self.emu.queue.drop_pending()  # handed to the runner right here, never polled
        if update is not None and self._application is not None:
            await self._process(self._application, update, event)
        elif update is not None and self._dispatcher is not None:
            self._app_event = event
            try:
                await self._dispatcher.feed(update)
            finally:
                self._app_event = None
        elif update is not None:
            runner = self.runner
            result = await runner.handle_update(Update.de_json(update, runner.bot))
            await self._deliver(event, result)
        return await self._finish(event)

    async def _process(self, app: App, update: dict[str, Any], event: SimulatedEvent) -> None:
        """The served application processes ``update``; what its gate did goes to ``event``."""
        __tracebackhide__ = True
        self._app_event, self._app_errors = event, []
        before = asyncio.all_tasks()
        try:
            await app.process_update(Update.de_json(update, app.bot))
            # Handlers run non-blocking (block=False, Defaults(block=False)) are tasks of
            # the application's: the event is finished when they are.
            started = {
                t for t in asyncio.all_tasks() - before if t.get_name().startswith(_APP_TASKS)
            }
            if started:
                _, pending = await asyncio.wait(started, timeout=_WAIT)
                if pending:
                    raise AssertionError(
                        f"{event.label}: the application's handlers did not finish within "
                        f"{_WAIT:g}s"
                    )
        finally:
            self._app_event = None
        if self._app_errors:
            raise self._app_errors[0]

    def _on_ingress(self, result: Ingress, prepared: Prepared | None) -> None:
        event = self._app_event
        if event is not None:
            event.message, event.ignored, event.outcome = (
                result.message,
                result.reason,
                result.outcome,
            )
            event.request = None if prepared is None else prepared.request

    def _on_call(self, call: BotApiCall) -> None:
        if call.method.lower() != "sendmessage" or not isinstance(call.result, dict):
            return
        sent: dict[str, Any] = call.result
        chat = sent["chat"]
        topic = ""
        if chat.get("is_forum"):
            topic = str(sent["message_thread_id"]) if sent.get("is_topic_message") else "1"
        self.record_send(
            text=sent.get("text", ""),
            chat=chat["id"],
            topic=topic,
            message=sent["message_id"],
            ephemeral=False,
        )


def gate_of(application: App) -> Gate | None:
    """The gate :func:`~actorscope.integrations.ptb.install` put into ``application``, if any."""
    for handler in application.handlers.get(Gate.GROUP, ()):
        found = getattr(handler, "gate", None)
        if isinstance(found, Gate):
            return found
    return None


class _Recorder:
    """Hears the served application's gate: its pipeline results and decisions."""

    def __init__(self, sim: TelegramSim) -> None:
        self._sim = sim

    def on_ingress(self, update: Update, result: Ingress, prepared: Prepared | None) -> None:
        self._sim._on_ingress(result, prepared)

    def on_decision(self, config_type: str, decision: Decision) -> None:
        self._sim.record_decision(config_type, decision)

"""Discord simulator: the production runner connected to the Discord emulator over loopback.

Each simulator starts a :class:`~actorscope.sandbox.DiscordEmulator` on 127.0.0.1 and logs the
production :class:`~actorscope.channels.discord._runner.DiscordRunner`'s own discord.py client
in to it (:func:`~actorscope.sandbox.discord_pointed_at`): a real gateway session and real REST
calls. The world (users, guilds, channels, threads, DMs, webhooks) is the emulator's; events are
sent as its people (messages, DMs, edits, webhook and bot posts, slash commands). The runner
takes each through the ingress pipeline (dedup, admission, shared claim; ``!addwriter`` and
the writer slash commands answered by the runner, other interactions deferred) and the
production run step runs the bot's turn; its replies are the messages the emulator received,
and every REST request the bot made is in :attr:`DiscordSim.http_calls`::

    carol = discord_sim.user("carol")
    lab = discord_sim.guild("lab")
    general = discord_sim.channel(lab, "general")
    design = discord_sim.thread(general, "design")
    await discord_sim.slash(carol, "ask", design, options={"q": "hi"})

An event is finished when the client received it, the tasks it started (the runner's
handling, the turn, the reply) are done and the reply is recorded; every wait is bounded.
``discord_pointed_at`` is process-wide: one simulator (or emulator) at a time per process.
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import ExitStack, nullcontext
from typing import Any

with warnings.catch_warnings():
    # discord.py imports the deprecated stdlib ``audioop`` for voice, which nothing here uses;
    # a project's ``filterwarnings = error`` must not make loading the pytest plugin fail.
    warnings.filterwarnings("ignore", "'audioop' is deprecated", DeprecationWarning)
    import discord
    from discord.ext import commands

from actorscope.channels import ChannelConfig, Ingress, Pipeline, WriterCommand
from actorscope.channels.discord import DiscordRunner, WriterTarget
from actorscope.errors import ConfigError
from actorscope.host import OutboundSender, Prepared
from actorscope.sandbox import (
    DiscordEmulator,
    DiscordHttpCall,
    DiscordWorld,
    discord_pointed_at,
)
from actorscope.sandbox import DiscordMessage as Message
from actorscope.testing._expect import hide_on_expectation_failure
from actorscope.testing._harness import AgentEnv, SimulatedEvent, Simulator

__all__ = ["DiscordSim"]

#: A failed expectation's traceback ends at the test's line, not in this module.
__tracebackhide__ = hide_on_expectation_failure

User = DiscordWorld.User
Guild = DiscordWorld.Guild
Channel = DiscordWorld.Channel
DiscordInteraction = DiscordWorld.Interaction
UserLike = User | int | str
ChannelLike = Channel | int | str
GuildLike = Guild | int | str
_WAIT = 10.0  # seconds an event may take to reach the bot, and the bot to finish with it
#: Seconds Discord gives a bot to answer an interaction before it shows "This interaction
#: failed" to the person.
_ANSWER = 3.0
#: The names of the tasks discord.py starts to handle an event: the listeners it dispatches
#: to (``on_message``, a Cog's listeners), the app command tree's invocation, and the
#: callbacks of views, modals and dynamic items. Its other tasks (the READY delay,
#: heartbeats, a view's timeout) are the session's, never an event's.
_HANDLING = (
    "discord.py: ",
    "CommandTree-invoker",
    "discord-ui-view-dispatch-",
    "discord-ui-modal-dispatch-",
    "discord-ui-dynamic-item-",
)


class _Runner(DiscordRunner):
    """The production runner, telling the simulator what the pipeline made of each event."""

    def __init__(self, sim: DiscordSim, pipeline: Pipeline, **options: Any) -> None:
        super().__init__(pipeline, **options)
        self._sim = sim

    async def handle_message(self, message: discord.Message) -> Ingress:
        """The production handling; the result is kept for the event with the message's id."""
        result = await super().handle_message(message)
        self._sim._got(message.id, result)
        return result

    async def handle_interaction(self, interaction: discord.Interaction[Any]) -> Ingress | None:
        """The production handling; the result is kept for the event with the interaction's id."""
        result = await super().handle_interaction(interaction)
        if result is not None:  # a writer command: writer_interaction has the result
            self._sim._got(interaction.id, result)
        return result

    async def writer_interaction(
        self,
        interaction: discord.Interaction[Any],
        command: WriterCommand,
        target: WriterTarget | None,
    ) -> Ingress:
        """The production handling; the result is kept for the event with the interaction's id."""
        result = await super().writer_interaction(interaction, command, target)
        self._sim._got(interaction.id, result)
        return result


class DiscordSim(Simulator):
    """A Discord emulator, the production runner's client connected to it, and turns."""

    platform = "discord"

    def __init__(
        self,
        env: AgentEnv,
        *,
        config: ChannelConfig | None = None,
        bot_name: str = "actorscope",
        world: DiscordWorld | None = None,
    ) -> None:
        super().__init__(env, config or ChannelConfig(platform="discord", require_mention=False))
        #: The emulator's world (``world``, e.g. from ``DiscordWorld.declared()``,
        #: else an empty one with the bot called ``bot_name``).
        self.world = world if world is not None else DiscordWorld(bot_name=bot_name)
        self.emulator = DiscordEmulator(self.world, wait_timeout=_WAIT)
        self.emulator.listeners.append(self._posted)
        #: What the runner's pipeline made of each event, by message or interaction id.
        self._handled: dict[int, Ingress] = {}
        self._runner: _Runner | None = None
        self._bot: commands.Bot | None = None
        self._bot_session: asyncio.Task[None] | None = None
        self._bot_results: list[tuple[Ingress, Prepared | None]] = []
        self._pointing = ExitStack()
        self._live = False
        self._dirty: set[int] = set()
        self._channels: dict[str, Channel] = {}
        for guild in self.world.guilds.values():
            for channel in guild.channels.values():
                self._index(guild, channel)

    @property
    def bot(self) -> User:
        """The bot's own account."""
        return self.world.bot

    @property
    def http_calls(self) -> list[DiscordHttpCall]:
        """Every REST request the bot made to the emulator (interaction callbacks and
        follow-ups included), in order."""
        return list(self.emulator.requests)

    def _configure(self, config: ChannelConfig) -> None:
        if self._runner is not None:
            self._runner.config = self._runner.pipeline.config = config

    @property
    def runner(self) -> DiscordRunner:
        """The production Discord runner connected to the emulator."""
        if self._runner is None:
            raise RuntimeError("DiscordSim is not started (use `async with` or start())")
        return self._runner

    @property
    def client(self) -> discord.Client:
        """The discord.py client the events reach: the served bot, else the runner's client."""
        return self._bot if self._bot is not None else self.runner.client

    @property
    def sender(self) -> OutboundSender:
        """The runner: it sends the bot's replies."""
        return self.runner

    async def start(self) -> DiscordSim:
        """Start the emulator and connect the runner to it (a gateway session, real REST)."""
        await self.emulator.start()
        try:
            self._pointing.enter_context(discord_pointed_at(self.emulator))
            self._runner = _Runner(
                self,
                self.assembly.pipeline(
                    self.config, publish=self.bus.publish_from_channel, owners=self.env.owners
                ),
                token=self.world.token,
            )
            self.step.add_sender(self._runner.name, self._runner)
            await self._connected(self._runner.client, self._runner.start)
        except BaseException:
            await self.stop()
            raise
        return self

    async def _connected(
        self, client: discord.Client, login: Callable[[], Awaitable[None]]
    ) -> None:
        """Run ``login`` (it logs in, then starts the gateway session in a task) and wait
        until ``client`` has parsed its session's READY; bounded."""
        await login()
        # Registered before the session task's first step: READY comes after a handshake.
        ready = asyncio.create_task(client.wait_for("connect", timeout=_WAIT))
        try:
            await ready
        except TimeoutError:
            raise RuntimeError(
                f"the Discord client did not connect to the emulator within {_WAIT:g}s"
            ) from None
        finally:
            ready.cancel()
        self._live = True
        self._dirty.clear()

    async def serve_bot(self, bot: commands.Bot, *, adopt: bool = True) -> commands.Bot:
        """Connect your own ``commands.Bot`` built with
        :class:`~actorscope.integrations.discord_ext.ActorscopeCog` instead of the built-in bot.

        The runner's session is closed and ``bot`` logs in to the emulator: its ``setup_hook``
        runs as at login (add the Cog there); its commands, checks and replies run as in
        production, and the decisions its ``requires`` checks make are recorded for
        ``should_allow`` / ``should_deny``. The Cog is *adopted*
        (:meth:`~actorscope.integrations.Adoption.bind`): it loads on this simulator's database,
        agent, workspace and signer whatever it was given, so the test's grants decide and no
        file of the bot's is written; ``adopt=False`` keeps the bot's own database. The bot is
        closed (its Cogs unloaded) when the simulator stops.
        """
        # Imported here: the integration imports actorscope.bots, whose runtime imports this
        # package (the sandbox console), so a module-level import would be a cycle.
        from actorscope.integrations.discord_ext import ActorscopeCog

        if self._bot is not None:
            raise RuntimeError("DiscordSim already serves a bot")
        await self.runner.stop()
        self._bot = bot

        adoption = self.env.adoption() if adopt else None

        async def login() -> None:
            # The session task is started inside the adoption too: a Cog added later loads
            # on it as well.
            with adoption.bind() if adoption is not None else nullcontext():
                await bot.login(self.world.token)
                self._bot_session = asyncio.create_task(bot.connect(), name="discord-sim-bot")

        await self._connected(bot, login)
        cog = ActorscopeCog.of(bot)
        if adoption is not None and cog.opened.database is not adoption.database:
            raise RuntimeError(
                "the bot's ActorscopeCog was loaded before serve_bot, on its own database: "
                "add it in setup_hook"
            )
        cog.add_decision_listener(self.record_decision)
        cog.add_ingress_listener(self._bot_result)
        return bot

    async def stop(self) -> None:
        """Close the served bot and the runner's client, then the emulator; bounded."""
        bot, self._bot = self._bot, None
        session, self._bot_session = self._bot_session, None
        if bot is not None:
            await asyncio.wait_for(bot.close(), _WAIT)
        if session is not None:
            await asyncio.wait({session}, timeout=_WAIT)
        if self._runner is not None:
            await self._runner.stop()
            self._runner = None
        self._pointing.close()
        self._live = False
        await self.emulator.stop()

    async def __aenter__(self) -> DiscordSim:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # -- the world -------------------------------------------------------------------------

    def user(self, name: str, *, user_id: int | None = None, bot: bool = False) -> User:
        """A person (or, with ``bot``, another bot) called ``name``."""
        for known in self.world.users.values():
            if known.username == name:
                return known
        return self.world.add_user(name, bot=bot, user_id=user_id)

    def guild(
        self, name: str, *, guild_id: int | None = None, owner: UserLike | None = None
    ) -> Guild:
        """A guild the bot is in (owner: ``owner`` or the bot)."""
        for known in self.world.guilds.values():
            if known.name == name:
                return known
        boss = self.find_user(owner) if owner is not None else self.bot
        guild = self.world.add_guild(name, owner=boss, guild_id=guild_id)
        self._dirty.add(guild.id)
        return guild

    def channel(self, guild: GuildLike, name: str, *, channel_id: int | None = None) -> Channel:
        """A text channel of ``guild``."""
        owner = self.find_guild(guild)
        return self._add(owner, self.world.add_channel(owner, name, channel_id=channel_id))

    def thread(self, channel: ChannelLike, name: str, *, thread_id: int | None = None) -> Channel:
        """A public thread under a text channel."""
        parent = self.find_channel(channel)
        created = self.world.add_thread(parent, name, owner=self.bot, thread_id=thread_id)
        return self._add(self._guild_of(parent), created)

    def _add(self, guild: Guild, channel: Channel) -> Channel:
        self._index(guild, channel)
        self._dirty.add(guild.id)
        return channel

    def _index(self, guild: Guild, channel: Channel) -> None:
        self._channels.setdefault(channel.name, channel)
        self._channels[f"{guild.name}/{channel.name}"] = channel

    def dm_channel(self, user: UserLike) -> Channel:
        """The DM channel between ``user`` and the bot."""
        return self.world.dm_channel(self.find_user(user))

    def find_guild(self, guild: GuildLike) -> Guild:
        """A guild by sim name, id or object."""
        if isinstance(guild, Guild):
            return guild
        for found in self.world.guilds.values():
            if guild in (found.name, found.id, str(found.id)):
                return found
        raise LookupError(f"no Discord guild {guild!r} in the simulator")

    def find_user(self, user: UserLike) -> User:
        """A user by sim name, id or object."""
        if isinstance(user, User):
            return user
        for person in self.world.users.values():
            if user in (person.username, person.id, str(person.id)):
                return person
        raise LookupError(f"no Discord user {user!r} in the simulator")

    def find_channel(self, channel: ChannelLike) -> Channel:
        """A channel or thread by name (``guild/name`` when ambiguous), id or object."""
        if isinstance(channel, Channel):
            return channel
        if isinstance(channel, str) and channel in self._channels:
            return self._channels[channel]
        if str(channel).isdigit() and int(channel) in self.world.channels:
            return self.world.channels[int(channel)]
        raise LookupError(f"no Discord channel {channel!r} in the simulator")

    def _guild_of(self, channel: Channel) -> Guild:
        guild = self.world.guild_of(channel)
        if guild is None:
            raise LookupError(f"channel {channel.name!r} belongs to no guild")
        return guild

    def chat_id(self, chat: object) -> str:
        """The identity's chat id: the parent channel for a thread."""
        if isinstance(chat, Channel | int | str):
            found = self.find_channel(chat)
            return str(found.parent_id or found.id)
        return str(chat)

    def topic_id(self, chat: object, topic: object) -> str:
        """A thread's id."""
        if isinstance(topic, Channel | int | str):
            return str(self.find_channel(topic).id)
        return str(topic)

    def user_id(self, user: object) -> str:
        """A user's snowflake."""
        return str(self.find_user(user).id) if isinstance(user, User | str) else str(user)

    # -- events ----------------------------------------------------------------------------

    async def message(
        self,
        user: UserLike,
        text: str,
        channel: ChannelLike,
        *,
        mention_bot: bool = False,
        mentions: Sequence[UserLike] = (),
    ) -> SimulatedEvent:
        """``user`` writes ``text`` in a guild channel or thread (``mention_bot``: @the bot).

        ``mentions`` are the users the text mentions (write ``<@id>`` for each; the emulator
        resolves them): they become members of the guild, as the author does.
        """
        author, where = self.find_user(user), self.find_channel(channel)
        for person in (author, *(self.find_user(p) for p in mentions)):
            self._join(where, person)
        if mention_bot:
            text = f"<@{self.bot.id}> {text}"
        label = f"discord message by {author.username} in #{where.name}"
        return await self._message(label, self.emulator.say(author, where, text))

    async def dm(self, user: UserLike, text: str) -> SimulatedEvent:
        """``user`` writes ``text`` to the bot in a DM."""
        author = self.find_user(user)
        return await self._message(
            f"discord DM from {author.username}", self.emulator.dm(author, text)
        )

    async def webhook(
        self, channel: ChannelLike, text: str, *, name: str | None = None
    ) -> SimulatedEvent:
        """A webhook of ``channel`` posts ``text``: the one called ``name`` (made on first
        use), by default the channel's first (a declared one), else a new one called "hook"."""
        where = self.find_channel(channel)
        hooks = [h for h in self.world.webhooks.values() if h.channel_id == where.id]
        wanted = [h for h in hooks if name is None or h.name == name]
        hook = wanted[0] if wanted else self.world.add_webhook(where, name or "hook")
        label = f"discord webhook {hook.name!r} in #{where.name}"
        return await self._message(label, self.emulator.webhook_post(hook, text))

    async def bot_message(self, bot: UserLike, text: str, channel: ChannelLike) -> SimulatedEvent:
        """Another bot account writes in ``channel``."""
        author, where = self.find_user(bot), self.find_channel(channel)
        self._join(where, author)
        label = f"discord bot {author.username} in #{where.name}"
        return await self._message(label, self.emulator.say(author, where, text))

    async def edit(self, message: SimulatedEvent | Message, text: str) -> SimulatedEvent:
        """The author edits ``message`` (an earlier event's message) to ``text``
        (MESSAGE_UPDATE). The built-in runner ignores edits, as in production; a served
        bot's ``on_message_edit`` sees them."""
        target = (
            message
            if isinstance(message, Message)
            else self.world.messages.get(int(message.payload.get("id", 0)))
        )
        if target is None:
            raise LookupError(f"no Discord message for {message!r} in the simulator")
        label = f"discord edit by {target.author.username} in #{target.channel.name}"

        def received(raw: discord.RawMessageUpdateEvent) -> bool:
            return raw.message_id == target.id

        async def send() -> dict[str, Any]:
            edited = await self.emulator.edit(target, text)
            return edited.to_json(self.world.guild_of(edited.channel))

        return await self._play(label, send, "raw_message_edit", received)

    async def slash(
        self,
        user: UserLike,
        command: str,
        channel: ChannelLike | None = None,
        *,
        options: Mapping[str, str | int | bool | User] | None = None,
    ) -> SimulatedEvent:
        """``user`` runs ``/command`` in ``channel`` (default: their DM with the bot).

        An option given as a ``DiscordWorld.User`` is a user option
        (``/addwriter user:``).
        """
        person = self.find_user(user)
        where = self.dm_channel(person) if channel is None else self.find_channel(channel)
        values = dict(options or {})
        for value in (person, *values.values()):
            if isinstance(value, User):
                self._join(where, value)

        async def send() -> dict[str, Any]:
            done = await self.emulator.slash(person, where, command, **values)
            return {"id": str(done.id), "type": done.type, "data": done.data}

        def received(interaction: discord.Interaction[Any]) -> bool:
            return interaction.user.id == person.id

        label = f"discord /{command} by {person.username} in #{where.name}"
        return await self._play(label, send, "interaction", received)

    async def click(
        self,
        user: UserLike,
        channel: ChannelLike,
        custom_id: str,
        *,
        message: Message | int | None = None,
    ) -> SimulatedEvent:
        """``user`` presses the button ``custom_id`` on the bot's latest message in
        ``channel`` that has it (among the channel's messages and ``user``'s ephemeral ones),
        or on ``message`` (the bot's message, or its id: ``event.sent[0].message_id``).

        Returns once the bot has answered the interaction and the tasks discord.py started for
        it (a view's callback, listeners) have finished; a bot that does not answer within
        Discord's three seconds fails the test, as the click fails on Discord.
        """
        __tracebackhide__ = True
        person, where = self.find_user(user), self.find_channel(channel)
        self._join(where, person)
        clicked = self._clicked(person, where, custom_id, message)
        pressed: list[DiscordInteraction] = []

        async def send() -> dict[str, Any]:
            done = await self.emulator.click(person, clicked, custom_id)
            pressed.append(done)
            return {"id": str(done.id), "type": done.type, "data": done.data}

        def received(interaction: discord.Interaction[Any]) -> bool:
            return interaction.user.id == person.id

        label = f"discord click {custom_id!r} by {person.username} in #{where.name}"
        return await self._play(label, send, "interaction", received, answered=pressed)

    async def react(
        self, user: UserLike, message: SimulatedEvent | Message | int, emoji: str
    ) -> SimulatedEvent:
        """``user`` reacts to ``message`` (an event's message, a message or its id) with
        ``emoji`` (Unicode, or a guild emoji's name): the bot gets MESSAGE_REACTION_ADD."""
        __tracebackhide__ = True
        person, target = self.find_user(user), self._reacted(message)
        self._join(target.channel, person)

        async def send() -> dict[str, Any]:
            await self.emulator.react(person, target, emoji)
            return {"message_id": str(target.id), "user_id": str(person.id), "emoji": emoji}

        def received(payload: discord.RawReactionActionEvent) -> bool:
            return payload.user_id == person.id and payload.message_id == target.id

        label = f"discord reaction {emoji} by {person.username} on message {target.id}"
        return await self._play(label, send, "raw_reaction_add", received)

    def _reacted(self, message: SimulatedEvent | Message | int) -> Message:
        if isinstance(message, Message):
            return message
        wanted = message if isinstance(message, int) else int(message.payload.get("id", 0))
        found = self.emulator.message(wanted)
        if found is None:
            raise LookupError(f"no message {wanted} to react to")
        return found

    async def submit_modal(
        self, user: UserLike, opened: SimulatedEvent, values: Mapping[str, str | Sequence[str]]
    ) -> SimulatedEvent:
        """``user`` fills in and submits the modal the bot opened in answer to ``opened`` (a
        slash command's or a click's event); ``values`` maps input custom ids to what is
        typed (or a select's picks). Returns once the bot answered, like a click."""
        __tracebackhide__ = True
        person = self.find_user(user)
        interaction = self.emulator.interactions.get(int(opened.payload.get("id", 0)))
        if interaction is None or interaction.modal is None:
            raise LookupError(f"{opened.label}: the bot opened no modal for it")
        submitted: list[DiscordInteraction] = []

        async def send() -> dict[str, Any]:
            done = await self.emulator.submit_modal(person, interaction, values)
            submitted.append(done)
            return {"id": str(done.id), "type": done.type, "data": done.data}

        def received(got: discord.Interaction[Any]) -> bool:
            return got.user.id == person.id and got.type is discord.InteractionType.modal_submit

        label = f"discord modal {interaction.modal.get('title', '')!r} by {person.username}"
        return await self._play(label, send, "interaction", received, answered=submitted)

    def _clicked(
        self, person: User, where: Channel, custom_id: str, message: Message | int | None
    ) -> Message:
        """The bot's message the click presses (a clear error when there is none)."""
        if message is None:
            try:
                return self.emulator.latest_with_button(where, custom_id, viewer=person)
            except ConfigError as exc:
                raise LookupError(f"{exc}: the bot has not sent it to {person.username}") from None
        wanted = message.id if isinstance(message, Message) else message
        found = self.emulator.message(wanted, viewer=person)
        if found is None or found.author.id != self.bot.id:
            raise LookupError(f"no message {wanted} of the bot that {person.username} can see")
        return found

    def _join(self, channel: Channel, user: User) -> None:
        guild = self.world.guild_of(channel)
        if guild is not None and user.id not in guild.members:
            self.world.join(guild, user)
            self._dirty.add(guild.id)

    async def _sync(self) -> None:
        """Send the guilds that changed since the last event, as Discord would have."""
        if self._live:
            for guild_id in sorted(self._dirty):
                await self.emulator.sync_guild(self.world.guilds[guild_id])
            self._dirty.clear()

    async def _message(self, label: str, send: Awaitable[Message]) -> SimulatedEvent:
        async def sent() -> dict[str, Any]:
            message = await send
            return message.to_json(self.world.guild_of(message.channel))

        def received(message: discord.Message) -> bool:
            return message.author.id != self.bot.id

        return await self._play(label, sent, "message", received)

    async def _play(
        self,
        label: str,
        send: Callable[[], Awaitable[dict[str, Any]]],
        kind: str,
        received: Callable[..., bool],
        *,
        answered: Sequence[DiscordInteraction] = (),
    ) -> SimulatedEvent:
        """Send an event and wait until the client got it (``kind`` dispatched and
        ``received`` by the check) and the handling tasks it started are done; bounded. Then the
        runner's result for it is delivered (the turn runs, its reply is recorded). The
        interaction in ``answered`` (once sent) must have been answered by then, or within
        Discord's three seconds."""
        __tracebackhide__ = True
        self._start()
        await self._sync()
        before = asyncio.all_tasks()
        arrival = asyncio.create_task(self.client.wait_for(kind, check=received, timeout=_WAIT))
        try:
            payload = await send()
            got = await arrival
        except TimeoutError:
            raise AssertionError(f"{label}: the bot did not receive it within {_WAIT:g}s") from None
        finally:
            arrival.cancel()
        started = {t for t in asyncio.all_tasks() - before if t.get_name().startswith(_HANDLING)}
        if started:
            _, pending = await asyncio.wait(started, timeout=_WAIT)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending, timeout=_WAIT)
                raise AssertionError(f"{label}: the bot did not finish with it within {_WAIT:g}s")
        got_id = got.message_id if kind.startswith("raw_") else got.id
        event = SimulatedEvent(label, payload)
        if self._bot is not None:
            await self._deliver_bot(event)
        else:
            result = self._handled.pop(got_id, None)
            if result is not None:
                await self._deliver(event, result)
        self._handled.clear()  # the bot's own messages, which the runner saw meanwhile
        for interaction in answered:
            await self._answered(label, interaction)
        return await self._finish(event)

    async def _answered(self, label: str, interaction: DiscordInteraction) -> None:
        """Wait (Discord's three seconds at most) until the bot answered ``interaction``."""
        __tracebackhide__ = True
        try:
            async with asyncio.timeout(_ANSWER):
                await self.emulator.wait_for(lambda: interaction.callbacks or None)
        except TimeoutError:
            raise AssertionError(
                f"{label}: the bot did not answer the interaction within {_ANSWER:g}s"
                " (Discord shows the person 'This interaction failed')"
            ) from None

    def _got(self, event_id: int, result: Ingress) -> None:
        """The runner's result for the message or interaction ``event_id``."""
        self._handled[event_id] = result

    def _bot_result(self, result: Ingress, prepared: Prepared | None) -> None:
        self._bot_results.append((result, prepared))

    async def _deliver_bot(self, event: SimulatedEvent) -> None:
        """Record what the served bot's Cog made of the event (its last command's result)."""
        results, self._bot_results = self._bot_results, []
        if not results:
            return  # discord.py found no command in it (or the author is a bot)
        result, prepared = results[-1]
        event.message, event.ignored, event.outcome = result.message, result.reason, result.outcome
        if prepared is not None:
            event.request = prepared.request

    def _posted(self, message: Message) -> None:
        """The emulator's listener: a message the bot sent is recorded (an ephemeral one
        too, marked as such)."""
        if message.author.id != self.bot.id:
            return
        channel = message.channel
        self.record_send(
            text=message.content,
            chat=str(channel.parent_id or channel.id),
            topic=str(channel.id) if channel.is_thread else "",
            message=message.id,
            ephemeral=message.ephemeral_to is not None,
        )

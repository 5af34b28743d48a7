"""Discord simulator: gateway payloads replayed through discord.py and the production runner.

The world (users, guilds, channels, threads, DMs, webhooks) becomes ``GUILD_CREATE``,
``MESSAGE_CREATE`` and ``INTERACTION_CREATE`` data fed to the ``ConnectionState`` parsers of
the production :class:`~actorscope.channels._discord_runner.DiscordRunner`'s own client, which
dispatches them as the gateway would: to the runner (the ingress pipeline: dedup, admission,
shared claim; ``!addwriter`` and the writer slash commands answered by the runner, other
interactions deferred) and then the production run step with the bot's turn. The client never
opens a socket: its HTTP requests and interaction callbacks are answered here and recorded
(``sim.http_calls``); a reply goes out through the runner's ``send``::

    carol = discord_sim.user("carol")
    lab = discord_sim.guild("lab")
    general = discord_sim.channel(lab, "general")
    design = discord_sim.thread(general, "design")
    await discord_sim.slash(carol, "ask", design, options={"q": "hi"})
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

with warnings.catch_warnings():
    # discord.py imports the deprecated stdlib ``audioop`` for voice, which nothing here uses;
    # a project's ``filterwarnings = error`` must not make loading the pytest plugin fail.
    warnings.filterwarnings("ignore", "'audioop' is deprecated", DeprecationWarning)
    import discord
    from discord.ext import commands
    from discord.webhook.async_ import async_context

from actorscope.channels import ChannelConfig, Ingress
from actorscope.channels._discord_runner import DiscordRunner
from actorscope.host import OutboundSender, Prepared
from actorscope.testing.discord_api import DiscordApi, HttpCall, InteractionAdapter
from actorscope.testing.discord_payloads import (
    DiscordChannel,
    DiscordGuild,
    DiscordUser,
    Snowflakes,
    guild_create,
    interaction_create,
    message_create,
)
from actorscope.testing.expect import ObservationKind, hide_on_expectation_failure
from actorscope.testing.harness import AgentEnv, Event, Simulator

__all__ = ["DiscordSim"]

#: A failed expectation's traceback ends at the test's line, not in this module.
__tracebackhide__ = hide_on_expectation_failure

UserLike = DiscordUser | int | str
ChannelLike = DiscordChannel | int | str
_WAIT = 5.0  # seconds a parsed event may take to be handled by the runner (usually at once)


class DiscordSim(Simulator):
    """A Discord world, the production runner's discord.py client fed from it, and turns."""

    platform = "discord"

    def __init__(
        self, env: AgentEnv, *, config: ChannelConfig | None = None, bot_name: str = "actorscope"
    ) -> None:
        super().__init__(env, config or ChannelConfig(platform="discord", require_mention=False))
        self.ids = Snowflakes()
        self.bot = DiscordUser(self.ids.next(), bot_name, bot=True)
        self._runner: DiscordRunner | None = None
        self._bot: commands.Bot | None = None
        self._bot_results: list[tuple[Ingress, Prepared | None]] = []
        self._results: asyncio.Queue[Ingress] = asyncio.Queue()
        self._users: dict[str, DiscordUser] = {}
        self._guilds: dict[str, DiscordGuild] = {}
        self._channels: dict[str, DiscordChannel] = {}
        self._by_id: dict[int, DiscordChannel] = {}
        self._dirty: set[int] = set()
        self.api = DiscordApi(self.ids, self.bot, self._by_id, self._record_send)
        self._adapter = InteractionAdapter(self.api)

    @property
    def http_calls(self) -> list[HttpCall]:
        """Every request the bot made to Discord (HTTP API and interaction callbacks), in order."""
        return self.api.calls

    def _configure(self, config: ChannelConfig) -> None:
        if self._runner is not None:
            self._runner.config = self._runner.pipeline.config = config

    @property
    def runner(self) -> DiscordRunner:
        """The production Discord runner the simulator feeds."""
        if self._runner is None:
            raise RuntimeError("DiscordSim is not started (use `async with` or start())")
        return self._runner

    @property
    def client(self) -> discord.Client:
        """The discord.py client fed the events: the served bot, else the runner's client."""
        return self._bot if self._bot is not None else self.runner.client

    @property
    def sender(self) -> OutboundSender:
        """The runner: it sends the bot's replies."""
        return self.runner

    async def start(self) -> DiscordSim:
        """Set the runner's client up offline: its HTTP requests are answered by the simulator."""
        env = self.env
        runner = DiscordRunner(
            self.config,
            token="simulated",  # noqa: S106 - never logs in
            bus=self.bus,
            grants=env.store,
            agent_key=env.agent.key,
            agent_id=env.agent.id,
            tenant_id=env.agent.tenant_id,
            owners=env.owners,
            sync_commands=False,
            on_result=self._results.put_nowait,
        )
        await self._offline(runner.client)
        self.step.add_sender(runner.name, runner)
        self._runner = runner
        return self

    async def _offline(self, client: discord.Client) -> None:
        """What logging in sets up, without a socket: the simulator answers HTTP requests."""
        await client._async_setup_hook()
        client.http.request = self.api.request  # type: ignore[method-assign]
        state = client._connection
        state.user = discord.ClientUser(
            state=state,
            data={**_user_data(self.bot), "bot": True},  # type: ignore[typeddict-item]
        )
        state.application_id = self.bot.id

    async def serve_bot(self, bot: commands.Bot) -> commands.Bot:
        """Feed the events to your own ``commands.Bot`` built with
        :class:`~actorscope.integrations.discord_ext.ActorscopeCog` instead of the built-in bot.

        Its ``setup_hook`` runs as at login (add the Cog there, or before); its commands,
        checks and replies run as in production, and the decisions its ``requires`` checks
        make are recorded for ``should_allow`` / ``should_deny``. Give the Cog this
        simulator's database and agent (``sim.env.db``, ``sim.env.agent.key``). The bot is
        closed (its Cogs unloaded) when the simulator stops.
        """
        # Imported here: the integration imports actorscope.bots, whose runtime imports this
        # package (the sandbox console), so a module-level import would be a cycle.
        from actorscope.integrations.discord_ext import ActorscopeCog

        if self._bot is not None:
            raise RuntimeError("DiscordSim already serves a bot")
        await self._offline(bot)
        await bot.setup_hook()
        cog = ActorscopeCog.of(bot)
        cog.add_decision_listener(self.record_decision)
        cog.add_ingress_listener(self._bot_result)
        self._bot = bot
        return bot

    async def stop(self) -> None:
        """Close the served bot and the runner's client."""
        bot, self._bot = self._bot, None
        if bot is not None:
            await bot.close()
        if self._runner is not None:
            await self._runner.client.close()
            self._runner = None

    async def __aenter__(self) -> DiscordSim:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # -- the world -------------------------------------------------------------------------

    def user(self, name: str, *, user_id: int | None = None, bot: bool = False) -> DiscordUser:
        """A person (or, with ``bot``, another bot) called ``name``."""
        if name not in self._users:
            self._users[name] = DiscordUser(user_id or self.ids.next(), name, bot=bot)
        return self._users[name]

    def guild(
        self, name: str, *, guild_id: int | None = None, owner: UserLike | None = None
    ) -> DiscordGuild:
        """A guild the bot is in (owner: ``owner`` or the bot)."""
        boss = self.find_user(owner) if owner is not None else self.bot
        guild = DiscordGuild(guild_id or self.ids.next(), name, boss, members=[self.bot])
        if boss is not self.bot:
            guild.members.append(boss)
        self._guilds[name] = guild
        self._dirty.add(guild.id)
        return guild

    def channel(
        self, guild: DiscordGuild | str, name: str, *, channel_id: int | None = None
    ) -> DiscordChannel:
        """A text channel of ``guild``."""
        owner = self.find_guild(guild)
        return self._add(DiscordChannel(channel_id or self.ids.next(), name, guild=owner))

    def thread(
        self, channel: ChannelLike, name: str, *, thread_id: int | None = None
    ) -> DiscordChannel:
        """A public thread under a text channel."""
        parent = self.find_channel(channel)
        created = DiscordChannel(thread_id or self.ids.next(), name, guild=parent.guild)
        created.parent = parent
        return self._add(created)

    def _add(self, channel: DiscordChannel) -> DiscordChannel:
        guild = channel.guild
        if guild is None:
            raise LookupError(f"channel {channel.name!r} belongs to no guild")
        guild.channels.append(channel)
        self._channels.setdefault(channel.name, channel)
        self._channels[f"{guild.name}/{channel.name}"] = channel
        self._by_id[channel.id] = channel
        self._dirty.add(guild.id)
        return channel

    def dm_channel(self, user: UserLike) -> DiscordChannel:
        """The DM channel between ``user`` and the bot."""
        person = self.find_user(user)
        key = f"dm/{person.name}"
        if key not in self._channels:
            channel = DiscordChannel(self.ids.next(), key, recipient=person)
            self._channels[key] = channel
            self._by_id[channel.id] = channel
        return self._channels[key]

    def find_guild(self, guild: DiscordGuild | int | str) -> DiscordGuild:
        """A guild by sim name, id or object."""
        if isinstance(guild, DiscordGuild):
            return guild
        for found in self._guilds.values():
            if guild in (found.name, found.id, str(found.id)):
                return found
        raise LookupError(f"no Discord guild {guild!r} in the simulator")

    def find_user(self, user: UserLike) -> DiscordUser:
        """A user by sim name, id or object."""
        if isinstance(user, DiscordUser):
            return user
        for person in self._users.values():
            if user in (person.name, person.id, str(person.id)):
                return person
        raise LookupError(f"no Discord user {user!r} in the simulator")

    def find_channel(self, channel: ChannelLike) -> DiscordChannel:
        """A channel or thread by name (``guild/name`` when ambiguous), id or object."""
        if isinstance(channel, DiscordChannel):
            return channel
        if isinstance(channel, str) and channel in self._channels:
            return self._channels[channel]
        if str(channel).isdigit() and int(channel) in self._by_id:
            return self._by_id[int(channel)]
        raise LookupError(f"no Discord channel {channel!r} in the simulator")

    def chat_id(self, chat: object) -> str:
        """The identity's chat id: the parent channel for a thread."""
        if isinstance(chat, DiscordChannel | int | str):
            return str(self.find_channel(chat).chat_id)
        return str(chat)

    def topic_id(self, chat: object, topic: object) -> str:
        """A thread's id."""
        if isinstance(topic, DiscordChannel | int | str):
            return str(self.find_channel(topic).id)
        return str(topic)

    def user_id(self, user: object) -> str:
        """A user's snowflake."""
        return str(self.find_user(user).id) if isinstance(user, DiscordUser | str) else str(user)

    # -- events ----------------------------------------------------------------------------

    async def message(
        self,
        user: UserLike,
        text: str,
        channel: ChannelLike,
        *,
        mention_bot: bool = False,
        mentions: Sequence[UserLike] = (),
    ) -> Event:
        """``user`` writes ``text`` in a guild channel or thread (``mention_bot``: @the bot).

        ``mentions`` are the users Discord resolved in the text (write ``<@id>`` for each).
        """
        author, where = self.find_user(user), self.find_channel(channel)
        self._join(where, author)
        mentioned = tuple(self.find_user(person) for person in mentions)
        for person in mentioned:
            self._join(where, person)
        mentions_sent = ((self.bot,) if mention_bot else ()) + mentioned
        if mention_bot:
            text = f"<@{self.bot.id}> {text}"
        data = message_create(self.ids.next(), where, author, text, mentions=mentions_sent)
        return await self._message(data, f"discord message by {author.name} in #{where.name}")

    async def dm(self, user: UserLike, text: str) -> Event:
        """``user`` writes ``text`` to the bot in a DM."""
        author = self.find_user(user)
        data = message_create(self.ids.next(), self.dm_channel(author), author, text)
        return await self._message(data, f"discord DM from {author.name}")

    async def webhook(self, channel: ChannelLike, text: str, *, name: str = "hook") -> Event:
        """A webhook posts ``text`` in ``channel``."""
        where = self.find_channel(channel)
        if where.webhook_id is None:
            where.webhook_id = self.ids.next()
        author = DiscordUser(where.webhook_id, name, bot=True)
        data = message_create(self.ids.next(), where, author, text, webhook_id=where.webhook_id)
        return await self._message(data, f"discord webhook {name!r} in #{where.name}")

    async def bot_message(self, bot: UserLike, text: str, channel: ChannelLike) -> Event:
        """Another bot account writes in ``channel``."""
        author, where = self.find_user(bot), self.find_channel(channel)
        data = message_create(self.ids.next(), where, author, text)
        return await self._message(data, f"discord bot {author.name} in #{where.name}")

    async def slash(
        self,
        user: UserLike,
        command: str,
        channel: ChannelLike | None = None,
        *,
        options: Mapping[str, str | int | bool | DiscordUser] | None = None,
    ) -> Event:
        """``user`` runs ``/command`` in ``channel`` (default: their DM with the bot).

        An option given as a :class:`DiscordUser` is a user option (``/addwriter user:``).
        """
        person = self.find_user(user)
        where = self.dm_channel(person) if channel is None else self.find_channel(channel)
        self._join(where, person)
        for value in (options or {}).values():
            if isinstance(value, DiscordUser):
                self._join(where, value)
        await self._sync()
        interaction_id = self.ids.next()
        self.api.interactions[interaction_id] = where
        data = interaction_create(interaction_id, self.bot.id, where, person, command, options)
        label = f"discord /{command} by {person.name} in #{where.name}"
        return await self._feed("interaction_create", data, label)

    def _join(self, channel: DiscordChannel, user: DiscordUser) -> None:
        guild = channel.guild
        if guild is not None and user not in guild.members:
            guild.members.append(user)
            self._dirty.add(guild.id)

    async def _sync(self) -> None:
        """Replay ``GUILD_CREATE`` for every guild that changed since the last event."""
        state = self.client._connection
        for guild in self._guilds.values():
            if guild.id in self._dirty:
                state.parse_guild_create(guild_create(guild))
        self._dirty.clear()

    async def _message(self, data: dict[str, Any], label: str) -> Event:
        await self._sync()
        return await self._feed("message_create", data, label)

    async def _feed(self, kind: str, data: dict[str, Any], label: str) -> Event:
        """Parse ``data`` as the gateway event ``kind``; the runner's client dispatches it."""
        __tracebackhide__ = True
        self._start()
        event = Event(label, data)
        state = self.client._connection
        # Interaction responses made in this event (and the tasks it starts) come back here.
        token = async_context.set(self._adapter)
        try:
            before = asyncio.all_tasks()
            if kind == "message_create":
                state.parse_message_create(data)  # type: ignore[arg-type]
            else:
                state.parse_interaction_create(data)  # type: ignore[arg-type]
            if self._bot is not None:
                # The tasks discord.py started for this event (listeners, the command tree).
                await self._handled(asyncio.all_tasks() - before, label)
                await self._deliver_bot(event)
                return self._finish(event)
            try:
                result = await asyncio.wait_for(self._results.get(), _WAIT)
            except TimeoutError:
                raise AssertionError(
                    f"{label}: the runner did not finish with it within {_WAIT:g}s"
                ) from None
            await self._deliver(event, result)
        finally:
            async_context.reset(token)
        return self._finish(event)

    async def _handled(self, tasks: set[asyncio.Task[Any]], label: str) -> None:
        __tracebackhide__ = True
        if not tasks:
            return
        _, pending = await asyncio.wait(tasks, timeout=_WAIT)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending, timeout=_WAIT)
            raise AssertionError(f"{label}: the bot did not finish with it within {_WAIT:g}s")

    def _bot_result(self, result: Ingress, prepared: Prepared | None) -> None:
        self._bot_results.append((result, prepared))

    async def _deliver_bot(self, event: Event) -> None:
        """Record what the served bot's Cog made of the event (its last command's result)."""
        results, self._bot_results = self._bot_results, []
        if not results:
            return  # discord.py found no command in it (or the author is a bot)
        result, prepared = results[-1]
        event.message, event.ignored, event.outcome = result.message, result.reason, result.outcome
        if prepared is not None:
            event.request = prepared.request

    def _record_send(self, channel: DiscordChannel | None, channel_id: int, text: str) -> None:
        chat = channel.chat_id if channel is not None else channel_id
        topic = str(channel.id) if channel is not None and channel.is_thread else ""
        self.expect.record(ObservationKind.SEND, text=text, chat=chat, topic=topic)


def _user_data(user: DiscordUser) -> dict[str, Any]:
    return {"id": str(user.id), "username": user.name, "discriminator": "0", "avatar": None}

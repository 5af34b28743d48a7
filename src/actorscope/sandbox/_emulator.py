"""The Discord emulator: world, gateway and REST on one loopback aiohttp server.

Tests and the sandbox console act as people through :class:`DiscordEmulator`'s methods
(``say``, ``slash``, ``click``, ``select``, ``webhook_post``, ``open_thread``, ``add_member``,
``give_role``, ``sync_guild``); what the bot does is recorded (``messages``, ``interactions``,
``typing``, every REST request in ``requests``) and waited for with
:meth:`DiscordEmulator.wait_for`, always with a timeout.
"""

from __future__ import annotations

import asyncio
import re
import secrets
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from types import TracebackType
from typing import TypeVar

from aiohttp import web

from actorscope._aio import Site
from actorscope.errors import ConfigError
from actorscope.sandbox._gateway import Gateway, Intent, Session
from actorscope.sandbox._payloads import (
    SELECT_TYPES,
    Resolver,
    find_component,
    modal_submission,
    option_values,
    select_data,
    walk_components,
)
from actorscope.sandbox._rest import HttpCall, RateLimit, Rest
from actorscope.sandbox._world import (
    JSON,
    Channel,
    ChannelType,
    Guild,
    Interaction,
    Message,
    Permission,
    Role,
    User,
    Webhook,
    World,
    emoji_json,
    sandbox_world,
    timestamp,
)

__all__ = ["DiscordEmulator", "button_ids"]

_T = TypeVar("_T")
LOOPBACK_HOST = "127.0.0.1"
_SHUTDOWN_TIMEOUT = 2.0
#: REST requests kept in ``DiscordEmulator.requests`` (the oldest are dropped first).
_REQUEST_LOG = 10_000
_MENTION = re.compile(r"<@!?(\d+)>")


class DiscordEmulator:
    """An emulated Discord (gateway + REST ``/api/v10``) on 127.0.0.1; an async context manager.

    ``world`` defaults to :func:`~actorscope.sandbox.sandbox_world`. ``heartbeat_interval``
    is in seconds (Discord: 41.25). ``rate_limit`` is the per-route, per-channel bucket.
    ``wait_timeout`` bounds every ``wait_*`` method.
    """

    def __init__(
        self,
        world: World | None = None,
        *,
        port: int = 0,
        heartbeat_interval: float = 41.25,
        rate_limit: RateLimit | None = None,
        wait_timeout: float = 10.0,
    ) -> None:
        if not 0 <= port <= 65535:
            raise ConfigError(f"port must be between 0 and 65535, not {port}")
        if heartbeat_interval <= 0:
            raise ConfigError("heartbeat_interval must be a positive number of seconds")
        if wait_timeout <= 0:
            raise ConfigError("wait_timeout must be a positive number of seconds")
        #: How long every ``wait_*`` call waits before it raises ``TimeoutError``.
        self.wait_timeout = wait_timeout
        self.world = world if world is not None else sandbox_world()
        self._requested_port = port
        self._site = Site()
        self._pulse = asyncio.Event()
        self.gateway = Gateway(
            self.world,
            heartbeat_interval=heartbeat_interval,
            resume_url=lambda: self.gateway_url,
            changed=self._notify,
        )
        self.rest = Rest(self, rate_limit or RateLimit())
        #: Every channel message, in the order it was created (the bot's and the people's).
        self.messages: list[Message] = []
        #: The bot's ephemeral messages (flags 64), kept apart: each is its interaction
        #: user's alone, never dispatched, never in a channel's history.
        self.ephemeral: list[Message] = []
        self.interactions: dict[int, Interaction] = {}
        #: Channels the bot started typing in, in order.
        self.typing: list[Channel] = []
        #: Called with every new message, ephemeral ones too (the sandbox console prints the
        #: bot's; ``Message.ephemeral_to`` says who alone sees one).
        self.listeners: list[Callable[[Message], None]] = []
        #: Called with each interaction the bot answers with a modal (the prompt shows it).
        self.modal_listeners: list[Callable[[Interaction], None]] = []
        #: Application commands the bot synced: ``None`` for global, else a guild id.
        self.commands: dict[int | None, list[JSON]] = {}
        #: The REST requests the bot made, in order (the last ten thousand).
        self.requests: deque[HttpCall] = deque(maxlen=_REQUEST_LOG)

    # -- lifecycle ------------------------------------------------------------------------

    @property
    def port(self) -> int:
        """The bound port (known once started)."""
        if self._site.port is None:
            raise RuntimeError("the Discord emulator is not running")
        return self._site.port

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://{LOOPBACK_HOST}:{self.port}"

    @property
    def api_url(self) -> str:
        """The REST base, what ``discord.http.Route.BASE`` is while connected."""
        return f"{self.base_url}/api/v10"

    @property
    def gateway_url(self) -> str:
        """The gateway websocket URL (``GET /gateway/bot`` answers it too)."""
        return f"ws://{LOOPBACK_HOST}:{self.port}/gateway"

    async def start(self) -> None:
        """Bind 127.0.0.1 and start serving."""
        if self._site.running:
            raise RuntimeError("the Discord emulator is already running")
        app = web.Application()
        app.router.add_get("/gateway", self.gateway.handle)
        self.rest.install(app.router, "/api/v10")
        await self._site.start(
            app, LOOPBACK_HOST, self._requested_port, shutdown_timeout=_SHUTDOWN_TIMEOUT
        )

    async def stop(self) -> None:
        """Close the sockets (1001), then the server; safe to call twice."""
        if not self._site.running:
            return
        await self.gateway.close_all()
        await self._site.stop()

    async def __aenter__(self) -> DiscordEmulator:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    # -- waiting --------------------------------------------------------------------------

    def _notify(self) -> None:
        """Wake everything waiting in :meth:`wait_for` (called after every change)."""
        pulse, self._pulse = self._pulse, asyncio.Event()
        pulse.set()

    async def changed(self) -> None:
        """Wake everything waiting in :meth:`wait_for`."""
        self._notify()

    async def wait_for(self, probe: Callable[[], _T | None]) -> _T:
        """Wait until ``probe()`` returns something other than None; returns it.

        ``probe`` is tried after every change the emulator sees. Raises ``TimeoutError``
        after ``wait_timeout`` seconds (every wait of the emulator is bounded).
        """
        async with asyncio.timeout(self.wait_timeout):
            while True:
                pulse = self._pulse
                value = probe()
                if value is not None:
                    return value
                await pulse.wait()

    async def wait_connected(self, *, count: int = 1) -> list[Session]:
        """Wait until ``count`` sessions have a live socket (READY and guilds sent)."""

        def probe() -> list[Session] | None:
            live = self.connected_sessions()
            return live if len(live) >= count else None

        return await self.wait_for(probe)

    async def wait_answered(self) -> None:
        """Wait until no REST request of the bot is being answered (its latest call is back
        on its way), e.g. before a person reacts to what the bot just sent."""
        await self.wait_for(lambda: True if self.rest.in_flight == 0 else None)

    def connected_sessions(self) -> list[Session]:
        """The sessions with a live socket."""
        return [s for s in self.gateway.sessions.values() if s.socket is not None]

    async def wait_for_bot_message(
        self,
        *,
        channel: Channel | str | None = None,
        after: int = 0,
    ) -> Message:
        """The first message the bot posted (in ``channel``) whose id is above ``after``."""
        where = self._channel(channel) if channel is not None else None

        def probe() -> Message | None:
            for message in self.messages:
                if (
                    message.author.id == self.world.bot.id
                    and message.id > after
                    and not message.deleted
                    and (where is None or message.channel.id == where.id)
                ):
                    return message
            return None

        return await self.wait_for(probe)

    # -- acting as people -----------------------------------------------------------------

    def _user(self, who: User | str) -> User:
        return who if isinstance(who, User) else self.world.user(who)

    def _seeing(self, who: User | str, message: Message) -> User:
        """``who``, who must see ``message`` to act on it (an ephemeral one is its person's)."""
        user = self._user(who)
        if not message.visible_to(user):
            raise ConfigError(f"{user.username} cannot see message {message.id} (ephemeral)")
        return user

    def message(self, message_id: int, *, viewer: User | None = None) -> Message | None:
        """The message with that id: a channel message, or an ephemeral one ``viewer`` sees."""
        found = self.world.messages.get(message_id)
        if found is None and viewer is not None:
            seen = (m for m in self.ephemeral if m.id == message_id and m.visible_to(viewer))
            found = next(seen, None)
        return found

    def _channel(self, where: Channel | str) -> Channel:
        return where if isinstance(where, Channel) else self.world.channel(where)

    async def say(
        self,
        who: User | str,
        where: Channel | str,
        content: str,
        *,
        embeds: Sequence[JSON] = (),
        reply_to: Message | None = None,
    ) -> Message:
        """``who`` posts ``content`` in a channel or thread (``<@id>`` mentions are parsed)."""
        author, channel = self._user(who), self._channel(where)
        guild = self.world.guild_of(channel)
        if guild is not None and author.id not in guild.members:
            raise ConfigError(f"{author.username} is not a member of {guild.name}")
        return await self.post(author, channel, content, embeds=list(embeds), reply_to=reply_to)

    async def dm(self, who: User | str, content: str) -> Message:
        """``who`` writes to the bot in a direct message."""
        author = self._user(who)
        return await self.post(author, self.world.dm_channel(author), content)

    async def webhook_post(self, hook: Webhook | str, content: str) -> Message:
        """A webhook posts ``content`` in its channel."""
        webhook = hook if isinstance(hook, Webhook) else self.world.webhook(hook)
        channel = self.world.channels[webhook.channel_id]
        return await self.post(webhook.as_author(), channel, content, webhook_id=webhook.id)

    async def edit(self, message: Message, content: str) -> Message:
        """Edit ``message`` (MESSAGE_UPDATE; none for an ephemeral message)."""
        message.content = content
        message.edited = timestamp()
        if message.ephemeral_to is None:
            guild = self.world.guild_of(message.channel)
            await self._dispatch_message("MESSAGE_UPDATE", message, guild)
        await self.changed()
        return message

    async def delete(self, message: Message) -> None:
        """Delete ``message`` (MESSAGE_DELETE; none for an ephemeral message)."""
        message.deleted = True
        if message.ephemeral_to is not None:
            await self.changed()
            return
        guild = self.world.guild_of(message.channel)
        data: JSON = {"id": str(message.id), "channel_id": str(message.channel.id)}
        if guild is not None:
            data["guild_id"] = str(guild.id)
        intent = Intent.GUILD_MESSAGES if guild is not None else Intent.DIRECT_MESSAGES
        await self.gateway.dispatch(
            "MESSAGE_DELETE", data, guild_id=guild.id if guild else None, intent=intent
        )
        await self.changed()

    async def open_thread(self, who: User | str, where: Channel | str, name: str) -> Channel:
        """``who`` opens a public thread under a channel (THREAD_CREATE)."""
        parent = self._channel(where)
        thread = self.world.add_thread(parent, name, owner=self._user(who))
        await self.gateway.dispatch(
            "THREAD_CREATE",
            {**thread.to_json(), "newly_created": True},
            guild_id=thread.guild_id,
            intent=Intent.GUILDS,
        )
        return thread

    async def add_member(self, guild: Guild, username: str, *, bot: bool = False) -> User:
        """A new account joins ``guild`` (GUILD_MEMBER_ADD)."""
        user = self.world.add_user(username, bot=bot)
        member = self.world.join(guild, user)
        await self.gateway.dispatch(
            "GUILD_MEMBER_ADD",
            {**member.to_json(), "guild_id": str(guild.id)},
            guild_id=guild.id,
            intent=Intent.GUILD_MEMBERS,
        )
        return user

    async def give_role(self, guild: Guild, who: User | str, role: Role) -> None:
        """Add ``role`` to a member (GUILD_MEMBER_UPDATE)."""
        user = self._user(who)
        member = guild.members[user.id]
        if role.id not in member.roles:
            member.roles.append(role.id)
        await self.member_updated(guild, user)

    async def member_updated(self, guild: Guild, user: User) -> None:
        """Dispatch GUILD_MEMBER_UPDATE for ``user``."""
        member = guild.members[user.id]
        await self.gateway.dispatch(
            "GUILD_MEMBER_UPDATE",
            {**member.to_json(), "guild_id": str(guild.id)},
            guild_id=guild.id,
            intent=Intent.GUILD_MEMBERS,
        )

    async def sync_guild(self, guild: Guild) -> None:
        """Send ``guild`` as it is now (GUILD_CREATE), as Discord does when the bot joins one:
        for guilds, channels, threads, members and roles added after the bot connected."""
        await self.gateway.dispatch(
            "GUILD_CREATE", guild.to_json(), guild_id=guild.id, intent=Intent.GUILDS
        )

    async def slash(
        self, who: User | str, where: Channel | str, name: str, /, **options: object
    ) -> Interaction:
        """``who`` runs ``/name`` with ``options``: types taken from the synced command, else
        from the value (a ``DiscordWorld.User`` is a user option, an ``int``
        an integer, a ``bool`` a boolean, anything else a string)."""
        user, channel = self._user(who), self._channel(where)
        command = self._command(name, channel)
        if command.get("type", 1) != 1:
            raise ConfigError(f"{name!r} is a context-menu command: use context_menu()")
        data: JSON = {"id": str(command.get("id", 0)), "name": name, "type": 1}
        guild = self.world.guild_of(channel)
        resolver = Resolver(self.world, guild, channel, user)
        data["options"] = option_values({"name": name, **command}, options, resolver)
        if resolver.resolved:
            data["resolved"] = resolver.resolved
        if command.get("guild_id") is not None:
            data["guild_id"] = command["guild_id"]
        return await self._interact(2, user, channel, data)

    async def context_menu(
        self, who: User | str, where: Channel | str, name: str, target: User | str | Message
    ) -> Interaction:
        """``who`` runs the synced context-menu command ``name`` on ``target``: a user (by
        name) for a user command, a message for a message command."""
        user, channel = self._user(who), self._channel(where)
        command = self._command(name, channel)
        kind = command.get("type")
        if kind not in (2, 3):
            raise ConfigError(f"the bot synced no context-menu command {name!r}")
        guild = self.world.guild_of(channel)
        resolver = Resolver(self.world, guild, channel, user)
        if kind == 3:
            if not isinstance(target, Message):
                raise ConfigError(f"{name!r} is a message command: pass the message")
            message = self.message(target.id, viewer=user)
            if message is None or message.deleted:
                raise ConfigError(f"{user.username} cannot see message {target.id}")
            target_id = str(message.id)
            resolver.resolved["messages"] = {
                target_id: message.to_json(guild, bot_id=self.world.bot.id)
            }
        elif isinstance(target, Message):
            raise ConfigError(f"{name!r} is a user command: pass the user")
        else:
            target_id = resolver.user(target)
        data: JSON = {
            "id": str(command.get("id", 0)),
            "name": name,
            "type": kind,
            "target_id": target_id,
            "resolved": resolver.resolved,
        }
        if command.get("guild_id") is not None:
            data["guild_id"] = command["guild_id"]
        return await self._interact(2, user, channel, data)

    def pressable(self, message: Message) -> list[str]:
        """The custom ids of ``message``'s buttons that can be pressed (not disabled), in
        order."""
        return [
            custom_id
            for custom_id in button_ids(message)
            if not find_component(
                message.components, custom_id, frozenset({2}), where=f"message {message.id}"
            ).get("disabled")
        ]

    async def click(self, who: User | str, message: Message, custom_id: str) -> Interaction:
        """``who`` clicks the button ``custom_id`` of ``message`` (one they can see)."""
        user = self._seeing(who, message)
        button = find_component(
            message.components, custom_id, frozenset({2}), where=f"message {message.id}"
        )
        if button.get("disabled"):
            raise ConfigError(f"the button {custom_id!r} is disabled")
        data: JSON = {"custom_id": custom_id, "component_type": 2}
        return await self._interact(3, user, message.channel, data, message=message)

    async def select(
        self,
        who: User | str,
        message: Message,
        custom_id: str,
        values: Sequence[str | User | Channel | Role],
    ) -> Interaction:
        """``who`` picks ``values`` in the select ``custom_id`` of ``message``: option values
        of a string select; users, roles or channels (by name or object) of the others."""
        user = self._seeing(who, message)
        component = find_component(
            message.components, custom_id, SELECT_TYPES, where=f"message {message.id}"
        )
        if component.get("disabled"):
            raise ConfigError(f"the select {custom_id!r} is disabled")
        guild = self.world.guild_of(message.channel)
        resolver = Resolver(self.world, guild, message.channel, user)
        picked = select_data(component, values, resolver)
        data: JSON = {"custom_id": custom_id, "component_type": component["type"], **picked}
        if resolver.resolved:
            data["resolved"] = resolver.resolved
        return await self._interact(3, user, message.channel, data, message=message)

    async def submit_modal(
        self,
        who: User | str,
        interaction: Interaction,
        values: Mapping[str, str | Sequence[str | User | Channel | Role]] | None = None,
    ) -> Interaction:
        """``who`` fills in and submits the modal the bot answered ``interaction`` with:
        ``values`` maps each input's custom id to the text typed (an input left out keeps its
        prefilled value) or a select's picks. The submit is a new interaction (type 5)."""
        user = self._user(who)
        modal = interaction.modal
        if modal is None:
            raise ConfigError(f"the bot answered interaction {interaction.id} with no modal")
        if user.id != interaction.user.id:
            raise ConfigError(f"the modal is {interaction.user.username}'s, not {user.username}'s")
        guild = self.world.guild_of(interaction.channel)
        resolver = Resolver(self.world, guild, interaction.channel, user)
        data = modal_submission(modal, values or {}, resolver)
        interaction.modal = None  # a modal is submitted once
        return await self._interact(5, user, interaction.channel, data, message=interaction.message)

    async def react(self, who: User | str, message: Message, emoji: str) -> None:
        """``who`` reacts to ``message`` with ``emoji``: a Unicode emoji, or a custom emoji of
        the guild by name or ``name:id`` (MESSAGE_REACTION_ADD)."""
        user, key = self._reacting(who, message, emoji)
        holders = message.reactions.setdefault(key, set())
        if user.id in holders:
            raise ConfigError(f"{user.username} has reacted with {emoji} already")
        guild = self.world.guild_of(message.channel)
        if guild is not None and not holders:
            allowed = guild.permissions_in(message.channel, user.id)
            if not allowed & Permission.ADD_REACTIONS:
                raise ConfigError(f"{user.username} may not add new reactions here")
        holders.add(user.id)
        await self.reaction_event("MESSAGE_REACTION_ADD", message, user, key)

    async def unreact(self, who: User | str, message: Message, emoji: str) -> None:
        """``who`` takes their reaction ``emoji`` off ``message`` (MESSAGE_REACTION_REMOVE)."""
        user, key = self._reacting(who, message, emoji)
        holders = message.reactions.get(key, set())
        if user.id not in holders:
            raise ConfigError(f"{user.username} has not reacted with {emoji}")
        holders.discard(user.id)
        await self.reaction_event("MESSAGE_REACTION_REMOVE", message, user, key)

    def _reacting(self, who: User | str, message: Message, emoji: str) -> tuple[User, str]:
        user = self._seeing(who, message)
        if message.ephemeral_to is not None or message.deleted:
            raise ConfigError(f"message {message.id} takes no reactions")
        guild = self.world.guild_of(message.channel)
        if guild is not None:
            if user.id not in guild.members:
                raise ConfigError(f"{user.username} is not a member of {guild.name}")
            allowed = guild.permissions_in(message.channel, user.id)
            needed = Permission.VIEW_CHANNEL | Permission.READ_MESSAGE_HISTORY
            if allowed & needed != needed:
                raise ConfigError(f"{user.username} cannot read #{message.channel.name}")
        return user, self.reaction_key(guild, emoji)

    @staticmethod
    def reaction_key(guild: Guild | None, emoji: str) -> str:
        """How a reaction is kept: the Unicode emoji, or ``name:id`` of a custom one (given as
        ``name``, ``:name:``, ``name:id`` or ``<:name:id>``), which must be the guild's."""
        text = emoji.strip().removeprefix("<").removesuffix(">").strip(":")
        if not text:
            raise ConfigError("an emoji is needed")
        if not text.isascii():
            return text
        name, _, emoji_id = text.removeprefix("a:").rpartition(":")
        if not name:
            name, emoji_id = emoji_id, ""
        emojis = guild.emojis if guild is not None else {}
        for known_id, known_name in emojis.items():
            if known_name == name and emoji_id in ("", str(known_id)):
                return f"{known_name}:{known_id}"
        raise ConfigError(f"{emoji!r} is no emoji of this guild")

    async def reaction_event(self, event: str, message: Message, user: User, key: str) -> None:
        """Dispatch a reaction's MESSAGE_REACTION_ADD / _REMOVE (the bot's own too)."""
        guild = self.world.guild_of(message.channel)
        data: JSON = {
            "user_id": str(user.id),
            "channel_id": str(message.channel.id),
            "message_id": str(message.id),
            "emoji": emoji_json(key),
            "burst": False,
            "burst_colors": [],
            "type": 0,
        }
        if guild is not None:
            data["guild_id"] = str(guild.id)
            if event == "MESSAGE_REACTION_ADD":
                data["member"] = guild.members[user.id].to_json()
        if event == "MESSAGE_REACTION_ADD":
            data["message_author_id"] = str(message.author.id)
        intent = (
            Intent.GUILD_MESSAGE_REACTIONS if guild is not None else Intent.DIRECT_MESSAGE_REACTIONS
        )
        await self.gateway.dispatch(
            event, data, guild_id=guild.id if guild is not None else None, intent=intent
        )
        await self.changed()

    def latest_with_button(
        self, channel: Channel | str, custom_id: str | None = None, *, viewer: User | None = None
    ) -> Message:
        """The bot's latest message in ``channel`` that has the button ``custom_id`` (any
        button when ``None``), among the channel's messages and ``viewer``'s ephemeral ones;
        a ConfigError names what is missing."""
        where = self._channel(channel)
        seen = [m for m in self.ephemeral if viewer is not None and m.visible_to(viewer)]
        for message in sorted([*self.messages, *seen], key=lambda m: m.id, reverse=True):
            if (
                message.author.id == self.world.bot.id
                and message.channel.id == where.id
                and not message.deleted
                and (buttons := button_ids(message))
                and (custom_id is None or custom_id in buttons)
            ):
                return message
        button = "a button" if custom_id is None else f"a button {custom_id!r}"
        raise ConfigError(f"no message of the bot in #{where.name} has {button}")

    async def wait_for_reply(self, interaction: Interaction) -> Message:
        """The bot's first message answering ``interaction`` (a reply or a follow-up)."""
        return await self.wait_for(lambda: interaction.replies[0] if interaction.replies else None)

    # -- shared by the people and the REST side ---------------------------------------------

    async def post(
        self,
        author: User,
        channel: Channel,
        content: str,
        *,
        embeds: list[JSON] | None = None,
        components: list[JSON] | None = None,
        webhook_id: int | None = None,
        reply_to: Message | None = None,
        interaction_metadata: JSON | None = None,
        ephemeral_to: User | None = None,
        flags: int = 0,
    ) -> Message:
        """Create a message and dispatch MESSAGE_CREATE; an ephemeral one (``ephemeral_to``,
        its interaction's user) is kept apart in :attr:`ephemeral` and dispatched to nobody,
        as on Discord."""
        mentions = [
            self.world.users[int(raw)]
            for raw in _MENTION.findall(content)
            if int(raw) in self.world.users
        ]
        reference = None
        if reply_to is not None:
            reference = {
                "message_id": str(reply_to.id),
                "channel_id": str(reply_to.channel.id),
                "type": 0,
            }
            if channel.guild_id is not None:
                reference["guild_id"] = str(channel.guild_id)
        message = Message(
            self.world.snowflake(),
            channel,
            author,
            content,
            embeds=embeds or [],
            components=components or [],
            mentions=mentions,
            webhook_id=webhook_id,
            reference=reference,
            interaction_metadata=interaction_metadata,
            ephemeral_to=ephemeral_to,
            flags=flags,
        )
        if ephemeral_to is not None:
            self.ephemeral.append(message)
        else:
            self.world.messages[message.id] = message
            self.messages.append(message)
        for listener in list(self.listeners):
            listener(message)
        if ephemeral_to is None:
            await self._dispatch_message("MESSAGE_CREATE", message, self.world.guild_of(channel))
        await self.changed()
        return message

    async def _dispatch_message(self, event: str, message: Message, guild: Guild | None) -> None:
        intent = Intent.GUILD_MESSAGES if guild is not None else Intent.DIRECT_MESSAGES
        data = message.to_json(guild, bot_id=self.world.bot.id)
        if message.channel.type is ChannelType.DM:
            data = data | {"channel_type": int(ChannelType.DM)}
        await self.gateway.dispatch(
            event,
            data,
            guild_id=guild.id if guild is not None else None,
            intent=intent,
            content_of=[message.author.id, *(u.id for u in message.mentions)],
        )

    def _command(self, name: str, channel: Channel) -> JSON:
        for scope in (channel.guild_id, None):
            for command in self.commands.get(scope, []):
                if command.get("name") == name:
                    return command
        return {"name": name}

    async def _interact(
        self,
        kind: int,
        user: User,
        channel: Channel,
        data: JSON,
        *,
        message: Message | None = None,
    ) -> Interaction:
        interaction = Interaction(
            self.world.snowflake(),
            secrets.token_urlsafe(24),
            kind,
            user,
            channel,
            data,
            message=message,
        )
        self.interactions[interaction.id] = interaction
        guild = self.world.guild_of(channel)
        payload: JSON = {
            "id": str(interaction.id),
            "application_id": str(self.world.application_id),
            "type": kind,
            "data": data,
            "token": interaction.token,
            "version": 1,
            "channel_id": str(channel.id),
            "channel": channel.to_json(),
            "locale": "en-US",
            "entitlements": [],
            "attachment_size_limit": 26_214_400,
        }
        if message is not None:
            payload["message"] = message.to_json(guild, bot_id=self.world.bot.id)
        if guild is not None:
            perms = guild.permissions_in(channel, user.id)
            payload["guild_id"] = str(guild.id)
            payload["guild_locale"] = "en-US"
            payload["guild"] = {"id": str(guild.id), "locale": "en-US", "features": []}
            payload["member"] = guild.members[user.id].to_json() | {"permissions": str(perms)}
            payload["app_permissions"] = str(guild.permissions_in(channel, self.world.bot.id))
            payload["context"] = 0
            payload["authorizing_integration_owners"] = {"0": str(guild.id)}
        else:
            payload["user"] = user.to_json()
            payload["app_permissions"] = "0"
            payload["context"] = 1
            payload["authorizing_integration_owners"] = {"1": str(user.id)}
        await self.gateway.dispatch(
            "INTERACTION_CREATE",
            payload,
            guild_id=guild.id if guild is not None else None,
            intent=Intent(0),
        )
        return interaction


def button_ids(message: Message) -> list[str]:
    """The custom ids of ``message``'s buttons (in rows, containers and sections), in order."""
    return [
        str(component["custom_id"])
        for component in walk_components(message.components)
        if component.get("type") == 2 and "custom_id" in component
    ]

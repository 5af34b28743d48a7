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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import TypeVar

from aiohttp import web

from actorscope._aio import Site
from actorscope.errors import ConfigError
from actorscope.sandbox._gateway import Gateway, Intent, Session
from actorscope.sandbox._rest import HttpCall, RateLimit, Rest
from actorscope.sandbox._world import (
    JSON,
    Channel,
    ChannelType,
    Guild,
    Message,
    Role,
    User,
    Webhook,
    World,
    sandbox_world,
    timestamp,
)

__all__ = ["DiscordEmulator", "Interaction", "button_ids"]

_T = TypeVar("_T")
LOOPBACK_HOST = "127.0.0.1"
_SHUTDOWN_TIMEOUT = 2.0
#: REST requests kept in ``DiscordEmulator.requests`` (the oldest are dropped first).
_REQUEST_LOG = 10_000
_MENTION = re.compile(r"<@!?(\d+)>")
# Application command option types the emulator converts (others pass as strings).
_STRING, _INTEGER, _BOOLEAN, _USER, _NUMBER = 3, 4, 5, 6, 10


@dataclass(slots=True)
class Interaction:
    """An interaction a person started, and how the bot answered it."""

    id: int
    token: str
    type: int
    user: User
    channel: Channel
    data: JSON
    message: Message | None = None
    #: The callback types the bot sent, in order (4 reply, 5 defer, 6 defer-update, 7 update).
    callbacks: list[int] = field(default_factory=list)
    #: The bot's reply (callback type 4) or its deferred reply's edit, and each follow-up.
    replies: list[Message] = field(default_factory=list)
    original: Message | None = None
    #: The bot deferred its reply (callback type 5) with flags 64: the reply is ephemeral.
    ephemeral: bool = False


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
        from the value (a :class:`User` is a user option, an ``int`` an integer, a ``bool`` a
        boolean, anything else a string)."""
        user, channel = self._user(who), self._channel(where)
        command = self._command(name, channel)
        data: JSON = {"id": str(command.get("id", 0)), "name": name, "type": 1}
        specs = {o["name"]: o for o in command.get("options", []) if isinstance(o, dict)}
        resolved: JSON = {}
        rendered = []
        guild = self.world.guild_of(channel)
        for key, value in options.items():
            kind = int(specs.get(key, {}).get("type", _option_type(value)))
            if kind == _USER:
                target = self._user(value) if isinstance(value, User | str) else None
                if target is None:
                    raise ConfigError(f"option {key} names a user: pass a name or a User")
                resolved.setdefault("users", {})[str(target.id)] = target.to_json()
                if guild is not None and target.id in guild.members:
                    member = guild.members[target.id].to_json(with_user=False)
                    perms = str(guild.permissions_in(channel, target.id))
                    resolved.setdefault("members", {})[str(target.id)] = member | {
                        "permissions": perms
                    }
                value = str(target.id)
            rendered.append({"name": key, "type": kind, "value": value})
        data["options"] = rendered
        if resolved:
            data["resolved"] = resolved
        if guild is not None:
            data["guild_id"] = str(guild.id)
        return await self._interact(2, user, channel, data)

    async def click(self, who: User | str, message: Message, custom_id: str) -> Interaction:
        """``who`` clicks the button ``custom_id`` of ``message`` (one they can see)."""
        user = self._seeing(who, message)
        data: JSON = {"custom_id": self._component(message, custom_id, 2), "component_type": 2}
        return await self._interact(3, user, message.channel, data, message=message)

    async def select(
        self, who: User | str, message: Message, custom_id: str, values: Sequence[str]
    ) -> Interaction:
        """``who`` picks ``values`` in the string select ``custom_id`` of ``message``."""
        user = self._seeing(who, message)
        data: JSON = {
            "custom_id": self._component(message, custom_id, 3),
            "component_type": 3,
            "values": list(values),
        }
        return await self._interact(3, user, message.channel, data, message=message)

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
        data = message.to_json(guild)
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

    @staticmethod
    def _component(message: Message, custom_id: str, kind: int) -> str:
        for row in message.components:
            for component in row.get("components", []):
                if component.get("custom_id") == custom_id and component.get("type") == kind:
                    return custom_id
        raise ConfigError(f"message {message.id} has no component {custom_id!r} of that kind")

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
            payload["message"] = message.to_json(guild)
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
    """The custom ids of ``message``'s buttons, in order."""
    return [
        str(component["custom_id"])
        for row in message.components
        for component in row.get("components", [])
        if component.get("type") == 2 and "custom_id" in component
    ]


def _option_type(value: object) -> int:
    """The option type a value of an unsynced command has."""
    if isinstance(value, User):
        return _USER
    if isinstance(value, bool):
        return _BOOLEAN
    return _INTEGER if isinstance(value, int) else _STRING

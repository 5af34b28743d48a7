"""The Discord emulator's world: users, guilds, roles, channels, threads, webhooks, messages.

Plain dataclasses plus the functions that render them as Discord API v10 objects. Snowflakes
carry a real timestamp part (``id >> 22``), so sharding by guild id works as on Discord.
"""

from __future__ import annotations

import itertools
import secrets
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import IntEnum, IntFlag
from typing import Any, TypeAlias

from actorscope.errors import ConfigError

__all__ = [
    "EPHEMERAL",
    "IS_COMPONENTS_V2",
    "JSON",
    "Channel",
    "ChannelType",
    "Guild",
    "Interaction",
    "Member",
    "Message",
    "Permission",
    "Role",
    "User",
    "Webhook",
    "World",
    "emoji_json",
]

JSON = dict[str, Any]
# 2026-01-01T00:00:00Z in Discord's epoch (2015-01-01), milliseconds.
_EPOCH_OFFSET_MS = 1_767_225_600_000 - 1_420_070_400_000
#: The message flag of an ephemeral message (``1 << 6``).
EPHEMERAL = 64
#: The message flag of a message laid out with components only (``1 << 15``).
IS_COMPONENTS_V2 = 1 << 15


class ChannelType(IntEnum):
    """The channel types the emulator knows."""

    TEXT = 0
    DM = 1
    VOICE = 2
    PUBLIC_THREAD = 11


class Permission(IntFlag):
    """The permission bits the emulator checks or reports."""

    ADMINISTRATOR = 1 << 3
    MANAGE_CHANNELS = 1 << 4
    MANAGE_GUILD = 1 << 5
    ADD_REACTIONS = 1 << 6
    VIEW_CHANNEL = 1 << 10
    SEND_MESSAGES = 1 << 11
    MANAGE_MESSAGES = 1 << 13
    EMBED_LINKS = 1 << 14
    READ_MESSAGE_HISTORY = 1 << 16
    MODERATE_MEMBERS = 1 << 40
    MANAGE_ROLES = 1 << 28
    CREATE_PUBLIC_THREADS = 1 << 35
    SEND_MESSAGES_IN_THREADS = 1 << 38
    USE_APPLICATION_COMMANDS = 1 << 31


#: What ``@everyone`` may do in a new guild.
EVERYONE = (
    Permission.VIEW_CHANNEL
    | Permission.SEND_MESSAGES
    | Permission.ADD_REACTIONS
    | Permission.EMBED_LINKS
    | Permission.READ_MESSAGE_HISTORY
    | Permission.CREATE_PUBLIC_THREADS
    | Permission.SEND_MESSAGES_IN_THREADS
    | Permission.USE_APPLICATION_COMMANDS
)
_ALL = Permission((1 << 50) - 1)


def timestamp() -> str:
    """Now, as Discord writes it."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


@dataclass(slots=True)
class User:
    """A Discord account: a person, unless ``bot``."""

    id: int
    username: str
    bot: bool = False

    def to_json(self) -> JSON:
        """A ``User`` object."""
        data: JSON = {
            "id": str(self.id),
            "username": self.username,
            "discriminator": "0",
            "global_name": None if self.bot else self.username.title(),
            "avatar": None,
            "public_flags": 0,
        }
        if self.bot:
            data["bot"] = True
        return data


@dataclass(slots=True)
class Role:
    """A guild role (the ``@everyone`` role has the guild's id)."""

    id: int
    name: str
    permissions: int
    position: int = 0

    def to_json(self) -> JSON:
        """A ``Role`` object."""
        return {
            "id": str(self.id),
            "name": self.name,
            "permissions": str(self.permissions),
            "position": self.position,
            "color": 0,
            "hoist": False,
            "managed": False,
            "mentionable": False,
            "flags": 0,
        }


@dataclass(slots=True)
class Member:
    """A user's membership of a guild."""

    user: User
    roles: list[int] = field(default_factory=list)
    joined_at: str = field(default_factory=timestamp)
    nick: str | None = None
    #: When a timeout ends (ISO 8601), or ``None``.
    timed_out_until: str | None = None

    def to_json(self, *, with_user: bool = True) -> JSON:
        """A ``GuildMember`` object (without ``user`` where Discord leaves it out)."""
        data: JSON = {
            "roles": [str(r) for r in self.roles],
            "joined_at": self.joined_at,
            "deaf": False,
            "mute": False,
            "flags": 0,
            "nick": self.nick,
            "avatar": None,
            "communication_disabled_until": self.timed_out_until,
        }
        if with_user:
            data["user"] = self.user.to_json()
        return data


@dataclass(slots=True)
class Channel:
    """A guild text or voice channel, a public thread (``parent_id`` set) or a DM
    (``guild_id`` None)."""

    id: int
    name: str
    type: ChannelType
    guild_id: int | None = None
    parent_id: int | None = None
    owner_id: int | None = None
    recipient: User | None = None
    topic: str | None = None
    #: Role or member id -> (allow, deny) bits, applied as Discord applies overwrites.
    overwrites: dict[int, tuple[int, int]] = field(default_factory=dict)
    #: The overwrites that name a member (type 1); the others name roles (type 0).
    member_overwrites: set[int] = field(default_factory=set)

    @property
    def is_thread(self) -> bool:
        """Whether this is a thread."""
        return self.type is ChannelType.PUBLIC_THREAD

    def to_json(self) -> JSON:
        """A ``Channel`` object."""
        if self.type is ChannelType.DM:
            recipients = [self.recipient.to_json()] if self.recipient else []
            return {"id": str(self.id), "type": 1, "recipients": recipients, "flags": 0}
        data: JSON = {
            "id": str(self.id),
            "type": int(self.type),
            "guild_id": str(self.guild_id),
            "name": self.name,
            "position": 0,
            "flags": 0,
            "nsfw": False,
            "rate_limit_per_user": 0,
            "topic": self.topic,
            "last_message_id": None,
            "permission_overwrites": [
                {
                    "id": str(target),
                    "type": int(target in self.member_overwrites),
                    "allow": str(allow),
                    "deny": str(deny),
                }
                for target, (allow, deny) in self.overwrites.items()
            ],
        }
        if self.type is ChannelType.VOICE:
            data.update(bitrate=64000, user_limit=0, rtc_region=None, video_quality_mode=1)
        if self.parent_id is not None:
            data["parent_id"] = str(self.parent_id)
        if self.is_thread:
            data["owner_id"] = str(self.owner_id or 0)
            data["thread_metadata"] = {
                "archived": False,
                "auto_archive_duration": 1440,
                "archive_timestamp": timestamp(),
                "locked": False,
            }
            data["message_count"] = 0
            data["member_count"] = 1
            data["total_message_sent"] = 0
        return data


@dataclass(slots=True)
class Webhook:
    """An incoming webhook of a channel."""

    id: int
    name: str
    channel_id: int
    guild_id: int
    token: str

    def as_author(self) -> User:
        """The author a webhook message shows (Discord fakes a bot user with the hook's id)."""
        return User(id=self.id, username=self.name, bot=True)


@dataclass(slots=True)
class Guild:
    """A guild: roles, channels, threads and members."""

    id: int
    name: str
    owner_id: int
    roles: dict[int, Role] = field(default_factory=dict)
    members: dict[int, Member] = field(default_factory=dict)
    channels: dict[int, Channel] = field(default_factory=dict)
    #: Where Discord posts join notices (and bots welcome people): the first text channel.
    system_channel_id: int | None = None
    #: The guild's custom emojis: id -> name.
    emojis: dict[int, str] = field(default_factory=dict)

    def base_permissions(self, user_id: int) -> int:
        """A member's guild-wide permissions (owner and administrators: everything)."""
        member = self.members.get(user_id)
        if member is None:
            return 0
        if user_id == self.owner_id:
            return int(_ALL)
        bits = self.roles[self.id].permissions
        for role_id in member.roles:
            role = self.roles.get(role_id)
            if role is not None:
                bits |= role.permissions
        return int(_ALL) if bits & Permission.ADMINISTRATOR else bits

    def permissions_in(self, channel: Channel, user_id: int) -> int:
        """A member's permissions in ``channel`` with overwrites (a thread uses its parent's)."""
        bits = self.base_permissions(user_id)
        if bits & Permission.ADMINISTRATOR:
            return bits
        source = self.channels.get(channel.parent_id) if channel.parent_id is not None else channel
        overwrites = source.overwrites if source is not None else {}
        member = self.members[user_id]
        for target in (self.id, *member.roles, user_id):
            allow, deny = overwrites.get(target, (0, 0))
            bits = (bits & ~deny) | allow
        return bits

    def to_json(self) -> JSON:
        """The ``GUILD_CREATE`` data of this guild."""
        channels = [c for c in self.channels.values() if not c.is_thread]
        threads = [c for c in self.channels.values() if c.is_thread]
        return {
            "id": str(self.id),
            "name": self.name,
            "owner_id": str(self.owner_id),
            "unavailable": False,
            "icon": None,
            "roles": [r.to_json() for r in self.roles.values()],
            "channels": [c.to_json() for c in channels],
            "threads": [c.to_json() for c in threads],
            "members": [m.to_json() for m in self.members.values()],
            "member_count": len(self.members),
            "large": False,
            "system_channel_id": (
                None if self.system_channel_id is None else str(self.system_channel_id)
            ),
            "system_channel_flags": 0,
            "emojis": [
                {
                    "id": str(emoji_id),
                    "name": name,
                    "roles": [],
                    "require_colons": True,
                    "managed": False,
                    "animated": False,
                    "available": True,
                }
                for emoji_id, name in self.emojis.items()
            ],
            "stickers": [],
            "features": [],
            "voice_states": [],
            "presences": [],
            "stage_instances": [],
            "guild_scheduled_events": [],
            "soundboard_sounds": [],
            "joined_at": timestamp(),
            "preferred_locale": "en-US",
            "mfa_level": 0,
            "verification_level": 0,
            "premium_tier": 0,
            "nsfw_level": 0,
        }


@dataclass(slots=True)
class Message:
    """A message the emulator holds (everything but ``content`` is kept as Discord JSON)."""

    id: int
    channel: Channel
    author: User
    content: str
    embeds: list[JSON] = field(default_factory=list)
    components: list[JSON] = field(default_factory=list)
    mentions: list[User] = field(default_factory=list)
    webhook_id: int | None = None
    reference: JSON | None = None
    interaction_metadata: JSON | None = None
    reactions: dict[str, set[int]] = field(default_factory=dict)
    edited: str | None = None
    created: str = field(default_factory=timestamp)
    deleted: bool = False
    #: An ephemeral message (flags 64): the one person who sees it, its interaction's user.
    ephemeral_to: User | None = None
    #: The message flags the sender set (``IS_COMPONENTS_V2``, ``SUPPRESS_NOTIFICATIONS``...).
    flags: int = 0

    def visible_to(self, user: User) -> bool:
        """Whether ``user`` sees the message: everyone sees a channel message, only its
        person an ephemeral one."""
        return self.ephemeral_to is None or self.ephemeral_to.id == user.id

    @staticmethod
    def _mention(user: User, guild: Guild | None) -> JSON:
        """A mentioned user, with their partial member in a guild (as Discord sends it)."""
        data = user.to_json()
        member = guild.members.get(user.id) if guild is not None else None
        if member is not None:
            data["member"] = member.to_json(with_user=False)
        return data

    def to_json(self, guild: Guild | None, *, bot_id: int = 0) -> JSON:
        """A ``Message`` object; in a guild with ``guild_id`` and the author's ``member``
        (``bot_id``: whose reactions are ``me``)."""
        data: JSON = {
            "id": str(self.id),
            "type": 19 if self.reference else 0,
            "channel_id": str(self.channel.id),
            "author": self.author.to_json(),
            "content": self.content,
            "timestamp": self.created,
            "edited_timestamp": self.edited,
            "tts": False,
            "mention_everyone": False,
            "mentions": [self._mention(u, guild) for u in self.mentions],
            "mention_roles": [],
            "attachments": [],
            "embeds": self.embeds,
            "components": self.components,
            "pinned": False,
            "flags": self.flags | (EPHEMERAL if self.ephemeral_to is not None else 0),
            "reactions": [
                {
                    "emoji": emoji_json(key),
                    "count": len(who),
                    "count_details": {"burst": 0, "normal": len(who)},
                    "me": bot_id in who,
                    "me_burst": False,
                    "burst_colors": [],
                }
                for key, who in self.reactions.items()
                if who
            ],
        }
        if self.webhook_id is not None:
            data["webhook_id"] = str(self.webhook_id)
        if self.reference is not None:
            data["message_reference"] = self.reference
        if self.interaction_metadata is not None:
            data["interaction_metadata"] = self.interaction_metadata
        if guild is not None:
            data["guild_id"] = str(guild.id)
            member = guild.members.get(self.author.id)
            if member is not None and self.webhook_id is None:
                data["member"] = member.to_json(with_user=False)
        return data


def emoji_json(key: str) -> JSON:
    """The partial emoji of a reaction key: a Unicode emoji, or ``name:id`` of a custom one."""
    name, sep, emoji_id = key.rpartition(":")
    if sep and emoji_id.isdigit():
        return {"id": emoji_id, "name": name, "animated": False}
    return {"id": None, "name": key}


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
    #: The modal the bot answered with (callback type 9), until the person submits it.
    modal: JSON | None = None


class World:
    """Everything the emulated Discord knows; names are unique per kind.

    Its objects are :attr:`User` (a person, bot or webhook author), :attr:`Guild`,
    :attr:`Channel` (a text or voice channel, thread or DM) and the messages in them; an
    :attr:`Interaction` is one a person started and how the bot answered it. The world and its
    emulator create and return them (``world.add_user``, ``emu.click(...)``); read their
    attributes, and give them back to its actions.
    """

    #: A person, a bot or a webhook's author.
    User: TypeAlias = User
    #: A guild, with its channels, roles and members.
    Guild: TypeAlias = Guild
    #: A text or voice channel, a thread or a DM.
    Channel: TypeAlias = Channel
    #: An interaction a person started, and how the bot answered it.
    Interaction: TypeAlias = Interaction

    @classmethod
    def declared(
        cls,
        declaration: Mapping[str, Any],
        *,
        bot_name: str = "actorscope-bot",
        token: str | None = None,
    ) -> World:
        """The world a scenario's ``setup.discord`` declares (the testing kit's vocabulary)::

            users: {carol: 9001, dave: null}        # name -> id (null: a fresh snowflake)
            bots: {deploy-bot: null}                # other bot accounts
            guilds:
              lab:
                id: 81234567890123456               # optional
                owner: carol                        # optional; default: the bot
                channels: {general: 81234567890123457, random: null}
                threads: {design: {parent: general, id: 81234567890123999}}
                roles: {managers: [manage_guild]}   # role -> permission names
                members: {dave: [managers]}         # user -> role names
                webhooks: {ci: general}             # webhook -> channel

        Every declared person and bot is a member of every guild (the testing kit's simulator
        makes people members when they first act there); ``members`` gives them roles. A
        mistake raises one :class:`~actorscope.errors.ConfigError` naming its place
        (``setup.discord.guilds.lab.owner``).
        """
        return _declared_world(declaration, bot_name=bot_name, token=token)

    def __init__(self, *, bot_name: str = "actorscope-bot", token: str | None = None) -> None:
        self._ids: Iterator[int] = itertools.count(1)
        self.users: dict[int, User] = {}
        self.guilds: dict[int, Guild] = {}
        self.channels: dict[int, Channel] = {}
        self.webhooks: dict[int, Webhook] = {}
        self.messages: dict[int, Message] = {}
        self.bot = self.add_user(bot_name, bot=True)
        self.application_id = self.bot.id
        self.token = token or f"{secrets.token_urlsafe(18)}.sandbox.{secrets.token_urlsafe(27)}"
        #: Privileged intents the application may ask for (Developer Portal switches).
        self.privileged_intents = (1 << 1) | (1 << 8) | (1 << 15)

    def snowflake(self) -> int:
        """A fresh, increasing snowflake."""
        return (_EPOCH_OFFSET_MS + next(self._ids)) << 22

    def _fresh(self, wanted: int | None) -> int:
        """``wanted`` (a declared id) if no user, guild or channel has it yet, else a new one."""
        if wanted is None:
            return self.snowflake()
        if wanted <= 0:
            raise ConfigError(f"a Discord id must be a positive integer, not {wanted}")
        if wanted in self.users or wanted in self.guilds or wanted in self.channels:
            raise ConfigError(f"the Discord id {wanted} is used twice")
        return wanted

    # -- building -------------------------------------------------------------------------

    def add_user(self, username: str, *, bot: bool = False, user_id: int | None = None) -> User:
        """A new account (a person unless ``bot``)."""
        if any(u.username == username for u in self.users.values()):
            raise ConfigError(f"the sandbox already has a user named {username!r}")
        user = User(self._fresh(user_id), username, bot=bot)
        self.users[user.id] = user
        return user

    def add_guild(self, name: str, *, owner: User, guild_id: int | None = None) -> Guild:
        """A guild owned by ``owner``, with ``@everyone`` and the bot as a member."""
        guild = Guild(self._fresh(guild_id), name, owner.id)
        guild.roles[guild.id] = Role(guild.id, "@everyone", int(EVERYONE))
        self.guilds[guild.id] = guild
        self.join(guild, owner)
        self.join(guild, self.bot)
        return guild

    def add_role(self, guild: Guild, name: str, permissions: int = 0) -> Role:
        """A role in ``guild``."""
        role = Role(self.snowflake(), name, permissions, position=len(guild.roles))
        guild.roles[role.id] = role
        return role

    def join(self, guild: Guild, user: User, *, roles: tuple[Role, ...] = ()) -> Member:
        """Make ``user`` a member of ``guild``."""
        member = Member(user, [r.id for r in roles])
        guild.members[user.id] = member
        return member

    def add_channel(
        self,
        guild: Guild,
        name: str,
        *,
        channel_id: int | None = None,
        kind: ChannelType = ChannelType.TEXT,
        topic: str | None = None,
    ) -> Channel:
        """A text (or voice) channel in ``guild``; its first text channel is its system
        channel, as a new guild's #general is."""
        if kind not in (ChannelType.TEXT, ChannelType.VOICE):
            raise ConfigError("guild channels are text or voice channels (threads: add_thread)")
        channel = Channel(self._fresh(channel_id), name, kind, guild_id=guild.id, topic=topic)
        guild.channels[channel.id] = channel
        self.channels[channel.id] = channel
        if kind is ChannelType.TEXT and guild.system_channel_id is None:
            guild.system_channel_id = channel.id
        return channel

    def add_emoji(self, guild: Guild, name: str) -> str:
        """A custom emoji of ``guild``; its reaction key (``name:id``)."""
        if not name.replace("_", "").isalnum() or not 2 <= len(name) <= 32:
            raise ConfigError(f"an emoji name is 2-32 letters, digits or _, not {name!r}")
        emoji_id = self.snowflake()
        guild.emojis[emoji_id] = name
        return f"{name}:{emoji_id}"

    def add_thread(
        self, parent: Channel, name: str, *, owner: User, thread_id: int | None = None
    ) -> Channel:
        """A public thread under ``parent``."""
        if parent.guild_id is None or parent.is_thread:
            raise ConfigError(f"threads live under guild text channels, not #{parent.name}")
        thread = Channel(
            self._fresh(thread_id),
            name,
            ChannelType.PUBLIC_THREAD,
            guild_id=parent.guild_id,
            parent_id=parent.id,
            owner_id=owner.id,
        )
        self.guilds[parent.guild_id].channels[thread.id] = thread
        self.channels[thread.id] = thread
        return thread

    def add_webhook(self, channel: Channel, name: str) -> Webhook:
        """An incoming webhook posting to ``channel``."""
        if channel.guild_id is None:
            raise ConfigError("webhooks live in guild channels")
        hook = Webhook(
            self.snowflake(), name, channel.id, channel.guild_id, secrets.token_urlsafe(24)
        )
        self.webhooks[hook.id] = hook
        return hook

    def dm_channel(self, user: User) -> Channel:
        """The bot's DM channel with ``user`` (made on first use)."""
        for channel in self.channels.values():
            if channel.type is ChannelType.DM and channel.recipient == user:
                return channel
        channel = Channel(self.snowflake(), user.username, ChannelType.DM, recipient=user)
        self.channels[channel.id] = channel
        return channel

    # -- lookups --------------------------------------------------------------------------

    def user(self, name: str) -> User:
        """The user called ``name``."""
        for user in self.users.values():
            if user.username == name:
                return user
        raise ConfigError(f"the sandbox has no user named {name!r}")

    def guild(self, name: str | None = None) -> Guild:
        """The guild called ``name`` (or the only one)."""
        guilds = [g for g in self.guilds.values() if name is None or g.name == name]
        if len(guilds) != 1:
            raise ConfigError(f"the sandbox has no single guild named {name!r}")
        return guilds[0]

    def channel(self, name: str, *, guild: Guild | None = None) -> Channel:
        """The guild channel or thread called ``name`` (a leading ``#`` is ignored)."""
        wanted = name.removeprefix("#")
        found = [
            c
            for c in self.channels.values()
            if c.type is not ChannelType.DM
            and c.name == wanted
            and (guild is None or c.guild_id == guild.id)
        ]
        if len(found) != 1:
            raise ConfigError(f"the sandbox has no single channel named #{wanted}")
        return found[0]

    def webhook(self, name: str) -> Webhook:
        """The webhook called ``name``."""
        for hook in self.webhooks.values():
            if hook.name == name:
                return hook
        raise ConfigError(f"the sandbox has no webhook named {name!r}")

    def guild_of(self, channel: Channel) -> Guild | None:
        """The guild ``channel`` belongs to (None for a DM)."""
        return self.guilds.get(channel.guild_id) if channel.guild_id is not None else None


def sandbox_world(*, token: str | None = None) -> World:
    """The default world: one guild, #general with a thread, a webhook and a few people.

    alice owns the guild; dave holds a role with Manage Server; bob and carol are members;
    ``deploy-bot`` is another bot; ``ci`` is a webhook in #general.
    """
    world = World(token=token)
    alice = world.add_user("alice")
    guild = world.add_guild("sandbox", owner=alice)
    managers = world.add_role(guild, "managers", int(Permission.MANAGE_GUILD))
    for name in ("bob", "carol"):
        world.join(guild, world.add_user(name))
    world.join(guild, world.add_user("dave"), roles=(managers,))
    world.join(guild, world.add_user("deploy-bot", bot=True))
    general = world.add_channel(guild, "general")
    world.add_channel(guild, "random")
    world.add_thread(general, "design", owner=alice)
    world.add_webhook(general, "ci")
    return world


# -- a declared world (World.declared) ----------------------------------------------------

_ROOT = "setup.discord"
_KEYS = frozenset({"users", "bots", "guilds"})
_GUILD_KEYS = frozenset({"id", "owner", "channels", "threads", "roles", "members", "webhooks"})


def _declared_world(
    declaration: Mapping[str, Any], *, bot_name: str = "actorscope-bot", token: str | None = None
) -> World:
    """The world ``declaration`` (a scenario's ``setup.discord``) declares."""
    spec = _mapping(declaration, _ROOT, _KEYS)
    world = World(bot_name=bot_name, token=token)
    people: dict[str, User] = {}
    for key, bot in (("users", False), ("bots", True)):
        for name, wanted in _mapping(spec.get(key), f"{_ROOT}.{key}").items():
            if name in people or name == bot_name:
                raise ConfigError(f"{_ROOT}.{key}.{name}: the name is declared twice")
            user_id = _id(wanted, f"{_ROOT}.{key}.{name}")
            people[name] = world.add_user(name, bot=bot, user_id=user_id)
    for name, guild in _mapping(spec.get("guilds"), f"{_ROOT}.guilds").items():
        _guild(world, people, name, guild)
    return world


def _guild(world: World, people: Mapping[str, User], name: str, declared: object) -> Guild:
    path = f"{_ROOT}.guilds.{name}"
    spec = _mapping(declared, path, _GUILD_KEYS)
    owner = (
        world.bot if spec.get("owner") is None else _person(people, spec["owner"], f"{path}.owner")
    )
    guild = world.add_guild(name, owner=owner, guild_id=_id(spec.get("id"), f"{path}.id"))
    channels: dict[str, Channel] = {}
    for channel, wanted in _mapping(spec.get("channels"), f"{path}.channels").items():
        channel_id = _id(wanted, f"{path}.channels.{channel}")
        channels[channel] = world.add_channel(guild, channel, channel_id=channel_id)
    for thread, wanted in _mapping(spec.get("threads"), f"{path}.threads").items():
        where = f"{path}.threads.{thread}"
        thread_spec = _mapping(wanted, where, frozenset({"parent", "id"}))
        parent = _named(channels, thread_spec.get("parent"), f"{where}.parent", "channel")
        thread_id = _id(thread_spec.get("id"), f"{where}.id")
        world.add_thread(parent, thread, owner=owner, thread_id=thread_id)
    roles: dict[str, Role] = {}
    for role, permissions in _mapping(spec.get("roles"), f"{path}.roles").items():
        roles[role] = world.add_role(guild, role, _permissions(permissions, f"{path}.roles.{role}"))
    given = {
        _person(people, member, f"{path}.members").id: tuple(
            _named(roles, role, f"{path}.members.{member}", "role")
            for role in _names(held, f"{path}.members.{member}")
        )
        for member, held in _mapping(spec.get("members"), f"{path}.members").items()
    }
    for user in people.values():
        if user.id != owner.id:
            world.join(guild, user, roles=given.get(user.id, ()))
    guild.members[owner.id].roles = [role.id for role in given.get(owner.id, ())]
    for hook, channel in _mapping(spec.get("webhooks"), f"{path}.webhooks").items():
        world.add_webhook(_named(channels, channel, f"{path}.webhooks.{hook}", "channel"), hook)
    return guild


def _mapping(value: object, path: str, keys: frozenset[str] | None = None) -> dict[str, Any]:
    """A mapping with string keys (``None``: empty); ``keys`` limits the keys."""
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise ConfigError(f"{path} must be a mapping of names")
    unknown = sorted(set(value) - keys) if keys is not None else []
    if unknown:
        raise ConfigError(
            f"{path}: unknown key {unknown[0]!r} (expected: {', '.join(sorted(keys or ()))})"
        )
    return dict(value)


def _id(value: object, path: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(f"{path} must be a positive integer id or null, not {value!r}")
    return value


def _names(value: object, path: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{path} must be a list of names")
    return value


def _named(known: Mapping[str, Any], name: object, path: str, kind: str) -> Any:
    if not isinstance(name, str) or name not in known:
        raise ConfigError(
            f"{path}: unknown {kind} {name!r} (declared: {', '.join(known) or 'none'})"
        )
    return known[name]


def _person(people: Mapping[str, User], name: object, path: str) -> User:
    user: User = _named(people, name, path, "user")
    return user


def _permissions(value: object, path: str) -> int:
    bits = 0
    for name in _names(value, path):
        if name.upper() not in Permission.__members__:
            known = ", ".join(p.lower() for p in Permission.__members__)
            raise ConfigError(f"{path}: unknown permission {name!r} (known: {known})")
        bits |= Permission[name.upper()]
    return bits

"""Scope and actor: the two identities of a message, and the rules that build them.

``user_id`` is the **scope** (whose memory, session and files); ``sender_id`` is the
**actor** (who acted: permissions, audit, ownership). In a direct chat they coincide; in a
group every member shares the group's scope and keeps their own sender id.

This module is the single home of the synthetic-sender prefixes and the placeholder ids (a
cross-platform rule: they are nobody on every platform); everything else asks
:meth:`SenderKind.is_synthetic` and :meth:`SenderKind.is_placeholder` instead of keeping a
copy.
What a platform's own ids look like (integers, or opaque tokens) and which group form it
takes (``group:<platform>:<chat>``, or per-member ``guild:`` scopes) is its registered
:class:`~actorscope.platforms.PlatformSpec`'s answer, asked here by name: one builder,
:meth:`Identity.chat`, follows it for every platform; a platform's own vocabulary (its chat
types, its kinds of author) is translated in its own subpackage, so this module names none.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from enum import StrEnum
from typing import ClassVar

from actorscope._input import AGENT_KEY_PATTERN
from actorscope._text import has_unstorable
from actorscope.errors import IdentityError
from actorscope.platforms import (
    Account,
    BuiltInPlatform,
    IdForm,
    PlatformSpec,
    platform_spec,
)

__all__ = [
    "Identity",
    "PeerKind",
    "Scope",
    "ScopeKind",
    "SenderKind",
    "session_key",
]


class PeerKind(StrEnum):
    """Whether a conversation is one-to-one or shared by several people."""

    DIRECT = "direct"
    GROUP = "group"


#: Internal routing identities. A sender id that starts with one of these is never a human.
_SYNTHETIC_SENDER_PREFIXES: tuple[str, ...] = (
    "subagent:",
    "notification:",
    "teammate:",
    "system:",
    "ticker:",
)
#: Synthetic sender ids that are matched whole rather than by prefix.
SYNTHETIC_SENDER_EXACT: frozenset[str] = frozenset({"session_send_tool"})

#: The stand-in ids a chat platform sends where a person's id belongs: its "GroupAnonymousBot"
#: (the author of an anonymous admin's message), "Channel_Bot" (a post on behalf of a channel)
#: and service account (automatic forwards, service notices). Nobody, on every platform.
ANONYMOUS_ADMIN_ID = "1087968824"
CHANNEL_BOT_ID = "136817688"
SERVICE_ID = "777000"
#: Ids that stand in for "no person" and must never be treated as an identity.
PLACEHOLDER_SENDER_IDS: frozenset[str] = frozenset({ANONYMOUS_ADMIN_ID, CHANNEL_BOT_ID, SERVICE_ID})

#: The only group contexts: a platform chooses between these forms and never adds one, so
#: no registration can make a group look direct (the one boundary every check trusts).
GROUP_SCOPE_PREFIXES: tuple[str, ...] = ("group:", "guild:")
#: A person's scope and grantee: ``person:<uuid>`` (a tenant's person owning linked accounts).
#: Direct, never a group: no platform id, HTTP user id or group scope can take this form.
_PERSON_PREFIX = "person:"

#: A person's id on a platform of integer ids: ASCII digits, no sign,
#: no leading zero (``re``'s ``[0-9]`` is ASCII only; ``fullmatch`` refuses a trailing newline).
_CANONICAL_ID = re.compile(r"[1-9][0-9]{0,31}")
_CHANNEL_NAME = re.compile(r"[a-z0-9][a-z0-9_.-]{0,63}")
#: The longest sender id a check looks up (the longest a grant may name: ``scopes._EXACT_ID``).
MAX_SENDER_ID_CHARS = 256
#: The longest scope a check looks up (a group scope is under 100 characters; an HTTP user's
#: or a custom channel's ids are opaque but short). Longer ids are refused before any lookup,
#: so none reaches a store index that cannot hold it (PostgreSQL's ~2.7 KB B-tree row).
_MAX_SCOPE_CHARS = 512


def _is_group_scope(user_id: str) -> bool:
    """True iff the scope string names a group context (``group:`` or ``guild:``)."""
    return user_id.startswith(GROUP_SCOPE_PREFIXES)


def _folded(sender_id: str) -> str:
    # The id as look-alike detection sees it: format characters (Cf: zero-width spaces,
    # direction marks) dropped, NFKC (full-width letters and digits become ASCII), case-folded,
    # then legacy-split. Detection only: the id itself is never rewritten this way.
    if sender_id.isascii():
        return _normalize_sender_id(sender_id.lower())
    visible = "".join(char for char in sender_id if unicodedata.category(char) != "Cf")
    return _normalize_sender_id(unicodedata.normalize("NFKC", visible).casefold())


def _placeholder_key(sender_id: str) -> str:
    # A decimal id in any spelling (``0777000``, full-width or other decimal digits) compares
    # as its integer; the length bound keeps int() cheap and far from its digit limit.
    folded = _folded(sender_id)
    if folded.isdecimal() and len(folded) <= 64:
        return str(int(folded))
    return folded


def _is_synthetic_sender(sender_id: str) -> bool:
    """True iff ``sender_id`` is an internal routing identity rather than a person.

    Detection ignores case, format characters (Unicode category Cf, e.g. ``"\u200b"``) and
    compatibility forms (full-width letters), and splits a legacy ``id|name`` first: so
    ``"SUBAGENT:x"``, ``"\u200bsubagent:x"``, ``" subagent:x"`` and ``"session_send_tool|x"``
    are all synthetic.
    """
    folded = _folded(sender_id)
    return folded in SYNTHETIC_SENDER_EXACT or folded.startswith(_SYNTHETIC_SENDER_PREFIXES)


def _is_placeholder_sender(sender_id: str) -> bool:
    """True iff ``sender_id`` spells one of the stand-in ids (``PLACEHOLDER_SENDER_IDS``).

    Look-alikes count: a legacy ``id|name``, leading zeros (``"0777000"``), full-width or
    other decimal digits and format characters all spell the placeholder they imitate.
    """
    return _placeholder_key(sender_id) in PLACEHOLDER_SENDER_IDS


def _normalize_sender_id(raw: str) -> str:
    """Split a legacy ``"<id>|<username>"`` sender string down to the id.

    Idempotent, and whitespace around the id is dropped: ``" 42|bob "`` → ``"42"``.
    """
    return raw.split("|", 1)[0].strip()


class SenderKind(StrEnum):
    """What was behind a message. Only ``USER`` is a person with a ``sender_id``.

    Its static methods read a sender id: :meth:`is_synthetic`, :meth:`is_placeholder` (neither
    is a person) and :meth:`normalize_id` (the legacy ``id|name`` split).
    """

    USER = "user"
    BOT = "bot"
    ANONYMOUS_ADMIN = "anonymous_admin"
    CHANNEL = "channel"
    SERVICE = "service"
    WEBHOOK = "webhook"
    SYNTHETIC = "synthetic"
    NONE = "none"

    @staticmethod
    def is_synthetic(sender_id: str) -> bool:
        """True iff ``sender_id`` is an internal routing identity rather than a person.

        Detection ignores case, format characters (Unicode category Cf, e.g. ``"\u200b"``)
        and compatibility forms (full-width letters), and splits a legacy ``id|name`` first:
        so ``"SUBAGENT:x"``, ``"\u200bsubagent:x"``, ``" subagent:x"`` and
        ``"session_send_tool|x"`` are all synthetic.
        """
        return _is_synthetic_sender(sender_id)

    @staticmethod
    def is_placeholder(sender_id: str) -> bool:
        """True iff ``sender_id`` spells one of the stand-in ids a platform sends where a
        person's id belongs (an anonymous admin, a channel, a service account).

        Look-alikes count: a legacy ``id|name``, leading zeros (``"0777000"``), full-width or
        other decimal digits and format characters all spell the placeholder they imitate.
        """
        return _is_placeholder_sender(sender_id)

    @staticmethod
    def normalize_id(raw: str) -> str:
        """Split a legacy ``"<id>|<username>"`` sender string down to the id.

        Idempotent, and whitespace around the id is dropped: ``" 42|bob "`` → ``"42"``.
        """
        return raw.split("|", 1)[0].strip()


_PLACEHOLDER_KINDS: dict[str, SenderKind] = {
    ANONYMOUS_ADMIN_ID: SenderKind.ANONYMOUS_ADMIN,
    CHANNEL_BOT_ID: SenderKind.CHANNEL,
    SERVICE_ID: SenderKind.SERVICE,
}
# Bot accounts are not people: they never hold a sender id, on any platform.
_PERSON_KINDS = frozenset({SenderKind.USER})


def _placeholder_sender_kind(sender_id: str) -> SenderKind | None:
    """The kind a placeholder id (or a look-alike of one) stands for, else ``None``."""
    return _PLACEHOLDER_KINDS.get(_placeholder_key(sender_id))


def _is_canonical_platform_id(sender_id: str) -> bool:
    """True iff ``sender_id`` is a positive ASCII decimal integer without sign or leading zero.

    The only form a person's ``sender_id`` takes on a platform of integer ids.
    """
    return _CANONICAL_ID.fullmatch(sender_id) is not None


def _identity_problem(scope: str, sender_id: str, channel: str = "") -> str | None:
    # Identity.problem: its docstring says the rules.
    if len(scope) > _MAX_SCOPE_CHARS:
        return f"scope is {len(scope)} characters long, over the limit of {_MAX_SCOPE_CHARS}"
    if len(sender_id) > MAX_SENDER_ID_CHARS:
        return (
            f"sender id is {len(sender_id)} characters long, over the limit of "
            f"{MAX_SENDER_ID_CHARS}"
        )
    if has_unstorable(scope):
        return f"scope {scope!r} holds a character no store can hold (control or surrogate)"
    if has_unstorable(sender_id):
        return f"sender id {sender_id!r} holds a character no store can hold (control or surrogate)"
    sender = _normalize_sender_id(sender_id)
    if not sender or not _is_group_scope(scope):
        return None
    scope_channel = _scope_platform(scope)
    for name in (channel, scope_channel):
        spec = platform_spec(name)
        if spec is None or spec.is_person_id(sender):
            continue
        if spec.ids is IdForm.INTEGER:
            return (
                f"a {name} sender id must be a positive integer in ASCII digits without sign "
                f"or leading zero, got {sender!r}"
            )
        return f"a {name} sender id is letters, digits and '_.@+=-' only, got {sender!r}"
    if not sender.isascii() and (
        any(unicodedata.category(char) == "Cf" for char in sender)
        or unicodedata.normalize("NFKC", sender) != sender
    ):
        return f"sender id {sender!r} holds format or compatibility characters"
    return None


def _is_person_kind(kind: SenderKind) -> bool:
    """True iff a sender of this kind is a person, the only kind that gets a ``sender_id``."""
    return kind in _PERSON_KINDS


def _form_holder(*, guild: bool) -> str:
    """The built-in platform holding the guild group form (``guild``) or the legacy two-part
    ``group:<chat>`` one: the grammar is closed, so no registered platform holds either."""
    for name in BuiltInPlatform:
        spec = platform_spec(name)
        if spec is not None and (spec.group_form == "guild" if guild else spec.legacy_groups):
            return spec.name
    raise IdentityError(f"no built-in platform holds the {'guild' if guild else 'legacy'} form")


#: Who holds the group forms that name no platform: the guild form's and the legacy one's.
_GUILD_OWNER = _form_holder(guild=True)
_LEGACY_OWNER = _form_holder(guild=False)


def _scope_platform(scope: str) -> str:
    """The platform a group scope belongs to: ``guild:...`` the guild form's holder,
    ``group:<platform>:<chat>`` the platform it names (registered or not), a legacy
    ``group:<chat>`` the legacy form's holder; ``""`` for any other scope."""
    if scope.startswith("guild:"):
        return _GUILD_OWNER
    if not scope.startswith("group:"):
        return ""
    channel, sep, _ = scope[len("group:") :].partition(":")
    return channel if sep else _LEGACY_OWNER


def _spec(platform: str) -> PlatformSpec:
    spec = platform_spec(platform)
    if spec is None:
        raise IdentityError(f"no registered platform {platform!r}")
    return spec


def _channel_name(channel: str) -> str:
    if platform_spec(channel) is not None:
        return channel
    if not _CHANNEL_NAME.fullmatch(channel):
        raise IdentityError(
            f"channel name must be lowercase letters, digits, '_', '.' or '-', got {channel!r}"
        )
    return channel


class ScopeKind(StrEnum):
    """What a scope string names (see :class:`Scope`)."""

    DIRECT = "direct"  # one person's (or an HTTP user's) own scope: the id itself
    GROUP = "group"  # group:<channel>:<chatID> (and the legacy form's group:<chatID>)
    GUILD_MEMBER = "guild-member"  # guild:<guildID>:user:<senderID>
    GUILD_WEBHOOK = "guild-webhook"  # guild:<guildID>:webhook:<id>
    GUILD_BOT = "guild-bot"  # guild:<guildID>:bot:<id>


_GUILD_KINDS = {
    "user": ScopeKind.GUILD_MEMBER,
    "webhook": ScopeKind.GUILD_WEBHOOK,
    "bot": ScopeKind.GUILD_BOT,
}
_GUILD_WORDS = {kind: word for word, kind in _GUILD_KINDS.items()}
#: Who has a scope of their own in a guild: a member, and a webhook's or a bot's messages.
_GUILD_SENDERS = {
    SenderKind.USER: ScopeKind.GUILD_MEMBER,
    SenderKind.WEBHOOK: ScopeKind.GUILD_WEBHOOK,
    SenderKind.BOT: ScopeKind.GUILD_BOT,
}


@dataclass(frozen=True, slots=True)
class Scope:
    """A scope string (``user_id``) read into its parts: the one parser of scope strings.

    ``str(scope)`` gives the canonical string back. ``channel`` is the group's channel
    (the guild form's platform for every guild scope; ``""`` for a direct scope, whose string
    does not say);
    ``chat_id`` is the group's chat (or a direct scope's own id); ``guild_id`` and
    ``member_id`` are set for guild scopes (``member_id``: the member, webhook or bot id).
    """

    #: The longest scope a check looks up (a group scope is under 100 characters; an HTTP
    #: user's or a custom channel's ids are opaque but short). Longer ids are refused before
    #: any lookup, so none reaches a store index that cannot hold it.
    MAX_CHARS: ClassVar[int] = _MAX_SCOPE_CHARS
    #: A linked person's scope and grantee is ``person:<uuid>`` (:meth:`person`): direct,
    #: never a group; no platform id, HTTP user id or group scope takes this form.
    PERSON_PREFIX: ClassVar[str] = _PERSON_PREFIX

    kind: ScopeKind
    channel: str = ""
    chat_id: str = ""
    guild_id: str = ""
    member_id: str = ""

    @staticmethod
    def is_group_id(user_id: str) -> bool:
        """True iff the scope string ``user_id`` names a group context (``group:`` or
        ``guild:``): :attr:`is_group` without parsing."""
        return user_id.startswith(GROUP_SCOPE_PREFIXES)

    @classmethod
    def person(cls, person_id: str) -> Scope:
        """``person:<id>``: the scope (in ``dm`` mode) and grantee of a linked person."""
        return cls(ScopeKind.DIRECT, chat_id=f"{_PERSON_PREFIX}{person_id}")

    @classmethod
    def group(cls, channel: str, chat_id: int | str) -> Scope:
        """``group:<channel>:<chatID>``: the scope every member of a chat group shares;
        :class:`IdentityError` for a malformed channel name or chat id (its platform's form)."""
        name = _channel_name(channel)
        return cls(
            ScopeKind.GROUP, channel=name, chat_id=PlatformSpec.canonical_chat_id(name, chat_id)
        )

    @classmethod
    def guild_member(cls, guild_id: int | str, sender_id: int | str) -> Scope:
        """``guild:<guildID>:user:<senderID>``: a member's scope inside one guild (the guild
        group form); :class:`IdentityError` unless both are numeric ids."""
        spec = _spec(_GUILD_OWNER)
        guild, member = spec.chat_id(guild_id, "guild id"), spec.chat_id(sender_id, "sender id")
        return cls(ScopeKind.GUILD_MEMBER, _GUILD_OWNER, guild_id=guild, member_id=member)

    @classmethod
    def parse(cls, user_id: str) -> Scope:
        """Read ``user_id``; a ``group:`` or ``guild:`` string that is malformed raises
        :class:`IdentityError` naming what is wrong. Anything else is a direct scope."""
        scope = cls.try_parse(user_id)
        if scope is None:
            raise IdentityError(
                f"malformed scope {user_id!r}: expected group:<channel>:<chatID> or "
                "guild:<guildID>:user|webhook|bot:<id>"
            )
        return scope

    @classmethod
    def try_parse(cls, user_id: str) -> Scope | None:
        """Like :meth:`parse`, but ``None`` for a malformed group or guild scope."""
        if user_id.startswith("guild:"):
            parts = user_id.split(":")
            kind = _GUILD_KINDS.get(parts[2]) if len(parts) == 4 else None
            if kind is None or not (
                _CANONICAL_ID.fullmatch(parts[1]) and _CANONICAL_ID.fullmatch(parts[3])
            ):
                return None
            return cls(kind, _GUILD_OWNER, guild_id=parts[1], member_id=parts[3])
        if user_id.startswith("group:"):
            parts = user_id.split(":")
            if len(parts) == 2:
                return cls.try_group(_LEGACY_OWNER, parts[1])
            if len(parts) == 3:
                return cls.try_group(parts[1], parts[2])
            return None
        return cls(ScopeKind.DIRECT, chat_id=user_id)

    @classmethod
    def try_group(cls, channel: str, chat_id: str) -> Scope | None:
        """The group scope of ``chat_id`` on ``channel``, or ``None`` if either is malformed
        (the chat id in its platform's form:
        :meth:`~actorscope.platforms.PlatformSpec.canonical_chat_id`)."""
        if not _CHANNEL_NAME.fullmatch(channel):
            return None
        try:
            chat = PlatformSpec.canonical_chat_id(channel, chat_id)
        except IdentityError:
            return None
        return cls(ScopeKind.GROUP, channel=channel, chat_id=chat)

    @property
    def is_group(self) -> bool:
        """True for a group context: a group or any guild scope."""
        return self.kind is not ScopeKind.DIRECT

    def __str__(self) -> str:
        if self.kind is ScopeKind.DIRECT:
            return self.chat_id
        if self.kind is ScopeKind.GROUP:
            return f"group:{self.channel}:{self.chat_id}"
        return f"guild:{self.guild_id}:{_GUILD_WORDS[self.kind]}:{self.member_id}"


def session_key(
    agent_key: str,
    channel: str,
    peer_kind: PeerKind,
    chat_id: int | str,
    *,
    topic_id: int | str | None = None,
    thread_id: int | str | None = None,
) -> str:
    """``agent:<agentKey>:<channel>:<direct|group>:<chatID>[:topic:<N>|:thread:<N>]``.

    Topics and threads split sessions; they never change the scope.
    """
    if AGENT_KEY_PATTERN.fullmatch(agent_key) is None:
        raise IdentityError(
            f"agent key must be 1-64 letters, digits, '_' or '-' (starting with a letter "
            f"or digit), got {agent_key!r}"
        )
    if topic_id is not None and thread_id is not None:
        raise IdentityError("a session key takes a topic or a thread, not both")
    name = _channel_name(channel)
    canonical = PlatformSpec.canonical_chat_id
    key = f"agent:{agent_key}:{name}:{PeerKind(peer_kind).value}:{canonical(name, chat_id)}"
    if topic_id is not None:
        key += f":topic:{canonical(name, topic_id, 'topic id')}"
    elif thread_id is not None:
        key += f":thread:{canonical(name, thread_id, 'thread id')}"
    return key


@dataclass(frozen=True, slots=True)
class Identity:
    """Who acted, and where. Frozen: an identity is built whole or not at all.

    ``user_id`` is the scope, ``sender_id`` the actor (``""`` when no person acted).
    """

    user_id: str
    sender_id: str
    channel: str = ""
    chat_id: str = ""
    peer_kind: PeerKind = PeerKind.DIRECT
    sender_kind: SenderKind = SenderKind.USER
    role: str = ""
    tenant_id: str | None = None
    agent_id: str | None = None

    def __post_init__(self) -> None:
        if not (
            type(self.user_id) is str
            and type(self.sender_id) is str
            and type(self.channel) is str
            and type(self.chat_id) is str
            and type(self.role) is str
        ):
            for name in ("user_id", "sender_id", "channel", "chat_id", "role"):
                if not isinstance(getattr(self, name), str):
                    raise IdentityError(f"Identity.{name} must be a string")
        if type(self.peer_kind) is not PeerKind:
            object.__setattr__(self, "peer_kind", PeerKind(self.peer_kind))
        if type(self.sender_kind) is not SenderKind:
            object.__setattr__(self, "sender_kind", SenderKind(self.sender_kind))

    @property
    def actor_id(self) -> str:
        """The id for audit, ownership and roles: the sender, else the scope."""
        return self.sender_id or self.user_id

    @property
    def is_group(self) -> bool:
        """True iff this identity acts in a group context."""
        return _is_group_scope(self.user_id)

    @property
    def account(self) -> Account | None:
        """The account this identity acts as, identified by its channel's platform: the
        sender on a chat platform, the authenticated user over HTTP. ``None`` for no person
        (an empty, synthetic or placeholder sender), a channel of no registered platform, or
        an id that platform never gives a person."""
        return _account_of(self)

    @staticmethod
    def problem(user_id: str, sender_id: str, channel: str = "") -> str | None:
        """Why (``user_id``, ``sender_id``) is not an identity a check may look up, or ``None``.

        Everywhere: neither may hold a character a store cannot hold (a lone surrogate, NUL or
        another control character), so SQLite and PostgreSQL answer alike, nor be longer than
        ``MAX_SENDER_ID_CHARS`` (sender) or :attr:`Scope.MAX_CHARS` (scope). In a group context
        the sender, after the legacy ``id|name`` split, must also be a well-formed person id for
        its channel. The channel is known from ``channel`` (``Identity.channel``) and from the
        scope (``guild:`` is the guild form's platform; ``group:<channel>:...``; a legacy
        ``group:<chatID>`` is the legacy form's); when either names a registered platform, its
        id form (:meth:`~actorscope.platforms.PlatformSpec.is_person_id`) holds:

        - A platform of integer ids (the built-in chat platforms, by the identity table): a
          canonical positive ASCII integer without sign or leading zero, so ``"042"``,
          ``"+42"``, ``"42\u200b"`` and full-width digits are refused instead of missing a
          grant (or a deny) on ``42``.
        - Another registered platform: its own id form.
        - Any other channel (the table leaves custom channels' ids opaque: they need not be
          integers): no format characters (category Cf) and unchanged by NFKC, so an id cannot
          imitate another one with invisible or compatibility characters. A built-in
          platform's bot running under a channel name of its own (``group:tg2:...``) is such a
          channel here; its adapter already writes canonical ids
          (:meth:`~actorscope.platforms.PlatformSpec.chat_id`).

        An empty sender is not a problem here: the policy denies it as ``empty_sender``.
        """
        return _identity_problem(user_id, sender_id, channel)

    @classmethod
    def chat(
        cls,
        platform: str,
        chat_id: int | str,
        sender_id: int | str | None,
        *,
        group: bool,
        sender_kind: SenderKind = SenderKind.USER,
        role: str = "",
        channel: str = "",
        guild_id: int | str | None = None,
    ) -> Identity:
        """The identity of a message on the registered ``platform``: the sender identification
        every platform shares (docs/design.md, "Adding a platform"), by its registration.

        ``chat_id`` and ``sender_id`` are checked against the platform's id form; ``group`` says
        whether the chat is shared. A person (``sender_kind`` ``USER``, an id the platform gives
        a person, not a synthetic or placeholder id) in a direct chat gets their own scope; in a
        group, the group's (``group:<channel>:<chatID>``; ``channel``, the channel name scopes
        carry, defaults to the platform's). Anything else has ``sender_id = ""`` and keeps the
        group scope even in what claims to be a direct chat, so it can never borrow a person's
        scope.

        On a platform of the guild form a shared chat belongs to ``guild_id``, and each sender has
        a scope of its own there: a person ``guild:<gid>:user:<id>``, a webhook's or a bot's
        messages (``sender_kind`` ``WEBHOOK`` / ``BOT``, by the author's id)
        ``guild:<gid>:webhook|bot:<id>``; any other message there, or one in a direct chat
        without a person, has no safe scope. An unregistered platform, a malformed id, a guild
        where the form has none (or none where it needs one) is an :class:`IdentityError`.
        """
        spec = _spec(platform)
        name = spec.name if channel in ("", platform) else _channel_name(channel)
        chat = spec.chat_id(chat_id)
        author = "" if sender_id is None else spec.chat_id(sender_id, "sender id")
        kind = sender_kind if type(sender_kind) is SenderKind else SenderKind(sender_kind)
        guilds = spec.group_form == "guild"
        if sender_id is None and kind is SenderKind.USER:
            kind = SenderKind.NONE
        elif guilds and kind in (SenderKind.WEBHOOK, SenderKind.BOT):
            pass  # named by its own id in the guild, whatever that id looks like
        elif spec.ids is IdForm.INTEGER:
            # Canonical digits: never synthetic, and a placeholder only when spelled as one.
            kind = _PLACEHOLDER_KINDS.get(author, kind)
        elif _is_synthetic_sender(author):
            kind = SenderKind.SYNTHETIC
        elif _is_placeholder_sender(author):
            kind = _placeholder_sender_kind(author) or SenderKind.NONE
        if _is_person_kind(kind) and not spec.is_person_id(author):
            if guilds:  # every sender there has a scope of its own: no person, no scope
                raise IdentityError(f"sender id {author} is not a {spec.name} person id")
            kind = SenderKind.NONE  # a chat's id where a person's belongs (a negative one)
        sender = author if _is_person_kind(kind) else ""
        if not group and sender:
            return Identity(sender, sender, name, chat, PeerKind.DIRECT, kind, role)
        if not guilds:
            if guild_id is not None:
                raise IdentityError(f"{platform} has no guilds: its groups are group:<chat>")
            return Identity(f"group:{name}:{chat}", sender, name, chat, PeerKind.GROUP, kind, role)
        scope_kind = _GUILD_SENDERS.get(kind)
        if not group or guild_id is None or scope_kind is None or not author:
            where = "in a guild" if group and guild_id is not None else "outside a guild"
            raise IdentityError(f"a {kind.value} message {where} has no {platform} scope")
        guild = spec.chat_id(guild_id, "guild id")
        scope = str(Scope(scope_kind, platform, guild_id=guild, member_id=author))
        return Identity(scope, sender, name, chat, PeerKind.GROUP, kind, role)

    @classmethod
    def http(cls, user_id: str, *, role: str = "", tenant_id: str | None = None) -> Identity:
        """An authenticated HTTP API caller: scope and actor are the user, ``sender_id`` empty."""
        if not user_id or user_id != user_id.strip():
            raise IdentityError(
                f"HTTP user id must be non-empty without surrounding spaces: {user_id!r}"
            )
        if _is_group_scope(user_id):
            # A user id shaped like a group scope would share that group's memory and files.
            raise IdentityError(f"HTTP user id must not look like a group scope: {user_id!r}")
        if user_id.startswith(_PERSON_PREFIX):
            # Nor may one borrow a linked person's direct scope.
            raise IdentityError(f"HTTP user id must not look like a person's scope: {user_id!r}")
        return Identity(
            user_id=user_id,
            sender_id="",
            channel=BuiltInPlatform.HTTP.value,
            peer_kind=PeerKind.DIRECT,
            sender_kind=SenderKind.NONE,
            role=role,
            tenant_id=tenant_id,
        )

    @classmethod
    def system(
        cls, user_id: str = "", sender_id: str = "", *, role: str = "", channel: str = ""
    ) -> Identity:
        """A cron, ticker or system run: inherited scope (or none), and a propagated or no sender.

        ``channel`` is the channel of the inherited scope: a direct scope (a person's id) means
        that person only on its channel, so a run inheriting one must say which (its files,
        memory and cron jobs are stored under the channel too). A synthetic ``sender_id`` is kept
        and marked ``SYNTHETIC`` (still denied every group permission); a legacy ``id|name`` is
        split; a placeholder id becomes ``""``.
        """
        sender_id = _normalize_sender_id(sender_id)
        placeholder = _placeholder_sender_kind(sender_id)
        if placeholder is not None:
            sender_id, kind = "", placeholder
        elif sender_id and _is_synthetic_sender(sender_id):
            kind = SenderKind.SYNTHETIC
        elif sender_id:
            kind = SenderKind.USER
        else:
            kind = SenderKind.NONE
        return Identity(
            user_id=user_id,
            sender_id=sender_id,
            channel=_channel_name(channel) if channel else "",
            peer_kind=PeerKind.GROUP if _is_group_scope(user_id) else PeerKind.DIRECT,
            sender_kind=kind,
            role=role,
        )


def _account_of(identity: Identity) -> Account | None:
    # Identity.account: the sender (the user over HTTP) as an account of its platform.
    spec = platform_spec(identity.channel)
    if spec is None:
        return None
    actor = identity.user_id if spec.name == BuiltInPlatform.HTTP else identity.sender_id
    if (
        not actor
        or identity.sender_kind not in (SenderKind.USER, SenderKind.NONE)
        or _is_synthetic_sender(actor)
        or _is_placeholder_sender(actor)
        or not spec.is_person_id(actor)
    ):
        return None
    return Account(spec.name, actor)

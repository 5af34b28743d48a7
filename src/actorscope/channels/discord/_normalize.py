"""Discord: a discord.py ``Message`` / ``Interaction`` (or the raw gateway dict) → identity.

:func:`normalize_message` and :func:`normalize_interaction` return an
:class:`~actorscope.messages.InboundMessage`, or ``None`` for what a bot ignores;
:func:`inspect_message`, :func:`inspect_interaction` and :func:`inspect_dispatch` return the
:class:`Ingress` with the reason. None of them raises on a platform event.

* guild channel or thread: scope ``guild:<gid>:user:<sender>``; in a thread ``chat_id`` is the
  parent channel and the session key ends ``:thread:<threadID>``. A raw ``MESSAGE_CREATE`` does
  not say whether its channel is a thread; pass ``thread_parents`` (thread id → parent id) or a
  discord.py ``Message`` whose state knows the thread.
* DM: scope and actor are the author.
* webhook message: empty sender, kind ``webhook``, scope ``guild:<gid>:webhook:<id>``; a bot
  author (including the bot's own reply to a slash command, whose
  ``interaction_metadata.user`` names the human, not the author): empty sender, kind ``bot``,
  scope ``guild:<gid>:bot:<id>``. Both are ignored unless ``ignore_bots=False``, and always
  without a guild. The bot's own messages are always ignored.
* raw payloads are type-checked at the edge: a ``bot`` or ``system`` flag that is anything but
  JSON ``false`` (or absent) means no person; a message with ``member`` or ``guild_id`` but no
  valid ``guild_id`` is ``malformed``, never a DM, and one with a null ``webhook_id`` is never
  its author's; ids are canonical snowflakes; content that
  is not a string, or a reference that is not an object, is ``malformed``.
* slash command (and component, modal) interaction: the actor is ``interaction.user``; the
  scope is that of a message in the same place. System messages are ignored.

**Message content intent.** ``content`` (and embeds, attachments, components) of a guild
message is only delivered to a bot with the privileged *Message Content* intent: enable it in
the Developer Portal and set ``discord.Intents.message_content = True``. Without it, guild
messages arrive with empty content unless they mention the bot (a reply that pings the bot
does); DMs to the bot and slash commands are unaffected. Identity never depends on content, so
scope and actor stay correct either way, and the default mention gate matches what still works.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import datetime
from typing import Any, NamedTuple

import discord

from actorscope.channels._base import (
    Addressed,
    IgnoreReason,
    Ingress,
    build_inbound,
    display_name,
    flag_raised,
    ignored,
)
from actorscope.channels.discord._ids import (
    discord_identity,
    optional_snowflake,
    person,
    session,
    snowflake,
)
from actorscope.channels.discord._interactions import inspect_interaction, normalize_interaction
from actorscope.identity import PeerKind, SenderKind
from actorscope.messages import InboundMessage, MetaKey

__all__ = [
    "CONVERSATION_MESSAGE_TYPES",
    "clear_caches",
    "inspect_dispatch",
    "inspect_interaction",
    "inspect_message",
    "normalize_interaction",
    "normalize_message",
]

logger = logging.getLogger("actorscope.channels.discord")

#: Message types a person writes (default, reply, slash and context-menu command); every
#: other type is a system message.
CONVERSATION_MESSAGE_TYPES = frozenset({0, 19, 20, 23})


def clear_caches() -> None:
    """Forget the memoised identities and session keys (a benchmark's never-seen events).

    Never needed for correctness: both are pure functions of the ids they are keyed by.
    """
    person.cache_clear()
    session.cache_clear()


def normalize_message(
    message_or_payload: discord.Message | Mapping[str, Any],
    *,
    agent_key: str = "main",
    bot_id: int | str | None = None,
    ignore_bots: bool = True,
    thread_parents: Mapping[int, int] | None = None,
) -> InboundMessage | None:
    """The :class:`InboundMessage` of a message, or ``None`` for what a bot ignores."""
    result = _inspect_message(message_or_payload, agent_key, bot_id, ignore_bots, thread_parents)
    return result if type(result) is InboundMessage else None


def inspect_dispatch(
    payload: Mapping[str, Any],
    *,
    agent_key: str = "main",
    bot_id: int | str | None = None,
    ignore_bots: bool = True,
) -> Ingress:
    """A gateway dispatch ``{"op": 0, "t": ..., "d": {...}}`` or a bare ``d`` object."""
    if not isinstance(payload, Mapping):
        return ignored(IgnoreReason.MALFORMED, "payload is not a JSON object")
    event = payload.get("t")
    data = payload.get("d") if "d" in payload and "op" in payload else payload
    if not isinstance(data, Mapping):
        return ignored(IgnoreReason.MALFORMED, "dispatch data is not a JSON object")
    if event is None:
        event = "MESSAGE_CREATE" if "author" in data else "INTERACTION_CREATE"
    if event == "MESSAGE_CREATE":
        return inspect_message(data, agent_key=agent_key, bot_id=bot_id, ignore_bots=ignore_bots)
    if event == "INTERACTION_CREATE":
        return inspect_interaction(data, agent_key=agent_key)
    return ignored(IgnoreReason.UNSUPPORTED_EVENT, f"dispatch {event!r}")


def inspect_message(
    message_or_payload: discord.Message | Mapping[str, Any],
    *,
    agent_key: str = "main",
    bot_id: int | str | None = None,
    ignore_bots: bool = True,
    thread_parents: Mapping[int, int] | None = None,
    addressed: str = "",
    command: str = "",
) -> Ingress:
    """Normalise a message; never raises on a malformed one.

    A bad ``agent_key`` is the caller's error, never taken for a malformed message: building a
    message with it raises ``IdentityError``. A caller that knows more than the payload says
    (the discord.py Cog: discord.py found a command in it) passes ``addressed`` (the
    :attr:`~actorscope.messages.MetaKey.ADDRESSED` mark, ``"command"``, a message addressed
    neither by a reply nor a mention gets; another value is a ``ValueError``) and ``command``
    (the ``command`` metadata), so the message is built once, marked.
    """
    result = _inspect_message(
        message_or_payload, agent_key, bot_id, ignore_bots, thread_parents, addressed, command
    )
    return result if isinstance(result, Ingress) else Ingress(result)


def _inspect_message(
    message_or_payload: discord.Message | Mapping[str, Any],
    agent_key: str,
    bot_id: int | str | None,
    ignore_bots: bool,
    thread_parents: Mapping[int, int] | None,
    addressed: str = "",
    command: str = "",
) -> InboundMessage | Ingress:
    # The caller's agent key, checked before any payload is read: a bad one raises
    # IdentityError (the caller's error), never taken for a malformed message.
    session(agent_key, PeerKind.DIRECT, "0", None)
    if addressed and addressed not in _MARKS:
        raise ValueError(f"addressed must be one of {', '.join(_MARKS)}, got {addressed!r}")
    marks = _Marks(addressed, command)
    try:
        me = bot_id if type(bot_id) is int else optional_snowflake(bot_id, "bot id")
        if isinstance(message_or_payload, discord.Message):
            return _from_message_object(message_or_payload, agent_key, me, ignore_bots, marks)
        if isinstance(message_or_payload, Mapping):
            return _from_message_dict(
                message_or_payload, agent_key, me, ignore_bots, thread_parents or {}, marks
            )
        return ignored(IgnoreReason.MALFORMED, f"not a message: {type(message_or_payload)}")
    except Exception as exc:  # an adapter must never let one bad event kill the bot
        logger.warning("discord.malformed_message error=%s: %s", type(exc).__name__, exc)
        return ignored(IgnoreReason.MALFORMED, f"{type(exc).__name__}: {exc}")


#: The marks of how a message is addressed (the values of ``MetaKey.ADDRESSED``).
_MARKS = tuple(mark.value for mark in Addressed)


class _Marks(NamedTuple):
    """What the caller knows of a message: its addressed mark (if none found) and command."""

    addressed: str = ""
    command: str = ""


def _from_message_object(
    message: discord.Message, agent_key: str, me: int | None, ignore_bots: bool, marks: _Marks
) -> InboundMessage | Ingress:
    channel = message.channel
    parent = channel.parent_id if isinstance(channel, discord.Thread) else None
    guild = message.guild
    author = message.author
    if flag_raised(author.system):
        return ignored(IgnoreReason.SYSTEM_MESSAGE, "system author")
    content = message.content
    if type(content) is not str:
        return ignored(IgnoreReason.MALFORMED, "content is not a string")
    reference = message.reference
    reply_to = reference.message_id if reference is not None else None
    replied_author: int | None = None
    if reference is not None and isinstance(reference.resolved, discord.Message):
        replied_author = reference.resolved.author.id
    return _message(
        agent_key=agent_key,
        me=me,
        ignore_bots=ignore_bots,
        message_id=message.id,
        message_type=message.type.value,
        channel_id=channel.id,
        parent_id=parent,
        guild_id=guild.id if guild is not None else None,
        author_id=author.id,
        author_bot=flag_raised(author.bot),
        author_name=display_name(author.name),
        webhook_id=message.webhook_id,
        content=content,
        mentioned=(
            me is not None and guild is not None and any(u.id == me for u in message.mentions)
        ),
        reply_to=reply_to,
        replied_author=replied_author,
        edited=message.edited_at,
        marks=marks,
    )


def _from_message_dict(
    data: Mapping[str, Any],
    agent_key: str,
    me: int | None,
    ignore_bots: bool,
    thread_parents: Mapping[int, int],
    marks: _Marks,
) -> InboundMessage | Ingress:
    author = data.get("author")
    if not isinstance(author, Mapping):
        return ignored(IgnoreReason.MALFORMED, "author is not a JSON object")
    if flag_raised(author.get("system", False)):
        return ignored(IgnoreReason.SYSTEM_MESSAGE, "system author")
    guild_id = optional_snowflake(data.get("guild_id"), "guild_id")
    if guild_id is None and ("guild_id" in data or "member" in data):
        # Guild evidence without a guild: never fall back to a DM scope.
        return ignored(IgnoreReason.MALFORMED, "member or guild_id without a valid guild_id")
    webhook_id = optional_snowflake(data.get("webhook_id"), "webhook_id")
    if webhook_id is None and "webhook_id" in data:
        # A webhook marker without a webhook: never fall back to the author as a person.
        return ignored(IgnoreReason.MALFORMED, "webhook_id is null")
    content = data.get("content", "")
    mentions = data.get("mentions") or ()
    reference = _object(data, "message_reference")
    replied = _object(data, "referenced_message")
    replied_by = _object(replied, "author") if replied is not None else None
    if type(content) is not str or not isinstance(mentions, list | tuple):
        return ignored(IgnoreReason.MALFORMED, "content is not a string or mentions not a list")
    if reference is None or replied_by is None:
        return ignored(IgnoreReason.MALFORMED, "message reference is not a JSON object")
    channel_id = snowflake(data["channel_id"], "channel_id")
    return _message(
        agent_key=agent_key,
        me=me,
        ignore_bots=ignore_bots,
        message_id=snowflake(data["id"], "id"),
        message_type=data.get("type", 0),
        channel_id=channel_id,
        parent_id=thread_parents.get(channel_id),
        guild_id=guild_id,
        author_id=snowflake(author["id"], "author.id"),
        author_bot=flag_raised(author.get("bot", False)),
        author_name=display_name(author.get("username")),
        webhook_id=webhook_id,
        content=content,
        mentioned=me is not None
        and any(isinstance(u, Mapping) and str(u.get("id")) == str(me) for u in mentions),
        reply_to=optional_snowflake(reference.get("message_id"), "message_reference"),
        replied_author=optional_snowflake(replied_by.get("id"), "referenced_message.author.id"),
        edited=_edit_time(data.get("edited_timestamp")),
        marks=marks,
    )


def _edit_time(value: object) -> datetime | None:
    """A message's ``edited_timestamp`` (``None`` when it was never edited)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError("edited_timestamp is not a string")
    return datetime.fromisoformat(value)


def _object(data: Mapping[str, Any], key: str) -> Mapping[str, Any] | None:
    """``data[key]`` when it is a JSON object, ``{}`` when absent or null, ``None`` otherwise."""
    value = data.get(key)
    if value is None:
        return {}
    return value if isinstance(value, Mapping) else None


def _message(
    *,
    agent_key: str,
    me: int | None,
    ignore_bots: bool,
    message_id: int,
    message_type: Any,
    channel_id: int,
    parent_id: int | None,
    guild_id: int | None,
    author_id: int,
    author_bot: bool,
    author_name: str,
    webhook_id: int | None,
    content: str,
    mentioned: bool,
    reply_to: int | None,
    replied_author: int | None,
    edited: datetime | None = None,
    marks: _Marks,
) -> InboundMessage | Ingress:
    if type(message_type) is not int:
        return ignored(IgnoreReason.MALFORMED, f"message type {message_type!r}")
    if message_type not in CONVERSATION_MESSAGE_TYPES:
        return ignored(IgnoreReason.SYSTEM_MESSAGE, f"type {message_type!r}")
    if me is not None and author_id == me and webhook_id is None:
        return ignored(IgnoreReason.OWN_MESSAGE)
    chat = parent_id or channel_id
    thread = channel_id if parent_id else None
    if webhook_id is not None or author_bot:
        if guild_id is None:
            return ignored(IgnoreReason.NO_GUILD, "webhook or bot message outside a guild")
        if ignore_bots:
            reason = IgnoreReason.NONPERSON_SENDER if webhook_id else IgnoreReason.BOT_SENDER
            return ignored(reason)
        kind = SenderKind.WEBHOOK if webhook_id is not None else SenderKind.BOT
        identity = discord_identity(
            webhook_id or author_id, chat_id=chat, guild_id=guild_id, sender_kind=kind
        )
        key = session(agent_key, identity.peer_kind, identity.chat_id, thread)
    else:
        identity, key = person(agent_key, author_id, chat, guild_id, thread)
    metadata: dict[str, str] = {MetaKey.SESSION_KEY: key, MetaKey.EVENT: "message"}
    if identity.sender_id:
        metadata[MetaKey.SENDER_NAME] = author_name
    if reply_to is not None:
        metadata[MetaKey.REPLY_TO_MESSAGE_ID] = str(reply_to)
    if edited is not None:  # an edit is a new event, never a duplicate of the original
        metadata[MetaKey.EDIT_DATE] = str(edited.timestamp())
    if me is not None and identity.peer_kind is PeerKind.GROUP:
        if replied_author == me:
            metadata[MetaKey.ADDRESSED] = Addressed.REPLY.value
        elif mentioned:
            metadata[MetaKey.ADDRESSED] = Addressed.MENTION.value
    if marks.addressed:
        metadata.setdefault(MetaKey.ADDRESSED, marks.addressed)
    if marks.command:
        metadata[MetaKey.COMMAND] = marks.command
    return build_inbound(
        identity,
        content=content,
        metadata=metadata,
        thread_id="" if thread is None else str(thread),
        message_id=str(message_id),
    )

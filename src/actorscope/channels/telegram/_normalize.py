"""Telegram: one python-telegram-bot ``Update`` → scope, actor and session key.

:func:`normalize_update` returns an :class:`~actorscope.messages.InboundMessage`, or ``None``
for what a bot ignores; :func:`inspect_update` returns the :class:`Ingress` with the reason
(and the :class:`ScopeMigration` when a group became a supergroup). Neither ever raises on a
platform event: a malformed update is ignored with reason ``malformed`` and logged.

Who acted, case by case (the identity table of docs/design.md):

* private chat: scope and actor are the sender, who must be the chat (a sender other than
  the chat would get their own scope but the chat's session and replies: ``malformed``, logged);
  group/supergroup: ``group:<channel>:<chat>``.
* forum topic: the session key gets ``:topic:<N>`` and ``thread_id`` is ``N``; General is 1
  (send replies there without ``message_thread_id``); ``message_thread_id`` is trusted only
  with ``is_topic_message`` (a reply in a plain supergroup also carries one).
* anonymous admin (``sender_chat`` is the group), a user posting as a channel (another
  ``sender_chat``), an automatic forward from a linked channel, a channel post, a bot: empty
  ``sender_id`` and their :class:`~actorscope.identity.SenderKind`; ignored unless
  ``ignore_bots=False``. A placeholder ``from`` id is never an identity, ``sender_chat`` or not.
* callback query: the clicker acts; the scope is the chat of the message with the button, or
  for an inline message (no chat) the clicker's direct context. In a private chat the clicker
  must be the chat, as for a message.
* a raw payload is type-checked at the edge: ``is_bot`` other than JSON ``false`` means a
  bot (a callback query from a bot is ignored as ``bot_sender``); chat, message, topic and
  user ids must be JSON integers within 64 bits, text, caption and callback data strings;
  anything else is ``malformed``. A name that is not a string is no name.
* service messages, ``my_chat_member`` / ``chat_member``: ignored; a migration
  (``migrate_to_chat_id`` / ``migrate_from_chat_id``) is ignored *with* a ``ScopeMigration``
  (apply it with :func:`actorscope.channels._migration.move_grants`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, TypeGuard

from telegram import CallbackQuery, Message, Update

from actorscope.channels._base import (
    Addressed,
    IgnoreReason,
    Ingress,
    ScopeMigration,
    build_inbound,
    display_name,
    flag_raised,
    ignored,
)
from actorscope.channels._mention import command_of, mentions_bot
from actorscope.errors import IdentityError
from actorscope.identity import Identity, PeerKind, Scope, SenderKind, session_key
from actorscope.messages import InboundMessage, MetaKey
from actorscope.platforms import BuiltInPlatform, registry_cache

__all__ = [
    "GENERAL_TOPIC_ID",
    "chat_migration",
    "clear_caches",
    "inspect_update",
    "normalize_update",
    "telegram_identity",
]

logger = logging.getLogger("actorscope.channels.telegram")

#: The id of a forum's General topic, which carries no ``message_thread_id``.
GENERAL_TOPIC_ID = 1
# Telegram ids fit a signed 64-bit integer (user ids have at most 52 significant bits): a
# larger number in a payload is crafted, not an id.
_ID_LIMIT = 2**63
# What a text field (text, caption, callback data) may be in a payload: a string or absent.
_OPTIONAL_TEXT = frozenset({str, type(None)})

_MESSAGE_EVENTS = ("message", "edited_message", "channel_post", "edited_channel_post")
_CONTENT_ATTRS = (
    "photo",
    "document",
    "sticker",
    "voice",
    "video",
    "audio",
    "animation",
    "video_note",
    "location",
    "contact",
    "poll",
    "dice",
    "venue",
    "story",
)
_FILE_ATTRS = ("document", "voice", "video", "audio", "animation", "video_note", "sticker")


#: Telegram's chat types: a private chat is direct, the others are shared.
_CHAT_TYPES = {"private": False, "group": True, "supergroup": True, "channel": True}


def telegram_identity(
    chat_id: int | str,
    chat_type: str,
    sender_id: int | str | None,
    *,
    sender_kind: SenderKind = SenderKind.USER,
    channel: str = BuiltInPlatform.TELEGRAM.value,
    role: str = "",
) -> Identity:
    """The identity of a Telegram message (private chat, group, supergroup or channel).

    :meth:`Identity.chat` of Telegram, with its chat type saying whether the chat is shared.
    A placeholder ``from`` id, a non-person ``sender_kind`` or a missing sender yields
    ``sender_id = ""``; such a message keeps the group scope even in what claims to be a
    private chat, so it can never borrow a person's direct scope. ``channel`` is the channel
    name its scopes carry (a bot's own, default ``telegram``).
    """
    group = _CHAT_TYPES.get(chat_type)
    if group is None:
        raise IdentityError(f"unknown Telegram chat type {chat_type!r}")
    return Identity.chat(
        BuiltInPlatform.TELEGRAM,
        chat_id,
        sender_id,
        group=group,
        sender_kind=sender_kind,
        role=role,
        channel=channel,
    )


# Identities and session keys are pure functions of a few ids, and chats and senders repeat,
# so both are memoised (bounded; typed, so True never stands for 1).
@registry_cache(maxsize=4096, typed=True)
def _identity(
    chat_id: int, chat_type: str, sender: int | None, kind: SenderKind, channel: str
) -> Identity:
    return telegram_identity(chat_id, chat_type, sender, sender_kind=kind, channel=channel)


@registry_cache(maxsize=4096, typed=True)
def _session(agent_key: str, channel: str, peer: PeerKind, chat_id: str, topic: int | None) -> str:
    return session_key(agent_key, channel, peer, chat_id, topic_id=topic)


def clear_caches() -> None:
    """Forget the memoised identities and session keys (a benchmark's never-seen updates).

    Never needed for correctness: both are pure functions of the ids they are keyed by.
    """
    _identity.cache_clear()
    _session.cache_clear()


def normalize_update(
    update_or_dict: Update | Mapping[str, Any],
    *,
    agent_key: str = "main",
    bot_username: str | None = None,
    channel: str = BuiltInPlatform.TELEGRAM.value,
    ignore_bots: bool = True,
) -> InboundMessage | None:
    """The :class:`InboundMessage` of an update, or ``None`` for what a bot ignores."""
    result = _inspect_any(update_or_dict, agent_key, bot_username, channel, ignore_bots)
    return result if type(result) is InboundMessage else None


def inspect_update(
    update_or_dict: Update | Mapping[str, Any],
    *,
    agent_key: str = "main",
    bot_username: str | None = None,
    channel: str = BuiltInPlatform.TELEGRAM.value,
    ignore_bots: bool = True,
) -> Ingress:
    """Normalise an ``Update`` (or its JSON dict); never raises on a malformed update.

    A bad ``agent_key`` or ``channel`` is the caller's error, never taken for a malformed
    update: building a message with it raises ``IdentityError``.
    """
    result = _inspect_any(update_or_dict, agent_key, bot_username, channel, ignore_bots)
    return result if isinstance(result, Ingress) else Ingress(result)


def _inspect_any(
    update_or_dict: Update | Mapping[str, Any],
    agent_key: str,
    bot_username: str | None,
    channel: str,
    ignore_bots: bool,
) -> InboundMessage | Ingress:
    # The caller's agent key and channel, checked before any payload is read: a bad one raises
    # IdentityError (the caller's error), never taken for a malformed update.
    _session(agent_key, channel, PeerKind.DIRECT, "0", None)
    try:
        if isinstance(update_or_dict, Update):
            update = update_or_dict
        elif isinstance(update_or_dict, Mapping):
            update = Update.de_json(dict(update_or_dict), None)
        else:
            return ignored(IgnoreReason.MALFORMED, f"not an Update: {type(update_or_dict)}")
        return _inspect(update, agent_key, (bot_username or "").lstrip("@"), channel, ignore_bots)
    except Exception as exc:  # an adapter must never let one bad update kill the bot
        logger.warning("telegram.malformed_update error=%s: %s", type(exc).__name__, exc)
        return ignored(IgnoreReason.MALFORMED, f"{type(exc).__name__}: {exc}")


def chat_migration(
    update_or_dict: Update | Mapping[str, Any], *, channel: str = BuiltInPlatform.TELEGRAM.value
) -> ScopeMigration | None:
    """The scope move announced by a migration update, else ``None``."""
    return inspect_update(update_or_dict, channel=channel).migration


def _inspect(
    update: Update, agent_key: str, bot_username: str, channel: str, ignore_bots: bool
) -> InboundMessage | Ingress:
    message = update.message
    if message is not None:
        return _from_message(message, "message", agent_key, bot_username, channel, ignore_bots)
    for event in _MESSAGE_EVENTS[1:]:
        message = getattr(update, event)
        if message is not None:
            return _from_message(message, event, agent_key, bot_username, channel, ignore_bots)
    if update.callback_query is not None:
        return _from_callback(update.callback_query, agent_key, channel, ignore_bots)
    if update.my_chat_member is not None or update.chat_member is not None:
        return ignored(IgnoreReason.CHAT_MEMBER_UPDATE)
    return ignored(IgnoreReason.UNSUPPORTED_EVENT)


def _migration(message: Message, channel: str) -> Ingress | None:
    if message.migrate_to_chat_id:
        old, new = message.chat.id, message.migrate_to_chat_id
    elif message.migrate_from_chat_id:
        old, new = message.migrate_from_chat_id, message.chat.id
    else:
        return None
    if not (_is_chat_id(old) and _is_chat_id(new)):
        return ignored(IgnoreReason.MALFORMED, f"migration chat ids {old!r} → {new!r}")
    old_scope, new_scope = Scope.group(channel, old), Scope.group(channel, new)
    move = ScopeMigration(
        channel=channel,
        old_chat_id=old_scope.chat_id,
        new_chat_id=new_scope.chat_id,
        old_scope=str(old_scope),
        new_scope=str(new_scope),
    )
    logger.info("telegram.chat_migrated old=%s new=%s", move.old_scope, move.new_scope)
    return Ingress(None, IgnoreReason.CHAT_MIGRATED, migration=move)


def _is_user_id(value: object) -> TypeGuard[int]:
    # User ids are positive JSON integers; a negative one is a chat id posing as a person.
    # Message and topic ids are positive integers too.
    return type(value) is int and 0 < value < _ID_LIMIT


def _is_chat_id(value: object) -> bool:
    # Chat ids are non-zero JSON integers (groups and channels negative); never a string.
    return type(value) is int and value != 0 and -_ID_LIMIT < value < _ID_LIMIT


def _topic(thread: object, is_topic: object) -> int | Ingress:
    """The forum topic of a message in a forum (General when none is given), or ``malformed``.

    ``message_thread_id`` is trusted only with ``is_topic_message`` exactly true (a reply in a
    plain supergroup carries one too).
    """
    if is_topic is not True or thread is None:
        return GENERAL_TOPIC_ID
    if not _is_user_id(thread):
        return ignored(IgnoreReason.MALFORMED, f"message_thread_id {thread!r}")
    return thread


def _sender(message: Message, chat_id: int, channel_post: bool) -> tuple[int | None, SenderKind]:
    if channel_post:
        return None, SenderKind.CHANNEL
    if message.is_automatic_forward:
        return None, SenderKind.SERVICE
    sender_chat = message.sender_chat
    if sender_chat is not None:
        if sender_chat.id == chat_id:
            return None, SenderKind.ANONYMOUS_ADMIN
        return None, SenderKind.CHANNEL
    user = message.from_user
    if user is None:
        return None, SenderKind.NONE
    # A placeholder id maps to its own kind inside telegram_identity, with or without is_bot.
    if flag_raised(user.is_bot) and not SenderKind.is_placeholder(str(user.id)):
        return None, SenderKind.BOT
    return user.id, SenderKind.USER


def _foreign_sender(identity: Identity) -> Ingress | None:
    """``malformed`` for a private chat whose person is not the chat, else ``None``."""
    if identity.peer_kind is PeerKind.GROUP or identity.user_id == identity.chat_id:
        return None
    # Scope (the sender) and session/replies (the chat) would belong to two different people.
    logger.warning(
        "telegram.private_chat_foreign_sender chat=%s sender=%s",
        identity.chat_id,
        identity.sender_id,
    )
    return ignored(
        IgnoreReason.MALFORMED,
        f"private chat {identity.chat_id} with sender {identity.sender_id}",
    )


def _from_message(
    message: Message,
    event: str,
    agent_key: str,
    bot_username: str,
    channel: str,
    ignore_bots: bool,
) -> InboundMessage | Ingress:
    migration = _migration(message, channel)
    if migration is not None:
        return migration
    text, caption = message.text, message.caption
    if type(text) not in _OPTIONAL_TEXT or type(caption) not in _OPTIONAL_TEXT:
        return ignored(IgnoreReason.MALFORMED, "text or caption is not a string")
    content = text or caption or ""
    if not content and not any(getattr(message, attr) for attr in _CONTENT_ATTRS):
        return ignored(IgnoreReason.SERVICE_MESSAGE)
    chat = message.chat
    chat_id = chat.id
    if not _is_chat_id(chat_id):
        return ignored(IgnoreReason.MALFORMED, f"chat id {chat_id!r}")
    if not _is_user_id(message.message_id):
        return ignored(IgnoreReason.MALFORMED, f"message id {message.message_id!r}")
    sender, kind = _sender(message, chat_id, event.endswith("channel_post"))
    if sender is not None and not _is_user_id(sender):
        return ignored(IgnoreReason.MALFORMED, f"sender id {sender!r}")
    user = message.from_user
    if (
        kind is SenderKind.BOT
        and user is not None
        and bot_username
        and display_name(user.username).lower() == bot_username.lower()
    ):
        return ignored(IgnoreReason.OWN_MESSAGE)
    identity = _identity(chat_id, chat.type, sender, kind, channel)
    foreign = _foreign_sender(identity)
    if foreign is not None:
        return foreign
    if identity.sender_kind is not SenderKind.USER and ignore_bots:
        reason = (
            IgnoreReason.BOT_SENDER if kind is SenderKind.BOT else IgnoreReason.NONPERSON_SENDER
        )
        return ignored(reason, identity.sender_kind.value)
    topic: int | None = None
    if chat.is_forum:
        found = _topic(message.message_thread_id, message.is_topic_message)
        if isinstance(found, Ingress):
            return found
        topic = found
    metadata: dict[str, str] = {
        MetaKey.SESSION_KEY: _session(
            agent_key, channel, identity.peer_kind, identity.chat_id, topic
        ),
        MetaKey.EVENT: event,
    }
    if identity.sender_id and user is not None:
        metadata[MetaKey.SENDER_NAME] = display_name(user.username, user.first_name)
    if event.startswith("edited_") and message.edit_date is not None:
        metadata[MetaKey.EDIT_DATE] = str(int(message.edit_date.timestamp()))
    reply = message.reply_to_message
    if reply is not None and not _is_user_id(reply.message_id):
        return ignored(IgnoreReason.MALFORMED, f"reply message id {reply.message_id!r}")
    if reply is not None and not (topic is not None and reply.message_id == topic):
        metadata[MetaKey.REPLY_TO_MESSAGE_ID] = str(reply.message_id)
    addressed: str | None = ""
    if identity.peer_kind is PeerKind.GROUP:
        addressed = _addressed(content, reply, topic, bot_username, metadata)
        if addressed:
            metadata[MetaKey.ADDRESSED] = addressed
    elif content.startswith("/"):
        command = command_of(content)
        if command is not None:
            metadata[MetaKey.COMMAND] = command[0]
    inbound = build_inbound(
        identity,
        content=content,
        metadata=metadata,
        thread_id="" if topic is None else str(topic),
        message_id=str(message.message_id),
        media=_media(message) if not message.text else (),
    )
    if addressed is None:
        # Ignored, but kept: while links are on, a code it shows is burnt (Pipeline.process).
        logger.debug(
            "channels.ignored reason=%s command for another bot",
            IgnoreReason.NOT_FOR_THIS_BOT.value,
        )
        return Ingress(inbound, IgnoreReason.NOT_FOR_THIS_BOT, detail="command for another bot")
    return inbound


def _addressed(
    content: str,
    reply: Message | None,
    topic: int | None,
    bot_username: str,
    metadata: dict[str, str],
) -> str | None:
    """How a group message is addressed to the bot: ``""`` not at all, ``None`` to another bot."""
    if content.startswith("/"):
        command = command_of(content)
        if command is not None:
            if command[1] and bot_username and command[1].lower() != bot_username.lower():
                return None
            metadata[MetaKey.COMMAND] = command[0]
            return Addressed.COMMAND.value
    if bot_username:
        if (
            reply is not None
            and reply.from_user is not None
            and display_name(reply.from_user.username).lower() == bot_username.lower()
            and not (topic is not None and reply.message_id == topic)
        ):
            return Addressed.REPLY.value
        if "@" in content and mentions_bot(content, username=bot_username):
            return Addressed.MENTION.value
    return ""


def _from_callback(
    query: CallbackQuery, agent_key: str, channel: str, ignore_bots: bool
) -> InboundMessage | Ingress:
    clicker = query.from_user
    if not _is_user_id(clicker.id):
        return ignored(IgnoreReason.MALFORMED, f"sender id {clicker.id!r}")
    if flag_raised(clicker.is_bot):
        # Telegram never delivers a bot's button press; a payload claiming one is not a person.
        return ignored(IgnoreReason.BOT_SENDER, "callback query from a bot account")
    if type(query.data) not in _OPTIONAL_TEXT or type(query.game_short_name) not in _OPTIONAL_TEXT:
        return ignored(IgnoreReason.MALFORMED, "callback data is not a string")
    query_id = query.id
    if not (type(query_id) is str and 0 < len(query_id) <= 64 and query_id.isascii()):
        return ignored(IgnoreReason.MALFORMED, f"callback query id {query_id!r}")
    message = query.message
    topic: int | None = None
    if message is None:
        # An inline-mode message has no chat: the click is a direct context of the clicker.
        identity = _identity(clicker.id, "private", clicker.id, SenderKind.USER, channel)
    else:
        chat = message.chat
        if not _is_chat_id(chat.id):
            return ignored(IgnoreReason.MALFORMED, f"chat id {chat.id!r}")
        if not _is_user_id(message.message_id):
            return ignored(IgnoreReason.MALFORMED, f"message id {message.message_id!r}")
        identity = _identity(chat.id, chat.type, clicker.id, SenderKind.USER, channel)
        foreign = _foreign_sender(identity)
        if foreign is not None:
            return foreign
        if chat.is_forum:
            found = _topic(
                getattr(message, "message_thread_id", None),
                getattr(message, "is_topic_message", None),
            )
            if isinstance(found, Ingress):
                return found
            topic = found
    if identity.sender_kind is not SenderKind.USER and ignore_bots:
        return ignored(IgnoreReason.NONPERSON_SENDER, identity.sender_kind.value)
    metadata: dict[str, str] = {
        MetaKey.SESSION_KEY: _session(
            agent_key, channel, identity.peer_kind, identity.chat_id, topic
        ),
        MetaKey.EVENT: "callback_query",
        MetaKey.ADDRESSED: Addressed.CALLBACK.value,
        # A reply answers the message clicked (an inline-mode one: none), never the click's id.
        MetaKey.REPLY_TARGET: "" if message is None else str(message.message_id),
    }
    if identity.sender_id:
        metadata[MetaKey.SENDER_NAME] = display_name(clicker.username, clicker.first_name)
    if query.data:
        metadata[MetaKey.CALLBACK_DATA] = query.data
    return build_inbound(
        identity,
        content=query.data or query.game_short_name or "",
        metadata=metadata,
        thread_id="" if topic is None else str(topic),
        message_id=query_id,
    )


def _media(message: Message) -> tuple[dict[str, str], ...]:
    """The attachments ``message`` references, as :func:`build_inbound` takes them."""
    items: list[dict[str, str]] = []
    if message.photo:
        items.append({"kind": "photo", "file_id": message.photo[-1].file_id})
    for attr in _FILE_ATTRS:
        item = getattr(message, attr)
        if item is not None:
            items.append(
                {
                    "kind": attr,
                    "file_id": item.file_id,
                    "mime_type": getattr(item, "mime_type", None) or "",
                    "file_name": getattr(item, "file_name", None) or "",
                }
            )
    return tuple(items)

"""Telegram writer commands: ``/addwriter`` and ``/removewriter`` as a reply, ``/writers``.

The target is the sender of the message the command replies to, never a ``@username`` argument
(usernames change hands, and anyone can type one). A reply to an anonymous admin, a channel, a
bot or the root of a forum topic names nobody and is refused. Platform admin means
``getChatMember`` status ``administrator`` or ``creator``, asked for adding and removing (a
listing needs no authority) only while the group has no writer, and passed to the manager as
``platform_admin``.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import replace

from telegram import Bot, ChatMember, Message
from telegram.error import TelegramError

from actorscope.channels._writer_commands import WriterCommand, execute_writer_command
from actorscope.identity import Identity, SenderKind
from actorscope.permissions import WriterManager

__all__ = [
    "ADMIN_STATUSES",
    "TELEGRAM_WRITER_USAGE",
    "ChatAdmin",
    "MemberStatus",
    "asks_chat_admin",
    "handle_telegram_writer_command",
    "is_telegram_admin",
    "telegram_writer_target",
]

_log = logging.getLogger("actorscope.channels.telegram")

TELEGRAM_WRITER_USAGE = "reply to a message of the person with /addwriter or /removewriter"
#: The ``getChatMember`` statuses of a chat's administrators.
ADMIN_STATUSES = frozenset({ChatMember.ADMINISTRATOR, ChatMember.OWNER})
#: Whether the sender of an identity administers its chat, as the Bot API says
#: (:func:`is_telegram_admin` with a PTB bot; the aiogram gate asks with its own bot).
ChatAdmin = Callable[[Identity], Awaitable[bool]]


#: ``getChatMember``'s status of a user in a chat, asked with a framework's bot.
MemberStatus = Callable[[int, int], Awaitable[str]]


async def asks_chat_admin(
    status_of: MemberStatus, identity: Identity, errors: tuple[type[Exception], ...]
) -> bool:
    """Whether ``status_of`` (the Bot API's ``getChatMember``) says the sender administers the
    chat; a call that fails with one of ``errors`` means "not an admin" (logged): writer
    management fails closed."""
    if not identity.sender_id or not identity.chat_id:
        return False
    failures: tuple[type[Exception], ...] = (*errors, ValueError)
    try:
        status = await status_of(int(identity.chat_id), int(identity.sender_id))
    except failures as exc:
        _log.warning("telegram.get_chat_member failed chat=%s: %s", identity.chat_id, exc)
        return False
    return status in ADMIN_STATUSES


async def is_telegram_admin(bot: Bot, identity: Identity) -> bool:
    """Whether the Bot API (``getChatMember``) says the sender administers the chat."""

    async def status_of(chat_id: int, user_id: int) -> str:
        return (await bot.get_chat_member(chat_id, user_id)).status

    return await asks_chat_admin(status_of, identity, (TelegramError,))


def telegram_writer_target(message: Message) -> tuple[str, str] | None:
    """``(sender id, display name)`` of the person ``message`` replies to, else ``None``."""
    reply = message.reply_to_message
    if reply is None or reply.forum_topic_created is not None:
        return None
    if message.is_topic_message and reply.message_id == message.message_thread_id:
        return None  # the topic's root message, which every topic message "replies" to
    user = reply.from_user
    if reply.sender_chat is not None or user is None or user.is_bot:
        return None
    if SenderKind.is_placeholder(str(user.id)):
        return None
    name = f"@{user.username}" if user.username else user.first_name
    return str(user.id), f"{name} ({user.id})"


async def handle_telegram_writer_command(
    manager: WriterManager,
    command: WriterCommand,
    message: Message,
    identity: Identity,
    *,
    chat_admin: ChatAdmin,
    agent_id: str | None,
    tenant_id: str | None = None,
) -> str:
    """Run a writer command sent as ``message`` by ``identity``; return the reply text.

    ``chat_admin`` asks (``getChatMember``) whether the sender administers the group, only
    when that can matter (:meth:`~actorscope.permissions.WriterManager.needs_platform_admin`).
    """
    bound = replace(identity, agent_id=agent_id, tenant_id=tenant_id)
    listing = command is WriterCommand.LIST
    admin = not listing and await manager.needs_platform_admin(bound) and await chat_admin(identity)
    target = None if listing else telegram_writer_target(message)
    return await execute_writer_command(
        manager,
        command,
        bound,
        target=target[0] if target else "",
        target_name=target[1] if target else "",
        usage=TELEGRAM_WRITER_USAGE,
        platform_admin=admin,
    )

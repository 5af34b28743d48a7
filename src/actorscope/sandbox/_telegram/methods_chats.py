"""Chat methods: getChat, members, pinning and forum topics."""

from __future__ import annotations

from typing import Any

from actorscope.sandbox._telegram.context import MethodContext
from actorscope.sandbox._telegram.errors import BotApiError
from actorscope.sandbox._telegram.methods_messages import bot_message, target_chat
from actorscope.sandbox._telegram.models import Chat, ChatType, MemberStatus, User
from actorscope.sandbox._telegram.params import Params
from actorscope.sandbox._telegram.payloads import build_message, quoted

__all__ = [
    "TOPIC_ICON_COLORS",
    "chat_member_json",
    "create_forum_topic",
    "get_chat",
    "get_chat_administrators",
    "get_chat_member",
    "pin_chat_message",
    "unpin_chat_message",
]

JSON = dict[str, Any]

#: The colours a forum topic's icon may have.
TOPIC_ICON_COLORS = frozenset({7322096, 16766590, 13338331, 9367192, 16749490, 16478047})
_PIN_RIGHTS = "Bad Request: not enough rights to manage pinned messages in the chat"
_ADMIN_RIGHTS = (
    "can_manage_chat",
    "can_delete_messages",
    "can_manage_video_chats",
    "can_restrict_members",
    "can_promote_members",
    "can_change_info",
    "can_invite_users",
    "can_post_stories",
    "can_edit_stories",
    "can_delete_stories",
    "can_send_welcome_messages",
)


def chat_member_json(chat: Chat, user: User, status: MemberStatus) -> JSON:
    """The ``ChatMember`` object for ``user`` with ``status`` in ``chat``."""
    data: JSON = {"user": user.to_json(), "status": status.value}
    if status is MemberStatus.KICKED:
        data["until_date"] = 0  # banned for ever
    elif status is MemberStatus.CREATOR:
        data["is_anonymous"] = False
    elif status is MemberStatus.ADMINISTRATOR:
        data["can_be_edited"] = False
        data["is_anonymous"] = False
        data.update(dict.fromkeys(_ADMIN_RIGHTS, True))
        if chat.type is ChatType.CHANNEL:
            data.update(can_post_messages=True, can_edit_messages=True)
        else:
            data["can_pin_messages"] = True
        if chat.is_forum:
            data["can_manage_topics"] = True
    return data


async def get_chat(ctx: MethodContext, p: Params) -> Any:
    """The ``ChatFullInfo`` of a chat the bot knows (with its latest pinned message)."""
    chat = ctx.state.chat(p.chat_id())
    pinned = ctx.state.message(chat, chat.pinned[-1]) if chat.pinned else None
    return {
        **chat.to_json(),
        **({"pinned_message": quoted(pinned)} if pinned is not None else {}),
        "accent_color_id": 0,
        "max_reaction_count": 11,
        "accepted_gift_types": {
            "unlimited_gifts": False,
            "limited_gifts": False,
            "unique_gifts": False,
            "premium_subscription": False,
            "gifts_from_channels": False,
        },
    }


async def get_chat_member(ctx: MethodContext, p: Params) -> Any:
    """A user's membership: creator, administrator, member or left."""
    chat = ctx.state.chat(p.chat_id())
    user = ctx.state.user(p.require_int("user_id"))
    if chat.type is ChatType.PRIVATE:
        if user.id not in (chat.id, ctx.state.bot.id):
            raise BotApiError(400, "Bad Request: user not found")
        return chat_member_json(chat, user, MemberStatus.MEMBER)
    return chat_member_json(chat, user, ctx.state.status(chat, user))


async def get_chat_administrators(ctx: MethodContext, p: Params) -> Any:
    """The creator and administrators of a group, supergroup or channel."""
    chat = ctx.state.chat(p.chat_id())
    if chat.type is ChatType.PRIVATE:
        raise BotApiError(400, "Bad Request: there are no administrators in the private chat")
    return [
        chat_member_json(chat, user, status)
        for user, status in ctx.state.members(chat)
        if status.is_admin
    ]


def _may_pin(ctx: MethodContext, chat: Chat) -> None:
    if chat.type is not ChatType.PRIVATE and not ctx.state.status(chat, ctx.state.bot).is_admin:
        raise BotApiError(400, _PIN_RIGHTS)


async def pin_chat_message(ctx: MethodContext, p: Params) -> Any:
    """Pin a message (the bot must be an admin outside private chats); groups get a notice."""
    chat, message = bot_message(ctx, p, action="pin")
    _may_pin(ctx, chat)
    message_id = message["message_id"]
    if message_id in chat.pinned:
        chat.pinned.remove(message_id)
    chat.pinned.append(message_id)
    if chat.is_group:
        build_message(ctx.state, chat, ctx.state.bot, extra={"pinned_message": quoted(message)})
    return True


async def unpin_chat_message(ctx: MethodContext, p: Params) -> Any:
    """Unpin ``message_id``, or without it the most recently pinned message."""
    chat = target_chat(ctx, p)
    _may_pin(ctx, chat)
    message_id = p.get_int("message_id")
    if message_id is None and chat.pinned:
        message_id = chat.pinned[-1]
    if message_id is None or message_id not in chat.pinned:
        raise BotApiError(400, "Bad Request: message to unpin not found")
    chat.pinned.remove(message_id)
    return True


async def create_forum_topic(ctx: MethodContext, p: Params) -> Any:
    """Open a topic in a forum where the bot is an admin; answers the ``ForumTopic``."""
    chat = target_chat(ctx, p)
    if not chat.is_forum:
        raise BotApiError(400, "Bad Request: the chat is not a forum")
    if not ctx.state.status(chat, ctx.state.bot).is_admin:
        raise BotApiError(400, "Bad Request: not enough rights to create a topic")
    name = (p.get_str("name") or "").strip()
    if not 1 <= len(name) <= 128:
        raise BotApiError(400, "Bad Request: topic name must be 1-128 characters long")
    color = p.get_int("icon_color", 7322096)
    if color not in TOPIC_ICON_COLORS:
        raise BotApiError(400, "Bad Request: invalid icon_color specified")
    topic = ctx.state.add_topic(chat, name, creator=ctx.state.bot)
    topic.icon_color = color
    return {"message_thread_id": topic.thread_id, "name": topic.name, "icon_color": color}

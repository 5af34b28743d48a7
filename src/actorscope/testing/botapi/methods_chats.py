"""Chat methods: getChat, getChatMember and getChatAdministrators."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from actorscope.errors import BotApiError
from actorscope.testing.botapi.models import Chat, ChatType, MemberStatus, User
from actorscope.testing.botapi.params import Params

if TYPE_CHECKING:
    from actorscope.testing.botapi.emulator import BotApiEmulator

__all__ = ["chat_member_json", "get_chat", "get_chat_administrators", "get_chat_member"]

JSON = dict[str, Any]

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
)


def chat_member_json(chat: Chat, user: User, status: MemberStatus) -> JSON:
    """The ``ChatMember`` object for ``user`` with ``status`` in ``chat``."""
    data: JSON = {"user": user.to_json(), "status": status.value}
    if status is MemberStatus.CREATOR:
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


async def get_chat(emu: BotApiEmulator, p: Params) -> Any:
    """The ``ChatFullInfo`` of a chat the bot knows."""
    chat = emu.state.chat(p.chat_id())
    return {
        **chat.to_json(),
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


async def get_chat_member(emu: BotApiEmulator, p: Params) -> Any:
    """A user's membership: creator, administrator, member or left."""
    chat = emu.state.chat(p.chat_id())
    user = emu.state.user(p.require_int("user_id"))
    if chat.type is ChatType.PRIVATE:
        if user.id not in (chat.id, emu.bot.id):
            raise BotApiError(400, "Bad Request: user not found")
        return chat_member_json(chat, user, MemberStatus.MEMBER)
    return chat_member_json(chat, user, emu.state.status(chat, user))


async def get_chat_administrators(emu: BotApiEmulator, p: Params) -> Any:
    """The creator and administrators of a group, supergroup or channel."""
    chat = emu.state.chat(p.chat_id())
    if chat.type is ChatType.PRIVATE:
        raise BotApiError(400, "Bad Request: there are no administrators in the private chat")
    return [
        chat_member_json(chat, user, status)
        for user, status in emu.state.members(chat)
        if status.is_admin
    ]

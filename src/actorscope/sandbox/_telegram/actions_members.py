"""Membership changes users make: joining and leaving groups, adding, removing and blocking the
bot, and opening the bot's deep links.

As on Telegram, a change of the bot's own status is a ``my_chat_member`` update; a change of
another member's status is a ``chat_member`` update, which only a bot that administers the chat
receives (and only when its ``allowed_updates`` ask for it). Groups also get the service
message (``new_chat_members``, ``left_chat_member``).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qs, urlsplit

from actorscope.sandbox._telegram.actions import UserActions
from actorscope.sandbox._telegram.errors import BotApiError
from actorscope.sandbox._telegram.methods_chats import chat_member_json
from actorscope.sandbox._telegram.models import Chat, ChatType, MemberStatus, User
from actorscope.sandbox._telegram.payloads import build_message
from actorscope.sandbox._telegram.state import ChatRef, UserRef

__all__ = ["MemberActions"]

JSON = dict[str, Any]
_PAYLOAD = re.compile(r"^[A-Za-z0-9_-]{0,64}$")


def _deep_link(url: str) -> tuple[str, str, str]:
    """``(bot username, "start" or "startgroup", payload)`` of a deep link to a bot."""
    parts = urlsplit(url.strip())
    query = parse_qs(parts.query, keep_blank_values=True)
    if parts.scheme in ("http", "https") and parts.hostname in ("t.me", "telegram.me"):
        bot_name = parts.path.strip("/")
    elif parts.scheme == "tg" and parts.netloc == "resolve":
        bot_name = query.get("domain", [""])[0]
    else:
        raise BotApiError(400, f"Bad Request: {url!r} is not a t.me or tg://resolve link")
    keys = [key for key in ("start", "startgroup") if key in query]
    if len(keys) != 1 or "/" in bot_name or not bot_name:
        raise BotApiError(400, f"Bad Request: {url!r} is no start or startgroup link to a bot")
    payload = query[keys[0]][0]
    if not _PAYLOAD.match(payload):
        raise BotApiError(400, "Bad Request: a start parameter is up to 64 of A-Z a-z 0-9 _ -")
    return bot_name, keys[0], payload


class MemberActions(UserActions):
    """Users join and leave groups, and add the bot to chats or remove it."""

    def member_joins(self, user: UserRef, chat: ChatRef) -> JSON | None:
        """``user`` joins a group: the service message (returned) and, for an admin bot, a
        ``chat_member`` update."""
        person = self.state.user(user)
        target = self.state.chat(chat)
        if not target.is_group:
            raise BotApiError(400, "Bad Request: users join groups and supergroups only")
        self._require_bot(target)
        old = self.state.status(target, person)
        if old.is_present:
            raise BotApiError(400, "Bad Request: USER_ALREADY_PARTICIPANT")
        if old is MemberStatus.KICKED:
            raise BotApiError(400, "Bad Request: USER_BANNED_IN_CHANNEL")
        self._status_change(target, person, person, MemberStatus.MEMBER)
        joined = person.to_json()
        message = build_message(
            self.state,
            target,
            person,
            extra={
                "new_chat_participant": joined,
                "new_chat_member": joined,
                "new_chat_members": [joined],
            },
        )
        return self.queue.push("message", message)

    def member_leaves(self, user: UserRef, chat: ChatRef) -> JSON | None:
        """``user`` leaves a group: the service message (returned) and, for an admin bot, a
        ``chat_member`` update."""
        person = self.state.user(user)
        target = self.state.chat(chat)
        if not target.is_group:
            raise BotApiError(400, "Bad Request: users leave groups and supergroups only")
        self._require_bot(target)
        if not self.state.status(target, person).is_present:
            raise BotApiError(400, "Bad Request: USER_NOT_PARTICIPANT")
        self._status_change(target, person, person, MemberStatus.LEFT)
        left = person.to_json()
        message = build_message(
            self.state,
            target,
            person,
            extra={"left_chat_participant": left, "left_chat_member": left},
        )
        return self.queue.push("message", message)

    def add_bot(self, user: UserRef, chat: ChatRef, *, admin: bool = False) -> JSON | None:
        """``user`` adds the bot to a group (as an admin when ``admin``) or, as its admin, to a
        channel (always as an admin): a ``my_chat_member`` update (returned) and, in groups,
        the ``new_chat_members`` service message."""
        person = self.state.user(user)
        target = self.state.chat(chat)
        if target.type is ChatType.PRIVATE:
            raise BotApiError(400, "Bad Request: the bot is added to groups and channels")
        bot = self.state.bot
        if self.state.status(target, bot).is_present:
            raise BotApiError(400, "Bad Request: USER_ALREADY_PARTICIPANT")
        by = self.state.status(target, person)
        channel = target.type is ChatType.CHANNEL
        if not by.is_present or ((admin or channel) and not by.is_admin):
            raise BotApiError(400, f"Bad Request: {person.display_name} can't add the bot here")
        status = MemberStatus.ADMINISTRATOR if admin or channel else MemberStatus.MEMBER
        update = self._status_change(target, bot, person, status)
        if target.is_group:
            joined = bot.to_json()
            message = build_message(
                self.state,
                target,
                person,
                extra={
                    "new_chat_participant": joined,
                    "new_chat_member": joined,
                    "new_chat_members": [joined],
                },
            )
            self.queue.push("message", message)
        return update

    def remove_bot(self, user: UserRef, chat: ChatRef) -> JSON | None:
        """An admin ``user`` removes the bot from a group or channel: a ``my_chat_member``
        update (in supergroups and channels the bot is banned, ``kicked``; in basic groups it has
        ``left``)."""
        person = self.state.user(user)
        target = self.state.chat(chat)
        if target.type is ChatType.PRIVATE:
            raise BotApiError(400, "Bad Request: users block the bot with block_bot()")
        if not self.state.status(target, self.state.bot).is_present:
            raise BotApiError(400, "Bad Request: USER_NOT_PARTICIPANT")
        if not self.state.status(target, person).is_admin:
            raise BotApiError(400, f"Bad Request: {person.display_name} is not an admin")
        status = MemberStatus.LEFT if target.type is ChatType.GROUP else MemberStatus.KICKED
        return self._status_change(target, self.state.bot, person, status)

    def block_bot(self, user: UserRef) -> JSON | None:
        """``user`` blocks the bot: a ``my_chat_member`` update in their private chat; from now
        on the bot's messages to them fail with ``Forbidden: bot was blocked by the user``."""
        person = self.state.user(user)
        chat = self.state.private_chat(person)
        if self.state.status(chat, self.state.bot) is MemberStatus.KICKED:
            raise BotApiError(400, f"Bad Request: {person.display_name} blocked the bot already")
        return self._status_change(chat, self.state.bot, person, MemberStatus.KICKED)

    def unblock_bot(self, user: UserRef) -> JSON | None:
        """``user`` unblocks the bot (a ``my_chat_member`` update in their private chat)."""
        person = self.state.user(user)
        chat = self.state.private_chat(person)
        if self.state.status(chat, self.state.bot) is not MemberStatus.KICKED:
            raise BotApiError(400, f"Bad Request: {person.display_name} has not blocked the bot")
        return self._status_change(chat, self.state.bot, person, MemberStatus.MEMBER)

    def open_link(self, user: UserRef, url: str, *, group: ChatRef | None = None) -> JSON | None:
        """``user`` opens a deep link to the bot (``https://t.me/<bot>?start=<payload>``, also
        ``telegram.me`` and ``tg://resolve?domain=<bot>&start=...``) and presses Start: the
        ``/start <payload>`` message in their private chat. A ``startgroup`` link asks for a
        ``group``: the bot is added there if it is not a member, then ``/start@<bot>
        <payload>`` is sent in the group. Returns the message's update."""
        person = self.state.user(user)
        bot_name, key, payload = _deep_link(url)
        if bot_name.lower() != (self.state.bot.username or "").lower():
            raise BotApiError(400, f"Bad Request: {url!r} is a link to @{bot_name}, not this bot")
        command = "/start" if not payload else f"/start {payload}"
        if key == "start":
            if group is not None:
                raise BotApiError(400, "Bad Request: a start link opens the private chat")
            return self.user_message(person, command)
        if group is None:
            raise BotApiError(400, "Bad Request: a startgroup link needs the group to add to")
        target = self.state.chat(group)
        if not target.is_group:
            raise BotApiError(400, "Bad Request: a startgroup link adds the bot to a group")
        if not self.state.status(target, self.state.bot).is_present:
            self.add_bot(person, target)
        at_bot = f"/start@{self.state.bot.username}"
        return self.user_message(person, at_bot if not payload else f"{at_bot} {payload}", target)

    def _status_change(self, chat: Chat, member: User, by: User, new: MemberStatus) -> JSON | None:
        """Set ``member``'s status; queue the ``my_chat_member`` / ``chat_member`` update."""
        old = self.state.status(chat, member)
        bot = self.state.bot
        # The bot learns of others' changes only where it is an admin (before or after).
        sees = member.id == bot.id or self.state.status(chat, bot).is_admin
        self.state.set_member(chat, member, new)
        if not sees:
            return None
        kind = "my_chat_member" if member.id == bot.id else "chat_member"
        return self.queue.push(
            kind,
            {
                "chat": chat.to_json(),
                "from": by.to_json(),
                "date": self.state.now(),
                "old_chat_member": chat_member_json(chat, member, old),
                "new_chat_member": chat_member_json(chat, member, new),
            },
        )

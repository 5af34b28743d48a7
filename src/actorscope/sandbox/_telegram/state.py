"""The emulator's world: users, chats, memberships and the messages of every chat.

Lookups that fail raise :class:`~actorscope.errors.BotApiError` with the description the
Bot API gives for the same mistake, so method handlers can pass them straight back.
"""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Callable, Iterator
from typing import Any

from actorscope.sandbox._telegram.errors import BotApiError
from actorscope.sandbox._telegram.models import (
    GENERAL_TOPIC_ID,
    Chat,
    ChatType,
    ForumTopic,
    MemberStatus,
    User,
)

__all__ = ["BotApiState", "ChatRef", "UserRef"]

JSON = dict[str, Any]
UserRef = User | int | str
ChatRef = Chat | int | str

_USERNAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{2,31}$")
# Private chat ids are user ids; group ids are small negatives; supergroup and channel ids
# carry the -100 prefix, as on Telegram.
_FIRST_USER_ID = 700_000_001
_FIRST_GROUP_ID = 4_100_000_001
_FIRST_SUPERGROUP_ID = 1_002_000_000_001


def _chat_not_found() -> BotApiError:
    return BotApiError(400, "Bad Request: chat not found")


class BotApiState:
    """Users, chats, members and messages; ids are allocated here."""

    def __init__(self, bot: User, *, clock: Callable[[], float] = time.time) -> None:
        self.bot = bot
        self._clock = clock
        self._users: dict[int, User] = {bot.id: bot}
        self._chats: dict[int, Chat] = {}
        self._members: dict[int, dict[int, MemberStatus]] = {}
        self._messages: dict[int, dict[int, JSON]] = {}
        self._next_message_id: dict[int, int] = {}
        self._user_ids = itertools.count(_FIRST_USER_ID)
        self._group_ids = itertools.count(_FIRST_GROUP_ID)
        self._supergroup_ids = itertools.count(_FIRST_SUPERGROUP_ID)

    def now(self) -> int:
        """The current Unix time in whole seconds (the Bot API's ``date``)."""
        return int(self._clock())

    # -- users ---------------------------------------------------------------------------

    def add_user(
        self,
        first_name: str,
        *,
        username: str | None = None,
        last_name: str | None = None,
        user_id: int | None = None,
        is_bot: bool = False,
    ) -> User:
        """Create a user; ``username`` must be unique and a valid Telegram username."""
        if username is not None:
            if not _USERNAME.match(username):
                raise BotApiError(400, f"Bad Request: invalid username {username!r}")
            if self.find_user(username) is not None:
                raise BotApiError(400, f"Bad Request: username @{username} is taken")
        uid = next(self._user_ids) if user_id is None else user_id
        if uid in self._users:
            raise BotApiError(400, f"Bad Request: user id {uid} is taken")
        user = User(uid, first_name, username=username, last_name=last_name, is_bot=is_bot)
        self._users[uid] = user
        return user

    def find_user(self, ref: UserRef) -> User | None:
        """The user with that id or ``@username`` (the ``@`` is optional), or ``None``."""
        if isinstance(ref, User):
            return self._users.get(ref.id)
        if isinstance(ref, int):
            return self._users.get(ref)
        name = ref.removeprefix("@").lower()
        if name.lstrip("-").isdigit():
            return self._users.get(int(name))
        return next((u for u in self._users.values() if (u.username or "").lower() == name), None)

    def user(self, ref: UserRef) -> User:
        """The user with that id or username; ``Bad Request: user not found`` otherwise."""
        found = self.find_user(ref)
        if found is None:
            raise BotApiError(400, "Bad Request: user not found")
        return found

    def users(self) -> list[User]:
        """Every user except the bot itself, in creation order."""
        return [u for u in self._users.values() if u.id != self.bot.id]

    # -- chats ---------------------------------------------------------------------------

    def add_chat(
        self,
        chat_type: ChatType | str,
        *,
        title: str | None = None,
        username: str | None = None,
        is_forum: bool = False,
        chat_id: int | None = None,
        bot_status: MemberStatus | str = MemberStatus.MEMBER,
    ) -> Chat:
        """Create a group, supergroup (``is_forum`` for topics) or channel with the bot in it."""
        kind = ChatType(chat_type)
        if kind is ChatType.PRIVATE:
            raise BotApiError(400, "Bad Request: private chats are created by private_chat()")
        if is_forum and kind is not ChatType.SUPERGROUP:
            raise BotApiError(400, "Bad Request: only supergroups can be forums")
        if username is not None:
            if not _USERNAME.match(username):
                raise BotApiError(400, f"Bad Request: invalid username {username!r}")
            if self.find_chat(username) is not None:
                raise BotApiError(400, f"Bad Request: username @{username} is taken")
        if chat_id is None:
            counter = self._group_ids if kind is ChatType.GROUP else self._supergroup_ids
            chat_id = -next(counter)
        if chat_id in self._chats:
            raise BotApiError(400, f"Bad Request: chat id {chat_id} is taken")
        chat = Chat(chat_id, kind, title=title or username or str(chat_id), username=username)
        self._register(chat)
        if is_forum:
            chat.is_forum = True
            chat.topics[GENERAL_TOPIC_ID] = ForumTopic(GENERAL_TOPIC_ID, "General")
            self._next_message_id[chat.id] = GENERAL_TOPIC_ID + 1
        self.set_member(chat, self.bot, bot_status)
        return chat

    def private_chat(self, user: UserRef) -> Chat:
        """The private chat between ``user`` and the bot, created on first use."""
        person = self.user(user)
        chat = self._chats.get(person.id)
        if chat is None:
            chat = Chat(
                person.id,
                ChatType.PRIVATE,
                username=person.username,
                first_name=person.first_name,
                last_name=person.last_name,
            )
            self._register(chat)
            self._members[chat.id] = {person.id: MemberStatus.MEMBER}
            self._members[chat.id][self.bot.id] = MemberStatus.MEMBER
        return chat

    def _register(self, chat: Chat) -> None:
        self._chats[chat.id] = chat
        self._members[chat.id] = {}
        self._messages[chat.id] = {}
        self._next_message_id[chat.id] = 1

    def find_chat(self, ref: ChatRef) -> Chat | None:
        """The chat with that id or ``@username``, or ``None``."""
        if isinstance(ref, Chat):
            return self._chats.get(ref.id)
        if isinstance(ref, int):
            return self._chats.get(ref)
        text = ref.strip()
        if text.lstrip("-").isdigit():
            return self._chats.get(int(text))
        name = text.removeprefix("@").lower()
        # As on Telegram, "@username" names public groups and channels, never a private chat.
        return next(
            (
                c
                for c in self._chats.values()
                if c.type is not ChatType.PRIVATE and (c.username or "").lower() == name
            ),
            None,
        )

    def chat(self, ref: ChatRef) -> Chat:
        """The chat with that id or username; ``Bad Request: chat not found`` otherwise."""
        found = self.find_chat(ref)
        if found is None:
            raise _chat_not_found()
        return found

    def chats(self) -> list[Chat]:
        """Every chat, in creation order."""
        return list(self._chats.values())

    def add_topic(
        self,
        chat: ChatRef,
        name: str,
        *,
        thread_id: int | None = None,
        creator: UserRef | None = None,
    ) -> ForumTopic:
        """Open a forum topic; its thread id is the id of its (service) creation message.

        The creator defaults to the chat's first human admin: messages in a topic reply to the
        creation message, and a bot-created topic would make every one look like a reply to
        the bot.
        """
        forum = self.chat(chat)
        if not forum.is_forum:
            raise BotApiError(400, "Bad Request: the chat is not a forum")
        tid = self.next_message_id(forum) if thread_id is None else thread_id
        if tid in forum.topics or tid in self._messages[forum.id]:
            raise BotApiError(400, f"Bad Request: thread id {tid} is taken")
        self._next_message_id[forum.id] = max(self._next_message_id[forum.id], tid + 1)
        author = self.user(creator) if creator is not None else self._first_admin(forum)
        topic = ForumTopic(tid, name, created_date=self.now(), creator=author)
        forum.topics[tid] = topic
        return topic

    def _first_admin(self, chat: Chat) -> User:
        for user, status in self.members(chat):
            if status.is_admin and not user.is_bot:
                return user
        return self.bot

    def topic(self, chat: Chat, ref: int | str) -> ForumTopic:
        """A topic of ``chat`` by thread id or (case-insensitive) name."""
        if isinstance(ref, int) or ref.isdigit():
            found = chat.topics.get(int(ref))
        else:
            found = next((t for t in chat.topics.values() if t.name.lower() == ref.lower()), None)
        if found is None:
            raise BotApiError(400, "Bad Request: message thread not found")
        return found

    # -- members -------------------------------------------------------------------------

    def set_member(self, chat: ChatRef, user: UserRef, status: MemberStatus | str) -> None:
        """Set ``user``'s status in a group, supergroup or channel (in a private chat only the
        bot's: ``kicked`` when the user blocked it, else ``member``)."""
        target = self.chat(chat)
        member = self.user(user)
        wanted = MemberStatus(status)
        if target.type is ChatType.PRIVATE and (
            member.id != self.bot.id or wanted not in (MemberStatus.MEMBER, MemberStatus.KICKED)
        ):
            raise BotApiError(400, "Bad Request: can't change members of a private chat")
        self._members[target.id][member.id] = wanted

    def status(self, chat: ChatRef, user: UserRef) -> MemberStatus:
        """``user``'s status in ``chat`` (``left`` when never a member)."""
        return self._members[self.chat(chat).id].get(self.user(user).id, MemberStatus.LEFT)

    def members(self, chat: ChatRef) -> Iterator[tuple[User, MemberStatus]]:
        """Every user with a status in ``chat`` (including ``left``), in join order."""
        for uid, status in self._members[self.chat(chat).id].items():
            yield self._users[uid], status

    # -- messages ------------------------------------------------------------------------

    def next_message_id(self, chat: Chat) -> int:
        """Allocate the next message id of ``chat``."""
        mid = self._next_message_id[chat.id]
        self._next_message_id[chat.id] = mid + 1
        return mid

    def store_message(self, message: JSON) -> JSON:
        """Keep ``message`` so replies, edits and clicks can refer to it."""
        self._messages[message["chat"]["id"]][message["message_id"]] = message
        return message

    def delete_message(self, chat: ChatRef, message_id: int) -> None:
        """Forget a stored message (its id is never reused)."""
        self._messages[self.chat(chat).id].pop(message_id, None)

    def message(self, chat: ChatRef, message_id: int) -> JSON | None:
        """A stored message, or ``None``."""
        return self._messages[self.chat(chat).id].get(message_id)

    def messages(self, chat: ChatRef) -> list[JSON]:
        """Every stored message of ``chat`` in id order."""
        stored = self._messages[self.chat(chat).id]
        return [stored[mid] for mid in sorted(stored)]

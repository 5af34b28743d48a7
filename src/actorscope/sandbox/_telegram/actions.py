"""What users do, turned into the ``Update`` JSON the Bot API would deliver to the bot.

Each helper changes the emulator's state (new message, new member, open callback query) and
queues the update; it returns the update, or ``None`` when the bot's ``allowed_updates``
filters it out. A user writing in a group they are not in joins it silently first.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from actorscope.errors import BotApiError
from actorscope.sandbox._telegram.context import MethodContext
from actorscope.sandbox._telegram.models import (
    Chat,
    ChatType,
    ForumTopic,
    MemberStatus,
    User,
    anonymous_admin_user,
    channel_bot_user,
    service_user,
)
from actorscope.sandbox._telegram.payloads import build_message, resolve_thread
from actorscope.sandbox._telegram.state import BotApiState, ChatRef, UserRef
from actorscope.sandbox._telegram.updates import UpdateQueue

__all__ = ["UserActions"]

JSON = dict[str, Any]
TopicRef = int | str


class UserActions:
    """Mixin for :class:`~actorscope.sandbox._telegram.emulator.BotApiEmulator`: user actions."""

    state: BotApiState
    queue: UpdateQueue
    context: MethodContext
    _query_ids: Iterator[int]

    def user_message(
        self,
        user: UserRef,
        text: str,
        chat: ChatRef | None = None,
        *,
        topic: TopicRef | None = None,
        reply_to: int | None = None,
    ) -> JSON | None:
        """``user`` writes ``text`` in ``chat`` (default: their private chat with the bot)."""
        person = self.state.user(user)
        target = self.state.private_chat(person) if chat is None else self.state.chat(chat)
        if target.type is ChatType.CHANNEL:
            raise BotApiError(400, "Bad Request: users post in channels with channel_post()")
        joins = target.is_group and not self.state.status(target, person).is_present
        message = self._compose(target, person, text, topic=topic, reply_to=reply_to)
        if joins:
            self.state.set_member(target, person, MemberStatus.MEMBER)
        if not self._bot_sees(target, message):
            return None
        return self.queue.push("message", message)

    def anonymous_admin_message(
        self,
        chat: ChatRef,
        text: str,
        *,
        topic: TopicRef | None = None,
        reply_to: int | None = None,
        signature: str | None = None,
    ) -> JSON | None:
        """An anonymous admin writes: ``from`` is GroupAnonymousBot, ``sender_chat`` the group."""
        target = self.state.chat(chat)
        if not target.is_group:
            raise BotApiError(400, "Bad Request: anonymous admins write only in groups")
        extra = {"author_signature": signature} if signature else None
        message = self._compose(
            target,
            anonymous_admin_user(),
            text,
            topic=topic,
            reply_to=reply_to,
            sender_chat=target,
            extra=extra,
        )
        return self.queue.push("message", message)

    def message_as_channel(
        self,
        channel: ChatRef,
        chat: ChatRef,
        text: str,
        *,
        topic: TopicRef | None = None,
        reply_to: int | None = None,
    ) -> JSON | None:
        """A user writes in a group as ``channel``: ``from`` is Channel_Bot (136817688)."""
        source = self.state.chat(channel)
        if source.type is not ChatType.CHANNEL:
            raise BotApiError(400, "Bad Request: users write as a channel, not as a group")
        target = self.state.chat(chat)
        if not target.is_group:
            raise BotApiError(400, "Bad Request: writing as a channel happens in groups")
        message = self._compose(
            target,
            channel_bot_user(),
            text,
            topic=topic,
            reply_to=reply_to,
            sender_chat=source,
        )
        return self.queue.push("message", message)

    def automatic_forward(self, channel: ChatRef, message_id: int, chat: ChatRef) -> JSON | None:
        """A channel post copied into its linked discussion group by Telegram (777000)."""
        source = self.state.chat(channel)
        post = self.state.message(source, message_id)
        if post is None:
            raise BotApiError(400, f"Bad Request: channel post {message_id} not found")
        target = self.state.chat(chat)
        if target.type is not ChatType.SUPERGROUP:
            raise BotApiError(400, "Bad Request: discussion groups are supergroups")
        self._require_bot(target)
        origin = {
            "type": "channel",
            "chat": source.to_json(),
            "message_id": message_id,
            "date": post["date"],
        }
        message = build_message(
            self.state,
            target,
            service_user(),
            text=post.get("text"),
            sender_chat=source,
            extra={"forward_origin": origin, "is_automatic_forward": True},
        )
        return self.queue.push("message", message)

    def channel_post(
        self, chat: ChatRef, text: str, *, signature: str | None = None
    ) -> JSON | None:
        """A post in a channel: ``sender_chat`` is the channel and there is no ``from``."""
        target = self.state.chat(chat)
        if target.type is not ChatType.CHANNEL:
            raise BotApiError(400, "Bad Request: channel posts need a channel")
        self._require_bot(target)
        extra = {"author_signature": signature} if signature else None
        message = build_message(
            self.state, target, None, text=text, sender_chat=target, extra=extra
        )
        return self.queue.push("channel_post", message)

    def callback_click(
        self,
        user: UserRef,
        chat: ChatRef,
        message_id: int | None = None,
        data: str | None = None,
    ) -> JSON | None:
        """``user`` clicks the inline button ``data`` (default: the first) of the bot's message
        ``message_id`` (default: its latest message in ``chat`` that has that button)."""
        person = self.state.user(user)
        target = self.state.chat(chat)
        message = (
            self._latest_with_button(target, data)
            if message_id is None
            else self.state.message(target, message_id)
        )
        if message is None:
            raise BotApiError(400, f"Bad Request: message {message_id} not found")
        choices = _callback_data(message)
        if not choices:
            raise BotApiError(
                400, f"Bad Request: message {message['message_id']} has no callback buttons"
            )
        if data is None:
            data = choices[0]
        elif data not in choices:
            raise BotApiError(400, f"Bad Request: no button with callback data {data!r}")
        query_id = str(next(self._query_ids))
        self.context.outbox.callback_answers[query_id] = None
        query: JSON = {
            "id": query_id,
            "from": person.to_json(),
            "message": message,
            "chat_instance": str(abs(target.id) * 7919 % 10**19),
            "data": data,
        }
        return self.queue.push("callback_query", query)

    def _latest_with_button(self, chat: Chat, data: str | None) -> JSON:
        """The bot's latest message in ``chat`` with the callback button ``data`` (any)."""
        for message in reversed(self.state.messages(chat)):
            sender = message.get("from", {}).get("id")
            choices = _callback_data(message)
            if sender == self.state.bot.id and choices and (data is None or data in choices):
                return message
        button = "a button" if data is None else f"a button with callback data {data!r}"
        raise BotApiError(400, f"Bad Request: no message of the bot in this chat has {button}")

    def inline_query(self, user: UserRef, query: str, *, offset: str = "") -> JSON | None:
        """``user`` types ``@bot query`` in a chat: an ``inline_query`` to answer once."""
        person = self.state.user(user)
        if len(query) > 256:
            raise BotApiError(400, "Bad Request: an inline query is at most 256 characters")
        query_id = str(next(self._query_ids))
        self.context.outbox.inline_answers[query_id] = None
        update: JSON = {"id": query_id, "from": person.to_json(), "query": query, "offset": offset}
        return self.queue.push("inline_query", update)

    def member_joins(self, user: UserRef, chat: ChatRef) -> JSON | None:
        """``user`` joins a group: a ``chat_member`` update and the service message."""
        person = self.state.user(user)
        target = self.state.chat(chat)
        if not target.is_group:
            raise BotApiError(400, "Bad Request: users join groups and supergroups only")
        self._require_bot(target)
        old = self.state.status(target, person)
        if old.is_present:
            raise BotApiError(400, "Bad Request: USER_ALREADY_PARTICIPANT")
        self.state.set_member(target, person, MemberStatus.MEMBER)
        self.queue.push(
            "chat_member",
            {
                "chat": target.to_json(),
                "from": person.to_json(),
                "date": self.state.now(),
                "old_chat_member": {"user": person.to_json(), "status": old.value},
                "new_chat_member": {"user": person.to_json(), "status": "member"},
            },
        )
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

    def _compose(
        self,
        chat: Chat,
        sender: User,
        text: str,
        *,
        topic: TopicRef | None,
        reply_to: int | None,
        sender_chat: Chat | None = None,
        extra: JSON | None = None,
    ) -> JSON:
        self._require_bot(chat)
        if not text:
            raise BotApiError(400, "Bad Request: message text is empty")
        replied = None
        if reply_to is not None:
            replied = self.state.message(chat, reply_to)
            if replied is None:
                raise BotApiError(400, "Bad Request: message to be replied not found")
        thread_id = None if topic is None else self._topic(chat, topic).thread_id
        resolved = resolve_thread(self.state, chat, thread_id, replied)
        return build_message(
            self.state,
            chat,
            sender,
            text=text,
            sender_chat=sender_chat,
            topic=resolved,
            reply_to=replied,
            extra=extra,
        )

    def _bot_sees(self, chat: Chat, message: JSON) -> bool:
        """Privacy mode: in groups a non-admin bot sees commands and replies to itself only."""
        if not self.context.privacy_mode or not chat.is_group:
            return True
        if self.state.status(chat, self.state.bot).is_admin:
            return True
        if message.get("text", "").startswith("/"):
            return True
        replied = message.get("reply_to_message")
        if replied is None or replied.get("forum_topic_created"):
            return False
        return (chat.id, replied["message_id"]) in self.context.outbox.messages

    def _topic(self, chat: Chat, topic: TopicRef) -> ForumTopic:
        if not chat.is_forum:
            raise BotApiError(400, f"Bad Request: {chat.label} is not a forum")
        return self.state.topic(chat, topic)

    def _require_bot(self, chat: Chat) -> None:
        bot_status = self.state.status(chat, self.state.bot)
        if chat.type is not ChatType.PRIVATE and not bot_status.is_present:
            raise BotApiError(403, f"Forbidden: the bot is not a member of {chat.label}")


def _callback_data(message: JSON) -> list[str]:
    """The callback data of a message's inline buttons, in order."""
    rows = message.get("reply_markup", {}).get("inline_keyboard", [])
    return [str(b["callback_data"]) for row in rows for b in row if "callback_data" in b]

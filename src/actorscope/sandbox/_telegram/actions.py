"""What users do, turned into the ``Update`` JSON the Bot API would deliver to the bot.

Each helper changes the emulator's state (new message, new member, open callback query) and
queues the update; it returns the update, or ``None`` when the bot's ``allowed_updates``
filters it out. A user writing in a group they are not in joins it silently first.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from actorscope.sandbox._telegram.context import MethodContext
from actorscope.sandbox._telegram.entities import parse_entities
from actorscope.sandbox._telegram.errors import BotApiError
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
# What a message a person wrote carries; a message with none of these is a service message.
_CONTENT = frozenset(
    {"text", "photo", "document", "location", "poll", "caption", "sticker", "video", "voice"}
)


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
        if not text:
            raise BotApiError(400, "Bad Request: message text is empty")
        return self._user_posts(user, chat, {"text": text}, topic=topic, reply_to=reply_to)

    def _user_posts(
        self,
        user: UserRef,
        chat: ChatRef | None,
        content: JSON,
        *,
        topic: TopicRef | None = None,
        reply_to: int | None = None,
    ) -> JSON | None:
        """``user`` posts a message with ``content`` (``text``, or media and a caption)."""
        target, message = self._user_message(user, chat, content, topic=topic, reply_to=reply_to)
        return self._deliver(target, message)

    def _user_message(
        self,
        user: UserRef,
        chat: ChatRef | None,
        content: JSON,
        *,
        topic: TopicRef | None = None,
        reply_to: int | None = None,
    ) -> tuple[Chat, JSON]:
        """The stored message ``user`` posts (a group they are not in is joined silently)."""
        person = self.state.user(user)
        target = self.state.private_chat(person) if chat is None else self.state.chat(chat)
        if target.type is ChatType.CHANNEL:
            raise BotApiError(400, "Bad Request: users post in channels with channel_post()")
        if (
            target.type is ChatType.PRIVATE
            and self.state.status(target, self.state.bot) is MemberStatus.KICKED
        ):
            raise BotApiError(400, f"Bad Request: {person.display_name} blocked the bot")
        status = self.state.status(target, person) if target.is_group else MemberStatus.MEMBER
        if status is MemberStatus.KICKED:
            raise BotApiError(400, f"Bad Request: {person.display_name} is banned there")
        joins = not status.is_present
        text = content.get("text")
        rest = {k: v for k, v in content.items() if k != "text"}
        message = self._compose(
            target, person, text, topic=topic, reply_to=reply_to, extra=rest or None
        )
        if joins:
            self.state.set_member(target, person, MemberStatus.MEMBER)
        return target, message

    def _deliver(self, chat: Chat, message: JSON) -> JSON | None:
        """Queue a user's ``message`` unless privacy mode hides it from the bot."""
        if not self._bot_sees(chat, message):
            return None
        return self.queue.push("message", message)

    def user_edit(self, user: UserRef, chat: ChatRef, message_id: int, text: str) -> JSON | None:
        """``user`` edits their message ``message_id`` in ``chat``: an ``edited_message``."""
        person = self.state.user(user)
        target = self.state.chat(chat)
        message = self.state.message(target, message_id)
        if message is None:
            raise BotApiError(400, "Bad Request: message to edit not found")
        if message.get("from", {}).get("id") != person.id or "sender_chat" in message:
            raise BotApiError(400, "Bad Request: message can't be edited")
        if not text:
            raise BotApiError(400, "Bad Request: message text is empty")
        edited: JSON = {key: value for key, value in message.items() if key != "entities"}
        edited["text"] = text
        found = parse_entities(text)
        if found:
            edited["entities"] = found
        edited["edit_date"] = self.state.now()
        self.state.store_message(edited)
        if not self._bot_sees(target, edited):
            return None
        return self.queue.push("edited_message", edited)

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
        *,
        button: str | None = None,
    ) -> JSON | None:
        """``user`` clicks an inline button of the bot's message ``message_id`` (default: its
        latest message in ``chat`` that has that button): the one with callback ``data``, or
        the one labelled ``button`` (default: the first)."""
        person = self.state.user(user)
        target = self.state.chat(chat)
        message = (
            self._latest_with_button(target, data, button)
            if message_id is None
            else self.state.message(target, message_id)
        )
        if message is None:
            raise BotApiError(400, f"Bad Request: message {message_id} not found")
        buttons = _callback_buttons(message)
        if not buttons:
            raise BotApiError(
                400, f"Bad Request: message {message['message_id']} has no callback buttons"
            )
        if button is not None:
            labelled = [str(b["callback_data"]) for b in buttons if b["text"] == button]
            if not labelled or data not in (None, labelled[0]):
                shown = ", ".join(repr(b["text"]) for b in buttons)
                raise BotApiError(400, f"Bad Request: no button {button!r} (buttons: {shown})")
            data = labelled[0]
        choices = [str(b["callback_data"]) for b in buttons]
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

    def _latest_with_button(self, chat: Chat, data: str | None, label: str | None) -> JSON:
        """The bot's latest message in ``chat`` with the callback button ``data`` or ``label``
        (any when neither is given)."""
        for message in reversed(self.state.messages(chat)):
            sender = message.get("from", {}).get("id")
            buttons = _callback_buttons(message)
            if sender == self.state.bot.id and any(
                data in (None, str(b["callback_data"])) and label in (None, b["text"])
                for b in buttons
            ):
                return message
        button = "a button" if data is None else f"a button with callback data {data!r}"
        if label is not None:
            button = f"a button {label!r}"
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

    def _compose(
        self,
        chat: Chat,
        sender: User,
        text: str | None,
        *,
        topic: TopicRef | None,
        reply_to: int | None,
        sender_chat: Chat | None = None,
        extra: JSON | None = None,
    ) -> JSON:
        self._require_bot(chat)
        if text is not None and not text:
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
        said = message.get("text") or message.get("caption") or ""
        if said.startswith("/") or not any(key in message for key in _CONTENT):
            return True  # commands, and service messages (joins, payments, web app data)
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


def _callback_buttons(message: JSON) -> list[JSON]:
    """A message's inline buttons that carry callback data, in order."""
    rows = message.get("reply_markup", {}).get("inline_keyboard", [])
    return [b for row in rows for b in row if "callback_data" in b]

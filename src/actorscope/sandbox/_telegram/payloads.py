"""Build ``Message`` JSON the way the Bot API shapes it: threads, replies, senders, entities.

Thread rules follow Telegram: in a forum, a message in a topic other than General carries
``message_thread_id`` and ``is_topic_message`` and, when it replies to nothing else, replies to
the topic's creation message; General messages carry neither. In a plain supergroup a reply
carries the thread id of its reply chain, without ``is_topic_message``.
"""

from __future__ import annotations

from typing import Any

from actorscope.sandbox._telegram.entities import parse_entities
from actorscope.sandbox._telegram.errors import BotApiError
from actorscope.sandbox._telegram.models import GENERAL_TOPIC_ID, Chat, ChatType, ForumTopic, User
from actorscope.sandbox._telegram.state import BotApiState

__all__ = ["build_message", "quoted", "resolve_thread", "topic_created_message"]

JSON = dict[str, Any]


def topic_created_message(state: BotApiState, chat: Chat, topic: ForumTopic) -> JSON:
    """The service message that opened ``topic`` (its id is the topic's thread id)."""
    creator = topic.creator or state.bot
    return {
        "message_id": topic.thread_id,
        "from": creator.to_json(),
        "date": topic.created_date,
        "chat": chat.to_json(),
        "message_thread_id": topic.thread_id,
        "forum_topic_created": {"name": topic.name, "icon_color": topic.icon_color},
        "is_topic_message": True,
    }


def quoted(message: JSON) -> JSON:
    """``message`` as it appears inside ``reply_to_message`` (one level deep only)."""
    return {k: v for k, v in message.items() if k != "reply_to_message"}


def resolve_thread(
    state: BotApiState, chat: Chat, thread_id: int | None, reply_to: JSON | None
) -> ForumTopic | None:
    """The forum topic a new message goes to (``None``: General, or not a forum)."""
    if not chat.is_forum:
        if thread_id is not None and state.message(chat, thread_id) is None:
            raise BotApiError(400, "Bad Request: message thread not found")
        return None
    if thread_id is None and reply_to is not None and reply_to.get("is_topic_message"):
        thread_id = reply_to.get("message_thread_id")
    if thread_id is None or thread_id == GENERAL_TOPIC_ID:
        return None
    topic = state.topic(chat, thread_id)
    if reply_to is not None and topic.thread_id not in (
        reply_to.get("message_thread_id"),
        reply_to["message_id"],
    ):
        raise BotApiError(400, "Bad Request: message to be replied not found")
    return topic


def build_message(
    state: BotApiState,
    chat: Chat,
    sender: User | None,
    *,
    text: str | None = None,
    sender_chat: Chat | None = None,
    topic: ForumTopic | None = None,
    reply_to: JSON | None = None,
    entities: list[JSON] | None = None,
    extra: JSON | None = None,
) -> JSON:
    """A new message in ``chat``, stored in the state and returned as Bot API JSON."""
    message: JSON = {"message_id": state.next_message_id(chat)}
    if sender is not None:
        message["from"] = sender.to_json()
    if sender_chat is not None:
        message["sender_chat"] = sender_chat.to_json()
    message["date"] = state.now()
    message["chat"] = chat.to_json()
    if topic is not None:
        message["message_thread_id"] = topic.thread_id
        message["is_topic_message"] = True
        if reply_to is None:
            reply_to = topic_created_message(state, chat, topic)
    elif reply_to is not None and chat.type is ChatType.SUPERGROUP and not chat.is_forum:
        message["message_thread_id"] = reply_to.get("message_thread_id", reply_to["message_id"])
    if reply_to is not None:
        message["reply_to_message"] = quoted(reply_to)
    if text is not None:
        message["text"] = text
        found = parse_entities(text) if entities is None else entities
        if found:
            message["entities"] = found
    message.update(extra or {})
    return state.store_message(message)

"""Media and chat-action methods: sendPhoto, sendDocument, getFile, sendPoll, stopPoll,
sendChatAction."""

from __future__ import annotations

from typing import Any

from actorscope.sandbox._telegram.context import MethodContext
from actorscope.sandbox._telegram.errors import BotApiError
from actorscope.sandbox._telegram.files import MAX_DOWNLOAD_SIZE, image_size
from actorscope.sandbox._telegram.methods_messages import (
    bot_message,
    caption,
    inline_markup,
    post,
    target_chat,
)
from actorscope.sandbox._telegram.models import ChatType
from actorscope.sandbox._telegram.params import Params

__all__ = [
    "CHAT_ACTIONS",
    "get_file",
    "send_chat_action",
    "send_document",
    "send_photo",
    "send_poll",
    "stop_poll",
]

JSON = dict[str, Any]

#: The ``action`` values ``sendChatAction`` accepts.
CHAT_ACTIONS = frozenset(
    {
        "typing",
        "upload_photo",
        "record_video",
        "upload_video",
        "record_voice",
        "upload_voice",
        "upload_document",
        "choose_sticker",
        "find_location",
        "record_video_note",
        "upload_video_note",
    }
)
_MAX_POLL_OPTIONS = 12
_POLL_TYPES = frozenset({"regular", "quiz"})


async def send_chat_action(ctx: MethodContext, p: Params) -> Any:
    """Show "typing…" (or another action) in a chat; the call log keeps it for assertions."""
    chat = target_chat(ctx, p)
    if p.get_str("action") not in CHAT_ACTIONS:
        raise BotApiError(400, "Bad Request: wrong parameter action in request")
    thread = p.get_int("message_thread_id")
    if thread is not None and chat.is_forum:
        ctx.state.topic(chat, thread)
    return True


async def send_photo(ctx: MethodContext, p: Params) -> Any:
    """Post a photo (an upload or the ``file_id`` of one sent before), with a caption."""
    chat = target_chat(ctx, p)
    stored = ctx.files.resolve(p.get_file("photo"), "photos")
    width, height = image_size(stored.content)
    size = {
        "file_id": stored.file_id,
        "file_unique_id": stored.file_unique_id,
        "file_size": len(stored.content),
        "width": width,
        "height": height,
    }
    return post(ctx, p, {"photo": [size], **caption(ctx, p)}, chat=chat)


async def send_document(ctx: MethodContext, p: Params) -> Any:
    """Post a document (an upload or a ``file_id``), with a caption."""
    chat = target_chat(ctx, p)
    stored = ctx.files.resolve(p.get_file("document"), "documents")
    document: JSON = {"file_id": stored.file_id, "file_unique_id": stored.file_unique_id}
    if stored.file_name:
        document["file_name"] = stored.file_name
    if stored.mime_type:
        document["mime_type"] = stored.mime_type
    document["file_size"] = len(stored.content)
    return post(ctx, p, {"document": document, **caption(ctx, p)}, chat=chat)


async def get_file(ctx: MethodContext, p: Params) -> Any:
    """The ``File`` of a ``file_id``: its ``file_path`` under ``/file/bot<token>/``."""
    stored = ctx.files.get(p.require_str("file_id"))
    if len(stored.content) > MAX_DOWNLOAD_SIZE:
        raise BotApiError(400, "Bad Request: file is too big")
    return stored.file_json()


def _poll_options(p: Params) -> list[JSON]:
    options = p.get_array("options", required=True) or []
    texts = [o.get("text") if isinstance(o, dict) else o for o in options]
    if len(texts) < 2:
        raise BotApiError(400, "Bad Request: poll must have at least 2 option")
    if len(texts) > _MAX_POLL_OPTIONS:
        raise BotApiError(400, f"Bad Request: poll can't have more than {_MAX_POLL_OPTIONS} option")
    if not all(isinstance(t, str) and 1 <= len(t.strip()) <= 100 for t in texts):
        raise BotApiError(400, "Bad Request: poll options length must not exceed 100")
    return [
        {"persistent_id": str(index), "text": text, "voter_count": 0}
        for index, text in enumerate(texts)
    ]


def _correct_options(p: Params, count: int) -> list[int]:
    """A quiz's right answers: ``correct_option_ids``, or the older ``correct_option_id``."""
    given = p.get_array("correct_option_ids")
    if given is None:
        single = p.get_int("correct_option_id")
        given = [] if single is None else [single]
    valid = all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i < count for i in given)
    if not given or not valid or len(set(given)) != len(given):
        raise BotApiError(400, "Bad Request: wrong correct option ID specified")
    return sorted(given)


async def send_poll(ctx: MethodContext, p: Params) -> Any:
    """Post a regular poll or a quiz."""
    chat = target_chat(ctx, p)
    question = p.get_str("question") or ""
    if not question.strip():
        raise BotApiError(400, "Bad Request: poll question must be non-empty")
    if len(question) > 300:
        raise BotApiError(400, "Bad Request: poll question length must not exceed 300")
    options = _poll_options(p)
    kind = p.get_str("type", "regular") or "regular"
    if kind not in _POLL_TYPES:
        raise BotApiError(400, "Bad Request: wrong poll type specified")
    anonymous = p.get_bool("is_anonymous", default=True)
    if not anonymous and chat.type is ChatType.CHANNEL:
        raise BotApiError(400, "Bad Request: non-anonymous polls can't be sent to channel chats")
    poll: JSON = {
        "id": ctx.polls.new_id(),
        "question": question,
        "options": options,
        "total_voter_count": 0,
        "is_closed": p.get_bool("is_closed"),
        "is_anonymous": anonymous,
        "type": kind,
        "allows_multiple_answers": kind == "regular" and p.get_bool("allows_multiple_answers"),
        "allows_revoting": kind == "regular" and p.get_bool("allows_revoting", default=True),
        "members_only": p.get_bool("members_only"),
    }
    if kind == "quiz":
        correct = _correct_options(p, len(options))
        poll["correct_option_ids"] = correct
        if explanation := p.get_str("explanation"):
            poll["explanation"] = explanation
    message = post(ctx, p, {"poll": poll}, chat=chat)
    ctx.polls.add(message, by_bot=True)
    return message


async def stop_poll(ctx: MethodContext, p: Params) -> Any:
    """Stop one of the bot's polls; answers the final ``Poll`` (and sends a ``poll`` update)."""
    chat, message = bot_message(ctx, p, action="stop")
    record = ctx.polls.in_message(chat.id, message["message_id"])
    if record is None:
        raise BotApiError(400, "Bad Request: message with poll to stop not found")
    if not record.by_bot:
        raise BotApiError(400, "Bad Request: poll can't be stopped")
    ctx.polls.close(record)
    message.pop("reply_markup", None)
    if markup := inline_markup(p):
        message["reply_markup"] = markup
    ctx.updates.push("poll", record.snapshot())
    return record.snapshot()

"""Message methods: sendMessage, editMessageText and answerCallbackQuery."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from actorscope.errors import BotApiError
from actorscope.testing.botapi.entities import parse_entities, utf16_len
from actorscope.testing.botapi.models import Chat, ChatType
from actorscope.testing.botapi.params import Params
from actorscope.testing.botapi.payloads import build_message, resolve_thread

if TYPE_CHECKING:
    from actorscope.testing.botapi.emulator import BotApiEmulator

__all__ = ["MAX_TEXT_LENGTH", "answer_callback_query", "edit_message_text", "send_message"]

JSON = dict[str, Any]
MAX_TEXT_LENGTH = 4096
_QUERY_INVALID = "Bad Request: query is too old and response timeout expired or query ID is invalid"
_NOT_MODIFIED = (
    "Bad Request: message is not modified: specified new message content and reply markup "
    "are exactly the same as a current content and reply markup of the message"
)


def _target_chat(emu: BotApiEmulator, p: Params) -> Chat:
    ref = p.chat_id()
    chat = emu.state.find_chat(ref)
    if chat is None:
        if isinstance(ref, int) and ref > 0 and emu.state.find_user(ref) is not None:
            raise BotApiError(403, "Forbidden: bot can't initiate conversation with a user")
        raise BotApiError(400, "Bad Request: chat not found")
    if chat.type is not ChatType.PRIVATE and not emu.state.status(chat, emu.bot).is_present:
        raise BotApiError(403, f"Forbidden: bot is not a member of the {chat.type.value} chat")
    return chat


def _text(p: Params) -> str:
    text = p.get_str("text") or ""
    if not text.strip():
        raise BotApiError(400, "Bad Request: message text is empty")
    if utf16_len(text) > MAX_TEXT_LENGTH:
        raise BotApiError(400, "Bad Request: message is too long")
    return text


def _inline_markup(p: Params) -> JSON | None:
    markup = p.get_object("reply_markup")
    if markup is None or "inline_keyboard" not in markup:
        # Reply keyboards and keyboard removal are shown to users, never echoed in the message.
        return None
    rows = markup["inline_keyboard"]
    if not isinstance(rows, list) or not all(isinstance(row, list) for row in rows):
        raise BotApiError(400, "Bad Request: can't parse inline keyboard button")
    for row in rows:
        for button in row:
            if not isinstance(button, dict) or not isinstance(button.get("text"), str):
                raise BotApiError(400, "Bad Request: can't parse inline keyboard button")
    return {"inline_keyboard": rows}


def _reply_target(emu: BotApiEmulator, p: Params, chat: Chat) -> JSON | None:
    params = p.get_object("reply_parameters")
    if params is not None:
        message_id = Params(params).get_int("message_id")
        if message_id is None:
            raise BotApiError(400, "Bad Request: message to be replied not found")
        lenient = bool(params.get("allow_sending_without_reply", False))
        if params.get("chat_id") not in (None, chat.id, f"@{chat.username}"):
            raise BotApiError(400, "Bad Request: replies to other chats are not supported")
    else:
        message_id = p.get_int("reply_to_message_id")
        lenient = p.get_bool("allow_sending_without_reply")
    if message_id is None:
        return None
    target = emu.state.message(chat, message_id)
    if target is None and not lenient:
        raise BotApiError(400, "Bad Request: message to be replied not found")
    return target


async def send_message(emu: BotApiEmulator, p: Params) -> Any:
    """Post the bot's text message; replies, forum topics and inline keyboards included."""
    chat = _target_chat(emu, p)
    text = _text(p)
    reply_to = _reply_target(emu, p, chat)
    topic = resolve_thread(emu.state, chat, p.get_int("message_thread_id"), reply_to)
    markup = _inline_markup(p)
    entities = p.get_array("entities")
    channel = chat.type is ChatType.CHANNEL
    message = build_message(
        emu.state,
        chat,
        None if channel else emu.bot,
        sender_chat=chat if channel else None,
        text=text,
        topic=topic,
        reply_to=reply_to,
        entities=entities,
        extra={"reply_markup": markup} if markup else None,
    )
    emu.bot_messages.add((chat.id, message["message_id"]))
    return message


async def edit_message_text(emu: BotApiEmulator, p: Params) -> Any:
    """Replace the text (and inline keyboard) of one of the bot's messages."""
    if p.has("inline_message_id"):
        raise BotApiError(400, "Bad Request: MESSAGE_ID_INVALID")
    chat = _target_chat(emu, p)
    message_id = p.require_int("message_id")
    message = emu.state.message(chat, message_id)
    if message is None:
        raise BotApiError(400, "Bad Request: message to edit not found")
    if (chat.id, message_id) not in emu.bot_messages:
        raise BotApiError(400, "Bad Request: message can't be edited")
    text = _text(p)
    markup = _inline_markup(p)
    if message.get("text") == text and message.get("reply_markup") == markup:
        raise BotApiError(400, _NOT_MODIFIED)
    entities = p.get_array("entities")
    message["text"] = text
    message.pop("entities", None)
    if entities := parse_entities(text) if entities is None else entities:
        message["entities"] = entities
    message.pop("reply_markup", None)
    if markup:
        message["reply_markup"] = markup
    message["edit_date"] = emu.state.now()
    return message


async def answer_callback_query(emu: BotApiEmulator, p: Params) -> Any:
    """Answer a callback query once; the answer is kept for assertions."""
    query_id = p.require_str("callback_query_id")
    if query_id not in emu.callback_answers or emu.callback_answers[query_id] is not None:
        raise BotApiError(400, _QUERY_INVALID)
    emu.callback_answers[query_id] = {
        "text": p.get_str("text", "") or "",
        "show_alert": p.get_bool("show_alert"),
        "url": p.get_str("url"),
    }
    return True

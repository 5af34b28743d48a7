"""Message methods: sendMessage, editMessageText and answerCallbackQuery."""

from __future__ import annotations

from typing import Any

from actorscope.sandbox._telegram.context import MethodContext
from actorscope.sandbox._telegram.entities import parse_entities, utf16_len
from actorscope.sandbox._telegram.errors import BotApiError
from actorscope.sandbox._telegram.formatting import formatted
from actorscope.sandbox._telegram.models import Chat, ChatType, MemberStatus
from actorscope.sandbox._telegram.params import Params
from actorscope.sandbox._telegram.payloads import build_message, resolve_thread

__all__ = [
    "MAX_CAPTION_LENGTH",
    "MAX_TEXT_LENGTH",
    "answer_callback_query",
    "answer_inline_query",
    "bot_message",
    "caption",
    "copy_message",
    "delete_message",
    "edit_message_reply_markup",
    "edit_message_text",
    "forward_message",
    "inline_markup",
    "keyboard_buttons",
    "post",
    "send_message",
    "set_message_reaction",
    "shown",
    "target_chat",
]

JSON = dict[str, Any]
MAX_TEXT_LENGTH = 4096
MAX_CAPTION_LENGTH = 1024
#: How long a message stays deletable by anyone but an admin (48 hours), as on Telegram.
DELETE_WINDOW = 48 * 3600
# The parts of a message that forwarding and copying carry over.
_CONTENT_KEYS = ("text", "entities", "photo", "document", "caption", "caption_entities", "poll")
#: The emoji a bot may react with (the Bot API's ``ReactionTypeEmoji`` list).
REACTION_EMOJI = frozenset(
    # The Bot API's list as one space-separated string; a set literal takes 73 lines.
    "❤ 👍 👎 🔥 🥰 👏 😁 🤔 🤯 😱 🤬 😢 🎉 🤩 🤮 💩 🙏 👌 "  # noqa: SIM905
    "🕊 🤡 🥱 🥴 😍 🐳 ❤\u200d🔥 🌚 🌭 💯 🤣 ⚡ 🍌 🏆 💔 🤨 😐 🍓 "
    "🍾 💋 🖕 😈 😴 😭 🤓 👻 👨\u200d💻 👀 🎃 🙈 😇 😨 🤝 ✍ 🤗 🫡 "
    "🎅 🎄 ☃ 💅 🤪 🗿 🆒 💘 🙉 🦄 😘 💊 🙊 😎 👾 🤷\u200d♂ 🤷 🤷\u200d♀ "
    "😡".split()
)
_MAX_INLINE_RESULTS = 50
_QUERY_INVALID = "Bad Request: query is too old and response timeout expired or query ID is invalid"
_NOT_MODIFIED = (
    "Bad Request: message is not modified: specified new message content and reply markup "
    "are exactly the same as a current content and reply markup of the message"
)


def target_chat(ctx: MethodContext, p: Params) -> Chat:
    ref = p.chat_id()
    chat = ctx.state.find_chat(ref)
    if chat is None:
        if isinstance(ref, int) and ref > 0 and ctx.state.find_user(ref) is not None:
            raise BotApiError(403, "Forbidden: bot can't initiate conversation with a user")
        raise BotApiError(400, "Bad Request: chat not found")
    bot_status = ctx.state.status(chat, ctx.state.bot)
    if chat.type is ChatType.PRIVATE and bot_status is MemberStatus.KICKED:
        raise BotApiError(403, "Forbidden: bot was blocked by the user")
    if bot_status is MemberStatus.KICKED:
        raise BotApiError(403, f"Forbidden: bot was kicked from the {chat.type.value} chat")
    if not bot_status.is_present:
        raise BotApiError(403, f"Forbidden: bot is not a member of the {chat.type.value} chat")
    return chat


def shown(ctx: MethodContext, p: Params, name: str, entities: str) -> tuple[str, list[JSON]]:
    """The text users see for parameter ``name`` and its entities: the ``entities`` parameter
    when given, else what ``parse_mode`` makes of the markup, else what Telegram detects."""
    raw = p.get_str(name) or ""
    given = p.get_array(entities)
    if given is not None:
        return raw, given
    mode = p.get_str("parse_mode")
    if not mode:
        return raw, parse_entities(raw)

    def user(user_id: int) -> JSON | None:
        found = ctx.state.find_user(user_id)
        return None if found is None else found.to_json()

    return formatted(raw, mode, user)


def _text(ctx: MethodContext, p: Params) -> tuple[str, list[JSON]]:
    text, entities = shown(ctx, p, "text", "entities")
    if not text.strip():
        raise BotApiError(400, "Bad Request: message text is empty")
    if utf16_len(text) > MAX_TEXT_LENGTH:
        raise BotApiError(400, "Bad Request: message is too long")
    return text, entities


def inline_markup(p: Params) -> JSON | None:
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


def _show_keyboard(ctx: MethodContext, p: Params, chat: Chat) -> None:
    """Remember the reply keyboard a message shows (or that it removes the keyboard)."""
    markup = p.get_object("reply_markup")
    if markup is None:
        return
    if markup.get("remove_keyboard"):
        ctx.outbox.keyboards.pop(chat.id, None)
        return
    rows = markup.get("keyboard")
    if rows is None:
        return
    if not isinstance(rows, list) or not all(isinstance(row, list) for row in rows):
        raise BotApiError(400, "Bad Request: can't parse keyboard button")
    for row in rows:
        for button in row:
            if isinstance(button, str):
                continue
            if not isinstance(button, dict) or not isinstance(button.get("text"), str):
                raise BotApiError(400, "Bad Request: can't parse keyboard button")
    ctx.outbox.keyboards[chat.id] = markup


def keyboard_buttons(ctx: MethodContext, chat: Chat) -> list[JSON]:
    """Every button of the reply keyboard ``chat`` shows, as objects (``{"text": ...}``)."""
    rows = ctx.outbox.keyboards.get(chat.id, {}).get("keyboard", [])
    return [b if isinstance(b, dict) else {"text": b} for row in rows for b in row]


def _reply_target(ctx: MethodContext, p: Params, chat: Chat) -> JSON | None:
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
    target = ctx.state.message(chat, message_id)
    if target is None and not lenient:
        raise BotApiError(400, "Bad Request: message to be replied not found")
    return target


def post(ctx: MethodContext, p: Params, content: JSON, *, chat: Chat | None = None) -> JSON:
    """Post the bot's message with ``content`` (text, photo, ...); replies, topics, keyboards."""
    chat = target_chat(ctx, p) if chat is None else chat
    reply_to = _reply_target(ctx, p, chat)
    topic = resolve_thread(ctx.state, chat, p.get_int("message_thread_id"), reply_to)
    markup = inline_markup(p)
    _show_keyboard(ctx, p, chat)
    channel = chat.type is ChatType.CHANNEL
    text = content.pop("text", None)
    message = build_message(
        ctx.state,
        chat,
        None if channel else ctx.state.bot,
        sender_chat=chat if channel else None,
        text=text,
        topic=topic,
        reply_to=reply_to,
        entities=content.pop("entities", None) if text is not None else None,
        extra={**content, "reply_markup": markup} if markup else content,
    )
    ctx.outbox.messages.add((chat.id, message["message_id"]))
    return message


def caption(ctx: MethodContext, p: Params) -> JSON:
    """``caption`` and its entities, for media messages (empty when there is no caption)."""
    text, entities = shown(ctx, p, "caption", "caption_entities")
    if not text:
        return {}
    if utf16_len(text) > MAX_CAPTION_LENGTH:
        raise BotApiError(400, "Bad Request: message caption is too long")
    return {"caption": text, "caption_entities": entities} if entities else {"caption": text}


def bot_message(ctx: MethodContext, p: Params, *, action: str) -> tuple[Chat, JSON]:
    """The chat and stored message a call names; ``message to <action> not found`` if none."""
    if p.has("inline_message_id"):
        raise BotApiError(400, "Bad Request: MESSAGE_ID_INVALID")
    chat = target_chat(ctx, p)
    message = ctx.state.message(chat, p.require_int("message_id"))
    if message is None:
        raise BotApiError(400, f"Bad Request: message to {action} not found")
    return chat, message


async def send_message(ctx: MethodContext, p: Params) -> Any:
    """Post the bot's text message; replies, forum topics and inline keyboards included."""
    chat = target_chat(ctx, p)
    text, entities = _text(ctx, p)
    return post(ctx, p, {"text": text, "entities": entities}, chat=chat)


def _editable(ctx: MethodContext, p: Params) -> JSON:
    chat, message = bot_message(ctx, p, action="edit")
    if (chat.id, message["message_id"]) not in ctx.outbox.messages:
        raise BotApiError(400, "Bad Request: message can't be edited")
    return message


async def edit_message_text(ctx: MethodContext, p: Params) -> Any:
    """Replace the text (and inline keyboard) of one of the bot's messages."""
    message = _editable(ctx, p)
    text, entities = _text(ctx, p)
    markup = inline_markup(p)
    if (
        message.get("text") == text
        and message.get("entities", []) == entities
        and message.get("reply_markup") == markup
    ):
        raise BotApiError(400, _NOT_MODIFIED)
    message["text"] = text
    message.pop("entities", None)
    if entities:
        message["entities"] = entities
    return _edited(ctx, message, markup)


def _edited(ctx: MethodContext, message: JSON, markup: JSON | None) -> JSON:
    """Give ``message`` its new inline keyboard (or none) and an ``edit_date``."""
    message.pop("reply_markup", None)
    if markup:
        message["reply_markup"] = markup
    message["edit_date"] = ctx.state.now()
    return message


async def edit_message_reply_markup(ctx: MethodContext, p: Params) -> Any:
    """Replace (or, without ``reply_markup``, remove) the inline keyboard of a bot message."""
    message = _editable(ctx, p)
    markup = inline_markup(p)
    if message.get("reply_markup") == markup:
        raise BotApiError(400, _NOT_MODIFIED)
    return _edited(ctx, message, markup)


async def delete_message(ctx: MethodContext, p: Params) -> Any:
    """Delete a message: the bot's own or, in private chats and as an admin, anyone's."""
    chat, message = bot_message(ctx, p, action="delete")
    allowed = (
        (chat.id, message["message_id"]) in ctx.outbox.messages
        or chat.type is ChatType.PRIVATE
        or ctx.state.status(chat, ctx.state.bot).is_admin
    )
    if not allowed or message.get("forum_topic_created"):
        raise BotApiError(400, "Bad Request: message can't be deleted")
    if ctx.state.now() - message["date"] > DELETE_WINDOW:
        raise BotApiError(400, "Bad Request: message can't be deleted for everyone")
    ctx.state.delete_message(chat, message["message_id"])
    ctx.outbox.messages.discard((chat.id, message["message_id"]))
    return True


def _source(ctx: MethodContext, p: Params, action: str, done: str) -> JSON:
    source_chat = ctx.state.find_chat(p.chat_id("from_chat_id"))
    if source_chat is None:
        raise BotApiError(400, "Bad Request: chat not found")
    message = ctx.state.message(source_chat, p.require_int("message_id"))
    if message is None:
        raise BotApiError(400, f"Bad Request: message to {action} not found")
    if not any(key in message for key in _CONTENT_KEYS):
        raise BotApiError(400, f"Bad Request: message can't be {done}")
    return message


def _origin(message: JSON) -> JSON:
    if "forward_origin" in message:
        return dict(message["forward_origin"])
    date = message["date"]
    sender_chat = message.get("sender_chat")
    if sender_chat is not None and sender_chat.get("type") == "channel":
        return {
            "type": "channel",
            "date": date,
            "chat": sender_chat,
            "message_id": message["message_id"],
        }
    if sender_chat is not None:
        return {"type": "chat", "date": date, "sender_chat": sender_chat}
    return {"type": "user", "date": date, "sender_user": message["from"]}


def _content(message: JSON) -> JSON:
    return {key: message[key] for key in _CONTENT_KEYS if key in message}


async def forward_message(ctx: MethodContext, p: Params) -> Any:
    """Forward a message: its content with a ``forward_origin`` naming where it came from."""
    chat = target_chat(ctx, p)
    source = _source(ctx, p, "forward", "forwarded")
    return post(ctx, p, {**_content(source), "forward_origin": _origin(source)}, chat=chat)


async def copy_message(ctx: MethodContext, p: Params) -> Any:
    """Send a copy of a message (optionally with a new caption); answers its ``MessageId``."""
    chat = target_chat(ctx, p)
    content = _content(_source(ctx, p, "copy", "copied"))
    if p.has("caption") and ("photo" in content or "document" in content):
        content.pop("caption", None)
        content.pop("caption_entities", None)
        content.update(caption(ctx, p))
    return {"message_id": post(ctx, p, content, chat=chat)["message_id"]}


async def set_message_reaction(ctx: MethodContext, p: Params) -> Any:
    """Set the bot's reaction to a message (one emoji at most; an empty list removes it)."""
    chat, message = bot_message(ctx, p, action="react")
    reactions = p.get_array("reaction") or []
    if len(reactions) > 1:
        raise BotApiError(400, "Bad Request: REACTIONS_TOO_MANY")
    for reaction in reactions:
        if not isinstance(reaction, dict) or reaction.get("type") != "emoji":
            raise BotApiError(400, "Bad Request: REACTION_INVALID")
        if reaction.get("emoji") not in REACTION_EMOJI:
            raise BotApiError(400, "Bad Request: REACTION_INVALID")
    ctx.outbox.reactions[(chat.id, message["message_id"])] = [dict(r) for r in reactions]
    return True


async def answer_callback_query(ctx: MethodContext, p: Params) -> Any:
    """Answer a callback query once; the answer is kept for assertions."""
    query_id = p.require_str("callback_query_id")
    answers = ctx.outbox.callback_answers
    if query_id not in answers or answers[query_id] is not None:
        raise BotApiError(400, _QUERY_INVALID)
    answers[query_id] = {
        "text": p.get_str("text", "") or "",
        "show_alert": p.get_bool("show_alert"),
        "url": p.get_str("url"),
    }
    return True


async def answer_inline_query(ctx: MethodContext, p: Params) -> Any:
    """Answer an inline query once (50 results at most, unique ids); kept for assertions."""
    query_id = p.require_str("inline_query_id")
    answers = ctx.outbox.inline_answers
    if query_id not in answers or answers[query_id] is not None:
        raise BotApiError(400, _QUERY_INVALID)
    results = p.get_array("results", required=True) or []
    if len(results) > _MAX_INLINE_RESULTS:
        raise BotApiError(400, "Bad Request: RESULTS_TOO_MUCH")
    ids: set[str] = set()
    for result in results:
        if not isinstance(result, dict) or not isinstance(result.get("type"), str):
            raise BotApiError(400, "Bad Request: can't parse inline query result")
        result_id = result.get("id")
        if not isinstance(result_id, str) or not 1 <= len(result_id.encode()) <= 64:
            raise BotApiError(400, "Bad Request: RESULT_ID_INVALID")
        if result_id in ids:
            raise BotApiError(400, "Bad Request: RESULT_ID_DUPLICATE")
        ids.add(result_id)
    answers[query_id] = {
        "results": results,
        "cache_time": p.get_int("cache_time", 300),
        "is_personal": p.get_bool("is_personal"),
        "next_offset": p.get_str("next_offset", "") or "",
    }
    return True

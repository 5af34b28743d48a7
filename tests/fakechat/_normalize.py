"""The fake chat's normaliser: one raw event → an :class:`~actorscope.channels.Ingress`.

The event is the server's JSON (:meth:`FakeChat.message`). Sender identification is
actorscope's own (:meth:`~actorscope.identity.Identity.chat`): a person in a room shares the
room's scope and keeps their id; a post without an author or by a bot keeps the room's scope
with no sender; a DM is its person's own scope. A malformed event is ignored, never raised.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from actorscope.channels import IgnoreReason, Ingress
from actorscope.errors import IdentityError, PayloadError
from actorscope.identity import Identity, SenderKind, session_key
from actorscope.messages import MetaKey

__all__ = ["NAME", "inspect_event"]

#: The platform's name: its channel name, its ``bot.toml`` section, its accounts' prefix.
NAME = "fakechat"


def _text(value: object) -> str | None:
    return value if type(value) is str else None


def inspect_event(event: Mapping[str, Any], *, agent_key: str = "main") -> Ingress:
    """What the bot makes of ``event``: its message, or why it is ignored."""
    if event.get("kind") != "message":
        return Ingress(None, IgnoreReason.UNSUPPORTED_EVENT, detail="not a message")
    chat, author = event.get("chat"), event.get("from")
    text, message_id = _text(event.get("text")), _text(event.get("message_id"))
    thread = _text(event.get("thread", ""))
    if not isinstance(chat, Mapping) or chat.get("type") not in ("direct", "group"):
        return Ingress(None, IgnoreReason.MALFORMED, detail="no chat")
    if text is None or message_id is None or thread is None:
        return Ingress(None, IgnoreReason.MALFORMED, detail="text or ids are not strings")
    if author is not None and not isinstance(author, Mapping):
        return Ingress(None, IgnoreReason.MALFORMED, detail="from is not an object")
    group = chat["type"] == "group"
    sender = None if author is None else author.get("id")
    kind = (
        SenderKind.USER if author is None or author.get("bot", False) is False else SenderKind.BOT
    )
    try:
        identity = Identity.chat(
            NAME, _text(chat.get("id")) or "", sender, group=group, sender_kind=kind
        )
        key = session_key(
            agent_key, NAME, identity.peer_kind, identity.chat_id, thread_id=thread or None
        )
    except IdentityError as exc:
        return Ingress(None, IgnoreReason.MALFORMED, detail=str(exc))
    metadata: dict[str, str] = {MetaKey.SESSION_KEY: key, MetaKey.EVENT: "message"}
    if author is not None and _text(author.get("name")):
        metadata[MetaKey.SENDER_NAME] = author["name"]
    if event.get("to_bot") is True:
        metadata[MetaKey.ADDRESSED] = "mention"
    reply = event.get("reply_to")
    if isinstance(reply, Mapping) and _text(reply.get("message_id")):
        metadata[MetaKey.REPLY_TO_MESSAGE_ID] = reply["message_id"]
    try:
        return Ingress.of(
            identity, content=text, metadata=metadata, thread_id=thread, message_id=message_id
        )
    except PayloadError as exc:
        return Ingress(None, IgnoreReason.MALFORMED, detail=str(exc))

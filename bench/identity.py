"""Identity builders against python-telegram-bot's own ``Update.de_json`` of the same message."""

from __future__ import annotations

from typing import Any

from telegram import Bot, Update

from actorscope.identity import Identity, session_key
from bench._timing import per_call, report

PAYLOAD: dict[str, Any] = {
    "update_id": 1,
    "message": {
        "message_id": 7,
        "date": 1_700_000_000,
        "chat": {"id": -1001234567890, "type": "supergroup", "title": "devs", "is_forum": True},
        "from": {"id": 4242, "is_bot": False, "first_name": "Alice"},
        "message_thread_id": 9,
        "is_topic_message": True,
        "text": "hello",
    },
}


def main() -> None:
    """Print the cost of building scope, actor and session key vs PTB parsing the update."""
    bot = Bot("123:TEST")

    def ptb() -> object:
        return Update.de_json(PAYLOAD, bot)

    def ours() -> object:
        identity = Identity.chat("telegram", -1001234567890, 4242, group=True)
        key = session_key("main", "telegram", identity.peer_kind, -1001234567890, topic_id=9)
        return identity, key

    report("telegram_identity + session_key", per_call(ours), per_call(ptb), "Update.de_json")

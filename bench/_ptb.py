"""The Telegram update the benchmarks parse: Alice writes in topic 9 of the supergroup "devs"."""

from __future__ import annotations

from typing import Any

__all__ = ["topic_update"]


def topic_update(text: str, **extra: Any) -> dict[str, Any]:
    """A fresh ``Update`` payload whose message says ``text`` (``extra``: more message fields)."""
    return {
        "update_id": 1,
        "message": {
            "message_id": 7,
            "date": 1_700_000_000,
            "chat": {"id": -1001234567890, "type": "supergroup", "title": "devs", "is_forum": True},
            "from": {"id": 4242, "is_bot": False, "first_name": "Alice", "username": "alice"},
            "message_thread_id": 9,
            "is_topic_message": True,
            "text": text,
            **extra,
        },
    }

"""Telegram private chats: the person who acts must be the chat, for messages and clicks."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from actorscope.channels._base import IgnoreReason
from actorscope.channels.telegram import PLATFORM as TELEGRAM
from actorscope.channels.telegram._normalize import inspect_update


def _message(chat_id: int, sender_id: int) -> dict[str, Any]:
    return {
        "update_id": 1,
        "message": {
            "message_id": 5,
            "date": 1,
            "text": "hi",
            "chat": {"id": chat_id, "type": "private", "first_name": "victim"},
            "from": {"id": sender_id, "is_bot": False, "first_name": "mallory"},
        },
    }


def _click(chat_id: int, clicker_id: int) -> dict[str, Any]:
    return {
        "update_id": 2,
        "callback_query": {
            "id": "77",
            "chat_instance": "1",
            "data": "yes",
            "from": {"id": clicker_id, "is_bot": False, "first_name": "mallory"},
            "message": {
                "message_id": 6,
                "date": 1,
                "chat": {"id": chat_id, "type": "private", "first_name": "victim"},
                "text": "pick one",
            },
        },
    }


def test_private_message_from_another_person_is_malformed_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Chat 99 with sender 42 is ignored as malformed (and logged), not filed under either."""
    with caplog.at_level(logging.WARNING, logger="actorscope.channels.telegram"):
        ingress = inspect_update(_message(99, 42))
    assert (ingress.message, ingress.reason) == (None, IgnoreReason.MALFORMED)
    assert "private_chat_foreign_sender" in caplog.text


def test_private_click_by_another_person_is_malformed() -> None:
    """A button in user 99's DM clicked by 42 is ignored as malformed."""
    ingress = inspect_update(_click(99, 42))
    assert (ingress.message, ingress.reason) == (None, IgnoreReason.MALFORMED)


def test_private_message_and_click_by_the_chat_itself_pass() -> None:
    """When the sender is the chat, scope, chat and session all name that one person."""
    for update in (_message(42, 42), _click(42, 42)):
        message = inspect_update(update).message
        assert message is not None
        assert (message.user_id, message.sender_id, message.chat_id) == ("42", "42", "42")
        assert message.metadata["session_key"] == "agent:main:telegram:direct:42"


def test_normalize_update_drops_a_private_message_from_another_person() -> None:
    """normalize_update gives nothing for chat 99 with sender 42: no scope/session split."""
    assert TELEGRAM.normalize_update(_message(99, 42)) is None

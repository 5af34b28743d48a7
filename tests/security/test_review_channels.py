"""Security review: channel adapters must not build identities from impossible or malformed ids."""

from __future__ import annotations

from typing import Any

from actorscope.channels.discord import inspect_dispatch
from actorscope.channels.telegram import normalize_update


def _discord_message(author_id: str) -> dict[str, Any]:
    return {
        "op": 0,
        "t": "MESSAGE_CREATE",
        "d": {
            "id": "1200000000000000001",
            "channel_id": "1200000000000000002",
            "guild_id": "1200000000000000003",
            "author": {"id": author_id, "username": "zero"},
            "content": "hello",
            "type": 0,
        },
    }


def test_discord_author_id_zero_is_malformed_not_a_person() -> None:
    """A snowflake of 0 (or "000") is not a user id; the message must be ignored as malformed."""
    for raw in ("0", "000"):
        ingress = inspect_dispatch(_discord_message(raw))
        assert ingress.message is None, (
            f"author id {raw!r} became sender {ingress.message.sender_id!r}"
            if ingress.message is not None
            else ""
        )


def test_discord_interaction_user_id_zero_is_malformed() -> None:
    """An interaction whose user id is 0 must not yield an actor."""
    payload = {
        "op": 0,
        "t": "INTERACTION_CREATE",
        "d": {
            "id": "1200000000000000009",
            "type": 2,
            "channel_id": "1200000000000000002",
            "guild_id": "1200000000000000003",
            "member": {"user": {"id": "0", "username": "zero"}},
            "data": {"name": "ask"},
        },
    }
    assert inspect_dispatch(payload).message is None


def test_telegram_private_chat_with_foreign_sender_does_not_split_scope_and_session() -> None:
    """A private chat whose id is not the sender's must not file the sender into another DM."""
    update = {
        "update_id": 1,
        "message": {
            "message_id": 5,
            "date": 1,
            "text": "hi",
            "chat": {"id": 99, "type": "private", "first_name": "victim"},
            "from": {"id": 42, "is_bot": False, "first_name": "mallory"},
        },
    }
    message = normalize_update(update)
    if message is None:
        return
    # Scope is the sender (42) but the session key and reply chat are user 99's DM.
    assert message.chat_id == message.user_id, (
        f"scope {message.user_id!r} but chat/session {message.chat_id!r} "
        f"({message.metadata.get('session_key')!r})"
    )

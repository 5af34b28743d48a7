"""Security review: channel adapters must not build identities from impossible or malformed ids."""

from __future__ import annotations

from typing import Any

from actorscope.channels._base import IgnoreReason
from actorscope.channels._config import ChannelConfig
from actorscope.channels._policy import admit
from actorscope.channels.discord import inspect_dispatch
from actorscope.channels.telegram import inspect_update, normalize_update


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


def _callback(clicker: dict[str, Any], data: Any = "vote:yes") -> dict[str, Any]:
    """A supergroup button press by ``clicker`` carrying ``data``."""
    return {
        "update_id": 2,
        "callback_query": {
            "id": "4382",
            "chat_instance": "ci",
            "data": data,
            "from": clicker,
            "message": {
                "message_id": 60,
                "date": 1,
                "chat": {"id": -1001234567890, "type": "supergroup", "title": "devs"},
                "text": "vote?",
            },
        },
    }


def test_telegram_callback_query_from_a_bot_is_not_a_person() -> None:
    """A button press whose ``from`` is a bot account never yields a person sender."""
    for is_bot in (True, 1, "true"):
        clicker = {"id": 5151, "is_bot": is_bot, "first_name": "spam_bot"}
        for ignore_bots in (True, False):
            ingress = inspect_update(_callback(clicker), ignore_bots=ignore_bots)
            assert ingress.message is None, (is_bot, ingress.message)
            assert ingress.reason is IgnoreReason.BOT_SENDER


def test_non_string_callback_data_never_reaches_admit() -> None:
    """Integer or list ``callback_data`` is malformed, so ``admit()`` never sees a non-string."""
    clicker = {"id": 5151, "is_bot": False, "first_name": "Bob"}
    config = ChannelConfig(platform="telegram")
    for data in (12345, ["vote"], {"v": 1}):
        ingress = inspect_update(_callback(clicker, data))
        assert ingress.reason is IgnoreReason.MALFORMED, data
        if ingress.message is not None:  # the old behaviour: admit() raised AttributeError
            admit(ingress.message, config, bot_username="actorscope_bot")


def test_discord_author_bot_one_is_not_a_person() -> None:
    """``author.bot: 1`` (a truthy integer, not ``true``) is a bot, as ``true`` is."""
    payload = _discord_message("1200000000000000004")
    payload["d"]["author"]["bot"] = 1
    assert inspect_dispatch(payload).reason is IgnoreReason.BOT_SENDER
    opted_in = inspect_dispatch(payload, ignore_bots=False).message
    assert opted_in is not None
    assert opted_in.sender_id == ""
    assert opted_in.user_id == "guild:1200000000000000003:bot:1200000000000000004"


def test_discord_message_with_member_but_no_guild_id_is_not_a_dm() -> None:
    """A guild-shaped message (``member``) without ``guild_id`` is malformed, never a DM scope."""
    payload = _discord_message("1200000000000000004")
    del payload["d"]["guild_id"]
    payload["d"]["member"] = {"roles": [], "joined_at": "2024-01-01T00:00:00+00:00"}
    ingress = inspect_dispatch(payload)
    assert ingress.message is None, ingress.message
    assert ingress.reason is IgnoreReason.MALFORMED

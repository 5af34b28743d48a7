"""Security review: identity builders must never hand a non-group caller a group scope."""

from __future__ import annotations

import pytest

from actorscope.errors import IdentityError
from actorscope.identity import discord_identity, http_identity


@pytest.mark.parametrize("user", ["group:telegram:-100200", "guild:81234567890123456:user:42"])
def test_http_identity_refuses_a_group_shaped_user_id(user: str) -> None:
    """An HTTP user id shaped like a group scope must not become that group's scope."""
    try:
        identity = http_identity(user)
    except IdentityError:
        return
    assert not identity.is_group, (
        f"HTTP user {user!r} got the group's scope (peer_kind={identity.peer_kind.value}, "
        "so it shares that group's memory and files)"
    )


@pytest.mark.parametrize("placeholder", ["1087968824", "136817688", "777000"])
def test_discord_identity_never_gives_a_placeholder_a_sender_id(placeholder: str) -> None:
    """DESIGN: the Telegram placeholder ids are never identities, anywhere (Discord builder too)."""
    try:
        identity = discord_identity(placeholder, chat_id=5, guild_id=9)
    except IdentityError:
        return
    assert identity.sender_id == "", f"placeholder {placeholder} became sender_id"

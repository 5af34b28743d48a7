"""storage_scope: direct scopes are keyed by channel too; group scopes are their own key."""

from __future__ import annotations

import pytest

from actorscope.errors import ToolError
from actorscope.identity import Identity, telegram_identity
from actorscope.tools import storage_scope


@pytest.mark.parametrize(
    ("identity", "key"),
    [
        (telegram_identity(4242, "private", 4242), "4242"),
        (Identity(user_id="4242", sender_id="", channel="http"), "direct:http:4242"),
        (Identity(user_id="4242", sender_id="4242", channel="discord"), "direct:discord:4242"),
        (Identity(user_id="4242", sender_id="4242"), "direct::4242"),
        (Identity(user_id="bob", sender_id="", channel="telegram"), "direct:telegram:bob"),
        (Identity(user_id="b", sender_id="", channel="a:x"), "direct:a%3Ax:b"),
        (telegram_identity(-100, "supergroup", 7), "group:telegram:-100"),
        (Identity(user_id="guild:1:user:2", sender_id="2", channel="discord"), "guild:1:user:2"),
    ],
)
def test_storage_scope_keys(identity: Identity, key: str) -> None:
    """Telegram DMs keep the bare id; other direct scopes name their channel; groups are as is."""
    assert storage_scope(identity) == key


def test_storage_scope_is_injective_across_channel_and_id() -> None:
    """A ':' in a channel or id cannot make two direct scopes share a key."""
    one = Identity(user_id="b:c", sender_id="", channel="a")
    two = Identity(user_id="c", sender_id="", channel="a:b")
    assert storage_scope(one) != storage_scope(two)


def test_no_scope_has_no_storage_key() -> None:
    """An identity with no scope is refused as no_scope."""
    with pytest.raises(ToolError) as refused:
        storage_scope(Identity(user_id="", sender_id=""))
    assert refused.value.code == "no_scope"

"""storage_scope: direct scopes are keyed by channel too; group scopes are their own key."""

from __future__ import annotations

import pytest

from actorscope.errors import ToolError
from actorscope.identity import Identity
from actorscope.platforms import IdForm, PlatformSpec, platform_specs, register
from actorscope.tools._storage import storage_scope


@pytest.mark.parametrize(
    ("identity", "key"),
    [
        (Identity.chat("telegram", 4242, 4242, group=False), "4242"),
        (Identity(user_id="4242", sender_id="", channel="http"), "direct:http:4242"),
        (Identity(user_id="4242", sender_id="4242", channel="discord"), "direct:discord:4242"),
        (Identity(user_id="bob", sender_id="", channel="telegram"), "direct:telegram:bob"),
        (Identity(user_id="b", sender_id="", channel="a:x"), "direct:a%3Ax:b"),
        (Identity.chat("telegram", -100, 7, group=True), "group:telegram:-100"),
        (Identity(user_id="guild:1:user:2", sender_id="2", channel="discord"), "guild:1:user:2"),
    ],
)
def test_storage_scope_keys(identity: Identity, key: str) -> None:
    """Telegram DMs keep the bare id; other direct scopes name their channel; groups are as is."""
    assert storage_scope(identity) == key


def test_only_a_platform_registered_with_legacy_direct_keys_keeps_bare_ids() -> None:
    """The bare-id key is the registration's legacy_direct_keys (Telegram's), never a channel
    name's: a registered platform's and a bot's own channel's direct scopes name them."""
    assert [spec.name for spec in platform_specs() if spec.legacy_direct_keys] == ["telegram"]
    with register(PlatformSpec("fakedigits", IdForm.INTEGER)):
        dm = Identity.chat("fakedigits", 4242, 4242, group=False)
        assert storage_scope(dm) == "direct:fakedigits:4242"
    assert storage_scope(Identity(user_id="4242", sender_id="", channel="tg2")) == "direct:tg2:4242"


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


def test_a_direct_scope_without_a_channel_has_no_storage_key() -> None:
    """A system run inheriting a DM without its channel is no_scope, never a shared key."""
    with pytest.raises(ToolError) as refused:
        storage_scope(Identity.system("4242"))
    assert refused.value.code == "no_scope"
    assert "names no channel" in str(refused.value)


def test_a_system_run_keeps_the_storage_key_of_the_scope_it_inherits() -> None:
    """A cron run in Telegram user 4242's DM sees that user's files; HTTP user 4242's differ."""
    telegram_dm = Identity.chat("telegram", 4242, 4242, group=False)
    assert storage_scope(Identity.system("4242", channel="telegram")) == storage_scope(telegram_dm)
    assert storage_scope(Identity.system("4242", channel="http")) == "direct:http:4242"
    group = "group:telegram:-100"
    assert storage_scope(Identity.system(group, "ticker:x")) == group  # groups name their channel

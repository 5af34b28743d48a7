"""The metadata keys: the documented names, one prefix for all of them."""

from __future__ import annotations

from actorscope.messages import MetaKey
from actorscope.propagation._keys import (
    META_ORIGIN_SIGNATURE,
    META_ORIGIN_SIGNED_AT,
    ORIGIN_FIELD_KEYS,
    ORIGIN_KEYS,
    is_origin_key,
)


def test_documented_key_names() -> None:
    """The origin fields are the names of docs/design.md, in canonical order."""
    assert MetaKey.ORIGIN_SENDER_ID.value == "origin_sender_id"
    assert ORIGIN_FIELD_KEYS == (
        "origin_sender_id",
        "origin_role",
        "origin_channel",
        "origin_chat_id",
        "origin_user_id",
        "origin_peer_kind",
        "origin_session_key",
        "origin_trace_id",
    )


def test_every_key_including_signature_and_timestamp_has_the_prefix() -> None:
    """One prefix test covers every key the package writes, signature and timestamp too."""
    assert {META_ORIGIN_SIGNATURE, META_ORIGIN_SIGNED_AT} < ORIGIN_KEYS
    assert all(is_origin_key(key) for key in ORIGIN_KEYS)
    assert is_origin_key("origin_anything_new")
    assert not is_origin_key("originator")

"""The shared adapter pieces: build_inbound gives the same message as the constructor."""

from __future__ import annotations

from dataclasses import fields, replace
from types import MappingProxyType
from typing import Any

import pytest
from pydantic import ValidationError

from actorscope.channels._base import _FROM_IDENTITY, ADAPTER_METADATA_KEYS, Ingress, build_inbound
from actorscope.errors import PayloadError
from actorscope.identity import Identity
from actorscope.messages import InboundMessage, MetaKey, OutboundMessage


def test_build_inbound_equals_validated_message() -> None:
    """Every field matches a validated InboundMessage, and the result is frozen."""
    identity = Identity.chat("telegram", -100, 42, group=True)
    metadata = {"session_key": "agent:main:telegram:group:-100:topic:3"}
    fast = build_inbound(identity, content="hi", metadata=metadata, thread_id="3", message_id="9")
    slow = InboundMessage(
        channel="telegram",
        sender_id="42",
        chat_id="-100",
        user_id="group:telegram:-100",
        peer_kind="group",
        content="hi",
        metadata=metadata,
        thread_id="3",
        message_id="9",
    )
    assert fast == slow
    assert fast.model_dump() == slow.model_dump()
    assert fast.model_dump_json() == slow.model_dump_json()
    assert set(fast.__dict__) == set(InboundMessage.model_fields)
    metadata["session_key"] = "changed"
    assert fast.metadata["session_key"].endswith(":topic:3")
    with pytest.raises(ValidationError):
        fast.content = "changed"
    with pytest.raises(TypeError):
        fast.metadata["origin_sender_id"] = "1"  # type: ignore[index]
    assert fast.identity() == identity


def test_reply_goes_to_the_same_chat_and_thread() -> None:
    """A reply keeps channel, chat and thread, and answers the message."""
    identity = Identity.chat("discord", 77, 9001, group=True, guild_id=5)
    message = build_inbound(identity, content="q", metadata={}, thread_id="88", message_id="3")
    out = OutboundMessage.reply_to(message, "a")
    assert (out.channel, out.chat_id, out.thread_id, out.reply_to_message_id) == (
        "discord",
        "77",
        "88",
        "3",
    )


def test_ingress_session_key() -> None:
    """An ingress exposes its message's session key, or "" when ignored."""
    identity = Identity.chat("telegram", 42, 42, group=False)
    message = build_inbound(identity, content="", metadata={"session_key": "k"})
    assert Ingress(message).session_key == "k"
    assert Ingress(None).session_key == ""


def test_build_inbound_refuses_values_that_are_not_text() -> None:
    """A number, list or None where text belongs raises PayloadError, never builds a message."""
    identity = Identity.chat("telegram", -100, 42, group=True)
    for bad in (123, ["hi"], None, b"hi"):
        value: Any = bad
        with pytest.raises(PayloadError, match="must be text"):
            build_inbound(identity, content=value, metadata={})
        with pytest.raises(PayloadError, match="must be text"):
            build_inbound(identity, content="", metadata={}, message_id=value)
        with pytest.raises(PayloadError, match="metadata"):
            build_inbound(identity, content="", metadata={"sender_name": value})
    for media in (("photo",), ({"kind": 1},), ({"kind": "photo", "size": "9"},)):
        with pytest.raises(PayloadError, match="media"):
            build_inbound(identity, content="", metadata={}, media=media)  # type: ignore[arg-type]
    photo = build_inbound(identity, content="", metadata={}, media=({"kind": "photo"},))
    assert [(item.kind, item.file_id) for item in photo.media] == [("photo", "")]


def test_build_inbound_fills_every_identity_field_but_agent_and_tenant() -> None:
    """build_inbound copies what Identity and the message share, but the host's agent and tenant."""
    shared = {field.name for field in fields(Identity)} & InboundMessage.model_fields.keys()
    assert set(_FROM_IDENTITY) == shared - {"agent_id", "tenant_id"}
    assert {"user_id", "sender_id", "channel", "chat_id", "peer_kind", "sender_kind"} <= shared
    identity = replace(Identity.chat("telegram", -100, 42, group=True), agent_id="a", tenant_id="t")
    message = build_inbound(identity, content="", metadata={})
    assert message.identity() == replace(identity, agent_id=None, tenant_id=None)


def test_build_inbound_takes_any_mapping_of_text_as_metadata() -> None:
    """A read-only mapping is metadata as a dict is: copied, frozen, the same message."""
    identity = Identity.chat("telegram", -100, 42, group=True)
    frozen = build_inbound(identity, content="", metadata=MappingProxyType({"event": "message"}))
    plain = build_inbound(identity, content="", metadata={"event": "message"})
    assert frozen == plain
    assert dict(frozen.metadata) == {"event": "message"}


def test_adapter_metadata_keys_are_the_meta_keys_without_origin_ones() -> None:
    """An adapter may write every MetaKey but the signed origin's (origin_via, origin_sender_id)."""
    assert {
        "session_key",
        "event",
        "sender_name",
        "addressed",
        "command",
        "reply_to_message_id",
        "edit_date",
        "callback_data",
        "reply_target",
    } == ADAPTER_METADATA_KEYS
    assert {MetaKey.ORIGIN_VIA, MetaKey.ORIGIN_SENDER_ID}.isdisjoint(ADAPTER_METADATA_KEYS)

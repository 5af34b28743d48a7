"""``RunRequest.propagated``: true only for a turn the builder attributed to a verified origin.

Also the documented ``metadata["command"]`` of a request built from a command message.
"""

from __future__ import annotations

import pytest

from actorscope.channels.telegram import PLATFORM as TELEGRAM
from actorscope.context import bind_identity
from actorscope.identity import Identity, PeerKind
from actorscope.messages import InboundMessage, MetaKey, RunRequest
from actorscope.propagation import (
    OriginSigner,
    RunInfo,
    spawn_subagent,
)
from actorscope.propagation._origin import MIN_KEY_BYTES

ALICE = Identity(
    user_id="group:telegram:-100123",
    sender_id="4242",
    channel="telegram",
    chat_id="-100123",
    peer_kind=PeerKind.GROUP,
)
RUN = RunInfo(session_key="agent:main:telegram:group:-100123", trace_id="tr")


@pytest.fixture
def signer() -> OriginSigner:
    """A fresh signer per test (its replay guard is per signer)."""
    return OriginSigner(b"p" * MIN_KEY_BYTES)


def announce(signer: OriginSigner) -> InboundMessage:
    """Alice's sub-agent announcing its result, signed by ``signer``."""
    with bind_identity(ALICE), RUN.bind():
        task = spawn_subagent("write notes.txt", signer=signer)
    return task.announce("written", signer=signer)


def test_a_verified_subagent_announce_is_propagated(signer: OriginSigner) -> None:
    """The announce of Alice's sub-agent runs as Alice, and says it is a propagated turn."""
    request = signer.run_request(announce(signer))
    assert request.propagated is True
    assert request.sender_id == "4242"
    assert request.metadata[MetaKey.ORIGIN_VIA].startswith("subagent:")


def test_a_direct_message_is_not_propagated(signer: OriginSigner) -> None:
    """A person's own message is not propagated, even carrying an origin_via key of its own."""
    for metadata in ({}, {MetaKey.ORIGIN_VIA: "subagent:x"}):
        direct = InboundMessage(
            channel="telegram",
            sender_id="4242",
            chat_id="4242",
            user_id="4242",
            content="hi",
            metadata=metadata,
        )
        assert signer.run_request(direct).propagated is False


def test_a_forged_or_replayed_origin_is_not_propagated(signer: OriginSigner) -> None:
    """Signed by another key, or delivered a second time, the announce stays synthetic."""
    forged = signer.run_request(announce(OriginSigner(b"x" * MIN_KEY_BYTES)))
    assert (forged.propagated, forged.sender_id.startswith("subagent:")) == (False, True)
    carrier = announce(signer)
    assert signer.run_request(carrier).propagated is True
    assert signer.run_request(carrier).propagated is False


def test_propagated_is_not_a_field_anyone_can_set() -> None:
    """It is read from the verified metadata; a constructor or JSON cannot pass it."""
    fields = {
        "session_key": "s",
        "user_id": "42",
        "sender_id": "42",
        "channel": "t",
        "chat_id": "1",
    }
    with pytest.raises(ValueError, match="propagated"):
        RunRequest.model_validate({**fields, "propagated": True})
    assert "propagated" not in RunRequest(**fields).model_dump()


def test_a_command_message_names_its_command(signer: OriginSigner) -> None:
    """``/note@bot buy milk`` in a private chat: metadata["command"] is "note", content kept."""
    update = {
        "update_id": 1,
        "message": {
            "message_id": 5,
            "date": 0,
            "chat": {"id": 4242, "type": "private"},
            "from": {"id": 4242, "is_bot": False, "first_name": "Alice"},
            "text": "/note@notes_bot buy milk",
        },
    }
    message = TELEGRAM.normalize_update(update)
    assert message is not None
    request = signer.run_request(message)
    assert request.metadata[MetaKey.COMMAND] == "note"
    assert request.content == "/note@notes_bot buy milk"
    assert request.propagated is False

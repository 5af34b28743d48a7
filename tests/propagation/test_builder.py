"""The next-turn builder's rule, the scope it rebuilds, session keys, and ingress sanitising."""

from __future__ import annotations

from collections.abc import Callable
from types import MappingProxyType

import pytest
from pydantic import ValidationError

from actorscope.errors import IdentityError
from actorscope.identity import PeerKind, SenderKind
from actorscope.messages import InboundMessage, MetaKey, RunRequest
from actorscope.propagation import Origin, OriginSigner
from actorscope.propagation._keys import (
    META_ORIGIN_AGENT_ID,
    META_ORIGIN_ROLE,
    META_ORIGIN_SIGNATURE,
    META_ORIGIN_TRACE_ID,
    ORIGIN_FIELD_KEYS,
)
from actorscope.propagation._origin import (
    _CARRIED,
    _DECIDED,
    MIN_KEY_BYTES,
    origin_scope,
    verified_origin,
)

GROUP_ORIGIN = Origin(
    sender_id="4242",
    role="admin",
    channel="telegram",
    chat_id="-100123",
    user_id="group:telegram:-100123",
    peer_kind=PeerKind.GROUP,
    trace_id="trace-1",
)


@pytest.fixture
def signer() -> OriginSigner:
    """A fresh signer per test, so no test sees another's consumed origins."""
    return OriginSigner(b"b" * MIN_KEY_BYTES)


def message(sender: str = "subagent:t1", **changes: object) -> InboundMessage:
    """A message in the Telegram group -100123 (synthetic sender by default)."""
    fields: dict[str, object] = {
        "channel": "telegram",
        "sender_id": sender,
        "chat_id": "-100123",
        "content": "result",
        "peer_kind": "group",
        "user_id": "group:telegram:-100123",
        "sender_kind": "synthetic" if sender.startswith("subagent:") else "user",
        "metadata": {"note": "kept"},
    }
    fields.update(changes)
    return InboundMessage.model_validate(fields)


def test_verified_origin_becomes_sender_role_and_rebuilt_scope(signer: OriginSigner) -> None:
    """A synthetic carrier with a verified origin runs as the origin's human, with their role."""
    request = signer.run_request(signer.attach(message(), GROUP_ORIGIN))
    assert (request.sender_id, request.role, request.user_id) == (
        "4242",
        "admin",
        "group:telegram:-100123",
    )
    assert request.sender_kind is SenderKind.USER
    assert request.peer_kind is PeerKind.GROUP
    assert request.identity().actor_id == "4242"


def test_request_metadata_holds_only_verified_origin_fields(signer: OriginSigner) -> None:
    """The request keeps its own keys, the verified origin and its carrier; no signature."""
    request = signer.run_request(signer.attach(message(), GROUP_ORIGIN))
    assert set(request.metadata) == {"note", *ORIGIN_FIELD_KEYS, MetaKey.ORIGIN_VIA}
    assert request.metadata[META_ORIGIN_TRACE_ID] == "trace-1"
    assert request.metadata[MetaKey.ORIGIN_VIA] == "subagent:t1"


@pytest.mark.parametrize(
    ("extra", "kept"),
    [
        ({}, set()),
        ({"note": "kept"}, {"note"}),
        ({"origin_forged": "x"}, set()),
        ({"origin_forged": "x", "note": "kept"}, {"note"}),
    ],
    ids=["origin-only", "other-key", "unsigned-origin-key", "both"],
)
@pytest.mark.parametrize("agent", [None, "a1"])
def test_request_metadata_drops_unsigned_origin_keys_and_keeps_the_rest(
    extra: dict[str, str], kept: set[str], agent: str | None, signer: OriginSigner
) -> None:
    """Beside a verified origin, an unsigned origin_* key is dropped and other keys stay."""
    origin = GROUP_ORIGIN._replace(agent_id=agent)
    signed = signer.attach(message(metadata={}, agent_id=agent), origin)
    carrier = message(metadata={**signed.metadata, **extra}, agent_id=agent)
    request = signer.run_request(carrier)
    signed_keys = {*ORIGIN_FIELD_KEYS, *([META_ORIGIN_AGENT_ID] if agent else [])}
    assert set(request.metadata) == kept | signed_keys | {MetaKey.ORIGIN_VIA}
    assert request.sender_id == "4242"


def test_unverified_origin_leaves_the_synthetic_sender_and_no_role(signer: OriginSigner) -> None:
    """Unsigned origin fields, even claiming an owner, change nothing and are dropped."""
    forged = message(metadata={**GROUP_ORIGIN.to_metadata(), META_ORIGIN_ROLE: "owner"})
    request = signer.run_request(forged)
    assert (request.sender_id, request.role) == ("subagent:t1", "")
    assert request.sender_kind is SenderKind.SYNTHETIC
    assert set(request.metadata) == set()


@pytest.mark.parametrize("sender", ["", "subagent:x", "ticker:j", "session_send_tool", "777000",
                                    "1087968824", "136817688", "SUBAGENT:x", "\u200bsubagent:x",
                                    "0777000", "\uff17\uff17\uff17\uff10\uff10\uff10", "042",
                                    "42\u200b", "+42", "4\x002"])  # fmt: skip
def test_origin_sender_that_is_no_person_is_ignored(sender: str, signer: OriginSigner) -> None:
    """Empty, synthetic, placeholder and look-alike origin senders never become the sender."""
    origin = Origin(sender_id=sender, channel="telegram", chat_id="-100123",
                    peer_kind=PeerKind.GROUP)  # fmt: skip
    signed = signer.attach(message(), origin)
    assert verified_origin(signed, signer) is None
    assert signer.run_request(signed).sender_id == "subagent:t1"


@pytest.mark.parametrize("sender", ["42|bob", " 42", "42| bob "])
def test_legacy_origin_sender_becomes_its_id(sender: str, signer: OriginSigner) -> None:
    """A legacy ``id|name`` (or padded) origin sender is split to its id, as in a direct check."""
    origin = Origin(sender_id=sender, channel="telegram", chat_id="-100123",
                    peer_kind=PeerKind.GROUP)  # fmt: skip
    request = signer.run_request(signer.attach(message(), origin))
    assert (request.sender_id, request.sender_kind) == ("42", SenderKind.USER)
    assert request.user_id == "group:telegram:-100123"


def test_legacy_guild_origin_sender_rebuilds_the_member_scope(signer: OriginSigner) -> None:
    """A legacy ``id|name`` Discord origin gets the member scope of its id."""
    origin = Origin(sender_id="42|bob", channel="discord", chat_id="555",
                    user_id="guild:900:user:42", peer_kind=PeerKind.GROUP)  # fmt: skip
    assert origin_scope(origin) == "guild:900:user:42"


def test_origin_on_a_person_message_is_ignored(signer: OriginSigner) -> None:
    """A person's own message keeps its sender even with a valid signed origin on it."""
    signed = signer.attach(message("5151"), GROUP_ORIGIN)
    assert signer.verify(signed) == GROUP_ORIGIN
    request = signer.run_request(signed)
    assert (request.sender_id, request.role) == ("5151", "")
    assert MetaKey.ORIGIN_SENDER_ID not in request.metadata


@pytest.mark.parametrize(
    ("origin", "scope"),
    [
        (GROUP_ORIGIN, "group:telegram:-100123"),
        (Origin("42", channel="tg2", chat_id="-0100", peer_kind=PeerKind.GROUP), "group:tg2:-100"),
        (Origin("42", channel="telegram", chat_id="-5", user_id="group:telegram:-9"),
         "group:telegram:-5"),
        (Origin("42", channel="discord", chat_id="7", user_id="guild:81:user:99",
                peer_kind=PeerKind.GROUP), "guild:81:user:42"),
        (Origin("42", channel="telegram", chat_id="42", user_id="42"), "42"),
        (Origin("42", channel="http"), "42"),
        (Origin("42", channel="Bad Channel", chat_id="-5", peer_kind=PeerKind.GROUP), None),
        (Origin("42", channel="telegram", chat_id="x", peer_kind=PeerKind.GROUP), None),
        (Origin("42", user_id="guild:81:webhook:3", peer_kind=PeerKind.GROUP), None),
        (Origin("bob", user_id="guild:81:user:99", peer_kind=PeerKind.GROUP), None),
    ],
)  # fmt: skip
def test_origin_scope_is_rebuilt_from_channel_chat_or_guild(
    origin: Origin, scope: str | None
) -> None:
    """Group scopes come from channel+chat, guild scopes from guild+sender; malformed is None."""
    assert origin_scope(origin) == scope


def test_malformed_origin_scope_keeps_the_run_synthetic(signer: OriginSigner) -> None:
    """A verified origin whose scope cannot be rebuilt is ignored."""
    origin = Origin("42", channel="telegram", chat_id="nope", peer_kind=PeerKind.GROUP)
    assert signer.run_request(signer.attach(message(), origin)).sender_id == ("subagent:t1")


def test_guild_origin_rebuilds_the_member_scope(signer: OriginSigner) -> None:
    """A Discord guild member's origin gives the next turn that member's guild scope."""
    origin = Origin("42", channel="discord", chat_id="7", user_id="guild:81:user:42",
                    peer_kind=PeerKind.GROUP)  # fmt: skip
    carrier = message(channel="discord", chat_id="7", user_id="guild:81:user:42", thread_id="8")
    request = signer.run_request(signer.attach(carrier, origin), agent_key="bot")
    assert (request.user_id, request.sender_id) == ("guild:81:user:42", "42")
    assert request.session_key == "agent:bot:discord:group:7:thread:8"


@pytest.mark.parametrize(
    ("channel", "thread", "key"),
    [
        ("telegram", "", "agent:main:telegram:group:-100123"),
        ("telegram", "5", "agent:main:telegram:group:-100123:topic:5"),
        ("discord", "5", "agent:main:discord:group:-100123:thread:5"),
    ],
)
def test_session_key_follows_the_carrier(
    channel: str, thread: str, key: str, signer: OriginSigner
) -> None:
    """Session keys come from the carrier's channel, chat and topic (Telegram) or thread."""
    request = signer.run_request(message(channel=channel, thread_id=thread))
    assert request.session_key == key


def test_agent_and_tenant_fill_in_only_when_the_message_has_none(signer: OriginSigner) -> None:
    """Defaults apply to a message without agent/tenant; a message's own ids win."""
    plain = signer.run_request(message(), agent_id="a", tenant_id="t")
    assert (plain.agent_id, plain.tenant_id) == ("a", "t")
    own = signer.run_request(message(agent_id="a2", tenant_id="t2"), agent_id="a", tenant_id="t")
    assert (own.agent_id, own.tenant_id) == ("a2", "t2")


@pytest.mark.parametrize(("chat", "agent_key"), [("", "main"), ("-1", "bad key"), ("-1", "")])
def test_malformed_chat_or_agent_key_raises_identity_error(
    chat: str, agent_key: str, signer: OriginSigner
) -> None:
    """A message without a usable chat id, or a bad agent key, is a clear IdentityError."""
    with pytest.raises(IdentityError):
        signer.run_request(message(chat_id=chat), agent_key=agent_key)


@pytest.mark.parametrize("field", ["agent_id", "tenant_id"])
def test_non_string_agent_or_tenant_default_is_an_identity_error(
    field: str, signer: OriginSigner
) -> None:
    """The host's agent/tenant defaults must be strings: nothing unvalidated reaches a request."""
    with pytest.raises(IdentityError, match=field):
        signer.run_request(message(), **{field: 42})  # type: ignore[arg-type]


def test_sanitize_inbound_drops_every_origin_key(signer: OriginSigner) -> None:
    """Channel ingress drops all origin_* keys (known or not) and keeps the rest."""
    dirty = signer.attach(message("5151"), GROUP_ORIGIN)
    dirty = message("5151", metadata={**dirty.metadata, "origin_future": "x", "originator": "y"})
    clean = Origin.strip(dirty)
    assert dict(clean.metadata) == {"note": "kept", "originator": "y"}
    assert clean.model_dump(exclude={"metadata"}) == dirty.model_dump(exclude={"metadata"})


def test_sanitize_inbound_returns_a_clean_message_unchanged() -> None:
    """A message without origin keys is returned as is (no copy)."""
    clean = message("5151")
    assert Origin.strip(clean) is clean


@pytest.mark.parametrize(
    "make",
    [
        lambda signer: signer.attach(message(), GROUP_ORIGIN),
        lambda signer: signer.attach(
            message(metadata={"note": "kept", "origin_junk": "x"}), GROUP_ORIGIN
        ),
        lambda _: message(metadata={"origin_sender_id": "1"}),
        lambda _: message("5151", agent_id="a", tenant_id="t", thread_id="4", message_id="9"),
    ],
    ids=["signed", "signed-with-junk", "unsigned", "person"],
)
def test_built_request_equals_a_validated_one(
    make: Callable[[OriginSigner], InboundMessage], signer: OriginSigner
) -> None:
    """The builder's request is exactly what pydantic validation builds, and behaves like it."""
    msg = make(signer)
    request = signer.run_request(msg)
    assert (request.sender_id == "4242") is (META_ORIGIN_SIGNATURE in msg.metadata)
    validated = RunRequest.model_validate(request.model_dump())
    assert request == validated
    assert set(vars(request)) == set(RunRequest.model_fields)
    assert request.model_fields_set == validated.model_fields_set
    assert type(request.metadata) is type(validated.metadata) is MappingProxyType
    assert type(request.peer_kind) is PeerKind
    assert type(request.sender_kind) is SenderKind
    assert RunRequest.model_validate_json(request.model_dump_json()) == request
    assert hash(request) == hash(validated)
    assert request.model_copy(update={"role": "x"}).role == "x"
    with pytest.raises(ValidationError):
        request.role = "owner"
    assert not any(
        k.startswith("origin_") and k not in ORIGIN_FIELD_KEYS and k != MetaKey.ORIGIN_VIA
        for k in request.metadata
    )


def test_builder_carries_every_shared_field_it_does_not_decide(signer: OriginSigner) -> None:
    """The carried list is derived: the fields both models share, less those the builder sets."""
    shared = InboundMessage.model_fields.keys() & RunRequest.model_fields.keys()
    assert set(_CARRIED) == shared - _DECIDED
    assert set(_CARRIED) | _DECIDED == set(RunRequest.model_fields)
    # A review gate: a field added to both models is carried as the message has it, even onto
    # a request attributed to an origin; this fails until someone decides that is right.
    assert _CARRIED == ("channel", "chat_id", "content", "thread_id", "message_id")
    msg = signer.attach(message(thread_id="4", message_id="9"), GROUP_ORIGIN)
    request = signer.run_request(msg)
    assert request.propagated
    assert [getattr(request, name) for name in _CARRIED] == [
        getattr(msg, name) for name in _CARRIED
    ]

"""Origin capture and the signer: round trips, every tampering, age limits, key handling."""

from __future__ import annotations

import hashlib
import hmac
from typing import get_type_hints

import pytest

from actorscope.errors import ConfigError
from actorscope.identity import Identity, PeerKind
from actorscope.messages import InboundMessage, MetaKey
from actorscope.propagation import Origin, OriginSigner
from actorscope.propagation._keys import (
    META_ORIGIN_PEER_KIND,
    META_ORIGIN_SIGNATURE,
    META_ORIGIN_SIGNED_AT,
    ORIGIN_AGENT_KEYS,
    ORIGIN_FIELD_KEYS,
    ORIGIN_PREFIX,
)
from actorscope.propagation._origin import MIN_KEY_BYTES

KEY = b"k" * MIN_KEY_BYTES
NOW = 1_800_000_000.0
ORIGIN = Origin(
    sender_id="4242",
    role="admin",
    channel="telegram",
    chat_id="-100123",
    user_id="group:telegram:-100123",
    peer_kind=PeerKind.GROUP,
    session_key="agent:main:telegram:group:-100123",
    trace_id="t1",
)


def carrier(**changes: object) -> InboundMessage:
    """A synthetic announce message without an origin yet."""
    fields: dict[str, object] = {
        "channel": "telegram",
        "sender_id": "subagent:abc",
        "chat_id": "-100123",
        "content": "done",
        "peer_kind": "group",
        "user_id": "group:telegram:-100123",
        "sender_kind": "synthetic",
        "metadata": {"trace": "keep-me"},
    }
    fields.update(changes)
    return InboundMessage.model_validate(fields)


def signer(
    now: float = NOW, key: bytes = KEY, *, max_age: float = 600.0, max_skew: float = 30.0
) -> OriginSigner:
    """A signer over a fixed clock."""
    return OriginSigner(key, clock=lambda: now, max_age=max_age, max_skew=max_skew)


def test_from_identity_copies_the_run_fields() -> None:
    """An origin taken from an identity keeps sender, role, channel, chat, scope and peer kind."""
    identity = Identity.chat("telegram", -100123, 4242, group=True, role="admin")
    origin = Origin.from_identity(identity, session_key="s", trace_id="t")
    assert origin == Origin("4242", "admin", "telegram", "-100123", identity.user_id,
                            PeerKind.GROUP, "s", "t")  # fmt: skip


def test_metadata_round_trip() -> None:
    """to_metadata / from_metadata are inverse, and write only origin keys."""
    metadata = ORIGIN.to_metadata()
    assert set(metadata) == set(ORIGIN_FIELD_KEYS)
    assert Origin.from_metadata(metadata) == ORIGIN


@pytest.mark.parametrize(
    "metadata",
    [
        {},
        {MetaKey.ORIGIN_SENDER_ID: "1"},
        {MetaKey.ORIGIN_SENDER_ID: "1", META_ORIGIN_PEER_KIND: "x"},
    ],
)
def test_from_metadata_without_sender_or_peer_kind_is_none(metadata: dict[str, str]) -> None:
    """No sender, or an unknown peer kind, means no origin."""
    assert Origin.from_metadata(metadata) is None


def test_attach_then_verify_returns_the_origin_and_keeps_other_metadata() -> None:
    """A signed carrier verifies to the same origin; unrelated metadata stays."""
    signed = signer().attach(carrier(), ORIGIN)
    assert set(signed.metadata) == {*ORIGIN_FIELD_KEYS, META_ORIGIN_SIGNED_AT,
                                    META_ORIGIN_SIGNATURE, "trace"}  # fmt: skip
    assert signed.metadata["trace"] == "keep-me"
    assert signer().verify(signed) == ORIGIN


def test_attach_replaces_any_origin_keys_already_present() -> None:
    """Origin keys the carrier already had (say, copied by a careless caller) are overwritten."""
    dirty = carrier(metadata={MetaKey.ORIGIN_SENDER_ID: "6666", "origin_extra": "x"})
    signed = signer().attach(dirty, ORIGIN)
    assert "origin_extra" not in signed.metadata
    assert signer().verify(signed) == ORIGIN


def test_unsigned_origin_does_not_verify() -> None:
    """Origin fields without a signature are not an origin."""
    assert signer().verify(carrier(metadata=ORIGIN.to_metadata())) is None


def test_wrong_key_does_not_verify() -> None:
    """An origin signed with another key is ignored."""
    signed = signer(key=b"x" * MIN_KEY_BYTES).attach(carrier(), ORIGIN)
    assert signer().verify(signed) is None


@pytest.mark.parametrize("key", sorted(ORIGIN_FIELD_KEYS))
def test_changing_any_signed_origin_field_breaks_verification(key: str) -> None:
    """Each origin field is covered by the signature."""
    signed = signer().attach(carrier(), ORIGIN)
    value = "direct" if key == META_ORIGIN_PEER_KIND else signed.metadata[key] + "9"
    tampered = carrier(metadata={**signed.metadata, key: value})
    assert signer().verify(tampered) is None


@pytest.mark.parametrize("key", sorted(ORIGIN_FIELD_KEYS))
def test_removing_any_origin_field_key_breaks_verification(key: str) -> None:
    """attach() writes every field key; one missing, even one signed as "", is not our origin."""
    signed = signer().attach(carrier(), ORIGIN._replace(session_key="", trace_id=""))
    metadata = {k: v for k, v in signed.metadata.items() if k != key}
    assert signer().verify(carrier(metadata=metadata)) is None


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("sender_id", "subagent:other"),
        ("channel", "discord"),
        ("chat_id", "-100999"),
        ("thread_id", "3"),
        ("user_id", "group:telegram:-100999"),
        ("agent_id", "00000000-0000-4000-8000-000000000001"),
        ("tenant_id", "00000000-0000-4000-8000-000000000002"),
        ("content", "something else"),
    ],
)
def test_moving_the_origin_to_another_carrier_breaks_verification(field: str, value: str) -> None:
    """The signature binds the carrier's sender, routing and text: no replay onto another."""
    signed = signer().attach(carrier(), ORIGIN)
    replayed = carrier(metadata=dict(signed.metadata), **{field: value})
    assert signer().verify(replayed) is None


@pytest.mark.parametrize(
    ("signature", "signed_at"),
    [("zz" * 32, None), ("ab", None), ("A" * 64, None), (None, "-5"), (None, "1e9"), (None, "")],
)
def test_malformed_signature_or_timestamp_is_ignored(
    signature: str | None, signed_at: str | None
) -> None:
    """Non-hex, short or upper-case signatures and non-decimal timestamps never verify."""
    signed = signer().attach(carrier(), ORIGIN)
    metadata = dict(signed.metadata)
    if signature is not None:
        metadata[META_ORIGIN_SIGNATURE] = signature
    if signed_at is not None:
        metadata[META_ORIGIN_SIGNED_AT] = signed_at
    assert signer().verify(carrier(metadata=metadata)) is None


def test_non_ascii_signature_is_ignored_without_error() -> None:
    """A signature with non-ASCII characters is rejected, not a TypeError from compare_digest."""
    signed = signer().attach(carrier(), ORIGIN)
    metadata = {**signed.metadata, META_ORIGIN_SIGNATURE: "é" * 64}
    assert signer().verify(carrier(metadata=metadata)) is None


def test_age_limits() -> None:
    """Valid up to max_age; older, or further in the future than max_skew, is ignored."""
    signed = signer(NOW).attach(carrier(), ORIGIN)
    assert signer(NOW + 600, max_age=600).verify(signed) == ORIGIN
    assert signer(NOW + 600.002, max_age=600).verify(signed) is None
    assert signer(NOW - 30, max_skew=30).verify(signed) == ORIGIN
    assert signer(NOW - 30.002, max_skew=30).verify(signed) is None


def test_strange_strings_sign_and_verify() -> None:
    """Unicode, separators and lone surrogates in any field still sign and verify exactly."""
    odd = Origin(sender_id="4242", role='a","b', session_key="\ud800|\x00", trace_id="ü:,")
    signed = signer().attach(carrier(content="\udfff ✓"), odd)
    assert signer().verify(signed) == odd


def test_random_keys_differ_per_signer() -> None:
    """Two default signers (no key) do not verify each other's origins."""
    signed = OriginSigner().attach(carrier(), ORIGIN)
    assert OriginSigner().verify(signed) is None


def test_from_env_shares_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """A signer from an environment variable verifies what one with the same bytes signed."""
    monkeypatch.setenv("TEST_ORIGIN_KEY", KEY.decode())
    from_env = OriginSigner.from_env("TEST_ORIGIN_KEY", clock=lambda: NOW)
    assert from_env.verify(signer().attach(carrier(), ORIGIN)) == ORIGIN


def test_from_env_reads_the_documented_variable_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a name, from_env reads OriginSigner.KEY_ENV, ACTORSCOPE_ORIGIN_KEY."""
    assert OriginSigner.KEY_ENV == "ACTORSCOPE_ORIGIN_KEY"
    monkeypatch.setenv("ACTORSCOPE_ORIGIN_KEY", KEY.decode())
    from_env = OriginSigner.from_env(clock=lambda: NOW)
    assert from_env.verify(signer().attach(carrier(), ORIGIN)) == ORIGIN


@pytest.mark.parametrize("value", [None, "short"])
def test_from_env_missing_or_short_key_is_a_config_error(
    monkeypatch: pytest.MonkeyPatch, value: str | None
) -> None:
    """An unset or too-short key variable raises ConfigError naming the variable."""
    if value is None:
        monkeypatch.delenv("TEST_ORIGIN_KEY", raising=False)
    else:
        monkeypatch.setenv("TEST_ORIGIN_KEY", value)
    with pytest.raises(ConfigError, match="TEST_ORIGIN_KEY"):
        OriginSigner.from_env("TEST_ORIGIN_KEY")


@pytest.mark.parametrize(
    ("key", "kwargs", "match"),
    [
        (b"short", {}, "at least"),
        ("k" * 40, {}, "must be bytes"),
        (KEY, {"max_age": 0}, "max_age"),
        (KEY, {"max_skew": -1}, "max_skew"),
    ],
)
def test_bad_signer_settings_are_config_errors(
    key: object, kwargs: dict[str, float], match: str
) -> None:
    """A short or non-bytes key, or a non-positive max age, is refused up front."""
    with pytest.raises(ConfigError, match=match):
        OriginSigner(key, **kwargs)  # type: ignore[arg-type]


def test_repr_never_shows_the_key() -> None:
    """The signer's repr names its max age, not its key."""
    text = repr(signer())
    assert "k" * 8 not in text
    assert "max_age=600s" in text


def test_identity_without_sender_signs_an_empty_origin() -> None:
    """An HTTP-style run (no sender) still signs; the empty sender is the builder's business."""
    origin = Origin.from_identity(Identity(user_id="u1", sender_id=""))
    assert signer().verify(signer().attach(carrier(), origin)) == origin


@pytest.mark.parametrize("size", [MIN_KEY_BYTES, 64, 65, 200])
def test_mac_is_hmac_sha256(size: int) -> None:
    """The signer's MAC equals hmac.new(key, data, sha256) for short and long keys."""
    key = bytes(range(256))[:size]
    data = b"actorscope \x00 \xff" * 30
    expected = hmac.new(key, data, hashlib.sha256).hexdigest()
    assert OriginSigner(key)._hmac_hex(data) == expected


@pytest.mark.parametrize(
    ("content", "chat"), [("a\x00", "-1"), ("a", "\x00-1"), ("a\x00\x00", ""), ("", "-1\x00")]
)
def test_nul_characters_sign_and_cannot_be_shifted_between_fields(content: str, chat: str) -> None:
    """Parts holding NULs still verify, and moving a NUL from one part to the next breaks it."""
    signed = signer().attach(carrier(content="a\x00", chat_id="-1"), ORIGIN)
    moved = carrier(content=content, chat_id=chat, metadata=dict(signed.metadata))
    same = (content, chat) == ("a\x00", "-1")
    assert (signer().verify(moved) == ORIGIN) is same


@pytest.mark.parametrize(
    ("message", "origin", "expected"),
    [
        (
            carrier(),
            ORIGIN,
            "17848569360d26044a461c3007878bba2f87e92cd12d0a9a68690af7775ec01a",
        ),
        (
            carrier(content="x\x00y", agent_id="ag", tenant_id="t"),
            ORIGIN._replace(agent_id="a1"),
            "42fdfedcc09d747a623af86958462e2c8cfc0f59506e89b32e92bc41602ec9d3",
        ),
    ],
    ids=["nul-joined", "length-prefixed"],
)
def test_signature_bytes_are_stable(message: InboundMessage, origin: Origin, expected: str) -> None:
    """A fixed key, clock and carrier sign to a fixed v2 signature: both sides of a queue agree."""
    signed = signer().attach(message, origin)
    assert signed.metadata[META_ORIGIN_SIGNATURE] == expected
    assert signer().verify(signed) == origin


def test_origin_keys_are_named_after_the_origin_fields() -> None:
    """Each origin key is origin_ + an Origin field, in the signed order (agent, tenant last)."""
    names = get_type_hints(Origin)
    assert (*ORIGIN_FIELD_KEYS, *ORIGIN_AGENT_KEYS) == tuple(ORIGIN_PREFIX + name for name in names)

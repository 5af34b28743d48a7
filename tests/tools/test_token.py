"""Identity tokens: signed with the propagation signer; anything not ours is the empty identity."""

from __future__ import annotations

import base64
import json
import logging
from dataclasses import replace

import pytest

from actorscope.identity import Identity, PeerKind, SenderKind
from actorscope.messages import InboundMessage
from actorscope.propagation import Origin, OriginSigner
from actorscope.tools import IdentityToken
from actorscope.tools._registry import EMPTY_IDENTITY
from actorscope.tools._token import TOKEN_PURPOSE, identity_from_token

pytestmark = pytest.mark.sqlite_only(
    "the tools' subject is the boundary, not the dialect: test_cron_keys.py and tests/store "
    "run the tools' tables on both"
)

KEY = b"k" * 32
MEMBER = replace(
    Identity.chat("telegram", -100200300, 5151, group=True, role="admin"),
    tenant_id="11111111-1111-4111-8111-111111111111",
    agent_id="22222222-2222-4222-8222-222222222222",
)


class Clock:
    """A clock tests move by hand."""

    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _reencode(token: str, **changes: str) -> str:
    """The token with its payload fields changed (and the old signature kept)."""
    prefix, body, signed_at, signature = token.split(".")
    fields = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    fields.update(changes)
    raw = json.dumps(fields).encode()
    encoded = base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
    return ".".join((prefix, encoded, signed_at, signature))


@pytest.mark.parametrize(
    "identity",
    [
        MEMBER,
        Identity.chat("telegram", 4242, 4242, group=False),
        Identity(user_id="", sender_id="", sender_kind=SenderKind.NONE),
        Identity(user_id="proyecto-東京-🧠", sender_id=" x ", peer_kind=PeerKind.GROUP),
    ],
)
def test_round_trip_gives_the_same_identity(identity: Identity) -> None:
    """A token made with a signer decodes, with the same key, to the identity it carried."""
    token = IdentityToken.encode(identity, OriginSigner(KEY))
    assert IdentityToken.decode(token, OriginSigner(KEY)) == identity


def test_another_key_or_a_tampered_field_does_not_verify() -> None:
    """A different key, or any changed field (the sender, the role), fails verification."""
    token = IdentityToken.encode(MEMBER, OriginSigner(KEY))
    signer = OriginSigner(KEY)
    assert IdentityToken.decode(token, OriginSigner(b"x" * 32)) is None
    assert IdentityToken.decode(_reencode(token, sender_id="4242"), signer) is None
    assert IdentityToken.decode(_reencode(token, role="owner"), signer) is None
    assert IdentityToken.decode(_reencode(token, user_id="4242"), signer) is None


def test_expired_and_future_tokens_do_not_verify() -> None:
    """Tokens older than max_age, or too far in the future, are refused."""
    clock = Clock()
    signer = OriginSigner(KEY, max_age=60, max_skew=5, clock=clock)
    token = IdentityToken.encode(MEMBER, signer)
    clock.now += 59
    assert IdentityToken.decode(token, signer) == MEMBER
    clock.now += 2
    assert IdentityToken.decode(token, signer) is None
    clock.now -= 61 + 6
    assert IdentityToken.decode(token, signer) is None


@pytest.mark.parametrize(
    "token",
    [
        "",
        "garbage",
        "ast1.e30.1.00",
        "ast2.e30.1." + "0" * 64,
        "ast1.!!!.1." + "0" * 64,
        "ast1." + base64.urlsafe_b64encode(b"[1]").decode() + ".1." + "0" * 64,
        "x" * 10_000,
    ],
)
def test_malformed_tokens_are_none(token: str) -> None:
    """Anything that is not a well-formed token decodes to None, never an exception."""
    assert IdentityToken.decode(token, OriginSigner(KEY)) is None


def test_bad_field_values_are_refused_even_when_signed() -> None:
    """A signed token whose fields cannot make an Identity is still refused."""
    signer = OriginSigner(KEY)
    fields = ("g", "1", "", "", "sideways", "user", "", "", "")
    signed_at, signature = signer.sign_fields(TOKEN_PURPOSE, fields)
    names = ("user_id", "sender_id", "channel", "chat_id", "peer_kind", "sender_kind", "role")
    body = json.dumps(dict(zip((*names, "tenant_id", "agent_id"), fields, strict=True)))
    encoded = base64.urlsafe_b64encode(body.encode()).rstrip(b"=").decode()
    assert IdentityToken.decode(f"ast1.{encoded}.{signed_at}.{signature}", signer) is None


def test_an_origin_signature_is_not_a_token_signature() -> None:
    """Signatures are domain-separated: an origin's signature never verifies as a token's."""
    signer = OriginSigner(KEY)
    carrier = InboundMessage(
        channel="telegram", sender_id="subagent:1", chat_id="1", user_id="1", content=""
    )
    signed = signer.attach(carrier, Origin.from_identity(MEMBER))
    signature = signed.metadata["origin_signature"]
    signed_at = signed.metadata["origin_signed_at"]
    token = IdentityToken.encode(MEMBER, signer)
    prefix, body, _, _ = token.split(".")
    assert IdentityToken.decode(f"{prefix}.{body}.{signed_at}.{signature}", signer) is None


def test_identity_from_token_falls_back_to_the_empty_identity(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """No token or a bad one gives the empty identity (a bad one is logged, not echoed)."""
    signer = OriginSigner(KEY)
    assert identity_from_token(None, signer) is EMPTY_IDENTITY
    with caplog.at_level(logging.WARNING):
        assert identity_from_token("ast1.forged.1.ab", signer) is EMPTY_IDENTITY
    assert "tools.identity_token_rejected" in caplog.text
    assert "forged" not in caplog.text
    assert identity_from_token(IdentityToken.encode(MEMBER, signer), signer) == MEMBER


def test_from_env_verifies_the_variables_token_once() -> None:
    """from_env reads ACTORSCOPE_IDENTITY_TOKEN: a valid token is its identity, else no one."""
    signer = OriginSigner(KEY)
    assert IdentityToken.ENV == "ACTORSCOPE_IDENTITY_TOKEN"
    env = {IdentityToken.ENV: IdentityToken.encode(MEMBER, signer)}
    assert IdentityToken.from_env(signer, env) == MEMBER
    assert IdentityToken.from_env(OriginSigner(b"x" * 32), env) is EMPTY_IDENTITY
    assert IdentityToken.from_env(signer, {}) is EMPTY_IDENTITY

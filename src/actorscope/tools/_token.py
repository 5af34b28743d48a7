"""The identity token: how an agent host hands a run's identity to a tool server it trusts.

The host signs the bound identity with its :class:`~actorscope.propagation.OriginSigner` (the
same key the tool server is configured with) and passes the token in the
:attr:`IdentityToken.HEADER` HTTP header, or in the :attr:`IdentityToken.ENV` environment
variable of a stdio server.
Shape: ``ast1.<base64url JSON of the identity>.<signed_at>.<signature>``.

A missing, malformed, forged or expired token gives
:data:`~actorscope.tools._registry.EMPTY_IDENTITY` (no scope, no sender): the call still runs,
and every group write is denied.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import os
from collections.abc import Mapping
from typing import ClassVar

from actorscope.errors import IdentityError
from actorscope.identity import Identity, PeerKind, SenderKind
from actorscope.propagation import OriginSigner
from actorscope.tools._registry import EMPTY_IDENTITY

__all__ = ["MAX_TOKEN_CHARS", "TOKEN_PURPOSE", "IdentityToken", "identity_from_token"]

logger = logging.getLogger("actorscope.tools.token")

#: The signer purpose of identity tokens; no other signature verifies as one.
TOKEN_PURPOSE = "actorscope.tool-identity.v1"  # noqa: S105 - a domain label, not a secret
MAX_TOKEN_CHARS = 8192

_PREFIX = "ast1"
# The signed fields, in their signing order.
_FIELDS = (
    "user_id",
    "sender_id",
    "channel",
    "chat_id",
    "peer_kind",
    "sender_kind",
    "role",
    "tenant_id",
    "agent_id",
)


def _fields(identity: Identity) -> dict[str, str]:
    return {
        "user_id": identity.user_id,
        "sender_id": identity.sender_id,
        "channel": identity.channel,
        "chat_id": identity.chat_id,
        "peer_kind": identity.peer_kind.value,
        "sender_kind": identity.sender_kind.value,
        "role": identity.role,
        "tenant_id": identity.tenant_id or "",
        "agent_id": identity.agent_id or "",
    }


def _payload(encoded: str) -> dict[str, str] | None:
    try:
        raw = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
        document = json.loads(raw.decode("ascii"))
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(document, dict) or set(document) != set(_FIELDS):
        return None
    if not all(isinstance(value, str) for value in document.values()):
        return None
    return document


class IdentityToken:
    """The signed identity token a host hands a tool server it trusts (``actorscope mcp``).

    :meth:`encode` signs an identity with the host's
    :class:`~actorscope.propagation.OriginSigner`; the server verifies it with the same key.
    Pass it in the :attr:`HEADER` of each HTTP request, or in the :attr:`ENV` variable of a
    stdio server (:meth:`from_env` reads it there).
    """

    #: The HTTP header an identity token travels in.
    HEADER: ClassVar[str] = "X-Actorscope-Identity"
    #: The environment variable a stdio server reads its one identity token from.
    ENV: ClassVar[str] = "ACTORSCOPE_IDENTITY_TOKEN"

    @staticmethod
    def encode(identity: Identity, signer: OriginSigner) -> str:
        """A signed token for ``identity``; it verifies with ``signer``'s key until it expires."""
        fields = _fields(identity)
        signed_at, signature = signer.sign_fields(TOKEN_PURPOSE, tuple(fields[k] for k in _FIELDS))
        body = json.dumps(fields, ensure_ascii=True, separators=(",", ":")).encode("ascii")
        encoded = base64.urlsafe_b64encode(body).rstrip(b"=").decode("ascii")
        return f"{_PREFIX}.{encoded}.{signed_at}.{signature}"

    @staticmethod
    def decode(token: str, signer: OriginSigner) -> Identity | None:
        """The identity in ``token`` if ``signer`` verifies it (ours, intact, fresh), else
        ``None``."""
        if not isinstance(token, str) or len(token) > MAX_TOKEN_CHARS:
            return None
        parts = token.split(".")
        if len(parts) != 4 or parts[0] != _PREFIX:
            return None
        fields = _payload(parts[1])
        if fields is None:
            return None
        values = tuple(fields[k] for k in _FIELDS)
        if not signer.verify_fields(TOKEN_PURPOSE, values, parts[2], parts[3]):
            return None
        try:
            return Identity(
                user_id=fields["user_id"],
                sender_id=fields["sender_id"],
                channel=fields["channel"],
                chat_id=fields["chat_id"],
                peer_kind=PeerKind(fields["peer_kind"]),
                sender_kind=SenderKind(fields["sender_kind"]),
                role=fields["role"],
                tenant_id=fields["tenant_id"] or None,
                agent_id=fields["agent_id"] or None,
            )
        except (IdentityError, ValueError):
            return None

    @classmethod
    def from_env(cls, signer: OriginSigner, env: Mapping[str, str] | None = None) -> Identity:
        """The identity in :attr:`ENV` of ``env`` (default: the process environment), verified
        with ``signer``; the empty identity (no scope, no sender) when there is no valid one."""
        return identity_from_token((os.environ if env is None else env).get(cls.ENV), signer)


def identity_from_token(token: str | None, signer: OriginSigner) -> Identity:
    """The token's identity, or the empty identity (logged) when there is no valid token."""
    if not token:
        return EMPTY_IDENTITY
    identity = IdentityToken.decode(token, signer)
    if identity is None:
        # Never log the token: a valid-looking one is a credential.
        logger.warning("tools.identity_token_rejected length=%d", len(token))
        return EMPTY_IDENTITY
    return identity

"""The metadata keys that carry a run's origin on a synthesised message.

Every key starts with :data:`ORIGIN_PREFIX`, the signature and its timestamp included, so one
prefix test strips them all at channel ingress (see ``Origin.strip``).
"""

from __future__ import annotations

from collections.abc import Mapping

# MetaKey.ORIGIN_VIA is defined next to RunRequest, whose ``propagated`` reads it; one of the
# origin keys all the same.
from actorscope.messages import MetaKey

__all__ = [
    "META_ORIGIN_AGENT_ID",
    "META_ORIGIN_CHANNEL",
    "META_ORIGIN_CHAT_ID",
    "META_ORIGIN_PEER_KIND",
    "META_ORIGIN_ROLE",
    "META_ORIGIN_SENDER_ID",
    "META_ORIGIN_SESSION_KEY",
    "META_ORIGIN_SIGNATURE",
    "META_ORIGIN_SIGNED_AT",
    "META_ORIGIN_TENANT_ID",
    "META_ORIGIN_TRACE_ID",
    "META_ORIGIN_USER_ID",
    "ORIGIN_AGENT_KEYS",
    "ORIGIN_FIELD_KEYS",
    "ORIGIN_KEYS",
    "ORIGIN_PREFIX",
    "is_origin_key",
    "without_origin_keys",
]

ORIGIN_PREFIX = "origin_"

#: The human who started the chain (never synthetic, never a placeholder); public as
#: ``MetaKey.ORIGIN_SENDER_ID``, the one origin key a host reads to see whom a carrier claims.
META_ORIGIN_SENDER_ID: str = MetaKey.ORIGIN_SENDER_ID.value
#: That human's role in the originating run (``owner``, ``admin`` ...), or ``""``.
META_ORIGIN_ROLE = "origin_role"
#: The channel of the originating run (``telegram``, ``discord`` ...).
META_ORIGIN_CHANNEL = "origin_channel"
#: The chat of the originating run.
META_ORIGIN_CHAT_ID = "origin_chat_id"
#: The scope of the originating run (``group:telegram:<chatID>``, ``guild:<gid>:user:<sid>`` ...).
META_ORIGIN_USER_ID = "origin_user_id"
#: ``direct`` or ``group``: the peer kind of the originating run.
META_ORIGIN_PEER_KIND = "origin_peer_kind"
#: The session key of the originating run, or ``""`` when it was not known.
META_ORIGIN_SESSION_KEY = "origin_session_key"
#: One id shared by every hop of a chain, for tracing.
META_ORIGIN_TRACE_ID = "origin_trace_id"
#: The agent of the originating run (absent when it had none): its role applies to that agent only.
META_ORIGIN_AGENT_ID = "origin_agent_id"
#: The tenant of the originating run (absent when it had none): its role applies there only.
META_ORIGIN_TENANT_ID = "origin_tenant_id"
#: When the origin was signed: integer milliseconds since the Unix epoch, in decimal.
META_ORIGIN_SIGNED_AT = "origin_signed_at"
#: Hex HMAC-SHA256 over the origin fields, the carrying message and the timestamp.
META_ORIGIN_SIGNATURE = "origin_signature"


#: The signed origin fields, in their canonical order.
ORIGIN_FIELD_KEYS: tuple[str, ...] = (
    META_ORIGIN_SENDER_ID,
    META_ORIGIN_ROLE,
    META_ORIGIN_CHANNEL,
    META_ORIGIN_CHAT_ID,
    META_ORIGIN_USER_ID,
    META_ORIGIN_PEER_KIND,
    META_ORIGIN_SESSION_KEY,
    META_ORIGIN_TRACE_ID,
)
#: The signed keys that say which agent and tenant the origin's role belongs to. Unlike the
#: field keys each is written only when the originating run had one (absent means ``None``).
ORIGIN_AGENT_KEYS: tuple[str, ...] = (META_ORIGIN_AGENT_ID, META_ORIGIN_TENANT_ID)
#: Every key this package writes.
ORIGIN_KEYS: frozenset[str] = frozenset(
    (
        *ORIGIN_FIELD_KEYS,
        *ORIGIN_AGENT_KEYS,
        META_ORIGIN_SIGNED_AT,
        META_ORIGIN_SIGNATURE,
        MetaKey.ORIGIN_VIA,
    )
)


def is_origin_key(key: str) -> bool:
    """True iff ``key`` is reserved for propagation (any ``origin_*`` key, known or not)."""
    return key.startswith(ORIGIN_PREFIX)


def without_origin_keys(metadata: Mapping[str, str]) -> dict[str, str]:
    """``metadata`` without its ``origin_*`` keys."""
    # is_origin_key() spelled out: no call per key (every run request copies its metadata).
    return {key: value for key, value in metadata.items() if not key.startswith(ORIGIN_PREFIX)}

"""The origin of a chain of runs, and the signer that makes it tamper-evident.

An :class:`Origin` is captured from the bound identity of the run that spawns, delegates or
sends; an :class:`OriginSigner` attaches it to the carrying message as ``origin_*`` metadata
with an HMAC-SHA256 signature over the origin fields (the agent and tenant its role belongs to
included), the carrying message (its synthetic sender and sender kind, routing fields, message
id and text) and a timestamp. :meth:`OriginSigner.verify` gives the origin back only when the
signature, the key, every field and the age check out; anything else is ``None`` - never an
exception, because a forged origin is simply ignored. With ``consume=True`` it also records the
signature in the signer's :class:`~actorscope.propagation._replay.ReplayGuard`, so the same
signed carrier verifies that way only once (per signer, per process).

There is no process-wide signer: the host and the wrappers are handed one. By default it holds
a random per-process key; :meth:`OriginSigner.from_env` (or a ``key``) shares one across a
queue or a second process.

:meth:`OriginSigner.run_request` is the next-turn builder, from an inbound message to the run
request the host binds: it attributes a synthesised message to the human who started its chain
iff the message's own sender is synthetic and it carries an origin that is present, non-empty,
not synthetic, not a placeholder, verifies and was not consumed before (a replay); the scope is
then rebuilt from the origin (``group:<channel>:<chatID>``, or ``guild:<gid>:user:<sender>`` in a
Discord guild). Anything else keeps the message's own sender - a synthetic one is denied every
group permission. The origin's role comes along only into a run of the same agent and tenant
as the run it was that human's role in; a delegate to another agent gets the human, no role.

:meth:`Origin.strip` strips every ``origin_*`` key from a message that came from a channel.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
import struct
import time
from collections.abc import Callable, Mapping
from functools import lru_cache
from types import MappingProxyType
from typing import ClassVar, NamedTuple

from actorscope._input import AGENT_KEY_PATTERN
from actorscope.errors import ConfigError, IdentityError
from actorscope.identity import Identity, PeerKind, Scope, ScopeKind, SenderKind, session_key
from actorscope.messages import InboundMessage, MetaKey, RunRequest
from actorscope.platforms import platform_spec, registry_cache
from actorscope.propagation._keys import (
    META_ORIGIN_AGENT_ID,
    META_ORIGIN_CHANNEL,
    META_ORIGIN_CHAT_ID,
    META_ORIGIN_PEER_KIND,
    META_ORIGIN_ROLE,
    META_ORIGIN_SENDER_ID,
    META_ORIGIN_SESSION_KEY,
    META_ORIGIN_SIGNATURE,
    META_ORIGIN_SIGNED_AT,
    META_ORIGIN_TENANT_ID,
    META_ORIGIN_TRACE_ID,
    META_ORIGIN_USER_ID,
    ORIGIN_AGENT_KEYS,
    ORIGIN_FIELD_KEYS,
    ORIGIN_PREFIX,
    is_origin_key,
    without_origin_keys,
)
from actorscope.propagation._replay import DEFAULT_REPLAY_CAPACITY, ReplayGuard

__all__ = [
    "DEFAULT_KEY_ENV",
    "DEFAULT_MAX_AGE",
    "MIN_KEY_BYTES",
    "Origin",
    "OriginSigner",
    "origin_scope",
    "verified_origin",
]

#: The environment variable :meth:`OriginSigner.from_env` reads by default.
DEFAULT_KEY_ENV = "ACTORSCOPE_ORIGIN_KEY"
#: Seconds a signed origin stays valid: long enough for a queue hop, short enough to limit replay.
DEFAULT_MAX_AGE = 600.0
#: A configured key shorter than this is refused: it would be guessable.
MIN_KEY_BYTES = 32

# Bumped whenever the canonical encoding changes, so old signatures stop verifying.
# v2: the carrier's sender kind, peer kind and message id, and the origin's agent and tenant.
_DOMAIN_JOINED = b"actorscope.origin.v2.nul|"
_DOMAIN_LENGTHS = b"actorscope.origin.v2.len|"
# 12 carrier parts (timestamp included) + 10 origin fields (8 + agent and tenant).
_PARTS = 22
_SEPARATORS = _PARTS - 1
# The length-prefixed form: each part's length as a little-endian uint32.
_LENGTHS = struct.Struct(f"<{_PARTS}I")
_PEER_KINDS = {kind.value: kind for kind in PeerKind}
_FIELD_KEYS = frozenset(ORIGIN_FIELD_KEYS)
_SIGNED_AT = re.compile(r"[0-9]{1,16}")
_HEX_SIGNATURE = re.compile(r"[0-9a-f]{64}")


class Origin(NamedTuple):
    """Who started a chain of runs, and where: the fields that travel as ``origin_*`` metadata.

    Immutable; a named tuple rather than a dataclass because one is built per verified message.
    Its fields are not inherited from the messages' declaration of the identity fields: they
    are the signed wire format (``origin.v2``). The first eight are signed in this order and
    every field travels as ``origin_`` + its name, so a field added to the messages must not
    change them. The names it shares with :class:`~actorscope.messages.InboundMessage`
    (sender, channel, chat, scope, peer kind, agent, tenant) have the same types there.
    """

    sender_id: str
    role: str = ""
    channel: str = ""
    chat_id: str = ""
    user_id: str = ""
    peer_kind: PeerKind = PeerKind.DIRECT
    session_key: str = ""
    trace_id: str = ""
    #: The agent and tenant of the originating run: ``role`` was that run's role there, and
    #: means nothing for another agent or tenant.
    agent_id: str | None = None
    tenant_id: str | None = None

    @classmethod
    def from_identity(
        cls, identity: Identity, *, session_key: str = "", trace_id: str = ""
    ) -> Origin:
        """The origin a run bound to ``identity`` hands on to the runs it starts.

        In a group scope the channel and chat come from the scope, not from the chat the run
        answers in: a run that a session_send carried into another chat still belongs to the
        chat its human acted in, and so does every hop after it.
        """
        channel, chat_id = identity.channel, identity.chat_id
        scope = Scope.try_parse(identity.user_id)
        if scope is not None and scope.kind is ScopeKind.GROUP:
            channel, chat_id = scope.channel, scope.chat_id
        return cls(
            sender_id=identity.sender_id,
            role=identity.role,
            channel=channel,
            chat_id=chat_id,
            user_id=identity.user_id,
            peer_kind=identity.peer_kind,
            session_key=session_key,
            trace_id=trace_id,
            agent_id=identity.agent_id,
            tenant_id=identity.tenant_id,
        )

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, str]) -> Origin | None:
        """The (unverified) origin a message's metadata claims, or ``None`` if there is none."""
        sender = metadata.get(META_ORIGIN_SENDER_ID)
        peer_kind = _PEER_KINDS.get(metadata.get(META_ORIGIN_PEER_KIND, ""))
        if sender is None or peer_kind is None:
            return None
        return cls(
            sender_id=sender,
            role=metadata.get(META_ORIGIN_ROLE, ""),
            channel=metadata.get(META_ORIGIN_CHANNEL, ""),
            chat_id=metadata.get(META_ORIGIN_CHAT_ID, ""),
            user_id=metadata.get(META_ORIGIN_USER_ID, ""),
            peer_kind=peer_kind,
            session_key=metadata.get(META_ORIGIN_SESSION_KEY, ""),
            trace_id=metadata.get(META_ORIGIN_TRACE_ID, ""),
            agent_id=metadata.get(META_ORIGIN_AGENT_ID),
            tenant_id=metadata.get(META_ORIGIN_TENANT_ID),
        )

    def to_metadata(self) -> dict[str, str]:
        """The origin fields as ``origin_*`` metadata (without a signature).

        The agent and tenant keys are written only when set: absent means ``None``.
        """
        metadata = {
            META_ORIGIN_SENDER_ID: self.sender_id,
            META_ORIGIN_ROLE: self.role,
            META_ORIGIN_CHANNEL: self.channel,
            META_ORIGIN_CHAT_ID: self.chat_id,
            META_ORIGIN_USER_ID: self.user_id,
            META_ORIGIN_PEER_KIND: self.peer_kind.value,
            META_ORIGIN_SESSION_KEY: self.session_key,
            META_ORIGIN_TRACE_ID: self.trace_id,
        }
        if self.agent_id is not None:
            metadata[META_ORIGIN_AGENT_ID] = self.agent_id
        if self.tenant_id is not None:
            metadata[META_ORIGIN_TENANT_ID] = self.tenant_id
        return metadata

    @staticmethod
    def strip(msg: InboundMessage) -> InboundMessage:
        """``msg`` without any ``origin_*`` metadata: what a channel may put on the bus."""
        for key in msg.metadata:  # a plain loop (is_origin_key spelled out): once per message
            if key.startswith(ORIGIN_PREFIX):
                metadata = MappingProxyType(without_origin_keys(msg.metadata))
                return msg.model_copy(update={"metadata": metadata})
        return msg


def _canonical(
    signed_at: str,
    carrier: InboundMessage,
    fields: tuple[str, ...],
    origin_agent: str | None,
    origin_tenant: str | None,
) -> bytes:
    # Unambiguous and cheap. The parts are joined with NUL; when no part holds a NUL (exactly
    # _SEPARATORS in the join) that is a unique encoding. Otherwise every part's length is packed in
    # front instead, under another prefix so the two forms never collide. Every carrier field
    # that routing or identity reads is bound (sender and its kind, channel, chat, thread,
    # scope, peer kind, message id, agent, tenant) and so is the text, so a signed origin cannot
    # be lifted onto another message. Left out: metadata outside origin_* (the builder never
    # reads it for identity or routing) and media (attachments route nothing; the text and
    # message id already pin the message). The peer and sender kinds are StrEnums: they join
    # as their values. surrogatepass lets any string encode, lone surrogates too.
    agent_id, tenant_id = carrier.agent_id, carrier.tenant_id
    parts = (
        signed_at,
        carrier.sender_id,
        carrier.sender_kind,
        carrier.channel,
        carrier.chat_id,
        carrier.thread_id,
        carrier.user_id,
        carrier.peer_kind,
        carrier.message_id,
        "" if agent_id is None else agent_id,
        "" if tenant_id is None else tenant_id,
        carrier.content,
        *fields,
        "" if origin_agent is None else origin_agent,
        "" if origin_tenant is None else origin_tenant,
    )
    # One byte saying which of (carrier agent, carrier tenant, origin agent, origin tenant) is
    # None, so None and "" never sign alike.
    none_flags = bytes(
        [
            (agent_id is None) << 3
            | (tenant_id is None) << 2
            | (origin_agent is None) << 1
            | (origin_tenant is None)
        ]
    )
    joined = "\x00".join(parts)
    if joined.count("\x00") == _SEPARATORS:
        return _DOMAIN_JOINED + none_flags + joined.encode("utf-8", "surrogatepass")
    body = "".join(parts).encode("utf-8", "surrogatepass")
    lengths = _LENGTHS.pack(*[len(part) for part in parts])
    return _DOMAIN_LENGTHS + none_flags + lengths + body


def _fields(origin: Origin) -> tuple[str, ...]:
    return (
        origin.sender_id,
        origin.role,
        origin.channel,
        origin.chat_id,
        origin.user_id,
        origin.peer_kind.value,
        origin.session_key,
        origin.trace_id,
    )


def _checked_key(key: object, what: str) -> bytes:
    if not isinstance(key, bytes | bytearray):
        raise ConfigError(f"{what} must be bytes, got {type(key).__name__}")
    if len(key) < MIN_KEY_BYTES:
        raise ConfigError(f"{what} must be at least {MIN_KEY_BYTES} bytes, got {len(key)}")
    return bytes(key)


class OriginSigner:
    """Signs origins onto carrying messages and verifies them; holds the key, never shows it.

    ``key=None`` draws a random per-process key: origins then verify only in this process.
    ``max_age`` (seconds) bounds how old a signature may be; ``max_skew`` how far in the future
    its timestamp may lie. ``clock`` returns seconds since the epoch (tests move it).
    ``replay_capacity`` bounds the signer's replay guard (see :meth:`verify` with ``consume``):
    how many consumed, still-fresh signatures it remembers before it refuses new ones.
    """

    __slots__ = ("_clock", "_key", "_max_age_ms", "_max_skew_ms", "_replay")

    #: The environment variable :meth:`from_env` reads by default: ``ACTORSCOPE_ORIGIN_KEY``.
    KEY_ENV: ClassVar[str] = DEFAULT_KEY_ENV

    def __init__(
        self,
        key: bytes | None = None,
        *,
        max_age: float = DEFAULT_MAX_AGE,
        max_skew: float = 30.0,
        clock: Callable[[], float] = time.time,
        replay_capacity: int = DEFAULT_REPLAY_CAPACITY,
    ) -> None:
        self._key = secrets.token_bytes(MIN_KEY_BYTES) if key is None else _checked_key(key, "key")
        if not max_age > 0 or not max_skew >= 0:
            raise ConfigError(f"max_age must be > 0 and max_skew >= 0, got {max_age}, {max_skew}")
        self._max_age_ms = int(max_age * 1000)
        self._max_skew_ms = int(max_skew * 1000)
        self._clock = clock
        self._replay = ReplayGuard(replay_capacity)

    @classmethod
    def from_env(
        cls,
        var: str = DEFAULT_KEY_ENV,
        *,
        max_age: float = DEFAULT_MAX_AGE,
        max_skew: float = 30.0,
        clock: Callable[[], float] = time.time,
        replay_capacity: int = DEFAULT_REPLAY_CAPACITY,
    ) -> OriginSigner:
        """A signer whose key is the UTF-8 bytes of environment variable ``var`` (>= 32 bytes)."""
        value = os.environ.get(var)
        if value is None:
            raise ConfigError(f"environment variable {var} is not set (the origin signing key)")
        key = value.encode("utf-8", "surrogateescape")
        if len(key) < MIN_KEY_BYTES:
            raise ConfigError(f"environment variable {var} must hold >= {MIN_KEY_BYTES} bytes")
        return cls(
            key, max_age=max_age, max_skew=max_skew, clock=clock, replay_capacity=replay_capacity
        )

    def __repr__(self) -> str:
        return f"OriginSigner(max_age={self._max_age_ms / 1000:g}s)"

    def _hmac_hex(self, data: bytes) -> str:
        return hmac.new(self._key, data, hashlib.sha256).hexdigest()

    def run_request(
        self,
        msg: InboundMessage,
        *,
        agent_key: str = "main",
        agent_id: str | None = None,
        tenant_id: str | None = None,
        consume: bool = True,
    ) -> RunRequest:
        """The run request for ``msg``: attributed to its verified origin, or to its own sender.

        ``agent_id`` / ``tenant_id`` fill in when the message names none. The request's metadata
        keeps the message's own keys; ``origin_*`` keys appear only for a verified origin: its
        fields and ``origin_via``, the synthetic sender that carried it (never the signature or
        timestamp). The origin's role is kept only when the request's agent and tenant are the
        origin's; otherwise the role is ``""``. A malformed chat id or agent key raises
        :class:`IdentityError`.

        ``consume`` (the default) spends the origin in this signer's replay guard, so the same
        signed carrier is attributed once: built again, it stays synthetic. The guard is per
        signer and per process. ``consume=False`` verifies without spending - for benchmarks and
        dry runs, never for a request that will run.
        """
        return _run_request(
            msg, self, agent_key=agent_key, agent_id=agent_id, tenant_id=tenant_id, consume=consume
        )

    def attach(self, carrier: InboundMessage, origin: Origin) -> InboundMessage:
        """``carrier`` with ``origin`` signed into its metadata, replacing any ``origin_*`` keys."""
        signed_at = str(int(self._clock() * 1000))
        metadata = {k: v for k, v in carrier.metadata.items() if not is_origin_key(k)}
        metadata.update(origin.to_metadata())
        metadata[META_ORIGIN_SIGNED_AT] = signed_at
        signature = self._hmac_hex(
            _canonical(signed_at, carrier, _fields(origin), origin.agent_id, origin.tenant_id)
        )
        metadata[META_ORIGIN_SIGNATURE] = signature
        # The signature covers no metadata, so swapping the mapping leaves it valid.
        return carrier.model_copy(update={"metadata": MappingProxyType(metadata)})

    def verify(self, carrier: InboundMessage, *, consume: bool = False) -> Origin | None:
        """The origin on ``carrier`` if its signature is ours, intact and fresh; else ``None``.

        ``consume=True`` is for turning the origin into a run's identity: the signature is
        then recorded until it expires, and the same signed carrier gives ``None`` from then
        on (a replay). The record is this signer's, in this process only. Without ``consume``
        nothing is recorded, and an origin already consumed still verifies.
        """
        metadata = carrier.metadata
        signature = metadata.get(META_ORIGIN_SIGNATURE, "")
        signed_at = metadata.get(META_ORIGIN_SIGNED_AT, "")
        if not (
            len(signature) == 64
            and signature.isascii()  # compare_digest needs ASCII; non-hex never matches
            and 0 < len(signed_at) <= 16
            and signed_at.isascii()
            and signed_at.isdigit()
        ):
            return None
        # attach() writes every field key: a carrier missing one is not ours.
        if not metadata.keys() >= _FIELD_KEYS:
            return None
        origin = Origin.from_metadata(metadata)
        if origin is None:
            return None
        now_ms, signed_ms = int(self._clock() * 1000), int(signed_at)
        age_ms = now_ms - signed_ms
        if age_ms > self._max_age_ms or -age_ms > self._max_skew_ms:
            return None
        canonical = _canonical(
            signed_at, carrier, _fields(origin), origin.agent_id, origin.tenant_id
        )
        if not hmac.compare_digest(self._hmac_hex(canonical), signature):
            return None
        # Recorded only once it verified: a forged signature never takes a slot.
        if consume and not self._replay.first_use(signature, signed_ms + self._max_age_ms, now_ms):
            return None
        return origin

    def _fields_mac(self, purpose: str, signed_at: str, fields: tuple[str, ...]) -> str:
        # Its own domain and a length header: a signature made here for one purpose never
        # passes for an origin's, nor for another purpose's, nor the other way round.
        parts = (purpose, signed_at, *fields)
        head = ",".join(str(len(part)) for part in parts)
        message = f"actorscope.fields.v1|{head}|{''.join(parts)}"
        return self._hmac_hex(message.encode("utf-8", "surrogatepass"))

    def sign_fields(self, purpose: str, fields: tuple[str, ...]) -> tuple[str, str]:
        """``(signed_at, signature)`` over ``fields`` for ``purpose`` (e.g. an identity token)."""
        signed_at = str(int(self._clock() * 1000))
        return signed_at, self._fields_mac(purpose, signed_at, fields)

    def verify_fields(
        self, purpose: str, fields: tuple[str, ...], signed_at: str, signature: str
    ) -> bool:
        """True iff ``signature`` is ours over ``fields`` for ``purpose`` and still fresh."""
        if not _HEX_SIGNATURE.fullmatch(signature) or not _SIGNED_AT.fullmatch(signed_at):
            return False
        age_ms = int(self._clock() * 1000) - int(signed_at)
        if age_ms > self._max_age_ms or -age_ms > self._max_skew_ms:
            return False
        return hmac.compare_digest(self._fields_mac(purpose, signed_at, fields), signature)


# The keys verify() reads (the agent and tenant ones only when present).
_FIELD_SET = frozenset((*ORIGIN_FIELD_KEYS, *ORIGIN_AGENT_KEYS))

# What run_request decides for itself: the request's own fields, and the scope, actor,
# kinds, metadata, agent and tenant that attribution to a verified origin (or the host's
# defaults) may change. Every other field a message and its request share (both inherit them
# from one declaration in actorscope.messages) is carried over as it is: the list is derived,
# so a field added there reaches the request without an edit here.
_DECIDED = frozenset(
    {
        "session_key",
        "role",
        "user_id",
        "sender_id",
        "sender_kind",
        "peer_kind",
        "metadata",
        "tenant_id",
        "agent_id",
    }
)
_CARRIED = tuple(
    name
    for name in RunRequest.model_fields
    if name in InboundMessage.model_fields and name not in _DECIDED
)


def _person_session_key(agent_key: str, person: str) -> str:
    """``agent:<agentKey>:person:direct:<uuid>``: a linked person's direct session, one on
    every channel (``links = "dm"``); ``person`` is its scope, ``person:<uuid>``."""
    if AGENT_KEY_PATTERN.fullmatch(agent_key) is None:
        raise IdentityError(
            f"agent key must be 1-64 letters, digits, '_' or '-', got {agent_key!r}"
        )
    return f"agent:{agent_key}:person:direct:{person.removeprefix(Scope.PERSON_PREFIX)}"


def _verified_metadata(metadata: Mapping[str, str]) -> dict[str, str]:
    # Called only after verify() succeeded, which read exactly the field keys and the agent
    # and tenant keys: their values here are the verified ones. Signature and timestamp go;
    # so does any other origin_* key (unsigned, so untrusted); keys outside origin_ stay.
    return {k: v for k, v in metadata.items() if k in _FIELD_SET or not is_origin_key(k)}


def origin_scope(origin: Origin) -> str | None:
    """The scope of a run for ``origin``, rebuilt from its channel and chat; ``None`` if malformed.

    A group scope is never copied from ``origin.user_id``: it is rebuilt from the origin's
    channel and chat, and a guild scope from the guild id and the origin sender.
    """
    sender = SenderKind.normalize_id(origin.sender_id)  # a legacy ``id|name`` is its id
    return _scope(sender, origin.user_id, origin.peer_kind, origin.channel, origin.chat_id)


# Cached: a chain's turns repeat the same few (sender, scope) pairs, and the answer is pure.
@registry_cache(maxsize=4096)
def _scope(sender: str, scope: str, peer_kind: PeerKind, channel: str, chat_id: str) -> str | None:
    if scope.startswith("guild:"):
        parsed = Scope.try_parse(scope)
        if parsed is None or parsed.kind is not ScopeKind.GUILD_MEMBER:
            return None
        spec = platform_spec(parsed.channel)  # the guild form's platform: its person ids
        if spec is None or not spec.is_person_id(sender):
            return None
        return str(Scope.guild_member(parsed.guild_id, sender))
    if peer_kind is PeerKind.GROUP or Scope.is_group_id(scope):
        group = Scope.try_group(channel, chat_id)
        return str(group) if group is not None else None
    return scope or sender


@lru_cache(maxsize=4096)
def _is_person(sender: str) -> bool:
    # ``sender`` is already normalised (legacy ``id|name`` split): a person is what is left
    # when it is neither empty, synthetic nor a placeholder.
    return bool(
        sender and not SenderKind.is_synthetic(sender) and not SenderKind.is_placeholder(sender)
    )


def verified_origin(
    msg: InboundMessage, signer: OriginSigner, *, consume: bool = True
) -> tuple[Origin, str] | None:
    """The origin ``msg`` is attributed to and its rebuilt scope, or ``None`` (stay synthetic).

    ``consume`` (the default) spends the origin in ``signer``'s replay guard: asked again
    about the same signed carrier, this gives ``None``. ``consume=False`` only looks.
    """
    attributed = _attributed(msg, signer, consume)
    return None if attributed is None else (attributed[0], attributed[2])


def _attributed(
    msg: InboundMessage, signer: OriginSigner, consume: bool
) -> tuple[Origin, str, str, PeerKind] | None:
    # A message's verified origin, its normalised sender, the scope rebuilt from it and that
    # scope's peer kind; None unless the carrier is synthetic and its origin verifies and is a
    # person.
    sender = msg.sender_id
    if META_ORIGIN_SIGNATURE not in msg.metadata or not SenderKind.is_synthetic(sender):
        return None
    # Every check after verify() reads only signed fields, so an origin that fails them would
    # fail them on every delivery: consuming it first changes no answer.
    origin = signer.verify(msg, consume=consume)
    if origin is None:
        return None
    # A legacy ``id|name`` origin sender is its id, as it is in a direct check (docs/design.md).
    sender = SenderKind.normalize_id(origin.sender_id)
    scope = _person_scope(sender, origin.user_id, origin.peer_kind, origin.channel, origin.chat_id)
    return None if scope is None else (origin, sender, *scope)


# One cache lookup per verified message instead of two (_is_person, then _scope); the peer
# kind of the run comes along, since it follows from the scope alone.
@registry_cache(maxsize=4096)
def _person_scope(
    sender: str, scope: str, peer_kind: PeerKind, channel: str, chat_id: str
) -> tuple[str, PeerKind] | None:
    if not _is_person(sender):
        return None
    rebuilt = _scope(sender, scope, peer_kind, channel, chat_id)
    if rebuilt is None or Identity.problem(rebuilt, sender, channel) is not None:
        # A look-alike of a person id (``042`` on Telegram) is nobody: the run stays synthetic.
        return None
    return rebuilt, PeerKind.GROUP if Scope.is_group_id(rebuilt) else PeerKind.DIRECT


@registry_cache(maxsize=4096)
def _session(agent_key: str, channel: str, peer_kind: PeerKind, chat_id: str, thread: str) -> str:
    # What a thread id splits a session by is the platform's word: a Telegram forum topic, a
    # Discord thread; a channel of no registered platform is a Telegram bot's of its own name.
    if not thread:
        return session_key(agent_key, channel, peer_kind, chat_id)
    spec = platform_spec(channel)
    if spec is not None and spec.thread == "thread":
        return session_key(agent_key, channel, peer_kind, chat_id, thread_id=thread)
    return session_key(agent_key, channel, peer_kind, chat_id, topic_id=thread)


def _run_request(
    msg: InboundMessage,
    signer: OriginSigner,
    *,
    agent_key: str = "main",
    agent_id: str | None = None,
    tenant_id: str | None = None,
    consume: bool = True,
) -> RunRequest:
    """:meth:`OriginSigner.run_request` (``signer`` verifies and consumes)."""
    if agent_id is not None and type(agent_id) is not str:
        raise IdentityError(f"agent_id must be a string or None, got {type(agent_id).__name__}")
    if tenant_id is not None and type(tenant_id) is not str:
        raise IdentityError(f"tenant_id must be a string or None, got {type(tenant_id).__name__}")
    if msg.peer_kind is PeerKind.DIRECT and msg.user_id.startswith(Scope.PERSON_PREFIX):
        # A linked person's direct scope (links = "dm", set by the pipeline): one session
        # on every channel, as its memory and files are.
        key = _person_session_key(agent_key, msg.user_id)
    else:
        key = _session(agent_key, msg.channel, msg.peer_kind, msg.chat_id, msg.thread_id)
    run_agent = msg.agent_id if msg.agent_id is not None else agent_id
    run_tenant = msg.tenant_id if msg.tenant_id is not None else tenant_id
    # After _session(): a message that raises above is never consumed.
    attributed = _attributed(msg, signer, consume)
    if attributed is None:
        user_id, sender_id, role = msg.user_id, msg.sender_id, ""
        sender_kind, peer_kind = msg.sender_kind, msg.peer_kind
        kept = without_origin_keys(msg.metadata)
    else:
        origin, sender_id, user_id, peer_kind = attributed
        # A role is the human's role for one agent of one tenant: an owner of agent A who
        # delegates to agent B is nobody special on B. Compared with the run's resolved agent,
        # so a carrier that names none cannot inherit the host's default agent's role either.
        same_agent = origin.agent_id == run_agent and origin.tenant_id == run_tenant
        role = origin.role if same_agent else ""
        sender_kind = SenderKind.USER
        kept = _verified_metadata(msg.metadata)
        kept[MetaKey.ORIGIN_VIA.value] = msg.sender_id
    fields: dict[str, object] = {
        "session_key": key,
        "user_id": user_id,
        "sender_id": sender_id,
        "role": role,
        "peer_kind": peer_kind,
        "metadata": kept,
        "tenant_id": run_tenant,
        "agent_id": run_agent,
        "sender_kind": sender_kind,
    }
    for name in _CARRIED:  # a plain loop: no generator frame per request
        fields[name] = getattr(msg, name)
    return RunRequest(**fields)

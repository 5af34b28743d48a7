"""The next-turn builder: from an inbound message to the run request the host binds.

:func:`build_run_request` attributes a synthesised message to the human who started its chain
iff the message's own sender is synthetic and it carries an origin that is present, non-empty,
not synthetic, not a placeholder, verifies and was not consumed before (a replay); the scope is
then rebuilt from the origin (``group:<channel>:<chatID>``, or ``guild:<gid>:user:<sender>`` in a
Discord guild). Anything else keeps the message's own sender - a synthetic one is denied every
group permission. The origin's role comes along only into a run of the same agent and tenant
as the run it was that human's role in; a delegate to another agent gets the human, no role.

:meth:`Origin.strip` strips every ``origin_*`` key from a message that came from a channel.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

from actorscope._input import AGENT_KEY_PATTERN
from actorscope.errors import IdentityError
from actorscope.identity import Identity, PeerKind, Scope, ScopeKind, SenderKind, session_key
from actorscope.messages import InboundMessage, MetaKey, RunRequest
from actorscope.platforms import platform_spec, registry_cache
from actorscope.propagation._keys import (
    META_ORIGIN_SIGNATURE,
    ORIGIN_AGENT_KEYS,
    ORIGIN_FIELD_KEYS,
    is_origin_key,
    without_origin_keys,
)
from actorscope.propagation._origin import Origin, OriginSigner

__all__ = ["build_run_request", "origin_scope", "verified_origin"]

# The keys verify() reads (the agent and tenant ones only when present).
_FIELD_SET = frozenset((*ORIGIN_FIELD_KEYS, *ORIGIN_AGENT_KEYS))

# What build_run_request decides for itself: the request's own fields, and the scope, actor,
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


def build_run_request(
    msg: InboundMessage,
    *,
    signer: OriginSigner,
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

    ``consume`` (the default) spends the origin in ``signer``'s replay guard, so the same
    signed carrier is attributed once: built again, it stays synthetic. The guard is per
    signer and per process. ``consume=False`` verifies without spending - for benchmarks and
    dry runs, never for a request that will run.
    """
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

"""The messages that cross the bus: inbound from a channel, outbound to one, and the run request.

All three are frozen pydantic models; ``metadata`` is a read-only ``str -> str`` mapping, so a
message cannot be altered after it was built (or signed).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, PlainSerializer, field_validator

from actorscope.identity import Identity, PeerKind, SenderKind

__all__ = [
    "META_ORIGIN_VIA",
    "InboundMessage",
    "Media",
    "Metadata",
    "OutboundMessage",
    "RunRequest",
    "reply_to",
]

#: Run requests only: the synthetic sender that carried a *verified* origin (for audit). The
#: builder writes it iff it attributed the run to that origin and strips every ``origin_*`` key
#: of a message otherwise, so :attr:`RunRequest.propagated` reads it. Re-exported by
#: :mod:`actorscope.propagation` with the other origin keys.
META_ORIGIN_VIA = "origin_via"


def _freeze(value: Mapping[str, str]) -> Mapping[str, str]:
    return MappingProxyType(dict(value))


#: A read-only ``str -> str`` mapping that serialises as a plain JSON object.
Metadata = Annotated[Mapping[str, str], PlainSerializer(dict, return_type=dict[str, str])]

# validate_default: the default metadata must be frozen by the validator too.
_FROZEN = ConfigDict(frozen=True, extra="forbid", use_enum_values=False, validate_default=True)


class _Frozen(BaseModel):
    model_config = _FROZEN

    @field_validator("metadata", mode="after", check_fields=False)
    @classmethod
    def _freeze_metadata(cls, value: Mapping[str, str]) -> Mapping[str, str]:
        return _freeze(value)

    def __hash__(self) -> int:
        return hash(self.model_dump_json())


class Media(_Frozen):
    """An attachment referenced by a message; the bytes stay on the platform."""

    kind: str
    file_id: str = ""
    url: str = ""
    mime_type: str = ""
    file_name: str = ""


class InboundMessage(_Frozen):
    """A message that arrived from a channel or was synthesised by a wrapper.

    ``user_id`` is the scope, ``sender_id`` the actor (``""`` when no person sent it).
    """

    channel: str
    sender_id: str
    chat_id: str
    content: str = ""
    peer_kind: PeerKind = PeerKind.DIRECT
    user_id: str
    sender_kind: SenderKind = SenderKind.USER
    metadata: Metadata = Field(default_factory=dict)
    thread_id: str = ""
    message_id: str = ""
    tenant_id: str | None = None
    agent_id: str | None = None
    media: tuple[Media, ...] = ()

    def identity(self, *, role: str = "") -> Identity:
        """The identity of this message's own sender (no origin is consulted)."""
        return Identity(
            user_id=self.user_id,
            sender_id=self.sender_id,
            channel=self.channel,
            chat_id=self.chat_id,
            peer_kind=self.peer_kind,
            sender_kind=self.sender_kind,
            role=role,
            tenant_id=self.tenant_id,
            agent_id=self.agent_id,
        )


class OutboundMessage(_Frozen):
    """A reply to send: the channel, chat and topic/thread it goes back to."""

    channel: str
    chat_id: str
    content: str
    thread_id: str = ""
    reply_to_message_id: str = ""
    metadata: Metadata = Field(default_factory=dict)


class RunRequest(_Frozen):
    """One agent turn: what to run, in which session, on behalf of whom.

    ``user_id`` is the scope, ``sender_id`` the actor (``""`` when no person acts), as on
    :class:`InboundMessage`. :attr:`propagated` says whether the turn continues an earlier
    person's run (a sub-agent or delegate announce, a teammate dispatch, ``session_send``, a
    ticker) and was attributed to that person.

    ``metadata`` keeps the inbound message's keys (never an unverified ``origin_*`` one).
    ``metadata["command"]`` (:data:`actorscope.channels.META_COMMAND`) is the command the
    message starts with, without its slash or ``@bot`` suffix: ``note`` for Telegram's
    ``/note@my_bot buy milk`` (in a group only when it is addressed to this bot), the name of a
    Discord slash command; absent for any other message. ``content`` keeps the full text. It
    is what the platform sent, not an identity: a permission check still asks the policy.
    """

    session_key: str
    user_id: str
    sender_id: str
    role: str = ""
    channel: str
    chat_id: str
    peer_kind: PeerKind = PeerKind.DIRECT
    content: str = ""
    metadata: Metadata = Field(default_factory=dict)
    tenant_id: str | None = None
    agent_id: str | None = None
    sender_kind: SenderKind = SenderKind.USER
    thread_id: str = ""
    message_id: str = ""

    @property
    def propagated(self) -> bool:
        """True iff the builder attributed this turn to a verified origin (a propagated turn).

        Then ``sender_id`` is the person who started the chain and
        ``metadata[META_ORIGIN_VIA]`` the synthetic sender that carried it. A direct message,
        and a synthesised one whose origin is missing, forged, replayed or not a person, is
        not propagated: :func:`~actorscope.propagation.build_run_request` strips every
        ``origin_*`` key of those, so nothing unsigned can set this.
        """
        return bool(self.metadata.get(META_ORIGIN_VIA))

    def identity(self) -> Identity:
        """The identity the host binds while this request runs."""
        return Identity(
            user_id=self.user_id,
            sender_id=self.sender_id,
            channel=self.channel,
            chat_id=self.chat_id,
            peer_kind=self.peer_kind,
            sender_kind=self.sender_kind,
            role=self.role,
            tenant_id=self.tenant_id,
            agent_id=self.agent_id,
        )


def reply_to(source: InboundMessage | RunRequest, content: str) -> OutboundMessage:
    """A reply to ``source``: same channel, chat and topic/thread, replying to its message.

    The one place a reply is built: the host, the runners' writer-command answers and the
    testing kit all call it.
    """
    return OutboundMessage(
        channel=source.channel,
        chat_id=source.chat_id,
        content=content,
        thread_id=source.thread_id,
        reply_to_message_id=source.message_id,
    )

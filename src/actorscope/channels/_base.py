"""What every channel adapter shares: metadata keys, ignore reasons, the ingress result.

An adapter turns one platform event into an :class:`Ingress`: either an
:class:`~actorscope.messages.InboundMessage` or the reason the event is ignored (plus, for a
Telegram group that became a supergroup, the :class:`ScopeMigration` to apply). The same type
is what admission (``_policy.admit``) and the ingress pipeline
(:class:`~actorscope.channels.Pipeline`) return: its :attr:`Ingress.outcome` says whether the
event was admitted, ignored (and why), a duplicate, claimed by another worker, or a writer
command the pipeline answered.

Metadata written by an adapter uses only the fixed keys of
:class:`~actorscope.messages.MetaKey`. An adapter never copies a user-controlled mapping into
``InboundMessage.metadata`` and never writes an ``origin_*`` key, so nothing a user types or
names themselves can pose as a propagated origin.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, fields
from enum import StrEnum
from typing import NamedTuple

from pydantic import ValidationError

from actorscope.errors import PayloadError
from actorscope.identity import Identity
from actorscope.messages import InboundMessage, MetaKey, OutboundMessage

__all__ = [
    "ADAPTER_METADATA_KEYS",
    "Addressed",
    "IgnoreReason",
    "Ingress",
    "Outcome",
    "ScopeMigration",
    "build_inbound",
    "display_name",
    "flag_raised",
    "ignored",
]

# The message fields an adapter's Identity fills in (scope, actor and its kind, channel, chat,
# peer kind): every field the two declare alike but the agent and tenant, which the host
# assigns (OriginSigner.run_request), never a platform event. Derived, so a new shared field
# needs no edit here.
_HOST_ASSIGNED = frozenset({"agent_id", "tenant_id"})
_FROM_IDENTITY = tuple(
    field.name
    for field in fields(Identity)
    if field.name in InboundMessage.model_fields and field.name not in _HOST_ASSIGNED
)

logger = logging.getLogger("actorscope.channels")
# A library logs, the application decides where to: without this, Python's last-resort handler
# would print adapter warnings on stderr of programs that never configured logging (the CLI).
logger.addHandler(logging.NullHandler())

#: Every key an adapter may put into ``InboundMessage.metadata``.
#: Never an ``origin_*`` key: those are the signed origin's, which only the wrappers write.
ADAPTER_METADATA_KEYS: frozenset[str] = frozenset(
    key.value for key in MetaKey if not key.value.startswith("origin_")
)


class Addressed(StrEnum):
    """Why a group message counts as addressed to the bot (for the mention gate)."""

    MENTION = "mention"
    REPLY = "reply"
    COMMAND = "command"
    CALLBACK = "callback"
    INTERACTION = "interaction"


class IgnoreReason(StrEnum):
    """Why an event produced no message. The values are stable strings (CLI, logs)."""

    MALFORMED = "malformed"
    UNSUPPORTED_EVENT = "unsupported_event"
    CHAT_MEMBER_UPDATE = "chat_member_update"
    SERVICE_MESSAGE = "service_message"
    CHAT_MIGRATED = "chat_migrated"
    SYSTEM_MESSAGE = "system_message"
    OWN_MESSAGE = "own_message"
    BOT_SENDER = "bot_sender"
    NONPERSON_SENDER = "nonperson_sender"
    NO_GUILD = "no_guild"
    NOT_FOR_THIS_BOT = "not_for_this_bot"
    DUPLICATE = "duplicate"
    CLAIMED_ELSEWHERE = "claimed_elsewhere"
    #: Another worker is handling it right now (its claim is a live lease): try again later.
    CLAIM_HELD = "claim_held"
    DM_DISABLED = "dm_disabled"
    GROUP_DISABLED = "group_disabled"
    NOT_ALLOWED = "not_allowed"
    NOT_MENTIONED = "not_mentioned"


@dataclass(frozen=True, slots=True)
class ScopeMigration:
    """A chat moved to a new id (Telegram group → supergroup): its scope moves with it."""

    channel: str
    old_chat_id: str
    new_chat_id: str
    old_scope: str
    new_scope: str


class Outcome(StrEnum):
    """What became of one event on its way in (stable strings: logs, the sandbox)."""

    ADMITTED = "admitted"
    IGNORED = "ignored"
    DUPLICATE = "duplicate"
    CLAIMED_ELSEWHERE = "claimed_elsewhere"
    WRITER_COMMAND = "writer_command"


class Ingress(NamedTuple):
    """The outcome of one platform event: normalised, admitted, answered or ignored.

    ``message`` is the message as far as it got: the admitted one (mention stripped), the
    normalised one an admission rule refused (or a normaliser ignored but kept: another bot's
    command in a group, whose text the pipeline still looks at for a link code), or ``None``
    when normalisation found nothing for the bot; ``reason`` says why the event is ignored.
    ``migration`` is set for a chat migration (the event itself is then ignored). ``command``
    names the writer command the pipeline ran and ``answer`` is its reply (``None`` for an
    edited command, which is not run): such an event never reaches the handler.
    """

    message: InboundMessage | None
    reason: IgnoreReason | None = None
    migration: ScopeMigration | None = None
    detail: str = ""
    command: str = ""
    answer: OutboundMessage | None = None

    @classmethod
    def of(
        cls,
        identity: Identity,
        *,
        content: str,
        metadata: Mapping[str, str],
        thread_id: str = "",
        message_id: str = "",
    ) -> Ingress:
        """A normaliser's message for ``identity`` (its scope, actor, channel, chat and peer
        kind): what a platform's :meth:`~actorscope.channels.Platform.inspect` returns for an
        event the bot takes; ``metadata`` uses the :class:`~actorscope.messages.MetaKey` keys
        only. Built the one way every adapter builds a message (types checked:
        :class:`~actorscope.errors.PayloadError`)."""
        message = build_inbound(
            identity,
            content=content,
            metadata=metadata,
            thread_id=thread_id,
            message_id=message_id,
        )
        return cls(message)

    @property
    def outcome(self) -> Outcome:
        """Admitted, ignored, duplicate, claimed elsewhere, or a writer command."""
        if self.reason is IgnoreReason.DUPLICATE:
            return Outcome.DUPLICATE
        if self.reason in (IgnoreReason.CLAIMED_ELSEWHERE, IgnoreReason.CLAIM_HELD):
            return Outcome.CLAIMED_ELSEWHERE
        if self.reason is not None or self.message is None:
            return Outcome.IGNORED
        if self.command:
            return Outcome.WRITER_COMMAND
        return Outcome.ADMITTED

    @property
    def admitted(self) -> bool:
        """True iff the message goes on to the handler."""
        return self.outcome is Outcome.ADMITTED

    @property
    def session_key(self) -> str:
        """The session key of the message, or ``""`` when ignored."""
        if self.message is None:
            return ""
        return self.message.metadata.get(MetaKey.SESSION_KEY, "")


def ignored(reason: IgnoreReason, detail: str = "") -> Ingress:
    """An :class:`Ingress` without a message; logged at DEBUG with ``detail``."""
    logger.debug("channels.ignored reason=%s %s", reason.value, detail)
    return Ingress(None, reason, detail=detail)


def flag_raised(value: object) -> bool:
    """A platform's "not a person" flag (``is_bot``, ``bot``, ``system``) as read from a payload.

    Security first: only JSON ``false`` means "a person"; ``true``, ``1``, ``"true"``, even
    ``"false"``, ``0`` or ``null`` mean "not a person". Read an absent flag as ``False``
    (``author.get("bot", False)``): platforms omit the flag for people.
    """
    return value is not False


def display_name(*candidates: object) -> str:
    """The first non-empty string among ``candidates``, else ``""``: display only, never an id.

    A payload that carries a number, a list or an object where a name belongs gets no name
    rather than that value's ``repr``.
    """
    for candidate in candidates:
        if type(candidate) is str and candidate:
            return candidate
    return ""


def build_inbound(
    identity: Identity,
    *,
    content: str,
    metadata: Mapping[str, str],
    thread_id: str = "",
    message_id: str = "",
    media: tuple[Mapping[str, str], ...] = (),
) -> InboundMessage:
    """An :class:`InboundMessage` for ``identity``: the one way adapters build a message.

    The message takes the identity's scope, actor and sender kind, channel, chat and peer
    kind; never its agent or tenant, which the host assigns. ``metadata`` is copied. Types
    are checked strictly, by the model's validation: a value taken unchecked from a payload
    (a number, bytes or ``None`` where text belongs) raises
    :class:`~actorscope.errors.PayloadError` naming what is wrong instead of reaching
    ``admit()`` or a handler. ``media`` is the attachments the message references, each the
    mapping of its text fields (``kind``, ``file_id``, ``url``, ``mime_type``, ``file_name``).
    """
    items: list[dict[str, str]] = []
    for item in media:
        if not isinstance(item, Mapping):
            raise PayloadError(_MEDIA_PROBLEM)
        items.append(dict(item))
    message: dict[str, object] = {
        "content": content,
        # A dict as it is (the validation copies it); any other mapping as a dict, which
        # strict validation takes.
        "metadata": metadata if type(metadata) is dict else dict(metadata),
        "thread_id": thread_id,
        "message_id": message_id,
        "media": tuple(items),
    }
    for name in _FROM_IDENTITY:  # a plain loop: no generator frame per message
        message[name] = getattr(identity, name)
    try:
        # Strict: text is a str (the content, the ids, every metadata key and value), never
        # a number, bytes or None coerced; checked once, by the model's own validation.
        return InboundMessage.model_validate(message, strict=True)
    except ValidationError as exc:
        raise PayloadError(_not_text(exc)) from None


_MEDIA_PROBLEM = "build_inbound: each media item is a mapping of text (kind, file_id, ...)"


def _not_text(exc: ValidationError) -> str:
    """What build_inbound refused, as one line without pydantic's types."""
    field = str(exc.errors()[0]["loc"][0]) if exc.errors() else ""
    if field == "metadata":
        return "build_inbound: metadata keys and values must be text"
    if field == "media":
        return _MEDIA_PROBLEM
    if field in ("content", "thread_id", "message_id"):
        return "build_inbound: content, thread_id and message_id must be text"
    return f"build_inbound: {field or 'a field'} is not valid"

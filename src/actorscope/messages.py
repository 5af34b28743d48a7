"""The messages that cross the bus: inbound from a channel, outbound to one, and the run request.

All three are frozen pydantic models; ``metadata`` is a read-only ``str -> str`` mapping, so a
message cannot be altered after it was built (or signed).

A reply may carry more than text: a ``format`` (``plain``, ``markdown``, ``html``), rows of inline
:class:`Button` s (callback data or a link) and :class:`Attachment` s (a photo or document by
local path or http(s) URL). They are platform-neutral; each runner renders them (Telegram: an
``InlineKeyboardMarkup``; Discord: a ``discord.ui.View``) and checks its platform's limits
before it calls the platform. What is wrong is one :class:`~actorscope.errors.ReplyError`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum
from pathlib import Path
from types import MappingProxyType
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, PlainSerializer, field_validator

from actorscope._input import read_file_bytes, shown_path
from actorscope.errors import ReplyError
from actorscope.identity import Identity, PeerKind, SenderKind

__all__ = [
    "Attachment",
    "Button",
    "InboundMessage",
    "MetaKey",
    "OutboundMessage",
    "RichReply",
    "RunRequest",
]


class MetaKey(StrEnum):
    """The keys actorscope writes into a message's ``metadata`` (the values are the stable
    strings: ``request.metadata.get(MetaKey.COMMAND)`` and ``.get("command")`` are the same).

    A channel adapter writes only the keys before :attr:`ORIGIN_VIA`, never a user-controlled
    mapping and never an ``origin_*`` key, so nothing a user types or names themselves can pose
    as a propagated origin. Each value is text; an absent key means "not the case".
    """

    #: The session key the adapter computed
    #: (``agent:<key>:<channel>:<direct|group>:<chat>[...]``).
    SESSION_KEY = "session_key"
    #: Which platform event this was: ``message``, ``edited_message``, ``channel_post``, ...
    EVENT = "event"
    #: The sender's @username or display name, for display only; never an identity.
    SENDER_NAME = "sender_name"
    #: How the message is addressed to the bot (``mention``, ``reply``, ``command``,
    #: ``callback``, ``interaction``; for the mention gate), absent if not.
    ADDRESSED = "addressed"
    #: The command the message starts with, without its slash or ``@bot`` suffix: ``note`` for
    #: Telegram's ``/note@my_bot buy milk`` (in a group only when it is addressed to this bot),
    #: the name of a Discord slash command. What the platform sent, not an identity.
    COMMAND = "command"
    #: The id of the message this one replies to.
    REPLY_TO_MESSAGE_ID = "reply_to_message_id"
    #: Unix time of an edit, so an edit is not dropped as a duplicate of the original.
    EDIT_DATE = "edit_date"
    #: A button click: the clicked button's data (Telegram ``callback_data``, Discord component
    #: ``custom_id``; also the message's ``content``). The clicker sent it: it selects among
    #: the bot's own buttons, it is never an identity or a permission.
    CALLBACK_DATA = "callback_data"
    #: An event that is not a message of its own (a Telegram button click, whose
    #: ``message_id`` is the click's id): the id of the message a reply to it answers (the
    #: message whose button was clicked), ``""`` when there is none (a click on an inline-mode
    #: message). Absent: a reply answers ``message_id`` (see ``reply_target``).
    REPLY_TARGET = "reply_target"
    #: Run requests only: the synthetic sender that carried a *verified* origin (for audit).
    #: The builder writes it iff it attributed the run to that origin and strips every
    #: ``origin_*`` key of a message otherwise, so :attr:`RunRequest.propagated` reads it.
    ORIGIN_VIA = "origin_via"
    #: A synthesised message only: the person who started the chain, as its signed origin
    #: claims (:class:`~actorscope.propagation.Origin`'s wire format, the other ``origin_*``
    #: keys with it); a host reads it to see whom a carrier claims, and
    #: :meth:`~actorscope.propagation.OriginSigner.run_request` believes it only when it verifies.
    ORIGIN_SENDER_ID = "origin_sender_id"


def _freeze(value: Mapping[str, str]) -> Mapping[str, str]:
    return MappingProxyType(dict(value))


#: A read-only ``str -> str`` mapping that serialises as a plain JSON object.
_Metadata = Annotated[Mapping[str, str], PlainSerializer(dict, return_type=dict[str, str])]

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


class _Media(_Frozen):
    """An attachment referenced by a message (an item of :attr:`InboundMessage.media`);
    the bytes stay on the platform."""

    kind: str
    file_id: str = ""
    url: str = ""
    mime_type: str = ""
    file_name: str = ""


class _MessageFields(_Frozen):
    """The fields :class:`InboundMessage` and :class:`RunRequest` share, declared once.

    Who acted where (the scope ``user_id``, the actor ``sender_id`` and its kind, channel,
    chat, peer kind, topic/thread, the message id, the agent and tenant) plus the text and the
    metadata. Both models inherit them, so a field added here is on both with one annotation
    and default; :meth:`~actorscope.propagation.OriginSigner.run_request` and
    :func:`~actorscope.channels.build_inbound` derive what they copy from ``model_fields``.
    The order below is :class:`InboundMessage`'s field order (its JSON and ``model_dump``).
    """

    channel: str
    sender_id: str
    chat_id: str
    content: str = ""
    peer_kind: PeerKind = PeerKind.DIRECT
    user_id: str
    sender_kind: SenderKind = SenderKind.USER
    metadata: _Metadata = Field(default_factory=dict)
    thread_id: str = ""
    message_id: str = ""
    tenant_id: str | None = None
    agent_id: str | None = None

    @property
    def reply_target(self) -> str:
        """The id of the message a reply to this one answers: ``message_id``, or for an event
        that is not a message of its own the one :attr:`MetaKey.REPLY_TARGET` names (``""``:
        none, the reply answers no message)."""
        return self.metadata.get(MetaKey.REPLY_TARGET, self.message_id)

    def _identity_with(self, role: str) -> Identity:
        # The one mapping of these fields onto an Identity (both models' identity()).
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


class InboundMessage(_MessageFields):
    """A message that arrived from a channel or was synthesised by a wrapper.

    ``user_id`` is the scope, ``sender_id`` the actor (``""`` when no person sent it).
    """

    #: The attachments the message references (the bytes stay on the platform): each has a
    #: ``kind`` (``photo``, ``document``, ...), ``file_id``, ``url``, ``mime_type`` and
    #: ``file_name`` (```` when not known).
    media: tuple[_Media, ...] = ()

    def identity(self, *, role: str = "") -> Identity:
        """The identity of this message's own sender (no origin is consulted)."""
        return self._identity_with(role)


#: How a reply's text is marked up; each platform renders its own dialect. ``markdown`` is
#: Telegram's MarkdownV2 and Discord's own Markdown; ``html`` is Telegram's HTML subset, sent to
#: Discord as its text with the tags removed.
_Format = Literal["plain", "markdown", "html"]

#: What an outbound attachment is shown as.
_Kind = Literal["photo", "document"]


def _web_url(url: str, what: str) -> str:
    """``url`` if it is an http(s) URL with a host; else one :class:`ReplyError`."""
    try:
        parts = urlsplit(url)
        web = parts.scheme.lower() in ("http", "https") and bool(parts.hostname)
    except ValueError:  # urlsplit's only error: a malformed [IPv6] host
        web = False
    if not web:
        raise ReplyError(f"{what} {url[:80]!r} is not an http:// or https:// URL")
    if any(ch.isspace() or ord(ch) < 0x20 for ch in url):
        raise ReplyError(f"{what} {url[:80]!r} contains whitespace or control characters")
    return url


class Button(_Frozen):
    """An inline button: its label and either callback ``data`` or a link ``url``.

    A click on a ``data`` button comes back to the handler as a message whose
    ``metadata["callback_data"]`` (:attr:`MetaKey.CALLBACK_DATA`) is ``data``
    (and ``content`` too). Telegram allows 64 bytes of data, Discord 100 characters: the
    runner refuses more before it sends anything.
    """

    text: str
    data: str = ""
    url: str = ""

    def __init__(self, text: str = "", /, **fields: Any) -> None:
        # Button("Go", data="go"); pydantic itself passes text= (JSON, nested validation).
        fields.setdefault("text", text)
        super().__init__(**fields)

    @field_validator("text", mode="after")
    @classmethod
    def _label(cls, text: str) -> str:
        if not text.strip():
            raise ReplyError("a button needs a non-empty text")
        return text

    @field_validator("url", mode="after")
    @classmethod
    def _link(cls, url: str) -> str:
        return _web_url(url, "button url") if url else url

    def model_post_init(self, context: Any, /) -> None:
        """Exactly one of ``data`` and ``url``."""
        if bool(self.data) == bool(self.url):
            raise ReplyError(f"button {self.text[:40]!r} needs exactly one of data= and url=")


class Attachment(_Frozen):
    """A photo or document to send (``kind``: ``"photo"`` or ``"document"``): a local file
    (``path``) or an http(s) ``url``.

    The path is the handler's own: it is taken as given (made absolute, symlinks resolved),
    never joined to a base directory, and must name an existing regular file.
    """

    kind: _Kind
    path: Path | None = None
    url: str = ""

    @field_validator("path", mode="after")
    @classmethod
    def _file(cls, path: Path | None) -> Path | None:
        if path is None:
            return None
        shown = shown_path(path)
        try:
            resolved = path.resolve(strict=True)
        except (OSError, ValueError):
            raise ReplyError(f"attachment path {shown} does not exist") from None
        if not resolved.is_file():
            raise ReplyError(f"attachment path {shown} is not a regular file")
        return resolved

    @field_validator("url", mode="after")
    @classmethod
    def _link(cls, url: str) -> str:
        return _web_url(url, "attachment url") if url else url

    def model_post_init(self, context: Any, /) -> None:
        """Exactly one of ``path`` and ``url``."""
        if (self.path is None) == (not self.url):
            raise ReplyError(f"a {self.kind} attachment needs exactly one of path= and url=")

    @property
    def name(self) -> str:
        """The file name shown to users: the path's, else the URL path's last part."""
        if self.path is not None:
            return self.path.name
        return urlsplit(self.url).path.rpartition("/")[2] or self.kind

    def read(self, *, limit: int) -> bytes:
        """The bytes of a ``path`` attachment, at most ``limit``; else one :class:`ReplyError`.

        Read when the reply is sent (the file may have changed since the reply was built).
        """
        if self.path is None:
            raise ReplyError(f"a {self.kind} given by URL has no local bytes to read")
        content = read_file_bytes(self.path, ReplyError, limit=limit, what=f"a {self.kind}")
        if not content:
            raise ReplyError(f"{shown_path(self.path)}: the {self.kind} is empty")
        return content

    @classmethod
    def photo(cls, source: str | Path) -> Attachment:
        """A photo from a local path or an http(s) URL (a ``str`` with ``://`` is a URL)."""
        return cls._of("photo", source)

    @classmethod
    def document(cls, source: str | Path) -> Attachment:
        """A document from a local path or an http(s) URL (a ``str`` with ``://`` is a URL)."""
        return cls._of("document", source)

    @classmethod
    def _of(cls, kind: _Kind, source: str | Path) -> Attachment:
        if isinstance(source, str) and "://" in source:
            return cls(kind=kind, url=source)
        return cls(kind=kind, path=Path(source))


#: Rows of buttons, top to bottom.
_Buttons = tuple[tuple[Button, ...], ...]


def _rows(value: object) -> object:
    """A flat sequence of buttons is one row; rows stay rows."""
    if isinstance(value, Sequence) and value and all(isinstance(b, Button) for b in value):
        return (tuple(value),)
    return value


class _Rich(_Frozen):
    """Format, buttons and attachments: what a reply carries besides its text.

    ``format`` is how the text is marked up: ``"plain"``, ``"markdown"`` (Telegram's
    MarkdownV2, Discord's own Markdown) or ``"html"`` (Telegram's HTML subset; Discord gets
    the text without the tags).
    """

    format: _Format = "plain"
    buttons: _Buttons = ()
    media: tuple[Attachment, ...] = ()

    @field_validator("buttons", mode="before")
    @classmethod
    def _button_rows(cls, value: object) -> object:
        return _rows(value)

    @field_validator("buttons", mode="after")
    @classmethod
    def _no_empty_row(cls, rows: _Buttons) -> _Buttons:
        if any(not row for row in rows):
            raise ReplyError("a row of buttons is empty")
        return rows


class OutboundMessage(_Rich):
    """A reply to send: the channel, chat and topic/thread it goes back to.

    Besides ``content`` it may carry a ``format``, rows of ``buttons`` and ``media``
    (see :class:`RichReply`); a plain text reply leaves them at their defaults.
    """

    channel: str
    chat_id: str
    content: str
    thread_id: str = ""
    reply_to_message_id: str = ""
    metadata: _Metadata = Field(default_factory=dict)

    @classmethod
    def reply_to(
        cls, source: InboundMessage | RunRequest, content: str | RichReply
    ) -> OutboundMessage:
        """A reply to ``source``: same channel, chat and topic/thread, replying to its message
        (:attr:`~InboundMessage.reply_target`: for a click, the message clicked).

        ``content`` is the text, or a :class:`RichReply` whose format, buttons and media the
        reply carries. The one place a reply is built: the host, the runners' writer-command
        answers and the testing kit all call it.
        """
        # Plain text is the content itself: no RichReply is built (and validated) to unwrap it.
        carried: dict[str, Any] = {"content": content}
        if isinstance(content, RichReply):
            carried = {
                "content": content.text,
                "format": content.format,
                "buttons": content.buttons,
                "media": content.media,
            }
        return cls(
            channel=source.channel,
            chat_id=source.chat_id,
            thread_id=source.thread_id,
            reply_to_message_id=source.reply_target,
            **carried,
        )


class RichReply(_Rich):
    """What a handler may return instead of a ``str``: text with format, buttons and media.

    ``buttons`` is rows of :class:`Button` (a flat list is one row); ``media`` is
    :class:`Attachment` s sent before the text. The run step turns it into the
    :class:`OutboundMessage` for the chat the request came from (:meth:`OutboundMessage.reply_to`).
    """

    text: str = ""

    def __init__(self, text: str = "", /, **fields: Any) -> None:
        fields.setdefault("text", text)  # RichReply("hi", ...) or RichReply(text="hi", ...)
        super().__init__(**fields)


class RunRequest(_MessageFields):
    """One agent turn: what to run, in which session, on behalf of whom.

    ``user_id`` is the scope, ``sender_id`` the actor (``""`` when no person acts), as on
    :class:`InboundMessage`. :attr:`propagated` says whether the turn continues an earlier
    person's run (a sub-agent or delegate announce, a teammate dispatch, ``session_send``, a
    ticker) and was attributed to that person.

    ``metadata`` keeps the inbound message's keys (never an unverified ``origin_*`` one).
    ``metadata["command"]`` (:attr:`MetaKey.COMMAND`) is the command the
    message starts with, without its slash or ``@bot`` suffix: ``note`` for Telegram's
    ``/note@my_bot buy milk`` (in a group only when it is addressed to this bot), the name of a
    Discord slash command; absent for any other message. ``content`` keeps the full text. It
    is what the platform sent, not an identity: a permission check still asks the policy.
    """

    session_key: str
    role: str = ""

    @property
    def propagated(self) -> bool:
        """True iff the builder attributed this turn to a verified origin (a propagated turn).

        Then ``sender_id`` is the person who started the chain and
        ``metadata[MetaKey.ORIGIN_VIA]`` the synthetic sender that carried it. A direct message,
        and a synthesised one whose origin is missing, forged, replayed or not a person, is
        not propagated: :meth:`~actorscope.propagation.OriginSigner.run_request` strips every
        ``origin_*`` key of those, so nothing unsigned can set this.
        """
        return bool(self.metadata.get(MetaKey.ORIGIN_VIA))

    def identity(self) -> Identity:
        """The identity the host binds while this request runs."""
        return self._identity_with(self.role)

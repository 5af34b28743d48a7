"""Rich replies: Button, Attachment and RichReply refuse bad input with one ReplyError."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from actorscope.errors import ReplyError
from actorscope.messages import (
    Attachment,
    Button,
    InboundMessage,
    OutboundMessage,
    RichReply,
)

SOURCE = InboundMessage(
    channel="telegram", sender_id="42", chat_id="42", user_id="42", thread_id="3", message_id="9"
)


def test_reply_to_carries_format_buttons_and_media(tmp_path: Path) -> None:
    """reply_to(request, RichReply) keeps the chat, topic and reply target and adds the rest."""
    photo = tmp_path / "a.png"
    photo.write_bytes(b"png")
    out = OutboundMessage.reply_to(
        SOURCE,
        RichReply(
            "*hi*",
            format="markdown",
            buttons=[Button("Yes", data="y"), Button("No", data="n")],
            media=[Attachment.photo(photo)],
        ),
    )
    assert (out.chat_id, out.thread_id, out.reply_to_message_id) == ("42", "3", "9")
    assert (out.content, out.format) == ("*hi*", "markdown")
    assert [[b.data for b in row] for row in out.buttons] == [["y", "n"]]  # a flat list: one row
    assert out.media[0].kind == "photo"
    assert out.media[0].path == photo.resolve()
    assert OutboundMessage.reply_to(SOURCE, "plain") == OutboundMessage(
        channel="telegram", chat_id="42", content="plain", thread_id="3", reply_to_message_id="9"
    )


def test_a_rich_outbound_message_survives_a_json_round_trip(tmp_path: Path) -> None:
    """Buttons and media serialise and validate back to an equal message (keyword or not)."""
    (tmp_path / "a.txt").write_text("a")
    out = OutboundMessage(
        channel="telegram",
        chat_id="1",
        content="x",
        format="html",
        buttons=[Button("a", data="b")],
        media=[Attachment.document(tmp_path / "a.txt"), Attachment.photo("https://x.org/p.png")],
    )
    again = OutboundMessage.model_validate_json(out.model_dump_json())
    assert again == out
    assert hash(again) == hash(out)
    assert Button(text="a", data="b") == Button("a", data="b")
    assert RichReply(text="hi") == RichReply("hi")


def test_url_attachments_and_rows_of_buttons() -> None:
    """A str with :// is a URL; rows of buttons stay rows; a link button has no data."""
    doc = Attachment.document("https://example.org/r.pdf")
    assert (doc.url, doc.path, doc.name) == ("https://example.org/r.pdf", None, "r.pdf")
    reply = RichReply(buttons=[[Button("a", data="1")], [Button("b", url="http://x.org")]])
    assert [len(row) for row in reply.buttons] == [1, 1]
    assert reply.buttons[1][0].data == ""


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: Button("Go"), "button 'Go' needs exactly one of data= and url="),
        (lambda: Button("Go", data="g", url="https://x.org"), "exactly one of data= and url="),
        (lambda: Button("  ", data="g"), "a button needs a non-empty text"),
        (lambda: Button("Go", url="javascript:alert(1)"), "is not an http:// or https:// URL"),
        (lambda: Button("Go", url="https://"), "is not an http:// or https:// URL"),
        (lambda: Button("Go", url="http://[::1"), "is not an http:// or https:// URL"),
        (lambda: Button("Go", url="https://x.org/a b"), "whitespace or control characters"),
        (lambda: Attachment.document("ftp://x.org/f"), "is not an http:// or https:// URL"),
        (lambda: Attachment.photo("file:///etc/passwd"), "is not an http:// or https:// URL"),
        (lambda: Attachment.photo("/no/such/file.png"), "does not exist"),
        (lambda: Attachment.photo("bad\x00name"), "does not exist"),
        (lambda: Attachment(kind="photo"), "exactly one of path= and url="),
        (lambda: RichReply("x", buttons=[[]]), "a row of buttons is empty"),
    ],
)
def test_bad_buttons_and_media_are_one_reply_error(
    build: Callable[[], object], message: str
) -> None:
    """Each mistake is one ReplyError saying what is wrong (no pydantic dump, no type name)."""
    with pytest.raises(ReplyError) as caught:
        build()
    assert message in str(caught.value)


def test_a_directory_or_fifo_is_not_an_attachment(tmp_path: Path) -> None:
    """Only a regular file is sent: a directory or FIFO is refused when the reply is built."""
    with pytest.raises(ReplyError, match="is not a regular file"):
        Attachment.document(tmp_path)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(ReplyError, match="is not a regular file"):
        Attachment.document(fifo)


def test_read_is_bounded_and_refuses_a_file_gone_or_empty(tmp_path: Path) -> None:
    """read() returns the bytes; over the limit, emptied or removed since: one ReplyError."""
    path = tmp_path / "r.txt"
    path.write_bytes(b"12345")
    doc = Attachment.document(path)
    assert doc.read(limit=5) == b"12345"
    with pytest.raises(ReplyError, match="larger than the 4-byte limit for a document"):
        doc.read(limit=4)
    path.write_bytes(b"")
    with pytest.raises(ReplyError, match="the document is empty"):
        doc.read(limit=4)
    path.unlink()
    with pytest.raises(ReplyError, match="cannot read"):
        doc.read(limit=4)
    with pytest.raises(ReplyError, match="given by URL"):
        Attachment.photo("https://x.org/p.png").read(limit=4)

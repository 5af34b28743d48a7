"""``parse_mode``: the text and entities Telegram makes of HTML, MarkdownV2 and Markdown.

A bot sends ``<b>hi</b>`` with ``parse_mode=HTML``; the message users see says ``hi`` with a
``bold`` entity. This module does the same: it returns the plain text and its entities
(offsets in UTF-16 code units), or raises ``Bad Request: can't parse entities: ...`` for markup
Telegram refuses (an unknown tag, a tag never closed, a MarkdownV2 character not escaped).

``tg://user?id=<id>`` links become ``text_mention`` entities for users the emulator knows.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from actorscope.sandbox._telegram.entities import parse_entities, utf16_len
from actorscope.sandbox._telegram.errors import BotApiError

__all__ = ["PARSE_MODES", "formatted"]

JSON = dict[str, Any]
#: Looks up a user's ``User`` JSON by id (for ``tg://user?id=`` mentions), or ``None``.
UserLookup = Callable[[int], JSON | None]
PARSE_MODES = frozenset({"HTML", "MarkdownV2", "Markdown"})
_SIMPLE_TAGS = {
    "b": "bold",
    "strong": "bold",
    "i": "italic",
    "em": "italic",
    "u": "underline",
    "ins": "underline",
    "s": "strikethrough",
    "strike": "strikethrough",
    "del": "strikethrough",
    "tg-spoiler": "spoiler",
    "code": "code",
    "pre": "pre",
    "blockquote": "blockquote",
}
_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9-]*)((?:\s+[^<>]*?)?)\s*(/?)>")
_ATTRIBUTE = re.compile(r"""([A-Za-z-]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+)))?""")
_ENTITY = re.compile(r"&(#[0-9]+|#[xX][0-9A-Fa-f]+|[A-Za-z]+);")
_MENTION = re.compile(r"^tg://user\?id=([0-9]+)$")
# MarkdownV2 characters that must be escaped outside entities.
_RESERVED = frozenset("_*[]()~`>#+-=|{}.!")


def _bad(reason: str) -> BotApiError:
    return BotApiError(400, f"Bad Request: can't parse entities: {reason}")


@dataclass(slots=True)
class _Builder:
    """Plain text as it is written, with the entities opened and closed along the way."""

    users: UserLookup
    parts: list[str] = field(default_factory=list)
    offset: int = 0
    entities: list[JSON] = field(default_factory=list)

    def text(self, chunk: str) -> None:
        self.parts.append(chunk)
        self.offset += utf16_len(chunk)

    def entity(self, kind: str, start: int, **extra: Any) -> None:
        """Close an entity of ``kind`` opened at ``start`` (empty entities are dropped)."""
        length = self.offset - start
        if length <= 0:
            return
        if kind == "text_link":
            extra["url"] = _normalized_url(str(extra.get("url", "")))
        if kind == "text_link" and (found := _MENTION.match(str(extra.get("url", "")))):
            user = self.users(int(found.group(1)))
            if user is None:
                return  # Telegram drops a mention of a user it cannot show
            kind, extra = "text_mention", {"user": user}
        self.entities.append({"type": kind, "offset": start, "length": length, **extra})

    def result(self) -> tuple[str, list[JSON]]:
        text = "".join(self.parts)
        own = sorted(self.entities, key=lambda e: (e["offset"], -e["length"]))
        taken = [(e["offset"], e["offset"] + e["length"]) for e in own]
        # Telegram still finds commands, mentions, hashtags and URLs in the plain text.
        found = [
            e
            for e in parse_entities(text)
            if not any(
                e["offset"] < end and start < e["offset"] + e["length"] for start, end in taken
            )
        ]
        return text, sorted(own + found, key=lambda e: (e["offset"], -e["length"]))


def _normalized_url(url: str) -> str:
    """A link's URL as Telegram stores it: ``http://`` added when no scheme is given, and a
    ``/`` path for a bare web address."""
    if not url or url.startswith("tg://"):
        return url
    if "://" not in url:
        url = f"http://{url}"
    parts = urlsplit(url)
    if parts.scheme in ("http", "https") and not parts.path:
        return urlunsplit(parts._replace(path="/"))
    return url


def _at(source: str, index: int) -> str:
    """Where ``index`` is, as Telegram says it: ``at byte offset N`` (UTF-8 bytes)."""
    return f"at byte offset {len(source[:index].encode())}"


def _unclosed(source: str, index: int) -> BotApiError:
    return _bad(f"Can't find end of the entity starting {_at(source, index)}")


def _html(source: str, users: UserLookup) -> tuple[str, list[JSON]]:
    out = _Builder(users)
    stack: list[tuple[str, int, JSON]] = []
    at = 0
    while at < len(source):
        char = source[at]
        if char == "<":
            match = _TAG.match(source, at)
            if match is None:
                raise _bad(f"unexpected '<' {_at(source, at)}")
            closing, name = match.group(1) == "/", match.group(2).lower()
            attributes = match.group(3)
            if closing:
                if not stack or stack[-1][0] != name:
                    raise _bad(f"Unexpected end tag {_at(source, at)}")
                _, start, info = stack.pop()
                if info["kind"] == "code" and stack and stack[-1][2]["kind"] == "pre":
                    # <pre><code class="language-x"> is one pre entity with that language.
                    stack[-1][2]["language"] = info.get("language")
                else:
                    _close_html(out, start, info)
            else:
                stack.append((name, out.offset, _html_attributes(name, attributes, source, at)))
            at = match.end()
        elif char == "&":
            match = _ENTITY.match(source, at)
            if match is None or (
                match.group(1) not in ("lt", "gt", "amp", "quot")
                and not (match.group(1).startswith("#"))
            ):
                raise _bad(f"unsupported HTML entity {_at(source, at)}")
            out.text(html.unescape(match.group(0)))
            at = match.end()
        elif char == ">":
            raise _bad(f"unexpected '>' {_at(source, at)}")
        else:
            found = [i for i in (source.find(c, at) for c in "<&>") if i >= 0]
            end = min(found, default=len(source))
            out.text(source[at:end])
            at = end
    if stack:
        raise _bad(f'Can\'t find end tag corresponding to start tag "{stack[-1][0]}"')
    return out.result()


def _html_attributes(name: str, raw: str, source: str, at: int) -> JSON:
    values = {
        m.group(1).lower(): m.group(2) or m.group(3) or m.group(4) or ""
        for m in _ATTRIBUTE.finditer(raw)
    }
    if name == "span" and values.get("class") == "tg-spoiler":
        return {"kind": "spoiler"}
    if name == "a":
        return {"kind": "text_link", "url": values.get("href", "")}
    if name == "tg-emoji":
        return {"kind": "custom_emoji", "custom_emoji_id": values.get("emoji-id", "")}
    if name == "blockquote" and "expandable" in values:
        return {"kind": "expandable_blockquote"}
    if name == "code" and values.get("class", "").startswith("language-"):
        return {"kind": "code", "language": values["class"].removeprefix("language-")}
    if name in _SIMPLE_TAGS:
        return {"kind": _SIMPLE_TAGS[name]}
    raise _bad(f'Unsupported start tag "{name}" {_at(source, at)}')


def _close_html(out: _Builder, start: int, info: JSON) -> None:
    kind = info["kind"]
    if kind == "text_link":
        out.entity(kind, start, url=info["url"])
    elif kind == "custom_emoji":
        out.entity(kind, start, custom_emoji_id=info["custom_emoji_id"])
    elif kind == "pre" and info.get("language"):
        out.entity(kind, start, language=info["language"])
    else:
        out.entity(kind, start)


# MarkdownV2's paired markers (longest first); code and pre are read separately.
_V2_MARKERS = (
    ("||", "spoiler"),
    ("__", "underline"),
    ("*", "bold"),
    ("_", "italic"),
    ("~", "strikethrough"),
)


def _markdown_v2(source: str, users: UserLookup) -> tuple[str, list[JSON]]:
    out = _Builder(users)
    stack: list[tuple[str, int]] = []
    links: list[int] = []
    at = 0
    line_start = True
    quote: int | None = None
    while at < len(source):
        char = source[at]
        if char == "\\" and at + 1 < len(source) and 0 < ord(source[at + 1]) < 127:
            out.text(source[at + 1])
            at += 2
            line_start = False
            continue
        if line_start and char == ">":
            if quote is None:
                quote = out.offset
            at += 1
            line_start = False
            continue
        if char == "\n":
            if quote is not None and not source.startswith(">", at + 1):
                out.entity("blockquote", quote)  # the quote ends with its last line
                quote = None
            out.text(char)
            at += 1
            line_start = True
            continue
        line_start = False
        if source.startswith("```", at):
            end = source.find("```", at + 3)
            if end < 0:
                raise _unclosed(source, at)
            body = source[at + 3 : end]
            language, newline, code = body.partition("\n")
            if not newline or not language or " " in language:
                language, code = "", body
            start = out.offset
            out.text(re.sub(r"\\([`\\])", r"\1", code))
            out.entity("pre", start, **({"language": language} if language else {}))
            at = end + 3
            continue
        if char == "`":
            end = at + 1
            while end < len(source) and source[end] != "`":
                end += 2 if source[end] == "\\" else 1
            if end >= len(source):
                raise _unclosed(source, at)
            start = out.offset
            out.text(re.sub(r"\\([`\\])", r"\1", source[at + 1 : end]))
            out.entity("code", start)
            at = end + 1
            continue
        if char == "[":
            links.append(out.offset)
            at += 1
            continue
        if char == "]" and links:
            match = re.match(r"\]\(((?:\\.|[^)\\])*)\)", source[at:])
            if match is None:
                raise _bad(f"Can't find end of a URL {_at(source, at)}")
            url = re.sub(r"\\(.)", r"\1", match.group(1))
            out.entity("text_link", links.pop(), url=url)
            at += match.end()
            continue
        marker = next(((m, k) for m, k in _V2_MARKERS if source.startswith(m, at)), None)
        if marker is not None:
            text, kind = marker
            if stack and stack[-1][0] == kind:
                out.entity(kind, stack.pop()[1])
            else:
                stack.append((kind, out.offset))
            at += len(text)
            continue
        if char in _RESERVED:
            raise _bad(
                f"Character '{char}' is reserved and must be escaped with the preceding '\\'"
            )
        out.text(char)
        at += 1
    if quote is not None:
        out.entity("blockquote", quote)
    if stack or links:
        kind = stack[-1][0] if stack else "text_link"
        raise _bad(f"Can't find end of {kind} entity")
    return out.result()


def _markdown(source: str, users: UserLookup) -> tuple[str, list[JSON]]:
    """Legacy Markdown: *bold*, _italic_, `code`, ```pre```, [text](url); no nesting."""
    out = _Builder(users)
    at = 0
    while at < len(source):
        char = source[at]
        if char == "\\" and at + 1 < len(source) and source[at + 1] in "_*`[":
            out.text(source[at + 1])
            at += 2
            continue
        if source.startswith("```", at):
            end = source.find("```", at + 3)
            if end < 0:
                raise _unclosed(source, at)
            body = source[at + 3 : end]
            language, newline, code = body.partition("\n")
            if not newline or not language or " " in language:
                language, code = "", body
            start = out.offset
            out.text(code)
            out.entity("pre", start, **({"language": language} if language else {}))
            at = end + 3
            continue
        if char in "*_`":
            end = source.find(char, at + 1)
            if end < 0:
                raise _unclosed(source, at)
            start = out.offset
            out.text(source[at + 1 : end])
            out.entity({"*": "bold", "_": "italic", "`": "code"}[char], start)
            at = end + 1
            continue
        if char == "[":
            match = re.match(r"\[([^\]]*)\]\(([^)]*)\)", source[at:])
            if match is None:
                raise _unclosed(source, at)
            start = out.offset
            out.text(match.group(1))
            out.entity("text_link", start, url=match.group(2))
            at += match.end()
            continue
        out.text(char)
        at += 1
    return out.result()


_PARSERS = {"HTML": _html, "MarkdownV2": _markdown_v2, "Markdown": _markdown}


def formatted(text: str, parse_mode: str, users: UserLookup) -> tuple[str, list[JSON]]:
    """The plain text and entities of ``text`` written in ``parse_mode``."""
    parser = _PARSERS.get(parse_mode)
    if parser is None:
        raise BotApiError(400, f"Bad Request: unsupported parse_mode {parse_mode!r}")
    return parser(text, users)

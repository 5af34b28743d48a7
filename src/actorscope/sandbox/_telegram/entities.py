"""Message entities the Bot API computes for plain text: commands, mentions, hashtags, URLs.

Offsets and lengths count UTF-16 code units, as the Bot API does, so text with emoji gets
the same entities a real client would see.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["parse_entities", "utf16_len"]

# Each kind only starts at the beginning of the text or after a non-word character.
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("bot_command", re.compile(r"(?<![\w/@])/[A-Za-z0-9_]{1,64}(?:@[A-Za-z0-9_]{3,32})?(?!\w)")),
    ("mention", re.compile(r"(?<![\w@/])@[A-Za-z][A-Za-z0-9_]{3,31}(?!\w)")),
    ("hashtag", re.compile(r"(?<![\w#])#[^\W\d][\w]{0,255}")),
    ("url", re.compile(r"(?<![\w/])https?://[^\s<>\"']+[^\s<>\"'.,;:!?)\]]")),
)


def utf16_len(text: str) -> int:
    """The length of ``text`` in UTF-16 code units."""
    return len(text.encode("utf-16-le")) // 2


def parse_entities(text: str) -> list[dict[str, Any]]:
    """The entities of ``text`` in offset order (empty when there are none)."""
    found: list[tuple[int, int, str]] = []
    taken: list[tuple[int, int]] = []
    for kind, pattern in _PATTERNS:
        for match in pattern.finditer(text):
            start, end = match.span()
            if any(start < t_end and t_start < end for t_start, t_end in taken):
                continue
            taken.append((start, end))
            found.append((start, end, kind))
    found.sort()
    return [
        {
            "offset": utf16_len(text[:start]),
            "length": utf16_len(text[start:end]),
            "type": kind,
        }
        for start, end, kind in found
    ]

"""Text a store cannot hold, and how it is written down when it must be recorded anyway.

JSON (MCP arguments, HTTP bodies, crafted updates) may carry lone surrogates, which UTF-8
cannot encode, so no database, file name or socket takes one; PostgreSQL ``text`` refuses NUL;
and control characters (Unicode category Cc: C0, DEL, C1) have no place in an identifier.
Every boundary asks the helpers here rather than keeping its own pattern.
"""

from __future__ import annotations

import re

__all__ = ["escape_unstorable", "has_lone_surrogate", "has_unstorable"]

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
# Category Cc (C0 controls incl. NUL, DEL, C1 controls) and lone surrogates (category Cs).
_UNSTORABLE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def has_lone_surrogate(text: str) -> bool:
    """True iff ``text`` holds a lone surrogate, the only thing UTF-8 cannot encode."""
    return not text.isascii() and _LONE_SURROGATE.search(text) is not None


def has_unstorable(text: str) -> bool:
    """True iff ``text`` holds a character no identifier column may hold.

    That is a lone surrogate (UTF-8 cannot encode it), NUL (PostgreSQL ``text`` refuses it)
    or any other control character (C0, DEL, C1): the same answer for every backend.
    """
    return _UNSTORABLE.search(text) is not None


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def escape_unstorable(text: str) -> str:
    """``text`` with each character :func:`has_unstorable` finds written as a Python escape.

    ``"4\\x002"`` (NUL) becomes the six characters ``4\\x002``, a lone surrogate ``\\ud800``:
    what ``repr()`` would show, so audit rows and logs can always be written and read back.
    """
    if not has_unstorable(text):
        return text
    return _UNSTORABLE.sub(_escape, text)

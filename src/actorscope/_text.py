"""Text UTF-8 cannot encode: JSON (MCP arguments, HTTP bodies) may carry lone surrogates.

No database, file name or socket can hold one, so every boundary that takes outside text asks
:func:`has_lone_surrogate` here rather than keeping its own pattern.
"""

from __future__ import annotations

import re

__all__ = ["escape_lone_surrogates", "has_lone_surrogate"]

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def has_lone_surrogate(text: str) -> bool:
    """True iff ``text`` holds a lone surrogate, the only thing UTF-8 cannot encode."""
    return not text.isascii() and _LONE_SURROGATE.search(text) is not None


def escape_lone_surrogates(text: str) -> str:
    """``text`` with each lone surrogate written as a ``\\ud800``-style escape (for logs, audit)."""
    if not has_lone_surrogate(text):
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")

"""SQL text written once for both backends: ``?`` placeholders become ``$1..$n`` for asyncpg."""

from __future__ import annotations

import functools
import re

__all__ = ["numbered_placeholders"]

# A quoted string ('it''s'), a quoted identifier, a comment, or a placeholder; only the last
# is rewritten, so a '?' inside a literal, identifier or comment stays as it is.
_TOKEN = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*|/\*.*?\*/|\?", re.DOTALL)


@functools.lru_cache(maxsize=4096)
def numbered_placeholders(sql: str) -> str:
    """``sql`` with each ``?`` outside literals, identifiers and comments numbered ``$1, $2…``.

    Cached per statement text: the code base builds a bounded set of statements.
    """
    if "?" not in sql:
        return sql
    count = 0

    def number(match: re.Match[str]) -> str:
        nonlocal count
        if match.group() != "?":
            return match.group()
        count += 1
        return f"${count}"

    return _TOKEN.sub(number, sql)

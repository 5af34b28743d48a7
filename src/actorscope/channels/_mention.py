"""The mention gate's text side: does a message name the bot, and the text without that name.

Telegram names a bot as ``@username`` (any case) or as ``/command@username``; Discord as
``<@id>`` or ``<@!id>``. Only the bot's own name counts: ``@username_fan`` is someone else.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["command_of", "mentions_bot", "strip_mention"]

_SPACES = re.compile(r"[ \t]{2,}")
_COMMAND = re.compile(r"/([A-Za-z0-9_]{1,64})(?:@([A-Za-z0-9_]{1,64}))?(?=\s|$)")


@lru_cache(maxsize=64)
def _pattern(username: str | None, user_id: str | None) -> re.Pattern[str] | None:
    parts = []
    if username:
        name = re.escape(username.lstrip("@"))
        parts.append(rf"(?<![\w@/])@{name}(?![\w])")
    if user_id:
        parts.append(rf"<@!?{re.escape(user_id)}>")
    if not parts:
        return None
    return re.compile("|".join(parts), re.IGNORECASE)


def mentions_bot(text: str, *, username: str | None = None, user_id: str | None = None) -> bool:
    """True iff ``text`` mentions the bot by ``@username`` or Discord ``<@id>``."""
    pattern = _pattern(username, user_id)
    return pattern is not None and pattern.search(text) is not None


def strip_mention(text: str, *, username: str | None = None, user_id: str | None = None) -> str:
    """``text`` without the bot's mentions (and the ``@username`` of a ``/cmd@username``)."""
    if "@" not in text:
        # Every form of a mention has one (``@name``, ``/cmd@name``, ``<@id>``, ``<@!id>``):
        # most messages mention nobody, and cost one scan instead of a regex and a lookup.
        return text
    command = command_of(text)
    if command is not None and username and command[1].lower() == username.lstrip("@").lower():
        text = f"/{command[0]}" + text[len(command[0]) + len(command[1]) + 2 :]
    pattern = _pattern(username, user_id)
    if pattern is None:
        return text
    if pattern.search(text) is None:
        return text
    return _SPACES.sub(" ", pattern.sub(" ", text)).strip()


def command_of(text: str) -> tuple[str, str] | None:
    """``(command, target_username)`` of a text starting with ``/command[@username]``."""
    if not text.startswith("/"):
        return None
    match = _COMMAND.match(text)
    if match is None:
        return None
    return match.group(1), match.group(2) or ""

"""Discord ids and the cached identity of a person: shared by the message and interaction paths."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from actorscope.errors import IdentityError
from actorscope.identity import (
    Identity,
    PeerKind,
    discord_identity,
    is_placeholder_sender,
    session_key,
)
from actorscope.platforms import BuiltInPlatform

__all__ = ["optional_snowflake", "person", "session", "snowflake"]


@lru_cache(maxsize=4096, typed=True)
def person(
    agent_key: str, sender: int, chat: int, guild: int | None, thread: int | None
) -> tuple[Identity, str]:
    """Identity and session key of a person: one cache lookup per message."""
    if is_placeholder_sender(str(sender)):
        # Telegram's stand-in ids are never identities, on any platform (no real snowflake
        # is that small): the event is treated as malformed.
        raise IdentityError(f"sender id {sender} is a placeholder, not a person")
    identity = discord_identity(sender, chat_id=chat, guild_id=guild)
    key = session(agent_key, identity.peer_kind, identity.chat_id, thread)
    return identity, key


@lru_cache(maxsize=4096, typed=True)
def session(agent_key: str, peer: PeerKind, chat_id: str, thread: int | None) -> str:
    """The Discord session key (memoised)."""
    return session_key(agent_key, BuiltInPlatform.DISCORD, peer, chat_id, thread_id=thread)


# A snowflake is an unsigned 64-bit integer.
_SNOWFLAKE_LIMIT = 2**64


def snowflake(value: Any, what: str) -> int:
    """A Discord id: a JSON integer or the canonical decimal string of one; TypeError else.

    Canonical: positive, below 2**64, ASCII digits without a sign or a leading zero, so two
    spellings (``"042"`` and ``"42"``) never name one person.
    """
    if type(value) is int and 0 < value < _SNOWFLAKE_LIMIT:
        return value
    if (
        type(value) is str
        and 0 < len(value) < 21
        and value.isascii()
        and value.isdigit()
        and value[0] != "0"
    ):
        number = int(value)
        if number < _SNOWFLAKE_LIMIT:
            return number
    raise TypeError(f"{what} is not a snowflake: {value!r}")


def optional_snowflake(value: Any, what: str) -> int | None:
    """:func:`snowflake`, or ``None`` for ``None``."""
    return None if value is None else snowflake(value, what)

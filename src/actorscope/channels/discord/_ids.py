"""Discord ids and the cached identity of a person: shared by the message and interaction paths."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from actorscope.errors import IdentityError
from actorscope.identity import Identity, PeerKind, SenderKind, session_key
from actorscope.platforms import BuiltInPlatform, platform_spec

__all__ = ["discord_identity", "optional_snowflake", "person", "session", "snowflake"]

#: The sender kinds a Discord message has, by their text (a ``SenderKind`` is its text).
_KINDS = {kind.value: kind for kind in (SenderKind.USER, SenderKind.WEBHOOK, SenderKind.BOT)}


def discord_identity(
    sender_id: int | str,
    *,
    chat_id: int | str,
    guild_id: int | str | None = None,
    sender_kind: SenderKind = SenderKind.USER,
    role: str = "",
) -> Identity:
    """The identity of a Discord message or interaction: by a person, a webhook or a bot.

    :meth:`Identity.chat` of Discord: in a guild the scope is per member
    (``guild:<gid>:user:<sid>``); in a DM it is the sender. Threads never change either.
    A webhook's or a bot-authored message (``sender_kind`` ``WEBHOOK`` / ``BOT``, ``sender_id``
    its author's id) has an empty sender and a scope of its own in the guild
    (``guild:<gid>:webhook|bot:<id>``); it needs the guild: without one it has no safe scope.
    """
    spec = platform_spec(BuiltInPlatform.DISCORD)
    if spec is None:  # built in: only a broken install has it missing
        raise IdentityError(f"no registered platform {BuiltInPlatform.DISCORD.value!r}")
    kind = _KINDS.get(sender_kind) if isinstance(sender_kind, str) else None
    if kind is None:
        raise IdentityError(
            f"a Discord sender is a person, a webhook or a bot (sender_kind "
            f"{', '.join(_KINDS)}), not {sender_kind!r}"
        )
    if kind in (SenderKind.WEBHOOK, SenderKind.BOT):
        if guild_id is None:
            raise IdentityError(f"a Discord {kind.value} message needs its guild")
        if role:
            # A role is a person's: an owner role on a webhook would bypass every check.
            raise IdentityError(f"a Discord {kind.value} message takes no role, not {role!r}")
        guild = spec.chat_id(guild_id, "guild id")
        author = spec.chat_id(sender_id, f"{kind.value} id")
        chat = spec.chat_id(chat_id, "channel id")
        return Identity.chat(
            BuiltInPlatform.DISCORD, chat, author, group=True, guild_id=guild, sender_kind=kind
        )
    sender = spec.chat_id(sender_id, "sender id")
    if SenderKind.is_placeholder(sender):
        raise IdentityError(f"{sender} is a Telegram placeholder id, never a Discord person")
    chat = spec.chat_id(chat_id, "channel id")
    return Identity.chat(
        BuiltInPlatform.DISCORD,
        chat,
        sender,
        group=guild_id is not None,
        guild_id=guild_id,
        role=role,
    )


@lru_cache(maxsize=4096, typed=True)
def person(
    agent_key: str, sender: int, chat: int, guild: int | None, thread: int | None
) -> tuple[Identity, str]:
    """Identity and session key of a person: one cache lookup per message."""
    if SenderKind.is_placeholder(str(sender)):
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

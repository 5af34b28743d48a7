"""Discord interactions (slash commands, components, modals) → identity: the actor is the user.

The scope is that of a message in the same place: ``guild:<gid>:user:<uid>`` in a guild (a
thread only changes the session key), the user in a DM. A raw payload is type-checked as a
message is (see :mod:`actorscope.channels.discord`): a user whose ``bot`` or ``system`` flag is
anything but JSON ``false`` is no person, and ``member``, ``guild_id`` or ``channel.guild_id``
without a valid ``guild_id`` is ``malformed``, never a DM.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import discord

from actorscope.channels._base import (
    Addressed,
    IgnoreReason,
    Ingress,
    build_inbound,
    display_name,
    flag_raised,
    ignored,
)
from actorscope.channels.discord._ids import optional_snowflake, person, session, snowflake
from actorscope.identity import PeerKind
from actorscope.messages import InboundMessage, MetaKey

__all__ = ["inspect_interaction", "normalize_interaction"]

logger = logging.getLogger("actorscope.channels.discord")

_THREAD_CHANNEL_TYPES = frozenset({10, 11, 12})
_HANDLED_INTERACTIONS = frozenset({2, 3, 5})


def normalize_interaction(
    interaction_or_payload: discord.Interaction[Any] | Mapping[str, Any],
    *,
    agent_key: str = "main",
) -> InboundMessage | None:
    """The :class:`InboundMessage` of an interaction (actor = ``interaction.user``), or ``None``."""
    result = _inspect_interaction(interaction_or_payload, agent_key)
    return result if type(result) is InboundMessage else None


def inspect_interaction(
    interaction_or_payload: discord.Interaction[Any] | Mapping[str, Any],
    *,
    agent_key: str = "main",
) -> Ingress:
    """Normalise an interaction; never raises on a malformed one (a bad ``agent_key`` does)."""
    result = _inspect_interaction(interaction_or_payload, agent_key)
    return result if isinstance(result, Ingress) else Ingress(result)


def _inspect_interaction(
    interaction_or_payload: discord.Interaction[Any] | Mapping[str, Any], agent_key: str
) -> InboundMessage | Ingress:
    session(agent_key, PeerKind.DIRECT, "0", None)
    try:
        if isinstance(interaction_or_payload, discord.Interaction):
            return _from_interaction_object(interaction_or_payload, agent_key)
        if isinstance(interaction_or_payload, Mapping):
            return _from_interaction_dict(interaction_or_payload, agent_key)
        return ignored(
            IgnoreReason.MALFORMED, f"not an interaction: {type(interaction_or_payload)}"
        )
    except Exception as exc:  # an adapter must never let one bad event kill the bot
        logger.warning("discord.malformed_interaction error=%s: %s", type(exc).__name__, exc)
        return ignored(IgnoreReason.MALFORMED, f"{type(exc).__name__}: {exc}")


def _from_interaction_object(
    interaction: discord.Interaction[Any], agent_key: str
) -> InboundMessage | Ingress:
    channel = interaction.channel
    parent = channel.parent_id if isinstance(channel, discord.Thread) else None
    data = interaction.data
    user = interaction.user
    refused = _nonperson(user.bot, user.system)
    if refused is not None:
        return refused
    return _interaction(
        agent_key=agent_key,
        interaction_type=interaction.type.value,
        interaction_id=interaction.id,
        channel_id=snowflake(interaction.channel_id, "channel_id"),
        parent_id=parent,
        guild_id=interaction.guild_id,
        user_id=user.id,
        user_name=display_name(user.name),
        data=data if isinstance(data, Mapping) else {},
    )


def _nonperson(bot: object, system: object) -> Ingress | None:
    """The refusal for a user flagged as a bot or as Discord's system user, else ``None``."""
    if flag_raised(system):
        return ignored(IgnoreReason.SYSTEM_MESSAGE, "system user")
    if flag_raised(bot):
        return ignored(IgnoreReason.BOT_SENDER, "interaction from a bot account")
    return None


def _from_interaction_dict(data: Mapping[str, Any], agent_key: str) -> InboundMessage | Ingress:
    raw_channel = data.get("channel")
    if raw_channel is None:
        raw_channel = {}
    if not isinstance(raw_channel, Mapping):
        return ignored(IgnoreReason.MALFORMED, "channel is not a JSON object")
    guild_id = optional_snowflake(data.get("guild_id"), "guild_id")
    if guild_id is None and ("guild_id" in data or "member" in data or "guild_id" in raw_channel):
        # Guild evidence without a guild: never fall back to a DM scope.
        return ignored(IgnoreReason.MALFORMED, "member or guild_id without a valid guild_id")
    member = data.get("member")
    if guild_id is not None and member is not None:
        user = member.get("user") if isinstance(member, Mapping) else None
    else:
        user = data.get("user")
    if not isinstance(user, Mapping):
        return ignored(IgnoreReason.MALFORMED, "interaction user is not a JSON object")
    refused = _nonperson(user.get("bot", False), user.get("system", False))
    if refused is not None:
        return refused
    channel_id = snowflake(data.get("channel_id") or raw_channel.get("id"), "channel_id")
    channel_type = raw_channel.get("type")
    if channel_type is not None and type(channel_type) is not int:
        return ignored(IgnoreReason.MALFORMED, f"channel type {channel_type!r}")
    parent = None
    if channel_type in _THREAD_CHANNEL_TYPES:
        parent = snowflake(raw_channel.get("parent_id"), "channel.parent_id")
    body = data.get("data")
    return _interaction(
        agent_key=agent_key,
        interaction_type=data.get("type"),
        interaction_id=snowflake(data["id"], "id"),
        channel_id=channel_id,
        parent_id=parent,
        guild_id=guild_id,
        user_id=snowflake(user["id"], "user.id"),
        user_name=display_name(user.get("username")),
        data=body if isinstance(body, Mapping) else {},
    )


def _interaction(
    *,
    agent_key: str,
    interaction_type: Any,
    interaction_id: int,
    channel_id: int,
    parent_id: int | None,
    guild_id: int | None,
    user_id: int,
    user_name: str,
    data: Mapping[str, Any],
) -> InboundMessage | Ingress:
    if type(interaction_type) is not int:
        return ignored(IgnoreReason.MALFORMED, f"interaction type {interaction_type!r}")
    if interaction_type not in _HANDLED_INTERACTIONS:
        return ignored(IgnoreReason.UNSUPPORTED_EVENT, f"interaction type {interaction_type!r}")
    chat = parent_id or channel_id
    thread = channel_id if parent_id else None
    identity, key = person(agent_key, user_id, chat, guild_id, thread)
    metadata: dict[str, str] = {
        MetaKey.SESSION_KEY: key,
        MetaKey.EVENT: "interaction",
        MetaKey.ADDRESSED: Addressed.INTERACTION.value,
        MetaKey.SENDER_NAME: user_name,
    }
    if interaction_type == 2:
        text = _command_text(data)
        if text is None:
            return ignored(IgnoreReason.MALFORMED, "command name or option is not well typed")
        content = text
        name = data.get("name")
        if name:
            metadata[MetaKey.COMMAND] = name
    else:
        custom_id = data.get("custom_id")
        content = custom_id if isinstance(custom_id, str) else ""
        if interaction_type == 3 and content:  # a component (button) click
            metadata[MetaKey.CALLBACK_DATA] = content
    return build_inbound(
        identity,
        content=content,
        metadata=metadata,
        thread_id="" if thread is None else str(thread),
        message_id=str(interaction_id),
    )


# What a command option's value can be in JSON (string, integer, number, boolean options).
_OPTION_VALUE_TYPES = (str, int, float)


def _command_text(data: Mapping[str, Any]) -> str | None:
    """``/name sub opt=value ...`` for an application command's data (bounded depth).

    ``None`` when a name is not a string or a value is not a JSON scalar: no ``repr`` of a
    crafted object ever becomes message text.
    """
    name = data.get("name", "")
    if type(name) is not str:
        return None
    parts = [f"/{name}"]
    options = data.get("options")
    for _depth in range(3):  # command → group → subcommand is as deep as Discord goes
        if not isinstance(options, list):
            break
        nested = None
        for option in options:
            if not isinstance(option, Mapping):
                continue
            option_name = option.get("name", "")
            if type(option_name) is not str:
                return None
            if "value" in option:
                value = option["value"]
                if not isinstance(value, _OPTION_VALUE_TYPES):  # bool is an int
                    return None
                parts.append(f"{option_name}={value}")
            else:
                parts.append(option_name)
                nested = option.get("options")
        options = nested
    return " ".join(parts)

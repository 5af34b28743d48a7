"""Discord: a discord.py ``Message`` / ``Interaction`` → scope, actor and session key, and the
runner.

:func:`normalize_message` and :func:`normalize_interaction` return an
:class:`~actorscope.messages.InboundMessage`, or ``None`` for what a bot ignores;
:func:`inspect_message` and :func:`inspect_interaction` return the
:class:`~actorscope.channels.Ingress` with the reason. None of them raises on a platform event.
``PLATFORM`` is Discord's side of the platform contract (:class:`~actorscope.channels.Platform`).
"""

from actorscope.channels.discord._commands import (
    WriterTarget,
    handle_discord_writer_command,
    member_manages_guild,
    mention_target,
    user_target,
)
from actorscope.channels.discord._interactions import inspect_interaction, normalize_interaction
from actorscope.channels.discord._normalize import (
    clear_caches,
    inspect_message,
    normalize_message,
)
from actorscope.channels.discord._platform import PLATFORM
from actorscope.channels.discord._runner import (
    NOT_TAKING_COMMANDS,
    WRITER_DESCRIPTIONS,
    DiscordRunner,
    bot_intents,
    send_outbound,
    silence_voice_warnings,
)
from actorscope.channels.discord._section import DiscordSection

__all__ = [
    "NOT_TAKING_COMMANDS",
    "PLATFORM",
    "WRITER_DESCRIPTIONS",
    "DiscordRunner",
    "DiscordSection",
    "WriterTarget",
    "bot_intents",
    "clear_caches",
    "handle_discord_writer_command",
    "inspect_interaction",
    "inspect_message",
    "member_manages_guild",
    "mention_target",
    "normalize_interaction",
    "normalize_message",
    "send_outbound",
    "silence_voice_warnings",
    "user_target",
]

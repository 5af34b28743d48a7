"""Discord: a discord.py ``Message`` / ``Interaction`` → scope, actor and session key, and the
runner.

``PLATFORM.normalize_message`` and ``PLATFORM.normalize_interaction`` return an
:class:`~actorscope.messages.InboundMessage`, or ``None`` for what a bot ignores;
``PLATFORM.inspect_message`` and ``PLATFORM.inspect_interaction`` return the
:class:`~actorscope.channels.Ingress` with the reason. None of them raises on a platform event.
``PLATFORM`` is Discord's side of the platform contract (:class:`~actorscope.channels.Platform`),
and what the discord.py Cog asks of Discord.
"""

from actorscope.channels.discord._commands import WriterTarget
from actorscope.channels.discord._platform import PLATFORM
from actorscope.channels.discord._runner import DiscordRunner, bot_intents
from actorscope.channels.discord._section import DiscordSection

__all__ = [
    "PLATFORM",
    "DiscordRunner",
    "DiscordSection",
    "WriterTarget",
    "bot_intents",
]

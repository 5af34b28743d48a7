"""Telegram: a python-telegram-bot ``Update`` → scope, actor and session key, and the runner.

``PLATFORM.normalize_update`` returns an :class:`~actorscope.messages.InboundMessage`, or
``None`` for what a bot ignores; ``PLATFORM.inspect_update`` returns the
:class:`~actorscope.channels.Ingress` with the reason (and the migration when a group became a
supergroup). Neither ever raises on a platform event. ``PLATFORM`` is Telegram's side of the
platform contract (:class:`~actorscope.channels.Platform`), and what the PTB and aiogram
integrations ask of Telegram; the identity rules, case by case, are in docs/design.md
("Identity table").
"""

from actorscope.channels.telegram._platform import PLATFORM
from actorscope.channels.telegram._runner import TelegramRunner
from actorscope.channels.telegram._section import TelegramSection

__all__ = [
    "PLATFORM",
    "TelegramRunner",
    "TelegramSection",
]

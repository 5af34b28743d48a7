"""Telegram: a python-telegram-bot ``Update`` → scope, actor and session key, and the runner.

:func:`normalize_update` returns an :class:`~actorscope.messages.InboundMessage`, or ``None``
for what a bot ignores; :func:`inspect_update` returns the :class:`~actorscope.channels.Ingress`
with the reason (and the migration when a group became a supergroup). Neither ever raises on a
platform event. ``PLATFORM`` is Telegram's side of the platform contract
(:class:`~actorscope.channels.Platform`); the identity rules, case by case, are in
docs/design.md ("Identity table").
"""

from actorscope.channels.telegram._normalize import (
    GENERAL_TOPIC_ID,
    chat_migration,
    clear_caches,
    inspect_update,
    normalize_update,
)
from actorscope.channels.telegram._platform import PLATFORM

__all__ = [
    "GENERAL_TOPIC_ID",
    "PLATFORM",
    "chat_migration",
    "clear_caches",
    "inspect_update",
    "normalize_update",
]

"""Telegram: a python-telegram-bot ``Update`` → scope, actor and session key, and the runner.

:func:`normalize_update` returns an :class:`~actorscope.messages.InboundMessage`, or ``None``
for what a bot ignores; :func:`inspect_update` returns the :class:`~actorscope.channels.Ingress`
with the reason (and the migration when a group became a supergroup). Neither ever raises on a
platform event. ``PLATFORM`` is Telegram's side of the platform contract
(:class:`~actorscope.channels.Platform`); the identity rules, case by case, are in
docs/design.md ("Identity table").
"""

from actorscope.channels.telegram._commands import (
    ChatAdmin,
    asks_chat_admin,
    handle_telegram_writer_command,
    is_telegram_admin,
)
from actorscope.channels.telegram._normalize import (
    clear_caches,
    inspect_update,
    normalize_update,
)
from actorscope.channels.telegram._platform import PLATFORM
from actorscope.channels.telegram._runner import (
    ALLOWED_UPDATES,
    IgnoredListener,
    TelegramRunner,
    reply_route,
    send_outbound,
    text_parts,
)
from actorscope.channels.telegram._section import TelegramSection

__all__ = [
    "ALLOWED_UPDATES",
    "PLATFORM",
    "ChatAdmin",
    "IgnoredListener",
    "TelegramRunner",
    "TelegramSection",
    "asks_chat_admin",
    "clear_caches",
    "handle_telegram_writer_command",
    "inspect_update",
    "is_telegram_admin",
    "normalize_update",
    "reply_route",
    "send_outbound",
    "text_parts",
]

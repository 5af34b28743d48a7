"""What the Bot API methods work on: one small context the emulator builds once.

The method modules (``methods_*.py``) take a :class:`MethodContext` instead of the emulator,
so they see exactly the parts a call may read or change and never import the emulator:
the world (:class:`BotApiState`, which knows the bot), the update queue, the uploaded files,
what the bot sent and answered (:class:`Outbox`), what it configured (:class:`BotSetup`),
the polls with their votes and the payments.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from actorscope.sandbox._telegram.files import FileStore
from actorscope.sandbox._telegram.payments import PaymentBook
from actorscope.sandbox._telegram.polls import PollBook
from actorscope.sandbox._telegram.state import BotApiState
from actorscope.sandbox._telegram.updates import UpdateQueue

__all__ = ["BotSetup", "MethodContext", "Outbox"]

JSON = dict[str, Any]


@dataclass(slots=True)
class Outbox:
    """What the bot sent and answered, kept for later calls and for assertions."""

    #: The bot's own messages, by ``(chat id, message id)`` (it may edit and delete these).
    messages: set[tuple[int, int]] = field(default_factory=set)
    #: The bot's reactions, by ``(chat id, message id)``.
    reactions: dict[tuple[int, int], list[JSON]] = field(default_factory=dict)
    #: Each open callback query's answer (``None`` until answered).
    callback_answers: dict[str, JSON | None] = field(default_factory=dict)
    #: Each open inline query's answer (``None`` until answered).
    inline_answers: dict[str, JSON | None] = field(default_factory=dict)
    #: The reply keyboard each chat shows (``ReplyKeyboardMarkup`` JSON), by chat id.
    keyboards: dict[int, JSON] = field(default_factory=dict)


@dataclass(slots=True)
class BotSetup:
    """What the bot configured: its command lists, its webhook and its passport key."""

    #: Command lists by scope and language (see ``setMyCommands``).
    commands: dict[str, list[dict[str, str]]] = field(default_factory=dict)
    #: What the bot's last ``setWebhook`` asked for (empty while it polls).
    webhook: JSON = field(default_factory=dict)
    #: ``(date, message)`` of the last failed webhook delivery (``getWebhookInfo`` shows it).
    webhook_error: tuple[int, str] | None = None
    #: The public key (PEM) the bot's owner gave BotFather for Telegram Passport.
    passport_public_key: bytes | None = None


@dataclass(frozen=True, slots=True)
class MethodContext:
    """Everything a Bot API method reads or changes."""

    state: BotApiState
    updates: UpdateQueue
    files: FileStore
    outbox: Outbox
    setup: BotSetup
    #: Every poll posted (by the bot or a user), with its votes.
    polls: PollBook
    #: The bot's invoices and the users' checkouts.
    payments: PaymentBook
    #: Whether the bot runs with privacy mode on (``getMe`` reports it).
    privacy_mode: bool

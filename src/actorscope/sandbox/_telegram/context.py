"""What the Bot API methods work on: one small context the emulator builds once.

The method modules (``methods_*.py``) take a :class:`MethodContext` instead of the emulator,
so they see exactly the parts a call may read or change and never import the emulator:
the world (:class:`BotApiState`, which knows the bot), the update queue, the uploaded files,
what the bot sent and answered (:class:`Outbox`) and what it configured (:class:`BotSetup`).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from actorscope.sandbox._telegram.files import FileStore
from actorscope.sandbox._telegram.state import BotApiState
from actorscope.sandbox._telegram.updates import UpdateQueue

__all__ = ["BotSetup", "MethodContext", "Outbox"]

JSON = dict[str, Any]
_FIRST_POLL_ID = 5_000_000_000_000_001


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
    #: The ids of the polls the bot sends.
    poll_ids: Iterator[int] = field(default_factory=lambda: itertools.count(_FIRST_POLL_ID))


@dataclass(slots=True)
class BotSetup:
    """What the bot configured: its command lists and its webhook."""

    #: Command lists by scope and language (see ``setMyCommands``).
    commands: dict[str, list[dict[str, str]]] = field(default_factory=dict)
    #: What the bot's last ``setWebhook`` asked for (empty while it polls).
    webhook: JSON = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class MethodContext:
    """Everything a Bot API method reads or changes."""

    state: BotApiState
    updates: UpdateQueue
    files: FileStore
    outbox: Outbox
    setup: BotSetup
    #: Whether the bot runs with privacy mode on (``getMe`` reports it).
    privacy_mode: bool

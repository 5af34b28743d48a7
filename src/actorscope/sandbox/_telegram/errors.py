"""The error of the Bot API emulator: what Telegram would answer to a call it refuses."""

from __future__ import annotations

from actorscope.errors import ActorscopeError

__all__ = ["BotApiError"]


class BotApiError(ActorscopeError):
    """The Telegram Bot API emulator refused a call or a simulated user action.

    ``error_code`` and ``description`` are what the Bot API would answer, e.g. ``400`` and
    ``"Bad Request: chat not found"``.
    """

    def __init__(self, error_code: int, description: str) -> None:
        super().__init__(description)
        self.error_code = error_code
        self.description = description

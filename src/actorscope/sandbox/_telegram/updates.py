"""The bot's update queue and ``getUpdates`` long polling.

Updates are numbered from ``first_update_id`` on. A poll confirms everything below its
``offset``, returns at most ``limit`` pending updates at once, and otherwise waits until an
update arrives or its timeout (capped by ``max_timeout``) runs out. As on Telegram, a newer
``getUpdates`` ends a waiting older one with ``409 Conflict``, and ``allowed_updates`` filters
updates as they are created.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Sequence
from typing import Any

from actorscope.sandbox._telegram.errors import BotApiError

__all__ = ["DEFAULT_EXCLUDED_UPDATES", "UPDATE_TYPES", "UpdateQueue"]

JSON = dict[str, Any]

UPDATE_TYPES: frozenset[str] = frozenset(
    {
        "message",
        "edited_message",
        "channel_post",
        "edited_channel_post",
        "business_connection",
        "business_message",
        "edited_business_message",
        "deleted_business_messages",
        "message_reaction",
        "message_reaction_count",
        "inline_query",
        "chosen_inline_result",
        "callback_query",
        "shipping_query",
        "pre_checkout_query",
        "purchased_paid_media",
        "poll",
        "poll_answer",
        "my_chat_member",
        "chat_member",
        "chat_join_request",
        "chat_boost",
        "removed_chat_boost",
    }
)
# What a bot that never set allowed_updates (or set an empty list) does not receive.
DEFAULT_EXCLUDED_UPDATES: frozenset[str] = frozenset(
    {"chat_member", "message_reaction", "message_reaction_count"}
)
_CONFLICT = (
    "Conflict: terminated by other getUpdates request; "
    "make sure that only one bot instance is running"
)


class UpdateQueue:
    """Pending updates plus the long-polling wait."""

    def __init__(self, *, first_update_id: int = 1, max_timeout: float = 30.0) -> None:
        self._next_id = first_update_id
        self._pending: list[JSON] = []
        self._allowed: frozenset[str] = UPDATE_TYPES - DEFAULT_EXCLUDED_UPDATES
        self._max_timeout = max_timeout
        self._generation = 0
        self._closed = False
        # Swapped for a fresh event on every change, so a waiter never misses a wake-up and
        # producers stay synchronous (no lock to take, unlike asyncio.Condition.notify).
        self._changed = asyncio.Event()
        self._polled = asyncio.Event()

    @property
    def allowed_updates(self) -> frozenset[str]:
        """The update types the bot currently receives."""
        return self._allowed

    def push(self, kind: str, payload: JSON) -> JSON | None:
        """Queue ``{"update_id": n, kind: payload}`` (a copy of ``payload`` as it is now);
        ``None`` if the bot does not want it."""
        if kind not in UPDATE_TYPES:
            raise BotApiError(400, f"Bad Request: unknown update type {kind!r}")
        if kind not in self._allowed:
            return None
        # A snapshot, as Telegram sends it: a later edit of the message in the world (the bot
        # editing the message a pending click is on) does not rewrite what the update says.
        update: JSON = {"update_id": self._next_id, kind: copy.deepcopy(payload)}
        self._next_id += 1
        self._pending.append(update)
        self._wake()
        return update

    def pending(self) -> list[JSON]:
        """The updates not yet confirmed by an offset."""
        return list(self._pending)

    def drop_pending(self) -> int:
        """Forget every pending update (``deleteWebhook(drop_pending_updates=True)``)."""
        dropped = len(self._pending)
        self._pending.clear()
        return dropped

    def close(self) -> None:
        """End every waiting poll now; later polls return at once (server shutdown)."""
        self._closed = True
        self._wake()

    def set_allowed(self, allowed: Sequence[str]) -> None:
        """Receive only these update types from now on (empty: the default set)."""
        # Like the real Bot API, names this emulator does not know (newer update types that a
        # newer client asks for) are ignored rather than refused.
        known = frozenset(allowed) & UPDATE_TYPES
        self._allowed = known or UPDATE_TYPES - DEFAULT_EXCLUDED_UPDATES

    async def poll(self, *, offset: int | None, limit: int, wait: float) -> list[JSON]:
        """Confirm below ``offset``, then return up to ``limit`` updates, waiting ``wait`` s."""
        if not 1 <= limit <= 100:
            raise BotApiError(400, "Bad Request: limit must be between 1 and 100")
        if wait < 0:
            raise BotApiError(400, "Bad Request: timeout must be non-negative")
        self._polled.set()
        self._confirm(offset)
        self._generation += 1
        generation = self._generation
        self._wake()  # an older poll still waiting now ends with 409
        loop = asyncio.get_running_loop()
        deadline = loop.time() + min(wait, self._max_timeout)
        while True:
            if generation != self._generation:
                raise BotApiError(409, _CONFLICT)
            if self._pending or self._closed:
                return self._pending[:limit]
            remaining = deadline - loop.time()
            if remaining <= 0:
                return []
            changed = self._changed
            try:
                await asyncio.wait_for(changed.wait(), remaining)
            except TimeoutError:
                return []

    def confirm(self, update_id: int) -> None:
        """Forget the pending update ``update_id`` (a webhook delivered it)."""
        self._pending = [u for u in self._pending if u["update_id"] != update_id]
        self._wake()

    def touch(self) -> None:
        """Wake everything waiting in :meth:`changed` (the webhook was set or removed)."""
        self._wake()

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    async def changed(self) -> None:
        """Return at the next change: an update queued or confirmed, a touch, or close."""
        if self._closed:
            return
        changed = self._changed
        await changed.wait()

    async def first_poll(self) -> None:
        """Return once the bot has polled (at once if it already has).

        A bot stopped while its first long poll is still connecting can leave its HTTP client's
        one-connection pool broken (the final ``getUpdates`` then times out); waiting for this
        before accepting a stop avoids that.
        """
        await self._polled.wait()

    async def fetched(self) -> None:
        """Return once no update is pending (the bot confirmed every one with an offset)."""
        while self._pending:  # each pass waits for a change; the caller bounds the wait
            changed = self._changed
            await changed.wait()

    def _confirm(self, offset: int | None) -> None:
        if offset is None or offset == 0:
            return
        if offset < 0:
            # A negative offset keeps only the last -offset updates.
            del self._pending[: max(0, len(self._pending) + offset)]
        else:
            self._pending = [u for u in self._pending if u["update_id"] >= offset]

    def _wake(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

"""Dropping duplicate deliveries: a bounded cache of recently seen (channel, chat, message) keys.

Platforms redeliver (Telegram after a webhook timeout, Discord after a gateway resume). A key
is remembered for ``ttl`` seconds and at most ``maxsize`` keys are kept, oldest first out, so
memory stays bounded whatever the traffic.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable

from actorscope.errors import ConfigError
from actorscope.messages import InboundMessage, MetaKey

__all__ = ["DedupCache", "DedupKey", "dedup_key"]

DedupKey = tuple[str, str, str]


def dedup_key(message: InboundMessage) -> DedupKey:
    """``(channel, chat_id, message)``; an edit is keyed by its edit time, not as the original."""
    event = message.metadata.get(MetaKey.EVENT, "")
    edit = message.metadata.get(MetaKey.EDIT_DATE, "")
    tail = f":{event}:{edit}" if edit else (f":{event}" if event else "")
    return message.channel, message.chat_id, message.message_id + tail


class DedupCache:
    """Remembers keys for ``ttl`` seconds, at most ``maxsize`` of them.

    ``clock`` returns seconds (monotonic by default) and can be injected by tests.
    """

    def __init__(
        self,
        *,
        ttl: float = 600.0,
        maxsize: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if ttl <= 0 or maxsize <= 0:
            raise ConfigError(f"dedup ttl and maxsize must be positive, got {ttl}, {maxsize}")
        self._ttl = ttl
        self._maxsize = maxsize
        self._clock = clock
        self._seen: OrderedDict[DedupKey, float] = OrderedDict()

    def __len__(self) -> int:
        return len(self._seen)

    def seen(self, channel: str, chat_id: str, message_id: str) -> bool:
        """True if this key was seen within ``ttl``; otherwise remember it and return False.

        A message without an id is never a duplicate (there is nothing to compare).
        """
        if not message_id:
            return False
        now = self._clock()
        self._expire(now)
        key = (channel, chat_id, message_id)
        if key in self._seen:
            return True
        self._seen[key] = now + self._ttl
        if len(self._seen) > self._maxsize:
            self._seen.popitem(last=False)
        return False

    def forget_message(self, message: InboundMessage) -> None:
        """Forget ``message``'s key: it was not handled here after all (another worker holds
        it), so its redelivery must be looked at again."""
        if message.message_id:
            self._seen.pop(dedup_key(message), None)

    def seen_message(self, message: InboundMessage) -> bool:
        """:meth:`seen` for a normalised message (keyed by :func:`dedup_key`)."""
        if not message.message_id:
            return False
        return self.seen(*dedup_key(message))

    def _expire(self, now: float) -> None:
        # Insertion order is expiry order (one ttl for all), so expired keys sit at the front.
        seen = self._seen
        while seen:
            key, deadline = next(iter(seen.items()))
            if deadline > now:
                break
            del seen[key]

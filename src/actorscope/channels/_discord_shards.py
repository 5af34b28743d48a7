"""Discord sharding: which gateway shards this worker runs, from the ``[discord]`` section.

::

    [discord]
    shard_count = 4          # shards of the whole bot (at least 1)
    shard_ids = [0, 1]       # the ones this worker runs; omit to run all of them

With either key set the runner uses ``discord.AutoShardedClient``; without both it uses a
plain ``discord.Client`` (one connection, Discord's default). Workers splitting one bot give
each a disjoint ``shard_ids`` list under the same ``shard_count``.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from dataclasses import dataclass
from typing import Any

from actorscope.errors import ConfigError

__all__ = ["MAX_SHARDS", "SHARD_KEYS", "DiscordShards"]

#: More shards than any bot needs; a bigger count is a typo, not a plan.
MAX_SHARDS = 65_536
#: The ``[discord]`` keys this module reads (besides the ChannelConfig ones).
SHARD_KEYS = frozenset({"shard_count", "shard_ids"})


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _problem(count: Any, ids: tuple[Any, ...] | None) -> str:
    """What is wrong with a shard count and id list (``""`` when nothing is)."""
    if not _integer(count) or not 1 <= count <= MAX_SHARDS:
        return f"shard_count must be an integer from 1 to {MAX_SHARDS}, got {count!r}"
    if ids is None:
        return ""
    if not ids:
        return "shard_ids must name at least one shard (omit it to run all)"
    for shard in ids:
        if not _integer(shard) or not 0 <= shard < count:
            return (
                f"shard_ids entry {shard!r} is not a shard of shard_count = {count} "
                f"(0 to {count - 1})"
            )
    if len(set(ids)) != len(ids):
        return f"shard_ids lists a shard twice: {list(ids)}"
    return ""


@dataclass(frozen=True, slots=True)
class DiscordShards:
    """``shard_count`` shards, of which this worker runs ``shard_ids`` (all when ``None``)."""

    shard_count: int
    shard_ids: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        problem = _problem(self.shard_count, self.shard_ids)
        if problem:
            raise ConfigError(problem)

    @classmethod
    def pop_from(cls, data: MutableMapping[str, Any], where: str) -> DiscordShards | None:
        """Remove ``shard_count`` / ``shard_ids`` from ``data``; the shards when either is set."""
        count = data.pop("shard_count", None)
        raw_ids = data.pop("shard_ids", None)
        if count is None and raw_ids is None:
            return None
        if count is None:
            raise ConfigError(f"{where}: shard_ids needs shard_count (the bot's total shards)")
        ids: tuple[int, ...] | None = None
        if raw_ids is not None:
            if not isinstance(raw_ids, list):
                raise ConfigError(f"{where}: shard_ids must be a list of integers, got {raw_ids!r}")
            ids = tuple(raw_ids)
        problem = _problem(count, ids)
        if problem:
            raise ConfigError(f"{where}: {problem}")
        return cls(count, ids)

    def client_options(self) -> dict[str, Any]:
        """Keyword arguments for ``discord.AutoShardedClient``."""
        ids = None if self.shard_ids is None else list(self.shard_ids)
        return {"shard_count": self.shard_count, "shard_ids": ids}

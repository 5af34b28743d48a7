"""Discord sharding: which gateway shards this worker runs, from the ``[discord]`` section.

The keys: docs/reference/config.md, "Sharding".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from actorscope.errors import ConfigError

__all__ = ["MAX_SHARDS", "DiscordShards", "count_problem", "ids_problem"]

#: More shards than any bot needs; a bigger count is a typo, not a plan.
MAX_SHARDS = 65_536


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def count_problem(count: Any) -> str:
    """What is wrong with a ``shard_count`` (``""`` when nothing is)."""
    if not _integer(count) or not 1 <= count <= MAX_SHARDS:
        return f"must be an integer from 1 to {MAX_SHARDS}, got {count!r}"
    return ""


def ids_problem(ids: Sequence[Any], count: int) -> str:
    """What is wrong with a ``shard_ids`` list under a valid ``count`` (``""`` when nothing is)."""
    if not ids:
        return "must name at least one shard (omit it to run all)"
    for shard in ids:
        if not _integer(shard) or not 0 <= shard < count:
            return f"entry {shard!r} is not a shard of shard_count = {count} (0 to {count - 1})"
    if len(set(ids)) != len(ids):
        return f"lists a shard twice: {list(ids)}"
    return ""


@dataclass(frozen=True, slots=True)
class DiscordShards:
    """``shard_count`` shards, of which this worker runs ``shard_ids`` (all when ``None``)."""

    shard_count: int
    shard_ids: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        problem = count_problem(self.shard_count)
        if problem:
            raise ConfigError(f"shard_count {problem}")
        problem = "" if self.shard_ids is None else ids_problem(self.shard_ids, self.shard_count)
        if problem:
            raise ConfigError(f"shard_ids {problem}")

    def client_options(self) -> dict[str, Any]:
        """Keyword arguments for ``discord.AutoShardedClient``."""
        ids = None if self.shard_ids is None else list(self.shard_ids)
        return {"shard_count": self.shard_count, "shard_ids": ids}

"""``[discord]`` of ``bot.toml``: the channel keys, ``enabled``, sharding and a proxy."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, Self

from pydantic import ValidationInfo, field_validator, model_validator

from actorscope._input import HttpServiceUrl, WsServiceUrl, shown_value
from actorscope.channels._config import ChannelSection
from actorscope.channels.discord._shards import DiscordShards, count_problem, ids_problem

__all__ = ["DiscordSection"]


class DiscordSection(ChannelSection):
    """``[discord]``: the :class:`~actorscope.channels.ChannelConfig` keys, ``enabled``, and
    sharding.

    ``shard_count`` (with ``shard_ids``, the ones this worker runs) selects
    ``discord.AutoShardedClient`` (see "Sharding" below).
    ``api_url`` and ``gateway_url`` (both or neither) send REST calls and the gateway session
    to a proxy instead of discord.com (plain ``http``/``ws`` only on this host).
    """

    token_keys = frozenset({"api_url", "gateway_url"})
    platform: Literal["discord"] = "discord"
    shard_count: int | None = None
    shard_ids: tuple[int, ...] | None = None
    api_url: HttpServiceUrl | None = None
    gateway_url: WsServiceUrl | None = None

    @model_validator(mode="after")
    def _both_urls(self) -> Self:
        if (self.api_url is None) != (self.gateway_url is None):
            given, missing = ("api_url", "gateway_url")
            if self.api_url is None:
                given, missing = missing, given
            raise ValueError(f"{given} needs {missing} (the proxy serves both)")
        return self

    @field_validator("shard_count", mode="before")
    @classmethod
    def _shard_count(cls, value: Any) -> Any:
        problem = count_problem(value)
        if problem:
            raise ValueError(problem)
        return value

    @field_validator("shard_ids", mode="before")
    @classmethod
    def _shard_ids(cls, value: Any, info: ValidationInfo) -> Any:
        if not isinstance(value, list | tuple):
            raise ValueError(f"must be a list of integers, got {shown_value(value)}")
        if "shard_count" not in info.data:
            return value  # shard_count is wrong, and said so
        count = info.data["shard_count"]
        problem = "needs shard_count (the bot's total shards)" if count is None else ""
        problem = problem or ids_problem(value, count)
        if problem:
            raise ValueError(problem)
        return value

    def runner_options(self, env: Mapping[str, str], source: str = "") -> dict[str, Any]:
        """The shards, and the proxy's ``api_url`` and ``gateway_url``."""
        return {"shards": self.shards, "api_url": self.api_url, "gateway_url": self.gateway_url}

    @property
    def shards(self) -> DiscordShards | None:
        """The shards this worker runs, when ``shard_count`` is set."""
        if self.shard_count is None:
            return None
        return DiscordShards(self.shard_count, self.shard_ids)

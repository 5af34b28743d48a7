"""Discord's side of the platform contract (:class:`~actorscope.channels.Platform`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from actorscope.channels._base import Ingress
from actorscope.channels._pipeline import Pipeline
from actorscope.channels.discord._normalize import inspect_dispatch
from actorscope.channels.discord._runner import DiscordRunner
from actorscope.channels.discord._section import DiscordSection
from actorscope.errors import ConfigError
from actorscope.platforms import DISCORD, PlatformSpec, platform_spec

__all__ = ["PLATFORM", "Discord"]

#: The keys of a gateway dispatch.
_DISPATCH_KEYS = frozenset({"op", "t", "d"})


class Discord:
    """Discord through discord.py: gateway dispatches, one (or a sharded) gateway session."""

    command_prefixes = "!"  # "!addwriter" in a channel; slash commands are named
    event_name = "a Discord gateway dispatch (op, t, d)"
    simulator = "actorscope.testing:DiscordSim"
    sandbox = "actorscope.sandbox._discord_sandbox:SANDBOX"
    section = DiscordSection

    @property
    def spec(self) -> PlatformSpec:
        """Discord's registration: snowflake ids, threads."""
        spec = platform_spec(DISCORD)
        if spec is None:  # built in: only a broken install has it missing
            raise ConfigError(f"{DISCORD} is not a registered platform")
        return spec

    def inspect(
        self, event: Mapping[str, Any], *, agent_key: str = "main", channel: str = ""
    ) -> Ingress:
        """:func:`~actorscope.channels.discord.inspect_dispatch` (Discord scopes name no
        channel: ``channel`` is not used)."""
        return inspect_dispatch(event, agent_key=agent_key)

    def recognizes(self, event: Mapping[str, Any]) -> bool:
        """A dispatch has ``op``, ``t`` or ``d`` (and no Telegram ``update_id``)."""
        return bool(_DISPATCH_KEYS & set(event)) and "update_id" not in event

    def token_problem(self, token: str) -> str:
        """Discord tokens have no form to check here: the gateway refuses a wrong one."""
        return ""

    def runner(self, pipeline: Pipeline, *, token: str, **options: Any) -> DiscordRunner:
        """A :class:`DiscordRunner` (``shards``, ``api_url``, ... as its options)."""
        return DiscordRunner(pipeline, token=token, **options)


#: The contract the registry names (``actorscope.channels.discord:PLATFORM``).
PLATFORM = Discord()

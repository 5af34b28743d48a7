"""Discord's side of the platform contract (:class:`~actorscope.channels.Platform`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from actorscope.channels._base import Ingress
from actorscope.channels._pipeline import Pipeline
from actorscope.channels.discord import _commands, _ids, _interactions, _normalize, _runner
from actorscope.channels.discord._runner import DiscordRunner
from actorscope.channels.discord._section import DiscordSection
from actorscope.errors import ConfigError
from actorscope.platforms import BuiltInPlatform, PlatformSpec, platform_spec

__all__ = ["PLATFORM", "Discord"]

#: The keys of a gateway dispatch.
_DISPATCH_KEYS = frozenset({"op", "t", "d"})


class Discord:
    """Discord through discord.py: gateway dispatches, one (or a sharded) gateway session.

    Besides the platform contract, what the discord.py Cog needs of Discord to do what
    ``actorscope run`` does: a ``Message`` or ``Interaction`` normalised
    (:meth:`inspect_message`, :meth:`inspect_interaction`), a reply sent
    (:meth:`send_outbound`), and the writer commands with their resolved target and the
    invoker's Manage Guild (:meth:`writer_command`).
    """

    command_prefixes = "!"  # "!addwriter" in a channel; slash commands are named
    #: The help text of each writer command, for its prefix and slash command.
    writer_descriptions = _runner.WRITER_DESCRIPTIONS
    #: The answer to a writer slash command where the bot takes no commands (not admitted).
    not_taking_commands = _runner.NOT_TAKING_COMMANDS
    event_name = "a Discord gateway dispatch (op, t, d)"
    simulator = "actorscope.testing:DiscordSim"
    probe_world = "actorscope.testing.discord:PROBE"
    sandbox = "actorscope.sandbox.discord:SANDBOX"
    section = DiscordSection

    @property
    def spec(self) -> PlatformSpec:
        """Discord's registration: snowflake ids, threads."""
        spec = platform_spec(BuiltInPlatform.DISCORD)
        if spec is None:  # built in: only a broken install has it missing
            raise ConfigError(f"{BuiltInPlatform.DISCORD} is not a registered platform")
        return spec

    def inspect(
        self, event: Mapping[str, Any], *, agent_key: str = "main", channel: str = ""
    ) -> Ingress:
        """A gateway dispatch (``op``, ``t``, ``d``) → its :class:`Ingress` (Discord scopes
        name no channel: ``channel`` is not used)."""
        return _normalize.inspect_dispatch(event, agent_key=agent_key)

    def recognizes(self, event: Mapping[str, Any]) -> bool:
        """A dispatch has ``op``, ``t`` or ``d`` (and no Telegram ``update_id``)."""
        return bool(_DISPATCH_KEYS & set(event)) and "update_id" not in event

    def token_problem(self, token: str) -> str:
        """Discord tokens have no form to check here: the gateway refuses a wrong one."""
        return ""

    def runner(self, pipeline: Pipeline, *, token: str, **options: Any) -> DiscordRunner:
        """A :class:`DiscordRunner` (``shards``, ``api_url``, ... as its options)."""
        return DiscordRunner(pipeline, token=token, **options)

    # What the discord.py Cog, the kit and the benchmarks use, as the functions themselves:
    # one signature and docstring each, and no extra call on a message's path.
    clear_caches = staticmethod(_normalize.clear_caches)
    silence_voice_warnings = staticmethod(_runner.silence_voice_warnings)
    inspect_message = staticmethod(_normalize.inspect_message)
    inspect_interaction = staticmethod(_interactions.inspect_interaction)
    normalize_message = staticmethod(_normalize.normalize_message)
    normalize_interaction = staticmethod(_interactions.normalize_interaction)
    send_outbound = staticmethod(_runner.send_outbound)
    member_manages_guild = staticmethod(_commands.member_manages_guild)
    user_target = staticmethod(_commands.user_target)
    mention_target = staticmethod(_commands.mention_target)
    writer_command = staticmethod(_commands.handle_discord_writer_command)
    #: A message's identity by a person, a webhook or a bot.
    identity = staticmethod(_ids.discord_identity)


#: The contract the registry names (``actorscope.channels.discord:PLATFORM``).
PLATFORM = Discord()

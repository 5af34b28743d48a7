"""Discord's side of the platform contract (:class:`~actorscope.channels.Platform`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import discord

from actorscope.channels._base import Addressed, Ingress
from actorscope.channels._pipeline import Pipeline
from actorscope.channels._writer_commands import WriterCommand
from actorscope.channels.discord import _commands, _interactions, _normalize, _runner
from actorscope.channels.discord._commands import WriterTarget
from actorscope.channels.discord._runner import DiscordRunner
from actorscope.channels.discord._section import DiscordSection
from actorscope.errors import ConfigError
from actorscope.identity import Identity
from actorscope.messages import OutboundMessage
from actorscope.permissions import WriterManager
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
    sandbox = "actorscope.sandbox._discord_sandbox:SANDBOX"
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

    def clear_caches(self) -> None:
        """Forget the memoised identities and session keys (a benchmark's never-seen events).

        Never needed for correctness: both are pure functions of the ids they are keyed by.
        """
        _normalize.clear_caches()

    def silence_voice_warnings(self) -> None:
        """Filter discord.py's missing-voice-library warnings: a text bot never needs voice."""
        _runner.silence_voice_warnings()

    def inspect_message(
        self,
        message: discord.Message | Mapping[str, Any],
        *,
        agent_key: str = "main",
        bot_id: int | str | None = None,
        ignore_bots: bool = True,
        thread_parents: Mapping[int, int] | None = None,
        addressed: Addressed | None = None,
        command: str = "",
    ) -> Ingress:
        """Normalise a ``Message`` (or its payload) as the bot ``bot_id`` sees it; never raises
        on a malformed one (a bad ``agent_key`` does). A caller that knows more than the
        payload says (discord.py found a command in it) passes ``addressed`` and ``command``."""
        return _normalize.inspect_message(
            message,
            agent_key=agent_key,
            bot_id=bot_id,
            ignore_bots=ignore_bots,
            thread_parents=thread_parents,
            addressed=addressed,
            command=command,
        )

    def inspect_interaction(
        self,
        interaction: discord.Interaction[Any] | Mapping[str, Any],
        *,
        agent_key: str = "main",
    ) -> Ingress:
        """Normalise an ``Interaction`` (or its payload); never raises on a malformed one (a
        bad ``agent_key`` does)."""
        return _interactions.inspect_interaction(interaction, agent_key=agent_key)

    async def send_outbound(
        self,
        client: discord.Client,
        msg: OutboundMessage,
        interaction: discord.Interaction[Any] | None,
    ) -> None:
        """Send ``msg`` the way the runner does: as ``interaction``'s answer (or follow-up)
        when given, else to its channel or thread, replying to the message it names
        (:class:`~actorscope.errors.ReplyError` before any call for what Discord cannot
        take)."""
        await _runner.send_outbound(client, msg, interaction)

    def member_manages_guild(self, author: discord.abc.User) -> bool:
        """Whether a message author is a guild member with the Manage Guild permission."""
        return _commands.member_manages_guild(author)

    def user_target(self, user: discord.abc.User | None) -> WriterTarget | None:
        """A resolved user as a writer command's target; bots, webhooks and system users are
        nobody's writer."""
        return _commands.user_target(user)

    def mention_target(self, mentions: Sequence[discord.abc.User]) -> WriterTarget | None:
        """The one person a message mentions (bots left out); ``None`` for none or several."""
        return _commands.mention_target(mentions)

    async def writer_command(
        self,
        manager: WriterManager,
        command: WriterCommand,
        identity: Identity,
        *,
        target: WriterTarget | None,
        manage_guild: bool,
        agent_id: str | None,
        tenant_id: str | None = None,
    ) -> str:
        """Run a writer command by ``identity`` on the person Discord resolved (``target``),
        with the invoker's Manage Guild given; return the reply text."""
        return await _commands.handle_discord_writer_command(
            manager,
            command,
            identity,
            target=target,
            manage_guild=manage_guild,
            agent_id=agent_id,
            tenant_id=tenant_id,
        )


#: The contract the registry names (``actorscope.channels.discord:PLATFORM``).
PLATFORM = Discord()

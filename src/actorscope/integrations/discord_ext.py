"""discord.py, natively: actorscope as a Cog in your own ``commands.Bot``.

::

    bot = commands.Bot(command_prefix="!", intents=bot_intents())
    await bot.add_cog(ActorscopeCog(bot, database="bot.db", agent="notes", owners=[4242]))

    @bot.command()
    @requires("file_writer")
    async def note(ctx: commands.Context[commands.Bot], *, text: str) -> None:
        who = await identity_of(ctx)       # scope and actor of this command
        async with bound(ctx):             # ... bound for tools that read the context
            ...

:class:`ActorscopeCog` opens the database in ``cog_load`` (finds or creates the agent, starts
the grant change feed) and closes it in ``cog_unload``. Every command invocation takes the
one ingress :class:`~actorscope.channels.Pipeline` (dedup, admission, shared claim) and the
:class:`~actorscope.host.RunStep`'s ``prepare`` (run request, owner → role): a prefix command
in the Cog's global check, before any other check runs; an application command when it first
asks (:func:`requires`, :func:`identity_of`, :func:`bound`). A message or interaction the
pipeline does not admit runs no command (:class:`Refused`).

The writer commands are the Cog's: ``!addwriter @user``, ``!removewriter @user``,
``!writers`` and the slash commands ``/addwriter user:``, ``/removewriter user:``,
``/writers``, answered by the pipeline with the same writer-command code as ``actorscope run``
(members with *Manage Server* may add the first writer). With ``links="dm"`` or
``"grants"`` (``[identity] links``) the Cog also adds ``!link``, ``!link CODE`` and
``!unlink`` (with the bot's own prefix), answered by the pipeline with the same link-command
code as ``actorscope run`` and the PTB and aiogram gates, and listens to guild messages: a
live link code shown in one's plain text is burnt (audited, nothing answered).
:func:`requires` is a check for both kinds of command: it decides the action for the actor
with the :class:`~actorscope.permissions.PermissionPolicy` and answers a denial with its
reason (ephemeral for an interaction). Webhooks, bots and other non-persons never pass it.

A refused check raises a ``CheckFailure`` subclass after answering; an ``on_command_error``
(and ``@bot.tree.error``) may ignore :class:`Refused`.
"""

from __future__ import annotations

import functools
import inspect
import logging
import os
import warnings
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TypeVar, get_origin

with warnings.catch_warnings():
    # discord.py imports the deprecated stdlib ``audioop`` for voice, which a text bot never uses.
    warnings.filterwarnings("ignore", "'audioop' is deprecated", DeprecationWarning)
    import discord
    from discord import app_commands
    from discord.ext import commands

from actorscope.assembly import AgentSettings
from actorscope.bots import BotServices
from actorscope.channels import ChannelConfig, Ingress, Outcome, Pipeline, WriterCommand
from actorscope.channels.discord import PLATFORM as DISCORD_PLATFORM
from actorscope.channels.discord import WriterTarget
from actorscope.errors import ConfigError
from actorscope.host import OutboundSender, Prepared, RunStep
from actorscope.identity import Identity, SenderKind
from actorscope.integrations._adoption import Opened, open_gate
from actorscope.integrations._invisible import gate_config, stops
from actorscope.messages import OutboundMessage
from actorscope.permissions import (
    ConfigType,
    Decision,
    LinkMode,
    LinkStore,
    PermissionPolicy,
    Reason,
)
from actorscope.propagation import OriginSigner
from actorscope.store import Database

__all__ = [
    "ActorscopeCog",
    "Refused",
    "bound",
    "identity_of",
    "requires",
    "services",
]

_COG_NAME = "actorscope"
#: Where discord.py logs a failed command with its traceback when nothing else handles it.
_DISCORD_ERROR_LOGGERS = ("discord.ext.commands.bot", "discord.app_commands.tree")
_log = logging.getLogger("actorscope.integrations.discord")
#: Told every decision a :func:`requires` check makes: (action, decision).
_DecisionListener = Callable[[str, Decision], None]
#: Told what the pipeline made of every message / interaction a command took in, and the
#: prepared run for an admitted one.
_IngressListener = Callable[[Ingress, Prepared | None], None]

Source = commands.Context[Any] | discord.Interaction[Any]
_T = TypeVar("_T")
# Invocations remembered between the global check and the command (one task; kept bounded).
_MAX_REMEMBERED = 256
#: The link commands the pipeline answers while links are on (``channels``' ``/link`` and
#: ``/unlink``), with their help.
_LINK_COMMANDS = {
    "link": "Ask for a link code (a DM with the bot), or send one from your other account",
    "unlink": "Unlink your accounts (in a DM with the bot)",
}


class Refused(commands.CheckFailure):
    """A command the Cog refused (already answered, or ignored on purpose).

    ``reason`` is the decision's reason or why the pipeline ignored the message;
    ``decision`` is the denial, when a :func:`requires` check made one. A prefix (or hybrid)
    command's is a ``commands.CheckFailure``; an application command's is also an
    ``app_commands.CheckFailure``, so ``@bot.tree.error`` gets it as one.
    """

    def __init__(self, reason: str, decision: Decision | None = None) -> None:
        super().__init__(f"actorscope refused the command: {reason}")
        self.reason = reason
        self.decision = decision


class _QuietRefusals(logging.Filter):
    """Keeps discord.py's default error handlers from logging a refusal of the Cog's as a
    failure with a traceback: the Cog answered it and logged one INFO line already. Every
    other error is logged as before."""

    def filter(self, record: logging.LogRecord) -> bool:
        """False for a record about a :class:`Refused`."""
        error = record.exc_info[1] if record.exc_info else None
        return not isinstance(error, Refused)


def _quiet_refusals() -> None:
    """Put :class:`_QuietRefusals` on discord.py's error loggers, once, for good: a refusal's
    error handler may run after the Cog has unloaded (a denial just before the bot stops),
    and only the Cog raises a refusal, so the filter drops nothing else whenever it runs."""
    for name in _DISCORD_ERROR_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, _QuietRefusals) for f in logger.filters):
            logger.addFilter(_QuietRefusals())


class _AppRefused(app_commands.CheckFailure, Refused):
    """An application command the Cog refused (answered, ephemeral, where it could be): a
    :class:`Refused` that discord.py's command tree takes as its own check failure."""


def _denial_text(decision: Decision) -> str:
    """What a denied actor is told: ``denied: <reason>``."""
    return f"denied: {decision.reason}"


@dataclass(frozen=True, slots=True)
class _Invocation:
    """What the pipeline made of one command's message or interaction: its result, and the
    prepared run (request, identity, run info) when it was admitted."""

    result: Ingress
    prepared: Prepared | None
    #: Decided so far, by action: a hybrid command run as a slash command passes both its
    #: application and its prefix checks, and must be decided (and recorded) once.
    decisions: dict[str, Decision] = field(default_factory=dict)

    def refusal(self) -> str:
        """Why no command runs for it (the ignore reason or the outcome)."""
        return str(self.result.reason or self.result.outcome)


@dataclass(frozen=True, slots=True)
class _Loaded:
    services: BotServices
    pipeline: Pipeline
    step: RunStep
    stack: AsyncExitStack
    opened: Opened


class ActorscopeCog(commands.Cog, name=_COG_NAME):
    """The ingress pipeline, the run step's identity and the writer commands for a bot.

    ``database`` is a path or URL (opened in ``cog_load``, closed in ``cog_unload``) or an
    open :class:`~actorscope.store.Database` (left open). ``agent`` (key or UUID) of
    ``tenant`` is found or created; ``owners`` (Discord user ids) run with role ``owner``
    and manage writers. ``config`` sets policies and the mention gate for messages
    (a prefix command counts as addressed to the bot); ``workspace`` is where
    :attr:`services` keeps the scopes' files; ``strict`` makes the policy fail closed (a
    check whose grant store fails denies, as ``strict = true`` in ``bot.toml``). ``links``
    (``"off"``, ``"dm"`` or ``"grants"``) is ``[identity] links``: what linked accounts
    change; with either mode the Cog adds ``link`` and ``unlink`` commands (a bot with
    commands of those names of its own cannot load it).
    """

    #: The Cog's name (``bot.get_cog(ActorscopeCog.NAME)``).
    NAME: ClassVar[str] = _COG_NAME

    def __init__(
        self,
        bot: commands.Bot,
        *,
        database: str | os.PathLike[str] | Database,
        agent: str = "main",
        tenant: str = Database.DEFAULT_TENANT_SLUG,
        owners: Iterable[int | str] = (),
        config: ChannelConfig | None = None,
        workspace: str | os.PathLike[str] = "workspace",
        shared_dedup: bool | None = None,
        signer: OriginSigner | None = None,
        strict: bool = False,
        require_mention: bool = False,
        drop_non_persons: bool | None = None,
        links: str = "off",
    ) -> None:
        if not isinstance(bot, commands.Bot):
            raise ConfigError(f"ActorscopeCog needs a commands.Bot, got {type(bot).__name__}")
        for name, flag in (("strict", strict), ("require_mention", require_mention)):
            if not isinstance(flag, bool):
                raise ConfigError(f"ActorscopeCog: {name} must be True or False")
        if drop_non_persons is not None and not isinstance(drop_non_persons, bool):
            raise ConfigError("ActorscopeCog: drop_non_persons must be True or False")
        if not isinstance(database, str | os.PathLike | Database):
            raise ConfigError("ActorscopeCog: database must be a path, a URL or a Database")
        if links not in tuple(LinkMode):
            modes = ", ".join(repr(mode.value) for mode in LinkMode)
            raise ConfigError(f"ActorscopeCog: links must be one of {modes}, got {links!r}")
        if config is not None and (
            not isinstance(config, ChannelConfig) or config.platform != "discord"
        ):
            raise ConfigError(f"ActorscopeCog needs a discord config, not {config!r}")
        base = gate_config(
            config,
            platform="discord",
            require_mention=require_mention,
            drop_non_persons=drop_non_persons,
        )
        given: object = owners
        if isinstance(owners, str | int):
            given = [owners]  # one id, not its characters
        elif isinstance(owners, Iterable):
            given = list(owners)
        extra = ChannelConfig.from_mapping(
            {"platform": "discord", "owners": given}, source="ActorscopeCog"
        ).owners
        self.bot = bot
        self.config = base.model_copy(update={"owners": (*base.owners, *extra)})
        self._database = database
        self._agent = agent
        self._tenant = tenant
        self._workspace = Path(workspace)
        self._shared_dedup = shared_dedup
        self._signer = signer or OriginSigner()
        self._strict = strict
        self._mention_commands = require_mention
        self._links = LinkMode(links)
        #: The link commands added to the bot while loaded (links on).
        self._link_commands: list[commands.Command[Any, ..., Any]] = []
        self._loaded: _Loaded | None = None
        self._remembered: OrderedDict[str, _Invocation] = OrderedDict()
        self._answering: dict[str, discord.Interaction[Any]] = {}
        self._decision_listeners: list[_DecisionListener] = []
        self._ingress_listeners: list[_IngressListener] = []
        self._sender = _AnswerSender(bot, self._answering)

    # -- lifecycle -------------------------------------------------------------------------

    async def cog_load(self) -> None:
        """Open the database, find or create the agent, start the grant change feed.

        Inside :meth:`~actorscope.integrations.Adoption.bind`: the adoption's database, agent,
        workspace and signer (owners added), whatever the Cog was given.
        """
        if self._loaded is not None:
            raise ConfigError("this ActorscopeCog is already loaded")
        settings = AgentSettings(
            agent=self._agent,
            tenant=self._tenant,
            owners=self.config.owners,
            strict=self._strict,
            workspace=self._workspace,
            shared_dedup=self._shared_dedup,
            signer=self._signer,
            links=self._links,
        )
        stack = AsyncExitStack()
        try:
            assembly, opened = await open_gate(self._database, settings, stack)
            # A grant changed by another process (`actorscope grants ...`) reaches this cache.
            await stack.enter_async_context(assembly.grants.watch())
            _quiet_refusals()
            if self._links is not LinkMode.OFF:
                self._add_link_commands()
                stack.callback(self._remove_link_commands)
        except BaseException:
            await stack.aclose()
            raise
        self._loaded = _Loaded(
            BotServices.of(assembly),
            assembly.pipeline(self.config),
            assembly.run_step(),
            stack,
            opened,
        )

    async def cog_unload(self) -> None:
        """Stop the change feed, remove the link commands, close the database the Cog
        opened."""
        loaded, self._loaded = self._loaded, None
        self._remembered.clear()
        if loaded is not None:
            await loaded.stack.aclose()

    def _add_link_commands(self) -> None:
        """Add ``link`` and ``unlink`` to the bot (links on); a bot that has a command of
        either name already cannot load the Cog (one clear :class:`ConfigError`)."""
        for name, help_text in _LINK_COMMANDS.items():
            if self.bot.get_command(name) is not None:
                self._remove_link_commands()
                raise ConfigError(
                    f"ActorscopeCog(links={self._links.value!r}) answers {name!r} itself, but "
                    f"the bot has a {name!r} command of its own: rename it, or keep links off"
                )
            command: commands.Command[Any, ..., Any] = commands.Command(
                self._link_callback(name), name=name, help=help_text
            )
            self.bot.add_command(command)
            self._link_commands.append(command)

    def _remove_link_commands(self) -> None:
        for command in self._link_commands:
            if self.bot.get_command(command.name) is command:
                self.bot.remove_command(command.name)
        self._link_commands.clear()

    def _link_callback(
        self, name: str
    ) -> Callable[[commands.Context[Any]], Coroutine[Any, Any, None]]:
        async def answer(ctx: commands.Context[Any]) -> None:
            await self._link_message(ctx, name)

        return answer

    @commands.Cog.listener("on_message")
    async def _burn_exposed(self, message: discord.Message) -> None:
        """While links are on: a live link code shown in a guild message's plain text is
        burnt (audited; nothing is answered), as the pipeline burns one for ``actorscope
        run``. Only a text with a token of a code's shape is looked at further; a link
        command is its command's to judge."""
        loaded = self._loaded
        if self._links is LinkMode.OFF or loaded is None or message.guild is None:
            return
        if not LinkStore.codes_in(message.content):
            return
        ctx = await self.bot.get_context(message)
        if any(ctx.command is mine for mine in self._link_commands):
            return
        ingress = DISCORD_PLATFORM.inspect_message(
            message,
            agent_key=loaded.services.agent.key,
            bot_id=self._bot_id(),
            ignore_bots=False,
        )
        if ingress.message is not None:
            await loaded.pipeline.burn_exposed(ingress.message)

    async def _link_message(self, ctx: commands.Context[Any], name: str) -> None:
        """``!link``, ``!link CODE``, ``!unlink``: the pipeline answers (and, in a guild,
        burns a code sent there), as ``actorscope run`` does."""
        loaded = self._require()
        result = await loaded.pipeline.process(
            self._message_ingress(ctx, name),
            bot_id=self._bot_id(),
            sender=self._sender,
            named_prefix=ctx.prefix or "",
        )
        self._remember(_key(ctx), _Invocation(result, None))

    @classmethod
    def of(cls, bot: discord.Client) -> ActorscopeCog:
        """The bot's loaded ActorscopeCog; :class:`ConfigError` when it has none."""
        cog = bot.get_cog(_COG_NAME) if isinstance(bot, commands.Bot) else None
        if not isinstance(cog, cls):
            raise ConfigError(
                "this bot has no ActorscopeCog: await bot.add_cog(ActorscopeCog(...))"
            )
        return cog

    @property
    def services(self) -> BotServices:
        """The agent, database, grants, policy and workspace (once loaded)."""
        return self._require().services

    @property
    def opened(self) -> Opened:
        """What the Cog opened (database, agent, workspace root, the adoption if any)."""
        return self._require().opened

    def _require(self) -> _Loaded:
        if self._loaded is None:
            raise ConfigError("the ActorscopeCog is not loaded: await bot.add_cog(cog) first")
        return self._loaded

    def add_decision_listener(self, listener: _DecisionListener) -> None:
        """Tell ``listener`` every decision :func:`requires` makes (the testing kit does)."""
        self._decision_listeners.append(listener)

    def add_ingress_listener(self, listener: _IngressListener) -> None:
        """Tell ``listener`` what the pipeline made of each command's event."""
        self._ingress_listeners.append(listener)

    # -- the pipeline ----------------------------------------------------------------------

    async def bot_check_once(self, ctx: commands.Context[Any]) -> bool:
        """Take a prefix command's message through the pipeline before any check runs."""
        command = ctx.command
        if (
            command is not None
            and command.cog is self
            and WriterCommand.named(command.name) is not None
        ) or any(command is mine for mine in self._link_commands):
            return True  # the writer and link commands take their message through the pipeline
        invocation = await self._invocation(ctx)
        if invocation.prepared is None and stops(invocation.result, self.config):
            _log.info("discord.refused command=%s reason=%s", ctx.command, invocation.refusal())
            raise Refused(invocation.refusal())
        return True  # with an identity, or none to attach (requires denies it)

    async def _invocation(self, source: Source) -> _Invocation:
        """What the pipeline made of ``source``'s message or interaction (once per event).

        A hybrid command invoked as a slash command is its interaction.
        """
        if isinstance(source, commands.Context) and source.interaction is not None:
            source = source.interaction
        key = _key(source)
        remembered = self._remembered.get(key)
        if remembered is not None:
            return remembered
        loaded = self._require()
        if isinstance(source, commands.Context):
            result = await loaded.pipeline.process(
                self._message_ingress(source, ""), bot_id=self._bot_id()
            )
        else:
            result = await loaded.pipeline.process(
                DISCORD_PLATFORM.inspect_interaction(source, agent_key=loaded.services.agent.key)
            )
        prepared = None
        if result.outcome is Outcome.ADMITTED and result.message is not None:
            prepared = loaded.step.prepare(result.message)
        return self._remember(key, _Invocation(result, prepared))

    def _remember(self, key: str, invocation: _Invocation) -> _Invocation:
        self._remembered[key] = invocation
        while len(self._remembered) > _MAX_REMEMBERED:
            self._remembered.popitem(last=False)
        for listener in self._ingress_listeners:
            listener(invocation.result, invocation.prepared)
        return invocation

    def _bot_id(self) -> str | None:
        user = self.bot.user
        return str(user.id) if user is not None else None

    def _message_ingress(self, ctx: commands.Context[Any], command: str) -> Ingress:
        """The normalised message; discord.py found a command in it, so it is addressed to
        the bot, and a writer or link command (``command``) is named as the normalisers name
        commands."""
        loaded = self._require()
        return DISCORD_PLATFORM.inspect_message(
            ctx.message,
            agent_key=loaded.services.agent.key,
            bot_id=self._bot_id(),
            ignore_bots=loaded.pipeline.normaliser_drops_non_persons,
            addressed="" if self._mention_commands else "command",
            command=command,
        )

    # -- checks ----------------------------------------------------------------------------

    async def check(self, action: str, source: Source) -> Decision | None:
        """Decide ``action`` for the actor of ``source``; ``None`` when the pipeline did not
        admit the event (no command runs for it). Non-persons are denied before the policy."""
        ConfigType.parse_check(action)
        invocation = await self._invocation(source)
        prepared = invocation.prepared
        if prepared is None:
            return None
        decided = invocation.decisions.get(action)
        if decided is not None:
            return decided
        who = prepared.identity
        refusal = PermissionPolicy.non_person_reason(who)
        if refusal is not None or who.sender_kind is not SenderKind.USER:
            reason = refusal or Reason.EMPTY_SENDER
            decision = Decision(False, reason, who.user_id, who.sender_id, action)
        else:
            decision = await self._require().services.policy.check(action, who)
        invocation.decisions[action] = decision
        for listener in self._decision_listeners:
            listener(action, decision)
        return decision

    # -- writer commands -------------------------------------------------------------------

    @commands.command(
        name=WriterCommand.ADD.value, help=DISCORD_PLATFORM.writer_descriptions[WriterCommand.ADD]
    )
    async def addwriter_message(self, ctx: commands.Context[Any]) -> None:
        """``!addwriter @user``."""
        await self._writer_message(ctx, WriterCommand.ADD)

    @commands.command(
        name=WriterCommand.REMOVE.value,
        help=DISCORD_PLATFORM.writer_descriptions[WriterCommand.REMOVE],
    )
    async def removewriter_message(self, ctx: commands.Context[Any]) -> None:
        """``!removewriter @user``."""
        await self._writer_message(ctx, WriterCommand.REMOVE)

    @commands.command(
        name=WriterCommand.LIST.value, help=DISCORD_PLATFORM.writer_descriptions[WriterCommand.LIST]
    )
    async def writers_message(self, ctx: commands.Context[Any]) -> None:
        """``!writers``."""
        await self._writer_message(ctx, WriterCommand.LIST)

    @app_commands.command(
        name=WriterCommand.ADD.value,
        description=DISCORD_PLATFORM.writer_descriptions[WriterCommand.ADD],
    )
    async def addwriter_slash(
        self, interaction: discord.Interaction[Any], user: discord.User
    ) -> None:
        """``/addwriter user:``."""
        await self._writer_interaction(
            interaction, WriterCommand.ADD, DISCORD_PLATFORM.user_target(user)
        )

    @app_commands.command(
        name=WriterCommand.REMOVE.value,
        description=DISCORD_PLATFORM.writer_descriptions[WriterCommand.REMOVE],
    )
    async def removewriter_slash(
        self, interaction: discord.Interaction[Any], user: discord.User
    ) -> None:
        """``/removewriter user:``."""
        await self._writer_interaction(
            interaction, WriterCommand.REMOVE, DISCORD_PLATFORM.user_target(user)
        )

    @app_commands.command(
        name=WriterCommand.LIST.value,
        description=DISCORD_PLATFORM.writer_descriptions[WriterCommand.LIST],
    )
    async def writers_slash(self, interaction: discord.Interaction[Any]) -> None:
        """``/writers``."""
        await self._writer_interaction(interaction, WriterCommand.LIST, None)

    async def _writer_message(self, ctx: commands.Context[Any], command: WriterCommand) -> None:
        loaded = self._require()
        message = ctx.message
        target = (
            DISCORD_PLATFORM.mention_target(message.mentions)
            if command is not WriterCommand.LIST
            else None
        )
        manage_guild = DISCORD_PLATFORM.member_manages_guild(message.author)

        async def run_command(command: WriterCommand, identity: Identity) -> str:
            return await DISCORD_PLATFORM.writer_command(
                loaded.pipeline.writers,
                command,
                identity,
                target=target,
                manage_guild=manage_guild,
                agent_id=identity.agent_id,
                tenant_id=identity.tenant_id,
            )

        result = await loaded.pipeline.process(
            self._message_ingress(ctx, command.value),
            bot_id=self._bot_id(),
            run_command=run_command,
            sender=self._sender,
        )
        self._remember(_key(ctx), _Invocation(result, None))

    async def _writer_interaction(
        self,
        interaction: discord.Interaction[Any],
        command: WriterCommand,
        target: WriterTarget | None,
    ) -> None:
        loaded = self._require()
        manage_guild = interaction.guild_id is not None and interaction.permissions.manage_guild
        key = str(interaction.id)

        async def run_command(command: WriterCommand, identity: Identity) -> str:
            self._answering[key] = interaction  # the answer is this interaction's response
            return await DISCORD_PLATFORM.writer_command(
                loaded.pipeline.writers,
                command,
                identity,
                target=target,
                manage_guild=manage_guild,
                agent_id=identity.agent_id,
                tenant_id=identity.tenant_id,
            )

        ingress = DISCORD_PLATFORM.inspect_interaction(
            interaction, agent_key=loaded.services.agent.key
        )
        try:
            result = await loaded.pipeline.process(
                ingress, run_command=run_command, sender=self._sender
            )
        finally:
            self._answering.pop(key, None)
        if result.outcome is Outcome.IGNORED:
            await interaction.response.send_message(
                DISCORD_PLATFORM.not_taking_commands, ephemeral=True
            )
        self._remember(_key(interaction), _Invocation(result, None))


class _AnswerSender(OutboundSender):
    """The pipeline's sender for writer command answers: the interaction's response, or a
    reply in the channel (a Cog cannot be an ``OutboundSender`` itself: metaclasses)."""

    def __init__(self, bot: commands.Bot, answering: dict[str, discord.Interaction[Any]]) -> None:
        self._bot = bot
        self._answering = answering

    async def send(self, msg: OutboundMessage) -> None:
        """Deliver ``msg``."""
        await DISCORD_PLATFORM.send_outbound(
            self._bot, msg, self._answering.pop(msg.reply_to_message_id, None)
        )


def _key(source: Source) -> str:
    if isinstance(source, commands.Context):
        # An edit is a new message to judge (its text, and the grants of that moment): a bot
        # that runs commands from on_message_edit must never get the original's result back.
        edited = source.message.edited_at
        version = f":{edited.timestamp()}" if edited is not None else ""
        return f"message:{source.message.id}{version}"
    return f"interaction:{source.id}"


def _client(source: Source) -> discord.Client:
    client: object = source.bot if isinstance(source, commands.Context) else source.client
    if not isinstance(client, discord.Client):
        raise ConfigError(f"{type(source).__name__} carries no discord.py client")
    return client


# -- what commands use ---------------------------------------------------------------------


async def identity_of(source: Source) -> Identity:
    """The identity (scope and actor) ``source``'s command runs as.

    :class:`Refused` when the pipeline did not admit the event.
    """
    invocation = await ActorscopeCog.of(_client(source))._invocation(source)
    if invocation.prepared is None:
        raise _refused(source, invocation.refusal())
    return invocation.prepared.identity


@asynccontextmanager
async def bound(source: Source) -> AsyncIterator[Identity]:
    """Bind ``source``'s identity and run info for the block (the run step's one binding)."""
    invocation = await ActorscopeCog.of(_client(source))._invocation(source)
    if invocation.prepared is None:
        raise _refused(source, invocation.refusal())
    with RunStep.bound(invocation.prepared) as prepared:
        yield prepared.identity


def services(source: Source) -> BotServices:
    """The bot's agent, database, grants, policy and workspace (from its ActorscopeCog)."""
    return ActorscopeCog.of(_client(source)).services


def _refused(source: Source, reason: str, decision: Decision | None = None) -> Exception:
    if isinstance(source, commands.Context):
        return Refused(reason, decision)
    return _AppRefused(reason, decision)


def _log_denial(action: str, command: object, decision: Decision | None) -> None:
    """The one INFO line of a denial (no traceback: it is an answer, not a failure)."""
    name = command if isinstance(command, str) else getattr(command, "qualified_name", None)
    name = name or "?"
    if decision is None:
        _log.info("discord.denied command=%s %s: it carries no identity", name, action)
        return
    _log.info(
        "discord.denied command=%s %s sender=%s scope=%s reason=%s",
        name,
        action,
        decision.sender_id or '""',
        decision.scope,
        decision.reason,
    )


def requires(action: str) -> Callable[[_T], _T]:
    """A check for prefix and application commands: the actor may ``action``
    (``file_writer``, ``cron``, ``context_files``).

    Put it under ``@bot.command()`` / ``@commands.command()`` or
    ``@app_commands.command()`` (or above, on the command object). A denial is answered with
    its reason (ephemeral for an interaction) and raises :class:`Refused`.

    On a View item's callback (``@discord.ui.button`` / ``@discord.ui.select``, above or
    under it, the item parameter annotated or not) or on an item's own ``callback`` the
    clicker is the actor: a denied click is answered ephemerally and the callback does not
    run.
    """
    ConfigType.parse_check(action)

    async def message_check(ctx: commands.Context[Any]) -> bool:
        decision = await ActorscopeCog.of(ctx.bot).check(action, ctx)
        if decision is None or not decision.allowed:
            reason = "no identity" if decision is None else str(decision.reason)
            _log_denial(action, ctx.command, decision)
            text = f"denied: {reason}"
            if ctx.interaction is not None:  # a hybrid command run as a slash command
                await ctx.send(text, ephemeral=True)
            else:
                await ctx.reply(text, mention_author=False)
            raise Refused(reason, decision)
        return True

    async def interaction_check(interaction: discord.Interaction[Any]) -> bool:
        cog = ActorscopeCog.of(interaction.client)
        decision = await cog.check(action, interaction)
        if decision is None:
            invocation = await cog._invocation(interaction)
            _log_denial(action, interaction.command, None)
            if invocation.result.outcome is Outcome.IGNORED:
                await interaction.response.send_message(
                    DISCORD_PLATFORM.not_taking_commands, ephemeral=True
                )
            raise _AppRefused(invocation.refusal())
        if not decision.allowed:
            _log_denial(action, interaction.command, decision)
            await interaction.response.send_message(_denial_text(decision), ephemeral=True)
            raise _AppRefused(str(decision.reason), decision)
        return True

    async def component_check(interaction: discord.Interaction[Any], name: str) -> bool:
        decision = await ActorscopeCog.of(interaction.client).check(action, interaction)
        if decision is not None and decision.allowed:
            return True
        _log_denial(action, name, decision)
        reason = "no identity" if decision is None else str(decision.reason)
        await interaction.response.send_message(f"denied: {reason}", ephemeral=True)
        return False

    def decorate(func: _T) -> _T:
        if isinstance(func, commands.Command):
            return commands.check(message_check)(func)
        if isinstance(func, app_commands.Command):
            return app_commands.check(interaction_check)(func)
        if _is_component_callback(func):
            return _gated_component(func, component_check)
        if _may_be_clicked(func):
            func = _gated_clicks(func, component_check)
        both = app_commands.check(interaction_check)(func)
        return commands.check(message_check)(both)

    return decorate


#: discord.py's item classes a View callback receives as its last argument.
_ITEM_NAMES = frozenset(
    {
        "Item",
        "Button",
        "Select",
        "UserSelect",
        "RoleSelect",
        "MentionableSelect",
        "ChannelSelect",
        "DynamicItem",
    }
)


def _is_component_callback(func: object) -> bool:
    """Whether ``func`` is a View item's callback ``(self, interaction, item)``: decorated
    ``@discord.ui.button`` / ``@discord.ui.select`` already (``requires`` above it), or
    with its last parameter annotated as a ``discord.ui`` item (``requires`` under it)."""
    if hasattr(func, "__discord_ui_model_type__"):
        return True
    if not callable(func):
        return False
    params = list(inspect.signature(func).parameters.values())
    if len(params) != 3:
        return False
    hint = params[-1].annotation
    hint = get_origin(hint) or hint  # discord.ui.Button[MyView]: discord.ui.Button
    if isinstance(hint, type):
        return issubclass(hint, discord.ui.Item)
    # A string annotation (``from __future__ import annotations``): its class name.
    return isinstance(hint, str) and hint.split("[")[0].rsplit(".", 1)[-1] in _ITEM_NAMES


def _may_be_clicked(func: object) -> bool:
    """Whether ``func`` may be a View item's callback with nothing yet to say so: a method
    ``(self, interaction, item)`` with no annotation on the item (``@discord.ui.button``
    comes later, above ``requires``), or an item's own ``callback(self, interaction)``.

    A command may look the same; :func:`_gated_clicks` lets its calls through untouched.
    No application command's parameters are resolved through the wrapper: such a method
    has none to resolve (discord.py refuses an unannotated one).
    """
    qualname = getattr(func, "__qualname__", "")
    owner = qualname.rpartition(".")[0]
    if not callable(func) or not owner or owner.endswith("<locals>"):
        return False  # not defined in a class body
    params = list(inspect.signature(func).parameters.values())
    return len(params) == 2 or (len(params) == 3 and params[2].annotation is params[2].empty)


def _gated_clicks(
    func: _T, check: Callable[[discord.Interaction[Any], str], Awaitable[bool]]
) -> _T:
    """``func`` judged by ``check`` when a click calls it (its interaction is a component
    one); a command's call (a ``Context``, an application command's interaction) passes
    untouched, judged once by the command's own checks."""
    callback: Callable[..., Awaitable[Any]] = func  # type: ignore[assignment]  # checked above
    name = getattr(func, "__qualname__", "component")

    @functools.wraps(callback)
    async def run(*args: Any, **kwargs: Any) -> Any:
        interaction = args[1] if len(args) > 1 else None
        if (
            isinstance(interaction, discord.Interaction)
            and interaction.type is discord.InteractionType.component
            and not await check(interaction, name)
        ):
            return None
        return await callback(*args, **kwargs)

    return run  # type: ignore[return-value]  # the same callback, gated for clicks


def _gated_component(
    func: _T, check: Callable[[discord.Interaction[Any], str], Awaitable[bool]]
) -> _T:
    """``func`` (a View item's callback) run only when ``check`` passes for the clicker; the
    discord.ui decorator's marks, above or below, stay on the wrapper."""
    callback: Callable[..., Awaitable[Any]] = func  # type: ignore[assignment]  # checked above
    name = getattr(func, "__qualname__", "component")

    @functools.wraps(callback)
    async def run(view: Any, interaction: discord.Interaction[Any], item: Any) -> Any:
        if not await check(interaction, name):
            return None
        return await callback(view, interaction, item)

    return run  # type: ignore[return-value]  # the same callback, gated

"""A running Discord bot: a ``discord.Client`` gateway session feeding the host's bus.

The runner is a transport: messages and interactions are normalised by
:func:`~actorscope.channels.discord.inspect_message` / ``inspect_interaction`` and handed to the
channel's :class:`~actorscope.channels.Pipeline` (dedup, admission, shared claim);
``!addwriter`` / ``!removewriter`` / ``!writers`` and the slash commands of the same names are
answered there; everything else is published. Replies go to the message's channel, or its
thread, with their buttons (a ``discord.ui.View``), files and image embeds. Other slash commands
and component clicks are acknowledged at once (deferred) and the handler's reply is sent as the
follow-up; a click's ``custom_id`` is in ``metadata["callback_data"]``.

With :class:`~actorscope.channels.discord._shards.DiscordShards` the runner's client is a
``discord.AutoShardedClient`` running those shards; with a
:class:`~actorscope.channels._shared_dedup.SharedDedup` an admitted event is also claimed in the
shared store by the pipeline, so a worker whose claim loses (another worker got the event)
drops it.

**Message content intent.** The client asks for ``Intents.message_content``, which must also be
enabled for the bot in the Developer Portal (Bot → Privileged Gateway Intents). Without it
Discord sends guild messages that do not mention the bot with empty text, so ``!`` commands
only work as ``@bot !addwriter @user``; slash commands and DMs work either way.
"""

from __future__ import annotations

import asyncio
import io
import logging
from collections import OrderedDict
from collections.abc import Callable
from html.parser import HTMLParser
from typing import Any

import aiohttp
import discord
import discord.http
import yarl
from discord import app_commands
from discord.gateway import DiscordWebSocket

from actorscope.channels._adapter import ChannelAdapter
from actorscope.channels._base import Ingress, Outcome
from actorscope.channels._pipeline import Pipeline
from actorscope.channels._shared_dedup import SharedDedup
from actorscope.channels._writer_commands import WriterCommand
from actorscope.channels.discord._commands import (
    WriterTarget,
    handle_discord_writer_command,
    member_manages_guild,
    mention_target,
    user_target,
)
from actorscope.channels.discord._interactions import inspect_interaction
from actorscope.channels.discord._normalize import inspect_message
from actorscope.channels.discord._shards import DiscordShards
from actorscope.errors import ConfigError, ReplyError
from actorscope.identity import Identity
from actorscope.messages import (
    Button,
    InboundMessage,
    OutboundMessage,
    RunRequest,
)

__all__ = [
    "MAX_BUTTONS_PER_ROW",
    "MAX_BUTTON_ROWS",
    "MAX_CUSTOM_ID_LENGTH",
    "NOT_TAKING_COMMANDS",
    "WRITER_DESCRIPTIONS",
    "DiscordRunner",
    "ResultListener",
    "RunnerClient",
    "ShardedRunnerClient",
    "bot_intents",
    "button_view",
    "send_outbound",
    "send_text",
    "silence_voice_warnings",
]

_log = logging.getLogger("actorscope.channels.discord")
#: discord.py's own REST base, before any proxy.
_DISCORD_API = discord.http.Route.BASE

#: Told the pipeline's result for every message and interaction the runner took in.
ResultListener = Callable[[Ingress], None]

_MAX_MESSAGE_LENGTH = 2000
#: Discord's limits for a message's buttons: a custom id's length, buttons per row, rows.
MAX_CUSTOM_ID_LENGTH = 100
MAX_BUTTONS_PER_ROW = 5
MAX_BUTTON_ROWS = 5
_MAX_LABEL_LENGTH = 80
_MAX_FILES = 10
# What a bot may upload to a server without boosts.
_UPLOAD_LIMIT = 10 * 1024 * 1024
_STOP_TIMEOUT = 10.0
# Interactions the handler's replies follow up (oldest forgotten first); tokens expire after
# 15 minutes anyway.
_MAX_PENDING = 256
#: What Discord shows for the writer slash commands.
WRITER_DESCRIPTIONS = {
    WriterCommand.ADD: "Let a member write this server's files",
    WriterCommand.REMOVE: "Stop a member writing this server's files",
    WriterCommand.LIST: "List who may write this server's files",
}
#: The answer to a writer slash command where the bot takes no commands (not admitted).
NOT_TAKING_COMMANDS = "this bot does not take commands here"


# What discord.client logs (at WARNING, once per process) when a voice library is missing.
_VOICE_WARNINGS = frozenset(
    {
        "PyNaCl is not installed, voice will NOT be supported",
        "davey is not installed, voice will NOT be supported",
    }
)


class _NoVoiceWarnings(logging.Filter):
    """Drops discord.py's "voice will NOT be supported" warnings, and only those."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.levelno == logging.WARNING and record.msg in _VOICE_WARNINGS)


def silence_voice_warnings() -> None:
    """Filter discord.py's missing-voice-library warnings: a text bot never needs voice."""
    logger = logging.getLogger("discord.client")
    if not any(isinstance(f, _NoVoiceWarnings) for f in logger.filters):
        logger.addFilter(_NoVoiceWarnings())


def bot_intents() -> discord.Intents:
    """Default intents plus the privileged message-content intent (see the module docstring)."""
    intents = discord.Intents.default()
    intents.message_content = True
    return intents


def button_view(rows: tuple[tuple[Button, ...], ...]) -> discord.ui.View | None:
    """The Discord components of a reply's buttons (``None`` without any).

    :class:`ReplyError` past Discord's limits: 5 rows of 5 buttons, an 80-character label, a
    100-character custom id, each custom id once per message. The view is stopped at once:
    discord.py never dispatches it; clicks come back through the runner's interaction path.
    """
    if not rows:
        return None
    if len(rows) > MAX_BUTTON_ROWS:
        raise ReplyError(f"Discord allows {MAX_BUTTON_ROWS} rows of buttons, this has {len(rows)}")
    view = discord.ui.View(timeout=None)
    used: set[str] = set()
    for index, row in enumerate(rows):
        if len(row) > MAX_BUTTONS_PER_ROW:
            raise ReplyError(
                f"button row {index + 1}: Discord allows {MAX_BUTTONS_PER_ROW} buttons per row, "
                f"this has {len(row)}"
            )
        for button in row:
            label = button.text[:40]
            if len(button.text) > _MAX_LABEL_LENGTH:
                raise ReplyError(
                    f"button {label!r}: Discord allows {_MAX_LABEL_LENGTH} characters of text"
                )
            if button.url:
                view.add_item(discord.ui.Button(label=button.text, url=button.url, row=index))
                continue
            if len(button.data) > MAX_CUSTOM_ID_LENGTH:
                raise ReplyError(
                    f"button {label!r}: Discord allows {MAX_CUSTOM_ID_LENGTH} characters of "
                    f"custom id, this has {len(button.data)}"
                )
            if button.data in used:
                raise ReplyError(f"button {label!r}: Discord needs each button's data once")
            used.add(button.data)
            view.add_item(discord.ui.Button(label=button.text, custom_id=button.data, row=index))
    view.stop()
    return view


class _TextOf(HTMLParser):
    """The text of an HTML fragment (Discord renders no HTML)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def _discord_text(msg: OutboundMessage) -> str:
    """The reply's text as Discord shows it: Markdown as is, HTML without its tags."""
    if msg.format != "html":
        return msg.content
    parser = _TextOf()
    parser.feed(msg.content)
    parser.close()
    return "".join(parser.parts)


def _attachments(msg: OutboundMessage) -> tuple[dict[str, Any], list[str]]:
    """The files and image embeds of a reply (send keywords), and links to add to its text.

    Reads the files: call it off the event loop.
    """
    extras: dict[str, Any] = {}
    files, embeds, links = [], [], []
    for item in msg.media:
        if item.path is not None:
            content = item.read(limit=_UPLOAD_LIMIT)
            files.append(discord.File(io.BytesIO(content), filename=item.name))
        elif item.kind == "photo":
            embeds.append(discord.Embed().set_image(url=item.url))
        else:
            links.append(item.url)
    if len(files) > _MAX_FILES or len(embeds) > _MAX_FILES:
        raise ReplyError(f"Discord allows {_MAX_FILES} files and {_MAX_FILES} images a message")
    for key, value in (("files", files), ("embeds", embeds)):
        if value:
            extras[key] = value
    return extras, links


async def send_outbound(
    client: discord.Client, msg: OutboundMessage, interaction: discord.Interaction[Any] | None
) -> None:
    """Send ``msg`` as ``interaction``'s answer (or follow-up, once deferred) when given, else
    to its channel or thread, replying to the message it names.

    The text goes in parts of 2000 characters; files, image embeds and buttons go with the
    last part. Buttons and files are checked before anything is sent (:class:`ReplyError`).
    The one way actorscope sends a reply on Discord (the runner, the discord.py Cog).
    """
    view = button_view(msg.buttons)  # checked first: a refused button reads no file
    # Files are read off the event loop; a reply without media makes no thread hop.
    extras, links = await asyncio.to_thread(_attachments, msg) if msg.media else ({}, [])
    if view is not None:
        extras["view"] = view
    text = "\n".join([_discord_text(msg), *links]).strip("\n")
    parts = _parts(text, bool(extras))
    last = len(parts) - 1
    if interaction is not None:
        for index, part in enumerate(parts):
            more = extras if index == last else {}
            if interaction.response.is_done():
                await interaction.followup.send(part or "", **more)
            else:  # a writer slash command: answered, not deferred
                await interaction.response.send_message(part, **more)
        return
    await _send_parts(client, msg.thread_id or msg.chat_id, msg.reply_to_message_id, parts, extras)


async def send_text(client: discord.Client, source: InboundMessage | RunRequest, text: str) -> None:
    """Send ``text`` as a plain reply to ``source`` in its channel or thread: what
    ``send_outbound`` sends for ``OutboundMessage.reply_to(source, text)`` without an
    interaction, without building that message."""
    parts = _parts(text.strip("\n"), False)
    await _send_parts(client, source.thread_id or source.chat_id, source.message_id, parts, {})


def _parts(text: str, extras: bool) -> list[str | None]:
    # The text in parts of 2000 characters; an empty one is a zero-width space, or nothing
    # when files, embeds or buttons go with it.
    return [
        text[i : i + _MAX_MESSAGE_LENGTH] for i in range(0, len(text), _MAX_MESSAGE_LENGTH)
    ] or [None if extras else "\u200b"]


async def _send_parts(
    client: discord.Client,
    channel_id: str,
    reply_to: str,
    parts: list[str | None],
    extras: dict[str, Any],
) -> None:
    # To the channel or thread, the first part replying to ``reply_to`` (when it is an id),
    # the extras with the last.
    target = int(channel_id)
    # Sending needs only the id: a partial messageable costs no fetch for an uncached channel
    # (a DM, a new thread) and no walk over every guild, as get_channel does per reply.
    channel = client.get_partial_messageable(target)
    reference = None
    if reply_to.isdigit():
        reference = discord.MessageReference(
            message_id=int(reply_to), channel_id=target, fail_if_not_exists=False
        )
    last = len(parts) - 1
    for index, part in enumerate(parts):
        more = extras if index == last else {}
        if index == 0 and reference is not None:
            await channel.send(part, reference=reference, **more)
        else:
            await channel.send(part, **more)


class RunnerClient(discord.Client):
    """The ``discord.Client`` of a :class:`DiscordRunner`: forwards events to it."""

    def __init__(self, runner: DiscordRunner, *, sync_commands: bool, **options: Any) -> None:
        silence_voice_warnings()
        super().__init__(intents=bot_intents(), **options)
        self.runner = runner
        self.sync_commands = sync_commands
        self.tree: app_commands.CommandTree[RunnerClient] = _WriterTree(self)

    async def setup_hook(self) -> None:
        """Register the writer slash commands with Discord (once per start)."""
        if self.sync_commands:
            await self.tree.sync()

    async def on_message(self, message: discord.Message) -> None:
        """Route a message through the runner."""
        await self.runner.handle_message(message)

    async def on_interaction(self, interaction: discord.Interaction[Any]) -> None:
        """Route an interaction that is not a writer slash command through the runner."""
        await self.runner.handle_interaction(interaction)


class ShardedRunnerClient(RunnerClient, discord.AutoShardedClient):
    """The runner's client as a ``discord.AutoShardedClient`` running the configured shards."""

    def __init__(
        self, runner: DiscordRunner, *, sync_commands: bool, shards: DiscordShards
    ) -> None:
        super().__init__(runner, sync_commands=sync_commands, **shards.client_options())
        self._login_started = False

    async def login(self, token: str) -> None:
        """Log in (discord.py prepares what its sharded close() needs as login begins)."""
        self._login_started = True
        await super().login(token)

    async def close(self) -> None:
        """Close; a client that never began to log in holds no connection, so it is left as is.

        discord.py's sharded close() fails on a client that never logged in.
        """
        if self._login_started:
            await super().close()


class _WriterTree(app_commands.CommandTree["RunnerClient"]):
    def __init__(self, client: RunnerClient) -> None:
        super().__init__(client)
        runner = client.runner

        @self.command(
            name=WriterCommand.ADD.value, description=WRITER_DESCRIPTIONS[WriterCommand.ADD]
        )
        async def addwriter(interaction: discord.Interaction[Any], user: discord.User) -> None:
            await runner.writer_interaction(interaction, WriterCommand.ADD, user_target(user))

        @self.command(
            name=WriterCommand.REMOVE.value, description=WRITER_DESCRIPTIONS[WriterCommand.REMOVE]
        )
        async def removewriter(interaction: discord.Interaction[Any], user: discord.User) -> None:
            await runner.writer_interaction(interaction, WriterCommand.REMOVE, user_target(user))

        @self.command(
            name=WriterCommand.LIST.value, description=WRITER_DESCRIPTIONS[WriterCommand.LIST]
        )
        async def writers(interaction: discord.Interaction[Any]) -> None:
            await runner.writer_interaction(interaction, WriterCommand.LIST, None)

    async def on_error(
        self, interaction: discord.Interaction[Any], error: app_commands.AppCommandError, /
    ) -> None:
        # Other slash commands are the handler's (via on_interaction), not this tree's.
        if not isinstance(error, app_commands.CommandNotFound):
            _log.error("discord.command_failed: %r", error, exc_info=error)


class DiscordRunner(ChannelAdapter):
    """One Discord bot session feeding ``pipeline`` (a Discord channel's, from the
    composition root); also the sender of the bot's replies."""

    def __init__(
        self,
        pipeline: Pipeline,
        *,
        token: str,
        sync_commands: bool = True,
        shards: DiscordShards | None = None,
        on_result: ResultListener | None = None,
        api_url: str | None = None,
        gateway_url: str | None = None,
    ) -> None:
        config = pipeline.config
        if config.platform != "discord":
            raise ConfigError(f"a Discord runner needs a discord config, not {config.platform}")
        if (api_url is None) != (gateway_url is None):
            raise ConfigError("a Discord proxy needs both api_url and gateway_url")
        self.name = config.name
        self._proxy = None if api_url is None or gateway_url is None else (api_url, gateway_url)
        self._pointed: tuple[str, yarl.URL] | None = None
        self.config = config
        self._token = token
        self.client: RunnerClient = (
            RunnerClient(self, sync_commands=sync_commands)
            if shards is None
            else ShardedRunnerClient(self, sync_commands=sync_commands, shards=shards)
        )
        self.pipeline = pipeline
        self.writers = pipeline.writers
        self._on_result = on_result
        self._pending: OrderedDict[str, discord.Interaction[Any]] = OrderedDict()
        self._session: asyncio.Task[None] | None = None

    @property
    def shared_dedup(self) -> SharedDedup | None:
        """The pipeline's shared claim store, if any."""
        return self.pipeline.shared_dedup

    @property
    def native(self) -> RunnerClient:
        """The ``discord.Client``: what a handler's ``BotServices.native(discord.Client)``
        gives."""
        return self.client

    @property
    def bot_id(self) -> int | None:
        """The bot's user id, once logged in."""
        user = self.client.user
        return user.id if user is not None else None

    def _point_at_proxy(self) -> None:
        """Send discord.py's REST calls and gateway sessions to the configured proxy.

        discord.py reads both from class attributes, so this holds for every client in the
        process until :meth:`stop` puts them back (one proxied runner per process).
        """
        if self._proxy is None:
            return
        api_url, gateway_url = self._proxy
        if discord.http.Route.BASE not in (_DISCORD_API, api_url):
            raise ConfigError(
                f"{self.name}: this process already sends Discord calls to "
                f"{discord.http.Route.BASE}; one Discord proxy per process"
            )
        self._pointed = (discord.http.Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY)
        discord.http.Route.BASE = api_url
        DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(gateway_url)

    def _unpoint(self) -> None:
        if self._pointed is not None:
            discord.http.Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY = self._pointed
            self._pointed = None

    async def start(self) -> None:
        """Log in and open the gateway session in a background task."""
        if self._session is not None:
            raise ConfigError("this Discord runner is already running")
        self._point_at_proxy()
        try:
            await self.client.login(self._token)
        except discord.LoginFailure as exc:
            await self.client.close()
            self._unpoint()
            raise ConfigError(f"{self.name}: the bot token was rejected: {exc}") from None
        except (discord.HTTPException, aiohttp.ClientError, OSError) as exc:
            await self.client.close()
            self._unpoint()
            raise ConfigError(f"{self.name}: cannot reach Discord: {exc}") from None
        self._session = asyncio.create_task(self.client.connect(), name="actorscope-discord")
        self._session.add_done_callback(self._session_ended)

    def _session_ended(self, task: asyncio.Task[None]) -> None:
        if task.cancelled() or task.exception() is None:
            return
        error = task.exception()
        if isinstance(error, discord.PrivilegedIntentsRequired):
            _log.error(
                "discord.session_failed: enable the Message Content intent for this bot in "
                "the Developer Portal (Bot -> Privileged Gateway Intents)"
            )
        else:
            _log.error("discord.session_failed: %r", error)

    async def stop(self) -> None:
        """Close the session; bounded."""
        session, self._session = self._session, None
        try:
            await asyncio.wait_for(self.client.close(), _STOP_TIMEOUT)
        except TimeoutError:
            _log.warning("discord.close timed out")
        if session is not None:
            if not session.done():
                session.cancel()
            await asyncio.wait({session}, timeout=_STOP_TIMEOUT)
        self._unpoint()

    async def send(self, msg: OutboundMessage) -> None:
        """Follow up a pending interaction, or send to the channel or thread.

        The interaction stays pending after its first reply: every reply to it (a handler may
        return several) is its follow-up, never a channel message replying to the
        interaction's id as if it were a message's.
        """
        interaction = self._pending.get(msg.reply_to_message_id)
        await send_outbound(self.client, msg, interaction)

    async def send_text(self, source: InboundMessage | RunRequest, text: str) -> None:
        """A plain reply to ``source``: the follow-up of its pending interaction, else
        :func:`send_text` to its channel or thread."""
        if source.message_id in self._pending:
            await self.send(OutboundMessage.reply_to(source, text))
        else:
            await send_text(self.client, source, text)

    async def handle_message(self, message: discord.Message) -> Ingress:
        """Normalise one message and take it through the pipeline (the gateway calls this,
        in a task of the event's own: a pipeline with ``run_here`` may run the turn in it)."""
        ingress = inspect_message(
            message,
            agent_key=self.pipeline.agent_key,
            bot_id=self.bot_id,
            ignore_bots=self.pipeline.normaliser_drops_non_persons,
        )

        async def run_command(command: WriterCommand, identity: Identity) -> str:
            target = mention_target(message.mentions) if command is not WriterCommand.LIST else None
            return await handle_discord_writer_command(
                self.writers,
                command,
                identity,
                target=target,
                manage_guild=member_manages_guild(message.author),
                agent_id=identity.agent_id,
                tenant_id=identity.tenant_id,
            )

        bot_id = str(self.bot_id) if self.bot_id is not None else None
        return self._told(
            await self.pipeline.process(
                ingress,
                bot_id=bot_id,
                run_command=run_command,
                command_prefixes="!",
                sender=self,
                own_task=True,
            )
        )

    async def handle_interaction(self, interaction: discord.Interaction[Any]) -> Ingress | None:
        """Defer and publish an interaction that is not a writer slash command (in its own
        task, as :meth:`handle_message`)."""
        data: dict[str, Any] = dict(interaction.data or {})
        if interaction.type is discord.InteractionType.application_command and (
            WriterCommand.named(str(data.get("name", ""))) is not None
        ):
            return None  # the command tree answers these
        ingress = inspect_interaction(interaction, agent_key=self.pipeline.agent_key)

        async def defer() -> None:
            await interaction.response.defer()
            self._remember(interaction)

        return self._told(
            await self.pipeline.process(ingress, acknowledge=defer, sender=self, own_task=True)
        )

    async def writer_interaction(
        self,
        interaction: discord.Interaction[Any],
        command: WriterCommand,
        target: WriterTarget | None,
    ) -> Ingress:
        """Answer a writer slash command (the tree calls this) through the pipeline."""
        ingress = inspect_interaction(interaction, agent_key=self.pipeline.agent_key)
        manage_guild = interaction.guild_id is not None and interaction.permissions.manage_guild

        async def run_command(command: WriterCommand, identity: Identity) -> str:
            self._remember(interaction)  # the answer is this interaction's response
            return await handle_discord_writer_command(
                self.writers,
                command,
                identity,
                target=target,
                manage_guild=manage_guild,
                agent_id=identity.agent_id,
                tenant_id=identity.tenant_id,
            )

        result = await self.pipeline.process(ingress, run_command=run_command, sender=self)
        if result.outcome is Outcome.IGNORED:
            await interaction.response.send_message(NOT_TAKING_COMMANDS)
        return self._told(result)

    def _told(self, result: Ingress) -> Ingress:
        if self._on_result is not None:
            self._on_result(result)
        return result

    def _remember(self, interaction: discord.Interaction[Any]) -> None:
        """Keep ``interaction`` for the reply that names its id (bounded)."""
        self._pending[str(interaction.id)] = interaction
        while len(self._pending) > _MAX_PENDING:
            self._pending.popitem(last=False)

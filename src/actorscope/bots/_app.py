"""Running the configured bots: database, agent, host, channel runners, clean shutdown.

:func:`run_bots` opens the database, finds (or creates) the agent, starts a
:class:`~actorscope.host.Host` with the user's handler and one runner per enabled platform, and
runs until ``stop`` is set (SIGINT / SIGTERM set it when ``handle_signals``). In sandbox mode
the Telegram runner talks to a Bot API emulator on 127.0.0.1 and a prompt lets you type as
users; the session ends with the prompt (``/quit`` or end of input) too. With ``[discord]``
enabled, the Discord runner connects to a Discord emulator on 127.0.0.1 as well (through
:func:`~actorscope.sandbox.discord_pointed_at`), and the same prompt types as its guild
members after ``/discord`` (``/telegram`` switches back; ``/discord LINE`` sends one line).

Outside the sandbox each enabled section runs on the runner its platform's contract builds
(:func:`~actorscope.channels.platform`), with the options its section gives (scale-out: a
webhook receiver instead of polling, shards), and with shared dedup (the
``shared_dedup`` key; on by default for PostgreSQL) every runner claims what it handles in the
database, so workers sharing it process each update once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any, Protocol

from actorscope.agents import AgentRegistry
from actorscope.assembly import assemble
from actorscope.bots._config import BotConfig, load_handler, resolve_token
from actorscope.bots._services import BotServices, bind_services
from actorscope.channels import (
    ChannelAdapter,
    ChannelSection,
    IgnoreReason,
    Ingress,
    Pipeline,
    TurnLedger,
    platform,
)
from actorscope.channels.discord import DiscordSection
from actorscope.channels.telegram import IgnoredListener, TelegramSection
from actorscope.errors import StoreError
from actorscope.host import Handler, MessageBus, Reply
from actorscope.messages import RunRequest
from actorscope.permissions import AuditLog, GrantChangeWatcher
from actorscope.platforms import DISCORD, TELEGRAM
from actorscope.sandbox import (
    BotApiEmulator,
    BotApiServer,
    DiscordConsole,
    DiscordEmulator,
    SandboxConsole,
    discord_pointed_at,
    sandbox_world,
)
from actorscope.store import Database

__all__ = [
    "AUDIT_SETTLE",
    "RETENTION_INTERVAL",
    "SHUTDOWN_GRACE",
    "keep_audit",
    "run_bots",
    "with_services",
]

_log = logging.getLogger("actorscope.bots")

#: Seconds the host may spend finishing queued messages at shutdown.
SHUTDOWN_GRACE = 5.0
#: Seconds the sandbox waits for the bot's first poll, and at the end of the input for the
#: bot to fetch what was typed (a stop in the middle of either leaves PTB tracebacks).
_SANDBOX_WAIT = 10.0
Output = Callable[[str], None]


#: Seconds between two prunes of the audit trail by ``[audit] keep`` (at most).
RETENTION_INTERVAL = 3600.0

#: Seconds a turn's reply waits for the audit rows its checks queued (a denial's row is
#: written in the background; a reply must not tell of a decision the trail lost).
AUDIT_SETTLE = 0.5


def with_services(handler: Handler, services: BotServices) -> Handler:
    """``handler`` with the bot's services bound (the run step has bound the identity).

    When it returns, the audit rows its checks queued are written (at most
    :data:`AUDIT_SETTLE` s) before the run step sends its reply: a worker killed right after a
    denial has sent nobody a decision the audit log does not have.
    """

    async def run(request: RunRequest) -> Reply:
        with bind_services(services):
            reply = await handler(request)
        await services.db.settle_audit(AUDIT_SETTLE)
        return reply

    return run


async def keep_audit(db: Database, keep: float, *, interval: float = RETENTION_INTERVAL) -> None:
    """Delete audit rows older than ``keep`` seconds now, then every ``interval`` (or every
    quarter of ``keep`` when that is shorter) until cancelled; a store failure is retried then.

    What ``[audit] keep`` in ``bot.toml`` runs beside the bots. Several workers may each run
    it: every prune deletes in small batches under the write lock, so they take turns.
    """
    log = AuditLog(db)
    while True:
        before = Database.utc_at(time.time() - keep)
        try:
            pruned = await log.prune(before)
        except StoreError as exc:
            _log.warning("audit.prune_failed (tried again later): %s", exc)
        else:
            if pruned:
                _log.info("audit.pruned rows=%d created before %s", pruned, before)
        await asyncio.sleep(min(interval, keep / 4))


def _sections(
    config: BotConfig, env: Mapping[str, str], sandbox: bool, source: str
) -> list[tuple[ChannelSection, str, dict[str, Any]]]:
    """Each section to run, with its token and its runner's options (a webhook's secret
    read), checked before anything starts."""
    if sandbox:
        # The emulators hand out the tokens; Discord runs only when its section is enabled.
        section = config.section("telegram") or TelegramSection()
        discord = [s for s in (config.section("discord"),) if s is not None and s.enabled]
        emulated: list[ChannelSection] = [section, *discord]
        return [(s, "", {}) for s in emulated]
    return [
        (section, resolve_token(section, env, source), section.runner_options(env, source))
        for section in config.sections()
    ]


@dataclass(slots=True)
class _Emulated:
    """The sandbox's emulators: Telegram's (and its base URL) always, Discord's when enabled."""

    telegram: BotApiEmulator
    base_url: str
    discord: DiscordEmulator | None


async def _sandbox(stack: AsyncExitStack, config: BotConfig, out: Output) -> _Emulated:
    """Populated emulators served on 127.0.0.1 until ``stack`` closes."""
    emulator = BotApiEmulator()
    emulator.populate()
    server = await stack.enter_async_context(BotApiServer(emulator))
    out("actorscope run --sandbox: Telegram Bot API emulator (offline)")
    out(f"base_url: {server.base_url}")
    out(f"bot:      @{emulator.bot.username}")
    discord: DiscordEmulator | None = None
    discord_section = config.section("discord")
    if discord_section is not None and discord_section.enabled:
        discord = await stack.enter_async_context(
            DiscordEmulator(sandbox_world(), wait_timeout=_SANDBOX_WAIT)
        )
        # Process-wide until the session ends: the Discord runner's client talks to it.
        stack.enter_context(discord_pointed_at(discord))
        out(f"discord:  gateway + REST emulator on {discord.base_url} (offline)")
        out(f"discord bot: {discord.world.bot.username} (id {discord.world.bot.id})")
    telegram = config.section("telegram")
    if isinstance(telegram, TelegramSection) and telegram.webhook is not None:
        out("webhook:  not used in --sandbox (the emulator is polled)")
    out(_prompt_help(_helps(discord is not None)))
    return _Emulated(emulator, server.base_url, discord)


def _helps(with_discord: bool) -> dict[str, str]:
    """The emulated platforms' console help, by platform."""
    helps = {TELEGRAM: SandboxConsole.help_text()}
    if with_discord:
        helps[DISCORD] = DiscordConsole.help_text()
    return helps


def _runner(
    section: ChannelSection,
    token: str,
    options: dict[str, Any],
    sandbox: _Emulated | None,
    pipeline: Pipeline,
    on_ignored: IgnoredListener | None = None,
    on_result: Callable[[Ingress], None] | None = None,
) -> ChannelAdapter:
    """The section's runner, from its platform's contract; in the sandbox, pointed at the
    built-in platforms' emulators."""
    if sandbox is not None:
        if isinstance(section, DiscordSection):
            # One session sees every guild of the emulator: shards are for real deployments.
            token = sandbox.discord.world.token if sandbox.discord is not None else token
            options = {"on_result": on_result}
        else:
            token = sandbox.telegram.token
            options = {"base_url": sandbox.base_url, "poll_timeout": 1, "on_ignored": on_ignored}
    return platform(section.platform).runner(pipeline, token=token, **options)


def _prompt_help(helps: Mapping[str, str]) -> str:
    """The sandbox prompt's help: each emulated platform's console help, after how to switch
    between them when there are several."""
    if len(helps) == 1:
        return next(iter(helps.values()))
    first = next(iter(helps))
    names = ", ".join(f"/{name}" for name in helps)
    lines = [
        f"one prompt, {len(helps)} platforms: lines go to {first} until you switch",
        f"  /PLATFORM             type on PLATFORM from now on ({names})",
        "  /PLATFORM LINE        one line on PLATFORM",
        "  /help                 this help",
    ]
    for name, text in helps.items():
        lines += [f"{name}:", text]
    return "\n".join(lines)


class _Taken:
    """The Discord runner's results, so the prompt waits until the bot has taken an event in.

    The prompt sends one event at a time and waits here, so the first result that is not the
    bot's own message belongs to it (a result without a message, such as a webhook's, too).
    """

    def __init__(self, out: Output) -> None:
        self._out = out
        self._results: asyncio.Queue[Ingress] = asyncio.Queue()

    def told(self, result: Ingress) -> None:
        """The runner's listener: every event's result."""
        if result.reason is not IgnoreReason.OWN_MESSAGE:
            self._results.put_nowait(result)

    async def settle(self, event_id: int) -> None:
        """Wait (bounded) for the result of event ``event_id``; say when the bot ignored it."""
        try:
            result = await asyncio.wait_for(self._match(str(event_id)), _SANDBOX_WAIT)
        except TimeoutError:
            _log.warning("sandbox: the Discord bot has not taken event %s in", event_id)
            return
        if result.reason is not None:
            self._out(f"  <- discord event {event_id} ignored by the bot: {result.reason}")

    async def _match(self, event_id: str) -> Ingress:
        # Bounded by settle's timeout; an earlier event's late result is skipped.
        while True:
            result = await self._results.get()
            if result.message is None or result.message.message_id == event_id:
                return result


class _Console(Protocol):
    """What the sandbox prompt asks of a platform's console."""

    @property
    def speaking(self) -> bool:
        """Whether someone speaks there yet."""
        ...

    def here(self) -> str:
        """Who speaks where."""
        ...

    async def handle(self, line: str) -> bool:
        """Act on one line; ``False`` when the session should end."""
        ...


class _Prompt:
    """The sandbox prompt: one console per emulated platform, by name. Lines go to the first
    until ``/<platform>`` switches; ``/<platform> LINE`` sends one line there."""

    def __init__(self, consoles: Mapping[str, _Console], help_text: str, out: Output) -> None:
        self._consoles = dict(consoles)
        self._help = help_text
        self._out = out
        self._current = next(iter(self._consoles))

    async def handle(self, line: str) -> bool:
        """Run one line; ``False`` when the session should end."""
        if len(self._consoles) == 1:
            return await self._consoles[self._current].handle(line)
        command, _, rest = line.strip().partition(" ")
        if command == "/help":
            self._out(self._help)
            return True
        console = self._consoles.get(command[1:]) if command.startswith("/") else None
        if console is None:
            return await self._consoles[self._current].handle(line)
        if rest.strip():
            return await console.handle(rest)
        self._current = command[1:]
        where = console.here() if console.speaking else "use /as to say who you are"
        self._out(f"now typing on {self._current} ({where})")
        return True


async def _run_prompt(prompt: _Prompt, lines: AsyncIterator[str]) -> None:
    """Feed ``lines`` to the prompt until ``/quit`` or the end of the input."""
    async for line in lines:
        if not await prompt.handle(line):
            break


async def _cancelled(task: asyncio.Task[None]) -> None:
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def _bounded(waiting: Coroutine[Any, Any, None], late: str) -> None:
    """Wait for a sandbox milestone, at most ``_SANDBOX_WAIT`` seconds (then log ``late``)."""
    try:
        await asyncio.wait_for(waiting, _SANDBOX_WAIT)
    except TimeoutError:
        _log.warning("sandbox: %s after %gs", late, _SANDBOX_WAIT)


async def _discord_ready(emulator: DiscordEmulator) -> None:
    """The runner's gateway session is open and its writer slash commands are synced."""
    await emulator.wait_connected()
    await emulator.wait_for(lambda: emulator.commands.get(None))


async def _wait(stop: asyncio.Event, console: asyncio.Task[None] | None) -> None:
    waiters: set[asyncio.Task[Any]] = {asyncio.create_task(stop.wait())}
    if console is not None:
        waiters.add(console)
    _, pending = await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        if task is not console:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


async def run_bots(
    config: BotConfig,
    *,
    sandbox: bool = False,
    env: Mapping[str, str] | None = None,
    out: Output = print,
    lines: AsyncIterator[str] | None = None,
    stop: asyncio.Event | None = None,
    handle_signals: bool = True,
    source: str = "",
) -> None:
    """Run until ``stop`` is set, a signal arrives, or (sandbox) the prompt ends."""
    env = os.environ if env is None else env
    sections = _sections(config, env, sandbox, source)
    handler = load_handler(config.handler, config.base_dir)
    stop = stop if stop is not None else asyncio.Event()
    loop = asyncio.get_running_loop()
    async with AsyncExitStack() as stack:
        signals = (signal.SIGINT, signal.SIGTERM) if handle_signals else ()
        for sig in signals:
            loop.add_signal_handler(sig, stop.set)
            stack.callback(loop.remove_signal_handler, sig)
        db = await stack.enter_async_context(Database.open(config.database))
        assembly = await assemble(db, config.agent_settings())
        # `actorscope grants remove` from another shell must reach this process's cache.
        await stack.enter_async_context(GrantChangeWatcher(assembly.grants))
        if config.audit is not None and config.audit.keep is not None:
            retention = asyncio.create_task(keep_audit(db, config.audit.keep))
            stack.push_async_callback(_cancelled, retention)
        # Renaming or removing an agent in this process moves or archives its files.
        AgentRegistry(db).subscribe(assembly.workspace.on_agent_changed)
        bus = MessageBus()
        # A claim is a lease until its turn is over: a worker that dies mid-turn loses nothing.
        ledger = await stack.enter_async_context(TurnLedger(assembly.shared_dedup))
        emulated = await _sandbox(stack, config, out) if sandbox else None
        console = (
            None if emulated is None else SandboxConsole(emulated.telegram, out, wait_for_bot=True)
        )
        if console is not None:
            stack.callback(console.close)  # after the drain below: its replies are shown
        taken = _Taken(out) if emulated is not None and emulated.discord is not None else None
        guild_console = None
        if emulated is not None and emulated.discord is not None and taken is not None:
            guild_console = DiscordConsole(emulated.discord, out, settle=taken.settle)
            stack.callback(guild_console.close)
        shown = None if console is None else console.show_ignored
        told = None if taken is None else taken.told
        runners = [
            _runner(
                section,
                token,
                options,
                emulated,
                assembly.pipeline(
                    section.config,
                    publish=bus.publish_from_channel,
                    run_here=bus.run_from_channel,
                    ledger=ledger,
                ),
                shown,
                told,
            )
            for section, token, options in sections
        ]
        # The handler reaches each channel's native bot object through its services.
        services = BotServices.of(assembly, {runner.name: runner for runner in runners})
        host = assembly.host(with_services(handler, services), bus=bus, on_done=ledger.finish)
        for runner in runners:
            host.add_sender(runner.name, runner)
        await host.start()
        # Shutdown runs in reverse: stop receiving, drain the host (its replies still go
        # out through the runners), then close the runners.
        for runner in runners:
            stack.push_async_callback(runner.stop)
        stack.push_async_callback(host.stop, drain=True, grace=SHUTDOWN_GRACE)
        for runner in runners:
            stack.push_async_callback(runner.stop_receiving)
            await runner.start()  # a refused token is its one ConfigError
        console_task: asyncio.Task[None] | None = None
        if emulated is not None and console is not None:
            await _bounded(
                emulated.telegram.queue.first_poll(), "the bot has not polled the emulator"
            )
            if emulated.discord is not None:
                await _bounded(
                    _discord_ready(emulated.discord), "the Discord bot has not connected"
                )
            if lines is not None:
                consoles: dict[str, _Console] = {TELEGRAM: console}
                if guild_console is not None:
                    consoles[DISCORD] = guild_console
                helps = _prompt_help(_helps(guild_console is not None))
                prompt = _Prompt(consoles, helps, out)
                console_task = asyncio.create_task(_run_prompt(prompt, lines))
        for runner in runners:
            status = runner.status()  # what its platform tells the operator (a webhook's URL)
            if status:
                out(f"{runner.name}: {status}")
        names = ", ".join(f"{r.name}" for r in runners)
        out(f"running agent {assembly.agent.key!r} on {names}; Ctrl-C to stop")
        try:
            await _wait(stop, console_task)
            if emulated is not None and console_task is not None and console_task.done():
                await _bounded(emulated.telegram.queue.fetched(), "the bot left updates unfetched")
            if console_task is not None and console_task.done():
                # The prompt's input (a test's script) failed: the caller sees why, after
                # the shutdown, instead of a session that ended early without a word.
                console_task.result()
        finally:
            # A second SIGINT / SIGTERM during the (bounded) shutdown acts at once, as usual.
            for sig in signals:
                loop.remove_signal_handler(sig)
            if console_task is not None and not console_task.done():
                console_task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await console_task
        out("stopping")
    out("stopped")

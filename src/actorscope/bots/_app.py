"""Running the configured bots: database, agent, host, channel runners, clean shutdown.

:func:`run_bots` opens the database, assembles the agent (the composition root; ``actorscope
serve`` passes the assembly it already made instead), starts a
:class:`~actorscope.host.Host` with the user's handler and one runner per enabled platform, and
runs until ``stop`` is set (SIGINT / SIGTERM set it when ``handle_signals``). In sandbox mode
each enabled section whose platform's contract names a sandbox
(:func:`~actorscope.sandbox.platform_sandbox`) runs against that platform's emulator on
127.0.0.1 (when the file enables none, the first registered platform with a sandbox does),
and one prompt types as people there: lines go to the first platform's console until
``/<platform>`` switches, ``/<platform> LINE`` sends one line; the session ends with the
prompt (``/quit`` or end of input) too.

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
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AsyncExitStack
from typing import Any

from actorscope.agents import AgentRegistry
from actorscope.assembly import Assembly, assemble
from actorscope.bots._config import BotConfig, load_handler, resolve_token
from actorscope.bots._services import BotServices
from actorscope.channels import (
    ChannelAdapter,
    ChannelSection,
    Pipeline,
    platform,
)
from actorscope.errors import ConfigError, StoreError
from actorscope.host import MessageBus
from actorscope.permissions import AuditLog
from actorscope.platforms import platform_specs
from actorscope.sandbox import Console, Sandbox, SandboxSession, platform_sandbox
from actorscope.store import Database

__all__ = [
    "RETENTION_INTERVAL",
    "SHUTDOWN_GRACE",
    "keep_audit",
    "run_bots",
]

_log = logging.getLogger("actorscope.bots")

#: Seconds the host may spend finishing queued messages at shutdown.
SHUTDOWN_GRACE = 5.0
Output = Callable[[str], None]


#: Seconds between two prunes of the audit trail by ``[audit] keep`` (at most).
RETENTION_INTERVAL = 3600.0


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
    config: BotConfig, env: Mapping[str, str], source: str
) -> list[tuple[ChannelSection, str, dict[str, Any]]]:
    """Each enabled section, with its token and its runner's options (a webhook's secret
    read), checked before anything starts."""
    return [
        (section, resolve_token(section, env, source), section.runner_options(env, source))
        for section in config.sections()
    ]


def _sandboxed(config: BotConfig) -> tuple[list[tuple[ChannelSection, Sandbox]], list[str]]:
    """Each enabled section whose platform has a sandbox, with it, and the names of the
    enabled ones without (not run in the sandbox). When the file enables none with a sandbox,
    the registry's first platform that has one (the built-in ones come first), on the file's
    section of it or that section's defaults."""
    found: list[tuple[ChannelSection, Sandbox]] = []
    without: list[str] = []
    for section in config.sections():
        sandbox = platform_sandbox(section.platform)
        if sandbox is None:
            without.append(section.platform)
        else:
            found.append((section, sandbox))
    if found:
        return found, without
    for spec in platform_specs():
        sandbox = platform_sandbox(spec.name)
        if sandbox is not None:
            section = config.section(spec.name) or platform(spec.name).section.model_validate(
                {"platform": spec.name}
            )
            return [(section, sandbox)], without
    raise ConfigError("--sandbox: no registered platform has a sandbox")


def _runner(
    section: ChannelSection,
    token: str,
    options: dict[str, Any],
    session: SandboxSession | None,
    pipeline: Pipeline,
) -> ChannelAdapter:
    """The section's runner, from its platform's contract; in the sandbox, pointed at its
    platform's emulator by the session."""
    if session is not None:
        token, options = session.token, session.runner_options()
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


class _Prompt:
    """The sandbox prompt: one console per emulated platform, by name. Lines go to the first
    until ``/<platform>`` switches; ``/<platform> LINE`` sends one line there."""

    def __init__(self, consoles: Mapping[str, Console], help_text: str, out: Output) -> None:
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


async def _check_agent(assembly: Assembly, config: BotConfig) -> None:
    """A :class:`ConfigError` unless ``assembly`` is the file's agent."""
    agent = await AgentRegistry(assembly.db).ensure(config.agent, config.tenant)
    if agent.id != assembly.agent.id:
        raise ConfigError(
            f"run_bots: the assembly is agent {assembly.agent.key!r}'s, but the file runs"
            f" agent {config.agent!r} of tenant {config.tenant!r}"
        )


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
    assembly: Assembly | None = None,
) -> None:
    """Run until ``stop`` is set, a signal arrives, or (sandbox) the prompt ends.

    ``assembly``: the file's agent, already assembled on the file's database by the caller,
    who keeps the database open (``actorscope serve`` shares its own with the API); without
    it, the database is opened and the agent assembled here. An assembly of another agent
    is a :class:`~actorscope.errors.ConfigError`.
    """
    env = os.environ if env is None else env
    emulated, without = _sandboxed(config) if sandbox else ([], [])
    sections: list[tuple[ChannelSection, str, dict[str, Any]]] = (
        [(section, "", {}) for section, _ in emulated]  # the sessions give tokens and options
        if sandbox
        else _sections(config, env, source)
    )
    handler = load_handler(config.handler, config.base_dir)
    stop = stop if stop is not None else asyncio.Event()
    loop = asyncio.get_running_loop()
    async with AsyncExitStack() as stack:
        signals = (signal.SIGINT, signal.SIGTERM) if handle_signals else ()
        for sig in signals:
            loop.add_signal_handler(sig, stop.set)
            stack.callback(loop.remove_signal_handler, sig)
        if assembly is None:
            db = await stack.enter_async_context(Database.open(config.database))
            assembly = await assemble(db, config.agent_settings())
        else:
            db = assembly.db
            await _check_agent(assembly, config)
        # `actorscope grants remove` from another shell must reach this process's cache.
        await stack.enter_async_context(assembly.grants.watch())
        if config.audit is not None and config.audit.keep is not None:
            retention = asyncio.create_task(keep_audit(db, config.audit.keep))
            stack.push_async_callback(_cancelled, retention)
        # Renaming or removing an agent in this process moves or archives its files.
        AgentRegistry(db).subscribe(assembly.workspace.on_agent_changed)
        bus = MessageBus()
        # A claim is a lease until its turn is over: a worker that dies mid-turn loses nothing.
        ledger = await stack.enter_async_context(assembly.turns)
        # Each emulator runs until the stack closes; its console is closed after the drain
        # below (its replies are shown).
        sessions = [await box.open(stack, section, out) for section, box in emulated]
        for name in without:
            out(f"{name}: not run in --sandbox (its platform has no sandbox)")
        consoles = {
            section.platform: session.console
            for (section, _), session in zip(emulated, sessions, strict=True)
        }
        helps = {name: console.help_text() for name, console in consoles.items()}
        help_text = _prompt_help(helps) if helps else ""
        if help_text:
            out(help_text)
        runners = [
            _runner(
                section,
                token,
                options,
                sessions[index] if sessions else None,
                assembly.pipeline(
                    section.config,
                    publish=bus.publish_from_channel,
                    run_here=bus.run_from_channel,
                    ledger=ledger,
                ),
            )
            for index, (section, token, options) in enumerate(sections)
        ]
        # The handler reaches each channel's native bot object through its services.
        services = BotServices.of(assembly, {runner.name: runner for runner in runners})
        host = assembly.host(services.wrap(handler), bus=bus, on_done=ledger.finish)
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
        for session in sessions:
            await session.ready()  # bounded: a late bot is a warning
        if sessions and lines is not None:
            prompt = _Prompt(consoles, help_text, out)
            console_task = asyncio.create_task(_run_prompt(prompt, lines))
        for runner in runners:
            status = runner.status()  # what its platform tells the operator (a webhook's URL)
            if status:
                out(f"{runner.name}: {status}")
        names = ", ".join(f"{r.name}" for r in runners)
        out(f"running agent {assembly.agent.key!r} on {names}; Ctrl-C to stop")
        try:
            await _wait(stop, console_task)
            if console_task is not None and console_task.done():
                for session in sessions:
                    await session.drained()  # bounded, as ready()
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

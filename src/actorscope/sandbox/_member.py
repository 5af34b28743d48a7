"""The platform contract's sandbox member: what ``actorscope run --sandbox`` and ``actorscope
sandbox`` ask of a platform's emulator (docs/design.md, "Adding a platform").

A platform's contract names its sandbox as ``module:attribute`` (``Platform.sandbox``; ``""``:
none), a string because the emulators sit above ``channels``. :func:`platform_sandbox` loads
it: a :class:`Sandbox`, whose :meth:`~Sandbox.open` starts the emulator on 127.0.0.1 and
returns a :class:`SandboxSession` (the token it accepts, the runner's options pointing at it,
its :class:`Console`).
"""

from __future__ import annotations

import asyncio
import importlib
import logging
from collections.abc import AsyncIterator, Awaitable, Sequence
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from actorscope.errors import ConfigError
from actorscope.sandbox._prompt import Output

if TYPE_CHECKING:
    from actorscope.channels import ChannelSection

__all__ = [
    "SANDBOX_WAIT",
    "Console",
    "Output",
    "Sandbox",
    "SandboxSession",
    "bounded",
    "platform_sandbox",
]

#: Seconds a session waits for the bot to be ready, and at the end of the input for it to
#: take in what was typed (a stop in the middle of either leaves a library's tracebacks).
SANDBOX_WAIT = 10.0

_log = logging.getLogger("actorscope.sandbox")


async def bounded(waiting: Awaitable[None], late: str) -> None:
    """Await ``waiting`` at most :data:`SANDBOX_WAIT` seconds; past that, log ``late``."""
    try:
        await asyncio.wait_for(waiting, SANDBOX_WAIT)
    except TimeoutError:
        _log.warning("sandbox: %s after %gs", late, SANDBOX_WAIT)


@runtime_checkable
class Console(Protocol):
    """A sandbox's prompt on one platform: who types where, and what the bot does, printed."""

    @property
    def speaking(self) -> bool:
        """Whether someone speaks there yet (``/as`` said who)."""
        ...

    def here(self) -> str:
        """Who speaks where, in words."""
        ...

    def help_text(self) -> str:
        """What can be typed there."""
        ...

    async def handle(self, line: str) -> bool:
        """Act on one typed line; ``False`` when the session should end (``/quit``)."""
        ...

    async def run(self, lines: AsyncIterator[str]) -> None:
        """Act on every line until ``/quit`` or the end of ``lines``."""
        ...

    def close(self) -> None:
        """Stop printing what the bot does."""
        ...


@runtime_checkable
class SandboxSession(Protocol):
    """A platform's emulator, running: what ``actorscope run --sandbox`` and ``actorscope
    sandbox`` ask of it."""

    @property
    def token(self) -> str:
        """The bot token the emulator accepts (the runner's, instead of the environment's)."""
        ...

    @property
    def console(self) -> Console:
        """What the prompt types into (closed when the session's stack closes)."""
        ...

    def runner_options(self) -> dict[str, Any]:
        """The options that point the platform's runner at the emulator (replacing the
        section's ``runner_options``)."""
        ...

    async def ready(self) -> None:
        """Return once the runner has started on the emulator (bounded: past the wait, a
        warning is logged and it returns)."""
        ...

    async def drained(self) -> None:
        """Return once the bot has taken in everything typed (bounded, as :meth:`ready`)."""
        ...

    def connect_lines(self) -> list[str]:
        """How to point one's own bot at the emulator (``actorscope sandbox``)."""
        ...

    async def bot_process(self, command: Sequence[str], lines: AsyncIterator[str]) -> str:
        """Run ``command``, a bot, in its own process pointed at the emulator, with the prompt
        reading ``lines`` once it has connected, until either ends: ``""``, or why the bot's
        process ended first or never connected, in a sentence (``actorscope sandbox`` says
        it as its error). One :class:`~actorscope.errors.ConfigError` where the sandbox runs
        no bot command (:meth:`Sandbox.command_problem`) or the command cannot start."""
        ...


@runtime_checkable
class Sandbox(Protocol):
    """A platform's sandbox: its emulator on 127.0.0.1, as the contract names it."""

    def token_problem(self, token: str) -> str:
        """Why the emulator cannot accept ``token`` as its bot's (``--token``), in words
        that never repeat it; ``""`` when it can."""
        ...

    def command_problem(self, command: Sequence[str]) -> str:
        """Why it cannot run the bot ``command`` (after ``--``), and what to do instead;
        ``""`` when it can (:meth:`SandboxSession.bot_process`)."""
        ...

    async def open(
        self,
        stack: AsyncExitStack,
        section: ChannelSection | None,
        out: Output,
        *,
        port: int = 0,
        token: str | None = None,
    ) -> SandboxSession:
        """Start the emulator on 127.0.0.1 (``port``; 0: any free one), populated with its
        sandbox world, until ``stack`` closes; print its banner through ``out``. ``section``
        is the ``bot.toml`` section ``actorscope run --sandbox`` runs on it (a line says which
        of its keys the sandbox ignores); ``None`` for ``actorscope sandbox``, which runs no
        runner. ``token``: the bot token to accept (default: a new one). A port it cannot
        listen on is the ``OSError``."""
        ...


def platform_sandbox(name: str) -> Sandbox | None:
    """The sandbox the contract of the platform registered as ``name`` names; ``None`` when
    it names none. :class:`ConfigError` when there is no such platform, or its sandbox cannot
    be imported or is not a :class:`Sandbox` (naming the platform)."""
    from actorscope.channels import platform

    where = platform(name).sandbox
    if not where:
        return None
    module, _, attribute = where.partition(":")
    try:
        imported = importlib.import_module(module)
    except Exception as exc:  # an installed plugin's import: any failure is its problem
        raise ConfigError(
            f"platform {name!r}: its sandbox module {module!r} cannot be imported: "
            f"{type(exc).__name__}: {exc}"
        ) from None
    found = getattr(imported, attribute, None)
    if not isinstance(found, Sandbox):
        raise ConfigError(f"{where} is not the Sandbox of {name!r}")
    return found

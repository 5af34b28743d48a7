"""``actorscope sandbox``: a platform's emulator on 127.0.0.1 with a prompt.

``--platform NAME`` picks a registered platform whose contract names a sandbox
(:func:`~actorscope.sandbox.platform_sandbox`; default: the first, a built-in one). The
emulator prints how to point one's own bot at it; where the sandbox runs a bot itself,
``actorscope sandbox --platform NAME -- python bot.py`` runs it unmodified, pointed at the
emulator. Then type as different people in different chats; the bot's replies are printed as
they arrive. Ctrl-C (or SIGTERM) stops it all cleanly.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Coroutine, Iterator
from contextlib import AsyncExitStack
from itertools import islice
from typing import TYPE_CHECKING, Annotated, Any

import typer

from actorscope.cli._common import cannot_listen
from actorscope.errors import ConfigError

if TYPE_CHECKING:
    from actorscope.sandbox import Sandbox

__all__ = ["sandbox"]


async def _serve(box: Sandbox, port: int, token: str | None, command: list[str]) -> int:
    """The emulator with the prompt (or the bot ``command``) until either ends."""
    from actorscope._aio import read_lines

    async with AsyncExitStack() as stack:
        try:
            session = await box.open(stack, None, typer.echo, port=port, token=token)
        except OSError as exc:  # the port is taken, or not ours to take
            raise cannot_listen(f"127.0.0.1 --port {port}", exc) from None
        if command:
            problem = await session.bot_process(command, read_lines(sys.stdin))
        else:
            for line in session.connect_lines():
                typer.echo(line)
            typer.echo(session.console.help_text())
            await session.console.run(read_lines(sys.stdin))
            problem = ""
    typer.echo("sandbox stopped")
    if problem:
        typer.echo(f"actorscope: error: {problem}", err=True)
        return 1
    return 0


def _sandboxes() -> Iterator[tuple[str, Sandbox]]:
    """The registered platforms with a sandbox and it, in the registry's order (the
    built-in ones first), each loaded only when asked for; one whose contract or sandbox
    cannot be loaded is left out."""
    from actorscope.platforms import platform_specs
    from actorscope.sandbox import platform_sandbox

    for spec in platform_specs():
        try:
            box = platform_sandbox(spec.name)
        except ConfigError:
            continue
        if box is not None:
            yield spec.name, box


def _chosen(name: str | None) -> tuple[str, Sandbox]:
    """The platform ``--platform`` names (default: the first with a sandbox) and its
    sandbox; one ConfigError naming the choices when it has none."""
    from actorscope.platforms import platform_spec
    from actorscope.sandbox import platform_sandbox

    spec = platform_spec(name) if name is not None else None
    if name is not None and spec is not None and spec.contract:
        box = platform_sandbox(name)  # a broken plugin's sandbox: its one ConfigError
        if box is not None:
            return name, box
    # The default loads no other platform's sandbox.
    boxes = dict(_sandboxes()) if name is not None else dict(islice(_sandboxes(), 1))
    if not boxes:
        raise ConfigError("no registered platform has a sandbox")
    if name is None:
        return next(iter(boxes.items()))
    raise ConfigError(
        f"--platform must be {' or '.join(boxes)} (the registered platforms with a sandbox), "
        f"not {name!r}"
    )


def sandbox(
    port: int = typer.Option(
        0, "--port", help="Port on 127.0.0.1 (0: any free port).", metavar="PORT"
    ),
    token: str | None = typer.Option(
        None, "--token", help="Bot token to accept (default: a random one).", metavar="TOKEN"
    ),
    platform: str | None = typer.Option(
        None,
        "--platform",
        help="Which platform to emulate: a registered one with a sandbox "
        "(default: the first, a built-in one).",
        metavar="PLATFORM",
        show_default=False,
    ),
    command: Annotated[
        list[str] | None,
        typer.Argument(
            help="Your bot's command, after -- (e.g. -- python bot.py), where the platform's "
            "sandbox runs one: it runs unmodified, pointed at the emulator, with its token.",
            metavar="COMMAND",
            show_default=False,
        ),
    ] = None,
) -> int:
    """Run a chat platform's emulator on 127.0.0.1 and type as people in its chats."""
    if not 0 <= port <= 65535:
        raise ConfigError(f"--port must be between 0 and 65535, not {port}")
    _, box = _chosen(platform)
    if token is not None:
        if not token or any(c.isspace() for c in token):
            raise ConfigError("--token must be non-empty and contain no spaces")
        problem = box.token_problem(token)
        if problem:
            raise ConfigError(f"--token {problem}")
    if command:
        problem = box.command_problem(command)
        if problem:
            runs = [name for name, other in _sandboxes() if not other.command_problem(command)]
            which = " or ".join(f"--platform {name}" for name in runs) or "no platform"
            raise ConfigError(f"a bot command after -- is for {which}; {problem}")
    return _stopped_by_signals(_serve(box, port, token, command or []))


def _stopped_by_signals(session: Coroutine[Any, Any, int | None]) -> int:
    """Run ``session``; Ctrl-C or SIGTERM ends it cleanly (its ``finally`` blocks run, then
    "sandbox stopped"): exit status 0."""
    try:
        return asyncio.run(_terminable(session)) or 0
    except (KeyboardInterrupt, asyncio.CancelledError):
        # asyncio.run has already cancelled the session, which closed what it opened.
        typer.echo("\nsandbox stopped")
        return 0


async def _terminable(session: Coroutine[Any, Any, int | None]) -> int | None:
    """``session``, cancelled by SIGTERM as asyncio.run cancels it on SIGINT."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    if task is not None:
        loop.add_signal_handler(signal.SIGTERM, task.cancel)
    try:
        return await session
    finally:
        loop.remove_signal_handler(signal.SIGTERM)

"""``actorscope probe CONFIG [--json] [--out DIR]``: hostile senders at the configured bot.

Runs the ``handler`` of ``CONFIG`` (the ``actorscope run`` TOML) in the Telegram simulator (and
the Discord one when ``[discord]`` is enabled) on a throwaway database and workspace, or, when
``CONFIG`` is ``module:attribute`` (imported from the current folder first), the PTB application
that function builds from the simulator's ``ApplicationBuilder``, or the discord.py bot that
class or keyword-only function builds, run against the Discord emulator; sends every probe
event x every command (the writer commands, ``[probe] commands`` or ``--command``, and the
commands the bot registers: ``setMyCommands``, synced application commands, a
``commands.Bot``'s text commands) and prints the matrix: ✓ held, ✗ leak, ⌛ hung, ! handler
error, ? skipped, en dash: not applicable. ``--out DIR`` writes a reproduction per leak: a
scenario file for a handler, a pytest file for a PTB application or a discord.py bot. Exit 1
on any leak, hang, error or skip; 2 on bad input.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from actorscope.cli._app import app, console_for_tables, require_testing_extra

__all__ = ["probe_command"]

_MARKS = {
    "held": "✓",
    "leak": "✗",
    "hung": "⌛",
    "error": "!",
    "skipped": "?",
    "n/a": "\N{EN DASH}",
}


def _close(loop: asyncio.AbstractEventLoop) -> None:
    """Finish ``loop``'s async generators and executor, then close it."""
    loop.run_until_complete(loop.shutdown_asyncgens())
    loop.run_until_complete(loop.shutdown_default_executor())
    loop.close()


#: The exit status when a case leaked, hung, failed or was skipped.
EXIT_FAILED = 1


@app.command("probe")
def probe_command(
    config: Annotated[
        Path,
        typer.Argument(
            help=(
                "The bot configuration (TOML), or module:attribute: a function building a "
                "PTB application, or a discord.py bot's class or factory."
            ),
            metavar="CONFIG",
        ),
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Write a reproduction per leak into DIR.", metavar="DIR"),
    ] = None,
    deadline: Annotated[
        float,
        typer.Option(
            "--deadline",
            min=0.1,
            max=600,
            help="Seconds each case may take before the handler counts as hung.",
            metavar="SECONDS",
        ),
    ] = 10.0,
    extra: Annotated[
        list[str] | None,
        typer.Option("--command", help="A command to send too (repeatable).", metavar="COMMAND"),
    ] = None,
) -> None:
    """Send every hostile sender x command to the configured bot; exit 1 on any leak or hang."""
    require_testing_extra("probe")
    # Imported here: the kit loads the platform libraries, which `--help` must not.
    from actorscope.bots import load_bot_config, load_object
    from actorscope.testing import Status, is_bot_factory, probe, write_repros

    spec = str(config)
    # No such file but a colon: module:function (load_object names what is wrong with it).
    is_app = not config.exists() and ":" in spec
    bot = None if is_app else load_bot_config(config)
    listed = bot.probe.commands if bot is not None and bot.probe is not None else ()
    commands = [*listed, *(extra or [])]
    telegram = bot.telegram.config if bot is not None and bot.telegram is not None else None
    discord = (
        bot.discord.config
        if bot is not None and bot.discord is not None and bot.discord.enabled
        else None
    )
    # The probe writes nothing beside CONFIG: not even the handler module's __pycache__.
    writes_bytecode, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        # module:attribute names a discord.py bot (or its factory) or a PTB application factory.
        found = load_object(spec, Path.cwd(), what="application") if is_app else None
        is_dpy = found is not None and is_bot_factory(found)
        # A loop of our own, not asyncio.run: after a case hung, run() would wait for the hung
        # handler's task to finish cancelling, which a handler that swallows cancellation
        # never does.
        loop = asyncio.new_event_loop()
        try:
            report = loop.run_until_complete(
                probe(
                    None if bot is None else bot.handler,
                    application=spec if is_app and not is_dpy else None,
                    bot=spec if is_dpy else None,
                    search_dir=Path.cwd() if bot is None else bot.base_dir,
                    commands=commands,
                    config=telegram,
                    discord=discord,
                    owners=() if bot is None else bot.owners,
                    agent="main" if bot is None else bot.agent,
                    deadline=deadline,
                )
            )
        except BaseException:
            _close(loop)  # e.g. a ConfigError about the bot: the loop must not outlive it
            raise
    finally:
        sys.dont_write_bytecode = writes_bytecode
    hung = any(case.status is Status.HUNG for case in report.cases)
    if not hung:
        _close(loop)
    if out is not None and bot is not None:
        write_repros(report, out, handler=bot.handler)
    elif out is not None:
        write_repros(
            report,
            out,
            application=None if is_dpy else spec,
            bot=spec if is_dpy else None,
            search_dir=Path.cwd(),
        )
    if as_json:
        typer.echo(report.to_json())
    else:
        table = Table(title=f"actorscope probe {config}")
        table.add_column("event")
        for command in report.commands:
            table.add_column(command, justify="center")
        for event in report.events:
            marks = [_MARKS[str(report.case(event, c).status)] for c in report.commands]
            table.add_row(event, *marks)
        console = console_for_tables()
        console.print(table)
        for case in report.failures:
            repro = f" (reproduce: {case.repro})" if case.repro else ""
            console.print(f"✗ {case.event} x {case.command}: {'; '.join(case.problems)}{repro}")
        console.print(report.summary())
        console.print(
            f"✓ held  ✗ leak  ⌛ hung  ! handler error  ? skipped  {_MARKS['n/a']} not applicable"
        )
    if hung:
        # The report is out; a hung handler (cancellation swallowed, a blocked worker thread)
        # must not keep the process alive, so leave without waiting for it.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(EXIT_FAILED)
    if report.failures:
        raise typer.Exit(EXIT_FAILED)

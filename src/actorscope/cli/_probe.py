"""``actorscope probe CONFIG [--json] [--out DIR]``: hostile senders at the configured bot.

Runs the ``handler`` of ``CONFIG`` (the ``actorscope run`` TOML) on a throwaway database and
workspace in the simulator of each enabled platform whose contract names one (Telegram's always;
a note names the platforms it could not probe), or, when
``CONFIG`` is ``module:attribute`` (imported from the current folder first, as with ``python
-m``), the PTB application that function builds from the simulator's ``ApplicationBuilder``,
the aiogram ``Dispatcher`` a function returns (the simulator makes its ``Bot``), or the
discord.py bot that class, instance or keyword-only function builds, run against the
Discord emulator; the bot runs in the probe's temporary folder. It first proves it reaches the
bot (exit 2 with one line when it does not), then sends every probe event x every command (the
writer commands, ``[probe] commands`` or ``--command``, the commands the bot registers or
handles, and those its source suggests), compares what the bot does with what it does for the
writer, and prints the matrix: ✓ held, ✗ leak, ● open (does what it does for the writer),
⌛ hung, ! handler error, ? skipped, ○ not tested (a click when the bot showed no button), en
dash: not applicable; then the commands open to everyone
and what it could not test. ``--writer-only CMD`` (or ``[probe] writer_only``) names commands
only writers may use. ``--out DIR`` writes a reproduction per leak: a scenario file for a
handler's decision leak, a pytest file otherwise. ``--platform NAME`` probes the handler on
that registered platform alone (its simulator, with its ``[NAME]`` section when the file has
one), with the events every chat has. Exit 1 on any leak, hang, error or skip, or when nothing
of the bot's own was tested; 2 on bad input or when the probe does not reach the bot.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from actorscope.cli._common import console_for_tables, require_testing_extra
from actorscope.errors import ConfigError

__all__ = ["probe_command"]

_MARKS = {
    "held": "✓",
    "leak": "✗",
    "hung": "⌛",
    "error": "!",
    "skipped": "?",
    "open": "●",
    "n/a": "\N{EN DASH}",
    "not tested": "○",
}


#: Seconds the tasks the bot left behind (a discord.py View's timeout) have to end once cancelled.
_LEFTOVER_WAIT = 5.0


def _close(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel the tasks the bot left running (a ``discord.ui.View``'s timeout, which would be
    reported as "Task was destroyed but it is pending!"), finish ``loop``'s async generators
    and executor, then close it."""
    leftover = asyncio.all_tasks(loop)
    for task in leftover:
        task.cancel()
    if leftover:
        loop.run_until_complete(asyncio.wait(leftover, timeout=_LEFTOVER_WAIT))
    loop.run_until_complete(loop.shutdown_asyncgens())
    loop.run_until_complete(loop.shutdown_default_executor())
    loop.close()


def _neither(spec: str, python_file: bool) -> str:
    """The one line for a ``CONFIG`` that is a Python file, or no file and not
    ``module:attribute``, with the forms the probe takes (``spec:<function>`` when ``spec``
    names a module here)."""
    module = spec.removesuffix(".py")
    here = Path(f"{module}.py").is_file() or Path(module, "__init__.py").is_file()
    example = f"{module}:<function>" if here and module.isidentifier() else "module:function"
    what = "is a Python file" if python_file else "is neither a file nor module:attribute"
    return (
        f"{spec!r} {what}: name a bot.toml (actorscope probe bot.toml) or the function that "
        f"builds the bot (actorscope probe {example})"
    )


#: The exit status when a case leaked, hung, failed or was skipped.
EXIT_FAILED = 1


def probe_command(
    config: Annotated[
        Path,
        typer.Argument(
            help=(
                "The bot configuration (TOML), or module:attribute: a function building a "
                "PTB application or returning an aiogram Dispatcher, or a discord.py bot "
                "(built, its class or a factory)."
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
    writer_only: Annotated[
        list[str] | None,
        typer.Option(
            "--writer-only",
            help=(
                "A command only writers may use (repeatable): doing for anyone else what it "
                "does for a writer is a leak."
            ),
            metavar="COMMAND",
        ),
    ] = None,
    platform: Annotated[
        str | None,
        typer.Option(
            "--platform",
            help=(
                "Probe the handler on this registered platform alone (default: the file's "
                "platforms as the probe knows them)."
            ),
            metavar="PLATFORM",
        ),
    ] = None,
) -> None:
    """Send every hostile sender x command to the configured bot; exit 1 on any leak or hang."""
    require_testing_extra("probe")
    # Imported here: the kit loads the platform libraries, which `--help` must not.
    from actorscope.bots import BotConfig
    from actorscope.channels import platform as contract_of
    from actorscope.testing import ProbeStatus, probe

    spec = str(config)
    # No such file but a colon: module:attribute (load_object names what is wrong with it).
    is_app = not config.exists() and ":" in spec
    if not is_app and (not config.exists() or config.suffix == ".py"):
        raise ConfigError(_neither(spec, config.exists()))
    bot = None if is_app else BotConfig.load(config)
    section = bot.probe if bot is not None else None
    commands = [*(section.commands if section is not None else ()), *(extra or [])]
    writer_only = [*(section.writer_only if section is not None else ()), *(writer_only or [])]
    # Where the handler runs: the file's enabled platforms (the probe drives each whose
    # contract names a simulator, and names the others), or the one --platform names.
    where: dict[str, Any] = {"channels": () if bot is None else bot.sections()}
    if platform is not None:
        if bot is None:
            raise ConfigError("--platform is for a bot.toml handler: an application runs as built")
        contract_of(platform)  # a registered chat platform, or one line naming the known ones
        where = {"platform": platform, "config": bot.section(platform)}
    # A loop of our own, not asyncio.run: after a case hung, run() would wait for the hung
    # handler's task to finish cancelling, which a handler that swallows cancellation never does.
    loop = asyncio.new_event_loop()
    try:
        report = loop.run_until_complete(
            probe(
                None if bot is None else bot.handler,
                application=spec if is_app else None,
                search_dir=Path.cwd() if bot is None else bot.base_dir,
                commands=commands,
                writer_only=writer_only,
                **where,
                owners=() if bot is None else bot.owners,
                agent="main" if bot is None else bot.agent,
                deadline=deadline,
                links="off" if bot is None or bot.identity is None else bot.identity.links,
            )
        )
    except BaseException:
        _close(loop)  # e.g. a ConfigError about the bot: the loop must not outlive it
        raise
    hung = any(case.status is ProbeStatus.HUNG for case in report.cases)
    if not hung:
        _close(loop)
    if out is not None and bot is not None:
        report.write_repros(out, handler=bot.handler)
    elif out is not None:
        report.write_repros(out, application=spec, search_dir=Path.cwd())
    if as_json:
        typer.echo(report.to_json())
    else:
        table = Table(title=f"actorscope probe {config}")
        table.add_column("event")
        for command in report.commands:
            table.add_column(escape(command), justify="center")
        for event in report.events:
            marks = [_MARKS[str(report.case(event, c).status)] for c in report.commands]
            table.add_row(escape(event), *marks)
        console = console_for_tables()
        console.print(table)
        for case in report.failures:
            repro = f" (reproduce: {case.repro})" if case.repro else ""
            line = f"✗ {case.event} x {case.command}: {'; '.join(case.problems)}{repro}"
            console.print(line, markup=False)
        if report.open_to_everyone:
            console.print(
                f"open to everyone: {', '.join(report.open_to_everyone)} (every sender got "
                "what the writer gets; name a command with --writer-only if only writers may)",
                markup=False,
            )
        for note in report.notes:
            console.print(f"· {note}", markup=False)
        for untested in report.untested:
            console.print(f"✗ not tested: {untested}", markup=False)
        console.print(report.summary())
        console.print(
            "✓ held  ✗ leak  ⌛ hung  ! handler error  ? skipped  ● open (as for the writer)  "
            f"○ not tested  {_MARKS['n/a']} not applicable"
        )
    if hung:
        # The report is out; a hung handler (cancellation swallowed, a blocked worker thread)
        # must not keep the process alive, so leave without waiting for it.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(EXIT_FAILED)
    if not report.passed:
        raise typer.Exit(EXIT_FAILED)

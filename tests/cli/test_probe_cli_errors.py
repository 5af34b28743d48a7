"""``actorscope probe`` pointed at the wrong thing: one line saying what it found and what it
takes, exit 2, nothing called that returns a coroutine, no traceback and no warning."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
import rich

RunCli = Callable[..., subprocess.CompletedProcess[str]]

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
#: What the probe takes, as a refusal of something it does not recognise lists it.
TAKES = (
    "the probe takes a function returning an aiogram Dispatcher; a function building a "
    "python-telegram-bot Application; a discord.py bot, its class or a function building one; "
    "or a bot.toml naming an actorscope run handler"
)


def _bot_folder(tmp_path: Path, *modules: str) -> Path:
    """``tmp_path/bot`` with copies of the examples' ``modules``."""
    folder = tmp_path / "bot"
    folder.mkdir()
    for module in modules:
        shutil.copy(EXAMPLES / f"{module}.py", folder)
    return folder


def _one_line(run_cli: RunCli, folder: Path, *args: str) -> str:
    """stderr of ``actorscope probe *args`` in ``folder``: exit 2, one line, nothing else."""
    done = run_cli("probe", *args, cwd=folder)
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stdout == ""
    assert "Traceback" not in done.stderr
    assert "RuntimeWarning" not in done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    return done.stderr


def test_an_async_handler_is_never_called_and_sent_to_its_bot_toml(
    tmp_path: Path, run_cli: RunCli
) -> None:
    """`probe telegram_bot:handle` (a RunRequest handler) says a handler is probed through
    the bot.toml naming it, without calling it (no coroutine left un-awaited)."""
    folder = _bot_folder(tmp_path, "telegram_bot")
    assert _one_line(run_cli, folder, "telegram_bot:handle") == (
        "actorscope: error: application 'telegram_bot:handle' is an async function, not a "
        "function that builds a bot: a handler is probed through a bot.toml naming it "
        '(handler = "telegram_bot:handle", then actorscope probe bot.toml), or in a test as '
        "actorscope_probe's first argument\n"
    )


def test_a_frameworks_async_handler_gets_what_the_probe_takes(
    tmp_path: Path, run_cli: RunCli
) -> None:
    """A PTB handler (`async def note(update, context)`) is no bot.toml handler: the line
    lists what the probe takes."""
    folder = _bot_folder(tmp_path, "ptb_notes_bot")
    assert _one_line(run_cli, folder, "ptb_notes_bot:note") == (
        "actorscope: error: application 'ptb_notes_bot:note' is an async function, not a "
        f"function that builds a bot: {TAKES}\n"
    )


def test_an_aiogram_router_is_named_with_what_to_name_instead(
    tmp_path: Path, run_cli: RunCli
) -> None:
    """A function returning a Router, and a Router itself, are named as such (not as a
    discord.py bot that returned no Client)."""
    folder = _bot_folder(tmp_path, "aiogram_notes_bot")
    (folder / "routers.py").write_text("from aiogram import Router\n\nROUTER = Router()\n")
    advice = "the probe takes a function returning a Dispatcher that includes it"
    assert _one_line(run_cli, folder, "aiogram_notes_bot:notes_router") == (
        "actorscope: error: application 'aiogram_notes_bot:notes_router' is a function "
        f"returning an aiogram Router: {advice}\n"
    )
    assert _one_line(run_cli, folder, "routers:ROUTER") == (
        f"actorscope: error: application 'routers:ROUTER' is an aiogram Router: {advice}\n"
    )


def test_a_function_returning_no_bot_names_what_it_returned(
    tmp_path: Path, run_cli: RunCli
) -> None:
    """`probe os:getcwd` says it returned a string and lists every form the probe takes,
    not that it was no discord.py Client; a value that is no function likewise."""
    assert _one_line(run_cli, tmp_path, "os:getcwd") == (
        f"actorscope: error: application 'os:getcwd' returned a string: {TAKES}\n"
    )
    assert _one_line(run_cli, tmp_path, "os:sep") == (
        f"actorscope: error: application 'os:sep' is a string: {TAKES}\n"
    )


def test_a_factory_returning_a_coroutine_has_it_closed_and_said(
    tmp_path: Path, run_cli: RunCli
) -> None:
    """A plain function that returns a coroutine: the coroutine is closed (no "never
    awaited" warning) and the line says what came back."""
    (tmp_path / "wrapped.py").write_text(
        "async def _build(builder):\n    return builder.build()\n\n\n"
        "def build(builder):\n    return _build(builder)\n"
    )
    assert _one_line(run_cli, tmp_path, "wrapped:build") == (
        "actorscope: error: application 'wrapped:build' returned a coroutine (it is async): "
        f"{TAKES}\n"
    )


@pytest.mark.parametrize(
    ("argument", "example"),
    [
        ("ptb_notes_bot", "ptb_notes_bot:<function>"),
        ("no_such_bot", "module:function"),
    ],
)
def test_a_name_without_a_colon_that_is_no_file_shows_both_forms(
    tmp_path: Path, run_cli: RunCli, argument: str, example: str
) -> None:
    """A forgotten colon: neither a file nor module:attribute, with both forms (the module's
    own name when its file is here)."""
    folder = _bot_folder(tmp_path, "ptb_notes_bot")
    assert _one_line(run_cli, folder, argument) == (
        f"actorscope: error: {argument!r} is neither a file nor module:attribute: name a "
        "bot.toml (actorscope probe bot.toml) or the function that builds the bot "
        f"(actorscope probe {example})\n"
    )


def test_a_python_file_is_no_config(tmp_path: Path, run_cli: RunCli) -> None:
    """`probe ptb_notes_bot.py` is not read as TOML: the line says what to name."""
    folder = _bot_folder(tmp_path, "ptb_notes_bot")
    assert _one_line(run_cli, folder, "ptb_notes_bot.py") == (
        "actorscope: error: 'ptb_notes_bot.py' is a Python file: name a bot.toml (actorscope "
        "probe bot.toml) or the function that builds the bot (actorscope probe "
        "ptb_notes_bot:<function>)\n"
    )


def test_a_handler_module_named_like_an_imported_package_is_refused(
    tmp_path: Path, run_cli: RunCli
) -> None:
    """`handler = "rich:handle"` beside rich.py: the CLI has imported rich already, so the
    line names both files and says to rename, instead of "module rich has no 'handle'"."""
    folder = _bot_folder(tmp_path, "telegram_bot").resolve()
    (folder / "telegram_bot.py").rename(folder / "rich.py")
    toml = (EXAMPLES / "bot.toml").read_text("utf-8").replace("telegram_bot:", "rich:")
    (folder / "bot.toml").write_text(toml, "utf-8")
    assert _one_line(run_cli, tmp_path, str(folder / "bot.toml")) == (
        f"actorscope: error: handler 'rich:handle': module rich is imported already, from "
        f"{Path(rich.__file__).resolve()}, so {folder / 'rich.py'} cannot be loaded under "
        "that name: rename rich.py and the module in the handler's name\n"
    )

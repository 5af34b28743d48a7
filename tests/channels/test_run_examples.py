"""The example bots run as ``actorscope run`` does: one helper, the same prompt, the same lines."""

from __future__ import annotations

import asyncio
import re
import runpy
import shutil
import sys
from pathlib import Path

import pytest
from tests._process import run_process

import actorscope.bots

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CONSOLE_SCRIPT = Path(sys.executable).with_name("actorscope")
# A refused /addwriter (bob is no admin), a granted one, a saved and a denied note, and one
# update of each kind the bot ignores; /help and /users are answered by the prompt itself.
SCRIPT = """\
/help
/as alice @devs#ideas here is my message
/as bob @devs#ideas /note hack
/reply 4 /addwriter
/as alice @devs#ideas
/reply 4 /addwriter
/note buy milk
/as carol @ops hello
/anon @devs hi
/join dave @ops
/as alice @devs /note@some_other_bot hi
/users
/quit
"""


def copy_examples(target: Path) -> Path:
    """The example bots and bot.toml in ``target`` (their database and workspace go there)."""
    target.mkdir()
    for name in ("bot.toml", "telegram_bot.py", "discord_bot.py"):
        shutil.copy(EXAMPLES / name, target / name)
    return target


def normalized(output: str) -> list[str]:
    """The output's lines, sorted, with the port and the bot's message ids masked.

    Sorted: the bot answers concurrently, so its replies (and their message ids) and the
    prompt's lines interleave differently from run to run.
    """
    lines = [re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", line) for line in output.splitlines()]
    return sorted(re.sub(r"^\[bot -> (\S+) msg \d+\]", r"[bot -> \1 msg N]", x) for x in lines)


async def test_telegram_example_sandbox_prints_what_actorscope_run_prints(tmp_path: Path) -> None:
    """`python telegram_bot.py --sandbox` and `actorscope run bot.toml --sandbox` print alike."""
    cli_dir, example_dir = copy_examples(tmp_path / "cli"), copy_examples(tmp_path / "example")
    cli, example = await asyncio.gather(
        run_process([str(CONSOLE_SCRIPT), "run", "bot.toml", "--sandbox"], cli_dir, SCRIPT),
        run_process([sys.executable, "telegram_bot.py", "--sandbox"], example_dir, SCRIPT),
    )
    assert (cli[0], cli[2]) == (0, "")
    assert (example[0], example[2]) == (0, "")
    lines = normalized(cli[1])
    for expected in (
        "[bot -> @devs#2 msg N] denied: no_grant",
        "[bot -> @devs#2 msg N] added @alice (700000001) as a writer",
        "[bot -> @devs#2 msg N] saved",
        "  <- update 6 ignored by the bot: not_mentioned",
        "  <- update 7 ignored by the bot: nonperson_sender",
        "  <- update 8 ignored by the bot: service_message",
        "  <- update 9 ignored by the bot: not_for_this_bot",
        "now speaking as @alice in @devs#ideas",
    ):
        assert expected in lines, cli[1]
    assert any(x.startswith("[bot -> @devs#2 msg N] refused (not_authorized)") for x in lines)
    assert normalized(example[1]) == lines
    assert example[1].endswith("stopped\n")
    for folder in (cli_dir, example_dir):
        (notes,) = (folder / "workspace" / "tenants").glob("*/agents/notes/*/notes.md")
        assert notes.read_text() == "- buy milk (by 700000001)\n"


async def test_discord_example_sandbox_runs_the_notes_bot_offline(tmp_path: Path) -> None:
    """`python discord_bot.py --sandbox`: typed as a guild member, a non-writer's note is denied."""
    folder = copy_examples(tmp_path / "example")
    status, out, err = await run_process(
        [sys.executable, "discord_bot.py", "--sandbox"],
        folder,
        "/discord\n/as carol @general\n@bot !note hi\n/quit\n",
    )
    assert status == 0, err
    assert "now speaking as carol in #general" in out
    assert "denied: no_grant" in out
    assert out.endswith("stopped\n")
    assert not list(folder.glob("workspace/**/notes.md"))


def test_telegram_example_without_a_token_names_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without its token the example says so in one line naming bot.toml, exit 2, no database."""
    folder = copy_examples(tmp_path / "example")
    monkeypatch.delenv("TELEGRAM_BOT_TOKEN", raising=False)
    example = runpy.run_path(str(folder / "telegram_bot.py"), run_name="telegram_bot_example")
    assert example["main"]([]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"telegram_bot: error: {folder / 'bot.toml'}: telegram: environment variable "
        "TELEGRAM_BOT_TOKEN is not set (the bot token)\n"
    )
    assert not (folder / "bot.db").exists()


def test_run_in_terminal_is_public() -> None:
    """The helper the CLI and the examples share is public API of actorscope.bots."""
    from actorscope.bots import run_in_terminal

    assert "run_in_terminal" in actorscope.bots.__all__
    assert callable(run_in_terminal)

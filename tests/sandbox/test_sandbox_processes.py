"""``actorscope sandbox`` as a user runs it: a bot in its own process, and Ctrl-C.

``actorscope sandbox --platform discord -- python bot.py`` runs the unmodified bot in its own
process, pointed at the emulator by the sandbox's ``sitecustomize``; the prompt types as guild
members. A real SIGINT stops every sandbox cleanly: exit 0, "sandbox stopped", nothing on
stderr. Each step waits for the line that shows it happened.
"""

from __future__ import annotations

import asyncio
import io
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from actorscope.cli import main
from actorscope.sandbox._bootstrap import sitecustomize

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
CONSOLE_SCRIPT = Path(sys.executable).with_name("actorscope")
#: Seconds a step may take (a bot process imports discord.py and actorscope first).
BOUND = 60.0


class Session:
    """A sandbox process: type lines, wait for what it prints, stop it with a signal."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        #: What it printed since the last typed line; ``transcript``: everything.
        self.out = ""
        self.transcript = ""

    async def until(self, pattern: str) -> re.Match[str]:
        """Read its output until a line matches ``pattern`` (bounded)."""
        stream = self.process.stdout
        assert stream is not None
        async with asyncio.timeout(BOUND):
            while True:
                for line in self.out.splitlines():
                    found = re.search(pattern, line)
                    if found is not None:
                        return found
                more = await stream.readline()
                if not more:
                    raise AssertionError(f"the output ended before {pattern!r}:\n{self.out}")
                self.out += more.decode()
                self.transcript += more.decode()

    async def type(self, line: str, answer: str) -> None:
        """Type ``line`` at the prompt and wait for a line after it that matches ``answer``."""
        stdin = self.process.stdin
        assert stdin is not None
        self.out = ""  # only what comes after this line counts
        stdin.write(line.encode() + b"\n")
        await stdin.drain()
        await self.until(answer)

    async def interrupt(self) -> tuple[int, str, str]:
        """Send SIGINT, as Ctrl-C does; its status, the rest of its output and its stderr."""
        self.process.send_signal(signal.SIGINT)
        out, err = await asyncio.wait_for(self.process.communicate(), BOUND)
        self.transcript += out.decode()
        return await self.process.wait(), self.out + out.decode(), err.decode()


@asynccontextmanager
async def sandbox(args: Sequence[str], cwd: Path) -> AsyncIterator[Session]:
    """``actorscope sandbox ARGS`` in ``cwd`` with a pipe for a prompt and no bot token; killed
    if left running."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_BOT_TOKEN")}
    process = await asyncio.create_subprocess_exec(
        str(CONSOLE_SCRIPT),
        "sandbox",
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=cwd,
        env=env,
    )
    try:
        yield Session(process)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


def guide_session() -> tuple[list[str], list[tuple[str, str]]]:
    """The sandboxes guide's Discord bot-process command and its session: each typed line
    with the answer it shows (message and user ids become patterns)."""
    text = (ROOT / "docs" / "guides" / "sandboxes.md").read_text(encoding="utf-8")
    marker = "<!-- run by tests/sandbox/test_sandbox_processes.py"
    blocks = re.findall(re.escape(marker) + r"[^\n]*\n```\w+\n(.*?)```", text, re.DOTALL)
    command, session = blocks
    lines = session.splitlines()
    steps = [
        (typed, "^" + re.sub(r"\d{6,}", r"\\d+", re.escape(answer)) + "$")
        for typed, answer in zip(lines[::2], lines[1::2], strict=True)
    ]
    return shlex.split(command), steps


async def test_the_discord_sandbox_runs_the_notes_bot_in_its_own_process(tmp_path: Path) -> None:
    """The guide's command and session: examples/dpy_notes_bot.py, unmodified, gates !note (a
    stranger is denied, a writer a Manage Server member added saves); Ctrl-C stops the bot and
    the sandbox."""
    command, steps = guide_session()
    assert command[:5] == ["actorscope", "sandbox", "--platform", "discord", "--"]
    assert [typed.split()[1] for typed, _ in steps] == ["carol", "dave", "bob", "carol"]
    (tmp_path / "examples").mkdir()
    for name in ("dpy_notes_bot.py", "bot.toml"):
        shutil.copy(EXAMPLES / name, tmp_path / "examples" / name)
    bot = [sys.executable if part == "python" else part for part in command[5:]]
    async with sandbox(["--platform", "discord", "--", *bot], tmp_path) as session:
        pid = int((await session.until(r"^bot process (\d+) connected$"))[1])
        for typed, answer in steps:
            await session.type(typed, answer)
        status, out, err = await session.interrupt()
    assert (status, err) == (0, "")
    assert "Traceback" not in session.transcript, session.transcript  # denials log no trace
    assert out.endswith("bot process stopped (status 0)\n\nsandbox stopped\n")
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # the bot's process is gone too
    (notes,) = (tmp_path / "examples" / "workspace").rglob("notes.md")
    assert notes.read_text().startswith("- ship it (by ")


@pytest.mark.parametrize("platform", ["telegram", "discord"])
async def test_ctrl_c_stops_the_sandbox_cleanly(tmp_path: Path, platform: str) -> None:
    """A real SIGINT at the prompt: exit 0, "sandbox stopped", nothing on stderr."""
    async with sandbox(["--platform", platform], tmp_path) as session:
        await session.until(r"^/help  /quit ")
        await session.type("/help", r"^/help  /quit ")  # the prompt reads its input
        status, out, err = await session.interrupt()
    assert (status, err) == (0, "")
    assert out.endswith("sandbox stopped\n")


async def test_a_bot_process_that_ends_early_is_an_error(tmp_path: Path) -> None:
    """A bot that exits before it connects: one line on stderr, exit 1, the sandbox stops."""
    code = "print('starting'); raise SystemExit(3)"
    args = ["--platform", "discord", "--", sys.executable, "-c", code]
    async with sandbox(args, tmp_path) as session:
        out, err = await asyncio.wait_for(session.process.communicate(), BOUND)
    assert session.process.returncode == 1
    assert err.decode() == "actorscope: error: the bot process exited with status 3\n"
    assert "(bot) starting\n" in out.decode()
    assert out.decode().endswith("bot process stopped (status 3)\nsandbox stopped\n")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--platform", "discord", "--", "no-such-bot-command"], "cannot run no-such-bot-command"),
        (["--", "python", "bot.py"], "a bot command after -- is for --platform discord"),
    ],
)
async def test_a_bot_command_that_cannot_run_is_one_line(
    tmp_path: Path, args: list[str], message: str
) -> None:
    """A command that does not exist, or one for the Telegram sandbox: exit 2, one line."""
    async with sandbox(args, tmp_path) as session:
        _, err = await asyncio.wait_for(session.process.communicate(), BOUND)
    assert session.process.returncode == 2
    assert err.decode().count("\n") == 1
    assert message in err.decode()


def test_the_bootstrap_points_discord_py_and_runs_the_sitecustomize_it_hides(
    tmp_path: Path,
) -> None:
    """In a bot's process, discord.py talks to the addresses given, and the environment's
    own sitecustomize still runs; without the addresses nothing changes."""
    (tmp_path / "sitecustomize.py").write_text("import os\nos.environ['SHADOWED_RAN'] = '1'\n")
    bootstrap = str(Path(sitecustomize.__file__).parent)
    code = (
        "import os, discord.http, discord.gateway\n"
        "print(discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY,"
        " os.environ.get('SHADOWED_RAN'))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([bootstrap, str(tmp_path)])}
    pointed = {
        **env,
        sitecustomize.API: "http://127.0.0.1:9/api/v10",
        sitecustomize.GATEWAY: "ws://127.0.0.1:9/gateway",
    }
    # Pointed, discord.py is imported at startup without a warning even under -W error; left
    # alone, the bot's own import warns about audioop as it always does (so it is ignored).
    runs = [
        subprocess.run(  # noqa: S603 - our own interpreter and a constant script
            [sys.executable, "-W", warnings, "-c", code],
            env=environment,
            capture_output=True,
            text=True,
            timeout=BOUND,
            check=False,
        )
        for environment, warnings in ((pointed, "error"), (env, "ignore::DeprecationWarning"))
    ]
    assert [(run.returncode, run.stderr) for run in runs] == [(0, ""), (0, "")]
    assert runs[0].stdout.split() == [
        "http://127.0.0.1:9/api/v10",
        "ws://127.0.0.1:9/gateway",
        "1",
    ]
    assert runs[1].stdout.split() == [
        "https://discord.com/api/v10",
        "wss://gateway.discord.gg/",
        "1",
    ]


ECHO_BOT = """\
import os

import discord

intents = discord.Intents.default()
intents.message_content = True
client = discord.Client(intents=intents)


@client.event
async def on_message(message):
    if message.author != client.user:
        await message.channel.send(f"echo {message.author.name}: {message.content}")


client.run(os.environ["DISCORD_TOKEN"], log_handler=None)
"""


def test_a_piped_session_runs_and_stops_the_bot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """In this process (for the record of what ran): a piped prompt reaches a bot process
    that reads DISCORD_TOKEN, and the end of the input stops it cleanly."""
    (tmp_path / "echo_bot.py").write_text(ECHO_BOT)
    monkeypatch.setattr(sys, "stdin", io.StringIO("/as carol @general hi\n/quit\n"))
    args = ["sandbox", "--platform", "discord", "--", sys.executable, str(tmp_path / "echo_bot.py")]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert re.search(r"^bot process \d+ connected$", out, re.MULTILINE)
    assert out.endswith("bot process stopped (status 0)\nsandbox stopped\n")

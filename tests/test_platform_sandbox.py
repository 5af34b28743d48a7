"""The platform contract's sandbox member, followed from outside: the fake chat's sandbox.

``tests/fakechat`` names its sandbox in its contract (``tests.fakechat._sandbox:SANDBOX``);
registered, it joins ``actorscope run --sandbox`` and ``actorscope sandbox`` with no change to
either (neither ``bots/_app.py`` nor ``cli/_sandbox.py`` names a platform).
"""

from __future__ import annotations

import io
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Literal

import pytest
from tests.fakechat import SPEC, FakeChatPlatform

import actorscope
from actorscope.bots import BotConfig, run_bots
from actorscope.channels import ChannelSection
from actorscope.cli import main
from actorscope.errors import ConfigError
from actorscope.platforms import IdForm, PlatformSpec, register
from actorscope.sandbox import Sandbox, platform_sandbox

SRC = Path(actorscope.__file__).parent
HANDLER = """
async def handle(request):
    return f"echo {request.content}"
"""
BOUND = 30


@pytest.fixture(autouse=True)
def fakechat() -> Iterator[None]:
    """The fake chat is a registered platform for each test, and only then."""
    with register(SPEC):
        yield


async def lines_of(*lines: str) -> AsyncIterator[str]:
    """An in-memory prompt input."""
    for line in lines:
        yield line + "\n"


def _config(tmp_path: Path, sections: str) -> Path:
    """A bot.toml with ``sections`` (and its handler module) in ``tmp_path``."""
    (tmp_path / "echobot.py").write_text(HANDLER)
    path = tmp_path / "bot.toml"
    path.write_text(f'handler = "echobot:handle"\ndatabase = "bot.db"\n{sections}')
    return path


def test_the_run_and_sandbox_commands_name_no_platform() -> None:
    """bots/_app.py and cli/_sandbox.py never name Telegram or Discord: they ask the registry."""
    for path in (SRC / "bots" / "_app.py", SRC / "cli" / "_sandbox.py"):
        text = path.read_text().lower()
        assert ("telegram" not in text, "discord" not in text) == (True, True), path


def test_the_registry_loads_its_sandbox() -> None:
    """The contract's string names a Sandbox; a platform without one has None."""
    assert isinstance(platform_sandbox("fakechat"), Sandbox)
    with pytest.raises(ConfigError, match="no chat platform 'nochat'"):
        platform_sandbox("nochat")


async def test_run_sandbox_runs_its_section_on_its_emulator(tmp_path: Path) -> None:
    """A [fakechat] section runs on its sandbox: typed lines reach the bot, its posts print,
    and no other platform's emulator starts."""
    config = BotConfig.load(_config(tmp_path, "[fakechat]\n"))
    printed: list[str] = []
    lines = lines_of("/as alice hi", "/as bob @ideas hello there", "/quit")
    await run_bots(config, sandbox=True, out=printed.append, lines=lines, handle_signals=False)
    assert printed[0] == "fakechat: a fake chat server in this process (bot fakebot)"
    assert "[bot -> dm.alice] echo hi" in printed
    assert "[bot -> ideas] echo hello there" in printed
    assert "running agent 'main' on fakechat; Ctrl-C to stop" in printed
    assert not [line for line in printed if "Telegram" in line or "discord" in line]


async def test_run_sandbox_switches_between_its_console_and_telegrams(tmp_path: Path) -> None:
    """With [telegram] too, one prompt: /fakechat switches, /telegram LINE sends one line."""
    config = BotConfig.load(_config(tmp_path, "[telegram]\n[fakechat]\n"))
    printed: list[str] = []
    script = ("/fakechat", "/as alice hi", "/telegram /as alice @devs hello", "/quit")
    await run_bots(
        config, sandbox=True, out=printed.append, lines=lines_of(*script), handle_signals=False
    )
    assert "one prompt, 2 platforms: lines go to telegram until you switch" in "\n".join(printed)
    assert "now typing on fakechat (use /as to say who you are)" in printed
    assert "[bot -> dm.alice] echo hi" in printed
    assert any(line.startswith("  -> update 1: message") for line in printed)
    assert "running agent 'main' on telegram, fakechat; Ctrl-C to stop" in printed


class QuietChatSection(ChannelSection):
    """``[quietchat]`` of a ``bot.toml``."""

    platform: Literal["quietchat"] = "quietchat"


class _Quiet(FakeChatPlatform):
    """The fake chat's contract under another name, with no sandbox."""

    sandbox = ""
    section = QuietChatSection

    @property
    def spec(self) -> PlatformSpec:
        """Its registration."""
        return QUIET_SPEC


QUIET_SPEC = PlatformSpec("quietchat", IdForm.OPAQUE, "thread", f"{__name__}:QUIET")
QUIET = _Quiet()


async def test_without_a_sandbox_a_section_is_not_run_and_the_default_runs(
    tmp_path: Path,
) -> None:
    """An enabled section whose platform has no sandbox is not run (a line says so), and
    with none that has one the registry's first platform with a sandbox runs."""
    with register(QUIET_SPEC):
        assert platform_sandbox("quietchat") is None
        config = BotConfig.load(_config(tmp_path, "[quietchat]\n"))
        printed: list[str] = []
        await run_bots(
            config, sandbox=True, out=printed.append, lines=lines_of("/quit"), handle_signals=False
        )
    assert "quietchat: not run in --sandbox (its platform has no sandbox)" in printed
    assert "actorscope run --sandbox: Telegram Bot API emulator (offline)" in printed
    assert "running agent 'main' on telegram; Ctrl-C to stop" in printed


def test_actorscope_sandbox_takes_it_by_name(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``actorscope sandbox --platform fakechat`` serves its emulator with its console."""
    monkeypatch.setattr(sys, "stdin", io.StringIO("/help\n/as alice hi\n"))
    assert main(["sandbox", "--platform", "fakechat"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("fakechat: a fake chat server in this process (bot fakebot)\ntoken:")
    assert "connect: FakeChat.serving(TOKEN), in this process\n" in out
    assert "  -> event 1 (alice in their DM)\n" in out
    assert out.endswith("sandbox stopped\n")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--platform", "nochat"], "--platform must be telegram or discord or fakechat"),
        (["--platform", "http"], "--platform must be telegram or discord or fakechat"),
        (["--platform", "fakechat", "--token", "abc"], "--token is not taken: the fake chat"),
        (
            ["--platform", "fakechat", "--", "python", "bot.py"],
            "a bot command after -- is for --platform discord; a fake chat bot runs",
        ),
    ],
)
def test_actorscope_sandbox_refuses_in_its_words(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """An unknown platform, a token or command its sandbox cannot take: one line, exit 2."""
    assert main(["sandbox", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert message in err

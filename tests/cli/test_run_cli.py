"""``actorscope run``: config errors exit 2 with one line; the sandbox bot end to end."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from tests._wiring import RecordingSender

from actorscope.agents import AgentRegistry
from actorscope.bots import BotConfig, BotServices, load_handler, run_bots
from actorscope.cli import main
from actorscope.context import current_identity
from actorscope.errors import ConfigError
from actorscope.host import Host, MessageBus, RunStep
from actorscope.identity import PeerKind
from actorscope.messages import InboundMessage, RunRequest
from actorscope.permissions import GrantStore, PermissionPolicy
from actorscope.propagation import OriginSigner
from actorscope.store import Database
from actorscope.tools._workspace import Workspace

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
GOOD = """
handler = "mybot:handle"
database = "bot.db"
[telegram]
token_env = "AS_TEST_TELEGRAM_TOKEN"
"""
#: A token in @BotFather's format (never sent anywhere: these runs stop before connecting).
WELL_FORMED_TOKEN = "123456789:" + "A" * 35
HANDLER_MODULE = """
from actorscope.messages import RunRequest

async def handle(request: RunRequest) -> str:
    return "ok"

def not_async(request: RunRequest) -> str:
    return "no"
"""


def write_config(tmp_path: Path, text: str, module: str = HANDLER_MODULE) -> Path:
    """A config file (and the handler module mybot.py) in ``tmp_path``."""
    (tmp_path / "mybot.py").write_text(module)
    path = tmp_path / "bot.toml"
    path.write_text(text)
    return path


def run_cli(path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    """``actorscope run PATH``: the exit status and stderr."""
    status = main(["run", str(path), *extra])
    return status, capsys.readouterr().err


@pytest.mark.parametrize(
    ("text", "env", "message"),
    [
        (GOOD, {}, "environment variable AS_TEST_TELEGRAM_TOKEN is not set"),
        (GOOD + "colour = 1\n", {}, "telegram.colour: unknown key"),
        (GOOD.replace("token_env", "tokn_env"), {}, "telegram.tokn_env: unknown key"),
        ("handler = [", {}, "not valid TOML"),
        (GOOD.replace("mybot:handle", "nosuchmodule:handle"), {"x": "1"}, "not found"),
        (GOOD.replace("mybot:handle", "mybot:missing"), {"x": "1"}, "has no 'missing'"),
        (GOOD.replace("mybot:handle", "mybot:not_async"), {"x": "1"}, "not an async function"),
        (GOOD.replace("mybot:handle", "mybot"), {}, "module:function"),
        (GOOD.replace('token_env = "AS_TEST_TELEGRAM_TOKEN"', "enabled = false"), {}, "no enabled"),
        ("owners = ['@bob']\n" + GOOD, {}, "username"),
        (GOOD, {"token": "123:abc"}, "does not hold a Telegram bot token"),
        (GOOD, {"token": "MTA5.Gx_discord.tokenlike-" + "x" * 30}, "(<bot id>:<secret>"),
        ('agent = "bad key!"\n' + GOOD, {"x": "1"}, "agent: agent key must be"),
        ('tenant = "Acme Corp"\n' + GOOD, {"x": "1"}, "tenant: tenant slug must be"),
    ],
)
def test_run_config_errors_exit_2_with_one_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    text: str,
    env: dict[str, str],
    message: str,
) -> None:
    """Each bad config is one clear stderr line and exit 2, before any database is created."""
    monkeypatch.delenv("AS_TEST_TELEGRAM_TOKEN", raising=False)
    if env:
        monkeypatch.setenv("AS_TEST_TELEGRAM_TOKEN", env.get("token", WELL_FORMED_TOKEN))
    monkeypatch.delitem(sys.modules, "mybot", raising=False)
    status, err = run_cli(write_config(tmp_path, text), capsys)
    assert status == 2
    assert err.count("\n") == 1, err
    assert err.startswith("actorscope: error: ")
    assert message in err
    assert env.get("token", WELL_FORMED_TOKEN) not in err  # a token is never echoed
    assert not (tmp_path / "bot.db").exists()


def test_handler_import_failure_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A handler module that raises on import is a ConfigError naming the failure."""
    monkeypatch.delitem(sys.modules, "mybot", raising=False)
    write_config(tmp_path, GOOD, module="raise RuntimeError('boom')\n")
    with pytest.raises(ConfigError, match="importing mybot failed: RuntimeError: boom"):
        load_handler("mybot:handle", tmp_path)
    assert "mybot" not in sys.modules


def test_config_database_url_is_kept_as_written(tmp_path: Path) -> None:
    """A database URL (PostgreSQL) is not turned into a path next to the config file."""
    url = "postgresql://bot@127.0.0.1:5432/bots"
    path = write_config(tmp_path, GOOD.replace('"bot.db"', f'"{url}"'))
    assert BotConfig.load(path).database == url


def test_config_paths_and_sections(tmp_path: Path) -> None:
    """Relative paths resolve next to the file; sections become ChannelConfigs."""
    path = write_config(
        tmp_path,
        GOOD + '[discord]\ntoken_env = "D"\nenabled = false\ngroup_policy = "allowlist"\n',
    )
    config = BotConfig.load(path)
    assert config.database == str(tmp_path.resolve() / "bot.db")
    assert config.workspace == tmp_path.resolve() / "workspace"
    assert [s.config.platform for s in config.sections()] == ["telegram"]
    discord = config.section("discord")
    assert discord is not None
    assert discord.config.group_policy == "allowlist"


async def test_run_step_gives_owners_their_role_and_binds_services(tmp_path: Path) -> None:
    """Configured owners run with role owner; the handler sees the services and identity."""
    seen: list[tuple[str, str, BotServices]] = []

    async def handler(request: RunRequest) -> str:
        identity = current_identity()
        assert identity is not None
        seen.append((request.role, identity.role, BotServices.current()))
        return "ok"

    async with Database.open(tmp_path / "t.db") as db:
        agent = await AgentRegistry(db).create("main")
        grants = GrantStore(db)
        services = BotServices(db, agent, grants, PermissionPolicy(grants), Workspace(tmp_path))
        sender = RecordingSender()
        step = RunStep(
            services.wrap(handler),
            signer=OriginSigner(),
            senders={"telegram": sender},
            owners=("42",),
        )
        host = Host(step, bus=MessageBus())
        for actor in ("42", "7"):
            message = InboundMessage(
                channel="telegram",
                sender_id=actor,
                chat_id="-1",
                content="hi",
                peer_kind=PeerKind.GROUP,
                user_id="group:telegram:-1",
            )
            assert [out.content for out in await host.process(message)] == ["ok"]
    assert [(r, i) for r, i, _ in seen] == [("owner", "owner"), ("", "")]
    assert seen[0][2] is services
    with pytest.raises(ConfigError):
        BotServices.current()


async def read_until(
    stream: asyncio.StreamReader, predicate: Callable[[str], bool], out: list[str]
) -> str:
    """Read lines (10 s at most) until one satisfies ``predicate``; return it."""
    async with asyncio.timeout(10):
        while True:
            raw = await stream.readline()
            if not raw:
                raise AssertionError("the bot exited early:\n" + "".join(out))
            line = raw.decode()
            out.append(line)
            if predicate(line):
                return line


async def test_sandbox_end_to_end_over_loopback(tmp_path: Path) -> None:
    """examples/bot.toml --sandbox: a writer's /note is saved, a non-writer's refused, in place."""
    for name in ("bot.toml", "telegram_bot.py"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("TELEGRAM_BOT_TOKEN", None)
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "actorscope",
        "run",
        str(tmp_path / "bot.toml"),
        "--sandbox",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
        cwd=tmp_path,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    assert proc.stderr is not None
    out: list[str] = []

    async def say(line: str) -> None:
        assert proc.stdin is not None
        proc.stdin.write(line.encode() + b"\n")
        await proc.stdin.drain()

    def bot_said(place: str, text: str) -> Callable[[str], bool]:
        return lambda line: line.startswith(f"[bot -> {place} ") and line.rstrip().endswith(text)

    try:
        base_url = await read_until(proc.stdout, lambda s: s.startswith("base_url:"), out)
        assert re.fullmatch(r"base_url: http://127\.0\.0\.1:\d+/bot\n", base_url)
        await read_until(proc.stdout, lambda s: s.startswith("running agent 'notes'"), out)
        await say("/as alice @devs#ideas here is my message")
        queued = await read_until(proc.stdout, lambda s: "-> update" in s, out)
        match = re.search(r"\(message (\d+)\)", queued)
        assert match is not None
        await say(f"/reply {match.group(1)} /addwriter")
        await read_until(proc.stdout, bot_said("@devs#2", "as a writer"), out)
        await say("/as alice @devs#ideas /note buy milk")
        await read_until(proc.stdout, bot_said("@devs#2", "saved"), out)
        await say("/as bob @devs#ideas /note hack the planet")
        await read_until(proc.stdout, bot_said("@devs#2", "denied: no_grant"), out)
        await say("/as carol @ops /note elsewhere")
        await read_until(proc.stdout, bot_said("@ops", "denied: no_grant"), out)
        proc.send_signal(signal.SIGTERM)
        await read_until(proc.stdout, lambda s: s.strip() == "stopped", out)
        assert await asyncio.wait_for(proc.wait(), 10) == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    err = (await proc.stderr.read()).decode()
    assert "Traceback" not in err, err
    (notes,) = (tmp_path / "workspace" / "tenants").glob("*/agents/notes/*/notes.md")
    assert "buy milk" in notes.read_text()
    assert "hack" not in notes.read_text()
    assert notes.parent.name.startswith("group%3Atelegram%3A-100")


async def lines_of(*lines: str) -> AsyncIterator[str]:
    """An in-memory prompt input."""
    for line in lines:
        yield line + "\n"


async def test_run_bots_in_process_stops_on_event_and_on_quit(tmp_path: Path) -> None:
    """run_bots returns cleanly when ``stop`` is set, and when the sandbox prompt ends."""
    config = BotConfig.load(write_config(tmp_path, GOOD + '[discord]\ntoken_env = "D"\n'))
    stop = asyncio.Event()
    printed: list[str] = []

    def out(line: str) -> None:
        printed.append(line)
        if line.startswith("running agent"):
            stop.set()

    async with asyncio.timeout(20):
        await run_bots(config, sandbox=True, out=out, stop=stop, handle_signals=False)
        assert any(
            x.startswith("discord:  gateway + REST emulator on http://127.0.0.1:") for x in printed
        )
        assert printed[-2:] == ["stopping", "stopped"]
        printed.clear()
        await run_bots(config, sandbox=True, out=printed.append, lines=lines_of("/users", "/quit"))
    assert any("@alice" in line for line in printed)
    assert printed[-1] == "stopped"
    async with Database.open(config.database) as db:
        agent = await AgentRegistry(db).resolve("main")
    assert agent.key == "main"


async def test_the_sandbox_runs_only_the_enabled_platforms(tmp_path: Path) -> None:
    """With only [discord] enabled, --sandbox starts Discord's emulator and not Telegram's."""
    text = 'handler = "mybot:handle"\ndatabase = "bot.db"\n[discord]\ntoken_env = "D"\n'
    config = BotConfig.load(write_config(tmp_path, text))
    printed: list[str] = []
    async with asyncio.timeout(20):
        await run_bots(config, sandbox=True, out=printed.append, lines=lines_of("/quit"))
    assert any(x.startswith("discord:  gateway + REST emulator on") for x in printed)
    assert not [x for x in printed if "Telegram" in x or x.startswith("base_url:")]
    assert "running agent 'main' on discord; Ctrl-C to stop" in printed
    assert printed[-1] == "stopped"


async def test_a_failing_prompt_input_is_raised_after_a_clean_shutdown(tmp_path: Path) -> None:
    """A sandbox input that fails ends the session, and run_bots raises its error."""
    config = BotConfig.load(write_config(tmp_path, GOOD))
    printed: list[str] = []

    async def broken() -> AsyncIterator[str]:
        yield "/users\n"
        raise TimeoutError("the script waited too long")

    async with asyncio.timeout(20):
        with pytest.raises(TimeoutError, match="the script waited too long"):
            await run_bots(config, sandbox=True, out=printed.append, lines=broken())
    assert any(line.startswith("@alice") for line in printed)  # the line before it ran

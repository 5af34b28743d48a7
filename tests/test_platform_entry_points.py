"""Platforms of other distributions: found through their ``actorscope.platforms`` entry points.

A temporary distribution (a ``dist-info`` folder on the path) declares the test platform,
``tests/fakechat``, as an installed package would; a fresh process (the registry looks for
entry points once) then sees it through the registry and the CLI, and a broken entry point is
one line naming it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest
from tests.fakechat import SPEC, FakeChat

from actorscope.errors import ConfigError
from actorscope.platforms import ENTRY_POINT_GROUP, _entry_point_spec, platform_spec

REPO = Path(__file__).resolve().parents[1]
TIMEOUT = 120.0


def _installed(tmp_path: Path, entry: str) -> Path:
    """A distribution in ``tmp_path/site`` whose one entry point is ``entry``."""
    info = tmp_path / "site" / "fakechat_plugin-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fakechat-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\n{entry}\n")
    return info.parent


def _actorscope(
    site: Path, *args: str, cwd: Path, **variables: str
) -> subprocess.CompletedProcess[str]:
    """``python -m actorscope ARGS`` with ``site`` and this repository on the path (and the
    environment ``variables``)."""
    path = [str(site), str(REPO), os.environ.get("PYTHONPATH", "")]
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACTORSCOPE_")}
    return subprocess.run(  # noqa: S603 - this interpreter, our own module, the test's args
        [sys.executable, "-m", "actorscope", *args],
        cwd=cwd,
        env={**env, **variables, "PYTHONPATH": os.pathsep.join(filter(None, path))},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def test_an_installed_platform_is_seen_by_the_registry_and_the_cli(tmp_path: Path) -> None:
    """Declared by an entry point, the fake chat normalises its events through ``actorscope
    normalize`` and has its section in ``bot.toml``'s schema, with nothing registering it."""
    site = _installed(tmp_path, "fakechat = tests.fakechat:SPEC")
    event = tmp_path / "event.json"
    event.write_text(json.dumps(FakeChat().message("alice", "hi", "ideas")))
    normalized = _actorscope(site, "normalize", "--platform", "fakechat", str(event), cwd=tmp_path)
    assert normalized.returncode == 0, normalized.stderr
    result = json.loads(normalized.stdout)
    assert (result["channel"], result["sender_id"], result["user_id"]) == (
        "fakechat",
        "alice",
        "group:fakechat:ideas",
    )
    schema = _actorscope(site, "schema", "config", cwd=tmp_path)
    assert schema.returncode == 0, schema.stderr
    document = json.loads(schema.stdout)
    assert {"telegram", "discord", "fakechat"} <= set(document["properties"])
    assert "FakeChatSection" in document["$defs"]


ECHO_BOT = """
async def handle(request):
    return f"heard {request.content}"
"""
RUN_CONFIG = """
handler = "fakebot:handle"
database = "bot.db"
[fakechat]
token_env = "FAKECHAT_TOKEN"
"""
#: ``run_bots`` on a ``bot.toml`` with a ``[fakechat]`` section, beside the fake chat's server
#: (its runner finds it by the token): alice says hello in her DM; once the bot has answered,
#: the run stops; what it printed and posted is the last line, as JSON.
RUN_SCRIPT = """
import asyncio, json, sys
from pathlib import Path

from tests._wait import wait_until
from tests.fakechat import FakeChat

from actorscope.bots import BotConfig, run_bots


async def main():
    chat = FakeChat()
    chat.person("alice")
    config = BotConfig.load(Path("bot.toml"))
    printed, stop = [], asyncio.Event()

    async def alice_says_hello():
        await wait_until(lambda: any(line.startswith("running") for line in printed), 30)
        await chat.updates.put(chat.message("alice", "hello"))
        await wait_until(lambda: bool(chat.posted), 30)
        stop.set()

    said = asyncio.create_task(alice_says_hello())
    env = {"FAKECHAT_TOKEN": chat.token}
    await run_bots(config, env=env, out=printed.append, stop=stop, handle_signals=False)
    await said
    posted = [[post.chat, post.text] for post in chat.posted]
    print(json.dumps({"printed": printed, "posted": posted}))


asyncio.run(main())
"""


def test_actorscope_run_runs_an_installed_platform_through_its_contract(tmp_path: Path) -> None:
    """``run_bots`` runs a ``[fakechat]`` section with the runner the fake chat's contract
    builds: its events reach the handler and the reply is posted back; with a token no server
    has, ``actorscope run`` is one line naming the platform (exit 2)."""
    site = _installed(tmp_path, "fakechat = tests.fakechat:SPEC")
    (tmp_path / "fakebot.py").write_text(ECHO_BOT)
    (tmp_path / "bot.toml").write_text(RUN_CONFIG)
    (tmp_path / "drive.py").write_text(RUN_SCRIPT)
    path = [str(site), str(REPO), os.environ.get("PYTHONPATH", "")]
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACTORSCOPE_")}
    ran = subprocess.run(
        [sys.executable, "drive.py"],
        cwd=tmp_path,
        env={**env, "PYTHONPATH": os.pathsep.join(filter(None, path))},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    result = json.loads(ran.stdout.strip().splitlines()[-1])
    assert result["posted"] == [["dm.alice", "heard hello"]]
    assert "running agent 'main' on fakechat; Ctrl-C to stop" in result["printed"]
    assert result["printed"][-2:] == ["stopping", "stopped"]
    refused = _actorscope(site, "run", "bot.toml", cwd=tmp_path, FAKECHAT_TOKEN="0" * 32)
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines() == [
        "actorscope: error: fakechat: no server of this process has the token"
    ]


SAVES_FOR_ANYONE = """
from actorscope.bots import BotServices


async def handle(request):
    services = BotServices.current()
    services.workspace.append(services.agent, request.identity(), "notes.md", request.content)
    return "saved"
"""


#: A file running its handler on Telegram and on the fake chat (the probe's rooms name no bot).
TWO_PLATFORMS = """
handler = "notes_bot:handle"
[telegram]
token_env = "T"
[fakechat]
token_env = "F"
require_mention = false
"""


def test_actorscope_probe_probes_every_enabled_platform_it_can_drive(tmp_path: Path) -> None:
    """By default ``actorscope probe`` runs a file's handler on each enabled platform whose
    contract names a simulator: Telegram and the installed fake chat, in one report."""
    site = _installed(tmp_path, "fakechat = tests.fakechat:SPEC")
    (tmp_path / "notes_bot.py").write_text(SAVES_FOR_ANYONE)
    (tmp_path / "bot.toml").write_text(TWO_PLATFORMS)
    args = ["probe", "bot.toml", "--command", "/save", "--writer-only", "/save", "--json"]
    probed = _actorscope(site, *args, cwd=tmp_path)
    assert probed.returncode == 1, probed.stderr
    report = json.loads(probed.stdout)
    leaks = {(c["event"], c["command"]) for c in report["cases"] if c["status"] == "leak"}
    assert ("non-writer member (group)", "/save") in leaks
    assert ("fakechat: non-writer member", "/save") in leaks


def test_a_broken_entry_point_is_one_line_naming_it(tmp_path: Path) -> None:
    """An entry point whose object does not load stops the command with one line (exit 2)
    naming it, instead of a traceback or a platform silently missing."""
    site = _installed(tmp_path, "fakechat = tests.fakechat:NO_SUCH_SPEC")
    event = tmp_path / "event.json"
    event.write_text(json.dumps(FakeChat().message("alice", "hi", "ideas")))
    broken = _actorscope(site, "normalize", "--platform", "fakechat", str(event), cwd=tmp_path)
    _one_error_line(
        broken,
        "actorscope: error: platform entry point fakechat = 'tests.fakechat:NO_SUCH_SPEC' "
        "(actorscope.platforms) cannot be loaded: AttributeError:",
    )


def _one_error_line(done: subprocess.CompletedProcess[str], start: str) -> None:
    """The command exited 2 with one line on stderr, which begins with ``start``."""
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(start)


#: Imports a bot that never uses a platform plugin makes: none of them asks for plugins.
UNRELATED_IMPORTS = """
import actorscope.bots
import actorscope.http
import actorscope.integrations.discord_ext
import actorscope.integrations.ptb
import actorscope.testing
from actorscope.identity import (Identity)

# A Telegram bot under a channel name of its own asks the registry about that name.
print(Identity.chat("telegram", -5, 42, group=True, channel="tg2").user_id)
"""


def test_a_broken_plugin_breaks_no_unrelated_import(tmp_path: Path) -> None:
    """With a broken platform installed, the integrations, the kit, HTTP and the bots face
    still import and a channel name of a bot's own is still answered (a PTB bot keeps
    running); loading a ``bot.toml``, which lists every platform, says what is broken."""
    site = _installed(tmp_path, "chat = nonexistent_mod:SPEC")
    path = [str(site), str(REPO), os.environ.get("PYTHONPATH", "")]
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACTORSCOPE_")}
    imported = subprocess.run(  # noqa: S603 - this interpreter, the test's own script
        [sys.executable, "-c", UNRELATED_IMPORTS],
        cwd=tmp_path,
        env={**env, "PYTHONPATH": os.pathsep.join(filter(None, path))},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert (imported.returncode, imported.stdout) == (0, "group:tg2:-5\n"), imported.stderr
    (tmp_path / "bot.toml").write_text(RUN_CONFIG)
    refused = _actorscope(site, "run", "bot.toml", cwd=tmp_path)
    _one_error_line(
        refused,
        "actorscope: error: platform entry point chat = 'nonexistent_mod:SPEC' "
        "(actorscope.platforms) cannot be loaded: ModuleNotFoundError:",
    )


#: An installed platform whose spec loads but whose contract module is not there.
GHOST_PLUGIN = """
from actorscope.platforms import IdForm, PlatformSpec

SPEC = PlatformSpec("ghost", IdForm.OPAQUE, contract="ghost_contract_missing:PLATFORM")
"""


def test_a_platform_whose_contract_module_is_missing_is_one_line_naming_it(
    tmp_path: Path,
) -> None:
    """A plugin whose contract module cannot be imported stops the command with one line
    (exit 2) naming the platform, the module and why, instead of a traceback."""
    site = _installed(tmp_path, "ghost = ghost_plugin:SPEC")
    (site / "ghost_plugin.py").write_text(GHOST_PLUGIN)
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"text": "hi"}))
    broken = _actorscope(site, "normalize", "--platform", "ghost", str(event), cwd=tmp_path)
    assert broken.returncode == 2
    assert broken.stderr.strip().splitlines() == [
        "actorscope: error: platform 'ghost': its contract module 'ghost_contract_missing' "
        "cannot be imported: ModuleNotFoundError: No module named 'ghost_contract_missing'"
    ]


@pytest.mark.parametrize(
    ("name", "value", "problem"),
    [
        pytest.param(
            "fakechat",
            "tests.fakechat:PLATFORM",
            "it names a FakeChatPlatform, not a PlatformSpec",
            id="not-a-spec",
        ),
        pytest.param(
            "chat", "tests.fakechat:SPEC", "it names the platform 'fakechat', not 'chat'", id="name"
        ),
        pytest.param(
            "nowhere",
            "tests.no_such_module:SPEC",
            "cannot be loaded: ModuleNotFoundError: No module named 'tests.no_such_module'",
            id="no-module",
        ),
    ],
)
def test_an_entry_point_that_is_not_a_new_platform_is_refused(
    name: str, value: str, problem: str
) -> None:
    """An entry point naming something else than a spec of its own name is one ConfigError
    naming the entry point and what is wrong with it."""
    entry = EntryPoint(name, value, ENTRY_POINT_GROUP)
    with pytest.raises(ConfigError) as refused:
        _entry_point_spec(entry, {})
    assert str(refused.value) == (
        f"platform entry point {name} = {value!r} (actorscope.platforms)"
        f"{'' if problem.startswith('cannot') else ':'} {problem}"
    )


def test_an_entry_point_cannot_take_a_registered_name() -> None:
    """A platform of an entry point never replaces one the registry holds."""
    entry = EntryPoint("fakechat", "tests.fakechat:SPEC", ENTRY_POINT_GROUP)
    assert _entry_point_spec(entry, {}) == SPEC
    with pytest.raises(ConfigError) as refused:
        _entry_point_spec(entry, {"fakechat": SPEC})
    assert str(refused.value) == (
        "platform entry point fakechat = 'tests.fakechat:SPEC' (actorscope.platforms): "
        "a platform named 'fakechat' is registered already"
    )
    assert platform_spec("fakechat") is None  # nothing was registered

"""pytest is the ``testing`` extra: a base install runs bots without it; demo and probe say so."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest

#: The ``run_cli`` fixture (tests/cli/conftest.py).
RunCli = Callable[..., subprocess.CompletedProcess[str]]
#: The console script pip installed next to this interpreter.
ACTORSCOPE = Path(sys.executable).parent / "actorscope"
ROOT = Path(__file__).resolve().parents[2]
#: The packages of the ``testing`` extra (and pytest's own implementation package).
KIT_PACKAGES = ("pytest", "_pytest", "pytest_asyncio")
#: A ``sitecustomize`` that makes the kit's packages absent, as in a base install: importing
#: one raises ``ModuleNotFoundError`` just as when it is not installed.
BLOCKER = f"""\
import sys


class _NoTestingExtra:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in {KIT_PACKAGES!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None


sys.meta_path.insert(0, _NoTestingExtra())
"""
#: What ``actorscope run --sandbox`` prints once its bot polls the emulator.
READY = "running agent 'notes' on telegram"
SECONDS = 60.0


def _requirement_names(requirements: list[str]) -> set[str]:
    """The distribution names of PEP 508 requirement strings (lower case)."""
    names = set()
    for requirement in requirements:
        name = requirement
        for stop in "<>=!~[; ":
            name = name.partition(stop)[0]
        names.add(name.strip().lower())
    return names


@pytest.fixture
def no_pytest(tmp_path: Path) -> dict[str, str]:
    """Environment variables under which ``actorscope`` cannot import pytest or pytest-asyncio."""
    site = tmp_path / "no-pytest"
    site.mkdir()
    (site / "sitecustomize.py").write_text(BLOCKER, encoding="utf-8")
    return {"PYTHONPATH": str(site)}


@pytest.fixture
def bot_dir(tmp_path: Path) -> Path:
    """The example Telegram bot and its bot.toml in a folder of their own."""
    folder = tmp_path / "bot"
    folder.mkdir()
    for name in ("bot.toml", "telegram_bot.py"):
        shutil.copy(ROOT / "examples" / name, folder / name)
    return folder


def test_pytest_is_the_testing_extra_not_a_base_dependency() -> None:
    """No pytest in the base dependencies; `testing` is pytest + pytest-asyncio; `test` has it."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    assert not {name for name in _requirement_names(project["dependencies"]) if "pytest" in name}
    assert _requirement_names(extras["testing"]) == {"pytest", "pytest-asyncio"}
    assert "actorscope[testing]" in extras["test"]
    assert project["entry-points"]["pytest11"] == {"actorscope": "actorscope._pytest_plugin"}


def test_the_blocker_hides_pytest(no_pytest: dict[str, str], tmp_path: Path) -> None:
    """Under the blocker, importing pytest or pytest_asyncio fails as when not installed."""
    code = (
        "import importlib\n"
        f"for name in {KIT_PACKAGES!r}:\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except ModuleNotFoundError as exc:\n"
        "        print(exc.name)\n"
    )
    done = subprocess.run(  # noqa: S603 - our own interpreter and a constant script
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env={**os.environ, **no_pytest},
        capture_output=True,
        text=True,
        timeout=SECONDS,
        check=False,
    )
    assert (done.returncode, done.stdout.split(), done.stderr) == (0, list(KIT_PACKAGES), "")


async def test_run_sandbox_starts_without_pytest(
    no_pytest: dict[str, str], bot_dir: Path, run_cli: RunCli
) -> None:
    """`actorscope run examples/bot.toml --sandbox` starts and stops on a base install."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_BOT_TOKEN")}
    proc = await asyncio.create_subprocess_exec(
        str(ACTORSCOPE),
        "run",
        "bot.toml",
        "--sandbox",
        cwd=bot_dir,
        env={**env, **no_pytest},
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    try:
        seen: list[str] = []
        async with asyncio.timeout(SECONDS):
            while not seen or READY not in seen[-1]:
                line = await proc.stdout.readline()
                assert line, f"exited before {READY!r}: {''.join(seen)}"
                seen.append(line.decode())
        proc.stdin.write(b"/quit\n")
        out, err = await asyncio.wait_for(proc.communicate(), SECONDS)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert (proc.returncode, err.decode()) == (0, "")
    assert out.decode().endswith("stopped\n")
    # The bot's database is there: `check` (another command of the base install) decides on it.
    checked = run_cli(
        *("check", "--db", "bot.db", "--agent", "notes", "--scope", "group:telegram:-100"),
        *("--sender", "7", "--type", "file_writer"),
        cwd=bot_dir,
        env=no_pytest,
    )
    assert (checked.returncode, checked.stderr) == (0, "")
    assert "no_grant" in checked.stdout


def test_help_without_pytest(no_pytest: dict[str, str], tmp_path: Path, run_cli: RunCli) -> None:
    """`actorscope --help` lists every command on a base install."""
    done = run_cli("--help", cwd=tmp_path, env=no_pytest)
    assert (done.returncode, done.stderr) == (0, "")
    assert "demo" in done.stdout
    assert "probe" in done.stdout


@pytest.mark.parametrize(
    ("args", "command"),
    [(("demo",), "demo"), (("probe", "bot.toml"), "probe")],
)
def test_kit_commands_without_pytest_name_the_extra(
    no_pytest: dict[str, str], bot_dir: Path, run_cli: RunCli, args: tuple[str, ...], command: str
) -> None:
    """`demo` and `probe` on a base install: one line naming actorscope[testing], exit 2."""
    done = run_cli(*args, cwd=bot_dir, env=no_pytest)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"actorscope: error: actorscope {command} runs the testing kit, which needs the testing "
        "extra (pytest is missing): pip install 'actorscope[testing]'\n"
    )
    assert sorted(path.name for path in bot_dir.iterdir()) == ["bot.toml", "telegram_bot.py"]

"""actorscope.sandbox (both emulators) is runtime code: no pytest, no actorscope.testing."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from tests._imports import imported, imports_of

import actorscope
import actorscope.sandbox

FORBIDDEN = ("pytest", "actorscope.testing")
#: The runtime modules that may import the testing kit, lazily (inside a function or under
#: ``TYPE_CHECKING``): ``actorscope demo`` replays scenario files through the kit's
#: ``AgentEnv`` and ``actorscope probe`` runs the kit's probe; both are the kit at work.
KIT_COMMANDS = frozenset({"cli/_demo.py", "cli/_probe.py"})
#: The Bot API emulator's module, which the method modules never import (they take its context).
EMULATOR = "actorscope.sandbox._telegram.emulator"


def _is_kit(name: str) -> bool:
    """Whether a module name is the testing kit or one of its modules."""
    return name == FORBIDDEN[1] or name.startswith(FORBIDDEN[1] + ".")


def test_sandbox_imports_no_test_code() -> None:
    """No module of the sandbox package or its subpackages imports pytest or the testing kit."""
    package = Path(actorscope.sandbox.__file__).parent
    found: list[str] = []
    paths = sorted(package.rglob("*.py"))
    assert package / "_telegram" / "emulator.py" in paths
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            found += [
                f"{path.relative_to(package)}: {n}"
                for n in imported(node)
                if n.split(".")[0] == FORBIDDEN[0] or _is_kit(n)
            ]
    assert found == []


def test_runtime_imports_the_testing_kit_only_lazily_in_kit_commands() -> None:
    """Outside testing/, only the demo and probe commands import the kit, never at import time."""
    src = Path(actorscope.__file__).parent
    eager: list[str] = []
    lazy: set[str] = set()
    for path in sorted(src.rglob("*.py")):
        name = path.relative_to(src).as_posix()
        if name.startswith("testing/"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top = set(map(id, tree.body))
        for node in ast.walk(tree):
            for module in filter(_is_kit, imported(node)):
                if id(node) in top:
                    eager.append(f"{name}: {module}")
                else:
                    lazy.add(name)
    assert eager == []
    assert lazy <= KIT_COMMANDS


def test_importing_the_sandbox_loads_no_discord() -> None:
    """The pytest plugin imports the sandbox (Telegram); that must not load discord.py."""
    code = "import sys, actorscope.sandbox; print('discord' in sys.modules)"
    done = subprocess.run(  # noqa: S603 - our own interpreter and a constant script
        [sys.executable, "-W", "error", "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout.strip()) == (0, "False"), done.stderr


def test_bot_api_methods_take_the_context_not_the_emulator() -> None:
    """No Bot API method module (nor their context) imports the emulator, even for typing."""
    package = Path(actorscope.sandbox.__file__).parent / "_telegram"
    modules = [*sorted(package.glob("methods_*.py")), package / "context.py"]
    assert len(modules) == 6
    found = [
        f"{path.name}: {name}"
        for path in modules
        for name in imports_of(path)
        if name == EMULATOR or name.startswith(EMULATOR + ".")
    ]
    assert found == []

"""actorscope.sandbox (both emulators) is runtime code: no pytest, no actorscope.testing."""

from __future__ import annotations

import ast
from pathlib import Path

import actorscope.sandbox

FORBIDDEN = ("pytest", "actorscope.testing")


def test_sandbox_imports_no_test_code() -> None:
    """No module of the sandbox package or its subpackages imports pytest or the testing kit."""
    package = Path(actorscope.sandbox.__file__).parent
    found: list[str] = []
    paths = sorted(package.rglob("*.py"))
    assert package / "_telegram" / "emulator.py" in paths
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            found += [
                f"{path.relative_to(package)}: {n}"
                for n in names
                if n.split(".")[0] == "pytest" or n.startswith(FORBIDDEN[1])
            ]
    assert found == []

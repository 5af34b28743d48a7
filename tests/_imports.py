"""Read which modules the package's source files import (ast), for the layering tests."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path


def imported(node: ast.AST) -> list[str]:
    """The module names one node imports (absolute imports only; the package uses no others)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.module:
        return [node.module]
    return []


def imports_of(path: Path) -> Iterator[str]:
    """Every module ``path`` imports, at any depth (inside functions and ``TYPE_CHECKING`` too)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        yield from imported(node)

"""A griffe extension for the API reference: Sphinx roles in docstrings become Markdown code.

The docstrings name other objects the Sphinx way (``:class:`~actorscope.host.RunStep```,
``:meth:`Scope.parse```); mkdocstrings renders Markdown, where the role would show
literally. ``~`` keeps the last part of the name only, as Sphinx shows it.
"""

from __future__ import annotations

import ast
import re
from typing import Any

import griffe

ROLE = re.compile(
    r":(?:class|func|meth|attr|data|mod|exc|obj|const):`(?P<short>~?)(?P<target>[^`]+)`"
)


def _code(match: re.Match[str]) -> str:
    target = match["target"]
    return f"`{target.rsplit('.', 1)[-1] if match['short'] else target}`"


def without_roles(text: str) -> str:
    """``text`` with each Sphinx cross-reference role written as Markdown inline code."""
    return ROLE.sub(_code, text)


class SphinxRoles(griffe.Extension):
    """Rewrites the roles of every docstring griffe loads for the reference pages."""

    def on_instance(
        self,
        *,
        node: ast.AST | griffe.ObjectNode,
        obj: griffe.Object,
        agent: griffe.Visitor | griffe.Inspector,
        **kwargs: Any,
    ) -> None:
        """Rewrite ``obj``'s docstring before mkdocstrings parses it."""
        if obj.docstring is not None:
            obj.docstring.value = without_roles(obj.docstring.value)

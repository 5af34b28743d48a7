"""Load a scenario file with line numbers: YAML nodes → data + a path → line map → pydantic.

Every problem is one :class:`ScenarioError` (a :class:`~actorscope.errors.PayloadError`) whose
message starts with ``<file>:<line>:`` and names the key path and what is wrong.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from actorscope.errors import PayloadError
from actorscope.testing.scenario._model import Scenario

__all__ = ["Lines", "LoadedScenario", "ScenarioError", "where"]


class ScenarioError(PayloadError):
    """A ``*.scenario.yaml`` file is malformed; the message starts with ``file:line:``."""


Key = str | int
Lines = dict[tuple[Key, ...], int]


@dataclass(frozen=True, slots=True)
class LoadedScenario:
    """A validated scenario, its file and the line of every key path."""

    scenario: Scenario
    path: Path
    lines: Lines

    def line(self, *path: Key) -> int:
        """The line of the deepest known prefix of ``path`` (1 when nothing matches)."""
        return _line(self.lines, path)

    @classmethod
    def load(cls, path: str | Path) -> LoadedScenario:
        """Read and validate a ``*.scenario.yaml`` file."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ScenarioError(f"{path}:1: cannot read: {exc}") from None
        return cls.parse(text, path)

    @classmethod
    def parse(cls, text: str, path: Path) -> LoadedScenario:
        """Parse and validate scenario text; ``path`` is used in messages."""
        source = str(path)
        try:
            root = yaml.compose(text, Loader=yaml.SafeLoader)
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            line = mark.line + 1 if mark is not None else 1
            raise ScenarioError(f"{source}:{line}: not valid YAML: {exc.problem}") from None
        except yaml.YAMLError as exc:
            raise ScenarioError(f"{source}:1: not valid YAML: {exc}") from None
        if root is None:
            raise ScenarioError(f"{source}:1: the file is empty; a scenario needs steps")
        lines: Lines = {}
        try:
            data = _data(root, (), lines, source)
        except yaml.YAMLError as exc:
            raise ScenarioError(f"{source}:1: not valid YAML: {exc}") from None
        if not isinstance(data, dict):
            raise ScenarioError(f"{source}:{_line(lines, ())}: a scenario is a mapping of keys")
        try:
            scenario = Scenario.model_validate(data)
        except ValidationError as exc:
            error = exc.errors(include_url=False)[0]
            loc = tuple(error["loc"])
            message = str(error["msg"]).removeprefix("Value error, ")
            if error["type"] == "extra_forbidden":
                message = "unknown key"
            elif error["type"] == "missing":
                message = "missing required key"
            raise ScenarioError(
                f"{source}:{_line(lines, loc)}: {where(loc) or 'top level'}: {message}"
            ) from None
        _check_bot_keys(scenario, lines, source)
        return cls(scenario, path, lines)

    def at(self, *path: Key) -> str:
        """``<file>:<line>``."""
        return f"{self.path}:{self.line(*path)}"


def _line(lines: Lines, path: Sequence[Key]) -> int:
    for end in range(len(path), -1, -1):
        found = lines.get(tuple(path[:end]))
        if found is not None:
            return found
    return 1


def where(path: Sequence[Key]) -> str:
    """``steps[2].telegram.from`` for a key path."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text.lstrip(".")


def _data(node: yaml.Node, path: tuple[Key, ...], lines: Lines, source: str) -> Any:
    lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key = yaml.SafeLoader(" ").construct_object(key_node)
            if not isinstance(key, str | int) or isinstance(key, bool):
                raise ScenarioError(
                    f"{source}:{key_node.start_mark.line + 1}: {where(path) or 'top level'}: "
                    f"keys must be text, got {key!r}"
                )
            if str(key) in result:
                raise ScenarioError(
                    f"{source}:{key_node.start_mark.line + 1}: {where((*path, str(key)))}: "
                    "duplicate key"
                )
            result[str(key)] = _data(value_node, (*path, str(key)), lines, source)
        return result
    if isinstance(node, yaml.SequenceNode):
        return [_data(item, (*path, index), lines, source) for index, item in enumerate(node.value)]
    return yaml.SafeLoader(" ").construct_object(node)


def _check_bot_keys(scenario: Scenario, lines: Lines, source: str) -> None:
    """A step's ``action`` and ``reply`` script the built-in stub bot; a ``setup.handler``
    decides for itself, so with one they are errors, and without one a decision needs them."""
    served = scenario.setup.handler is not None
    if scenario.setup.probe and not served:
        at: tuple[Key, ...] = ("setup", "probe")
        raise ScenarioError(
            f"{source}:{_line(lines, at)}: {where(at)}: probe: true needs setup.handler "
            "(the bot to probe)"
        )
    for index, step in enumerate(scenario.steps):
        for key in ("action", "reply") if served else ():
            if getattr(step, key) is not None:
                at = ("steps", index, key)
                raise ScenarioError(
                    f"{source}:{_line(lines, at)}: {where(at)}: setup.handler runs the bot; "
                    f"{key} scripts only the built-in one"
                )
        if not served and step.expect.decision is not None and step.action is None:
            at = ("steps", index)
            raise ScenarioError(
                f"{source}:{_line(lines, at)}: {where(at)}: expect.decision needs the step's action"
            )

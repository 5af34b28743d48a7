"""What the probe is pointed at: the bot's framework, what serving it told, and its commands.

A framework the probe serves is offered by a platform's probe world (its targets): on the
Telegram simulator, python-telegram-bot (``_probe_ptb``) and aiogram (``_probe_aiogram``),
each one small module with a ``TelegramFramework`` (``_probe_telegram``): whether it
recognises what ``module:attribute`` names, and how to serve it (returning :class:`Served`,
after :func:`check_reach`); discord.py bots run against the Discord emulator in
``_probe_dpy``. This module names no simulator.

:func:`call_factory` calls a user's factory with the keyword arguments it takes (a build
function taking only the builder is a plain bot). :func:`inferred_commands` reads commands out
of the bot's source and its scenario files: string literals and step texts that start with
``/`` or the bot's prefix.
"""

from __future__ import annotations

import ast
import inspect
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from actorscope.agents import Agent
from actorscope.errors import ConfigError
from actorscope.store import Database
from actorscope.testing._harness import AgentEnv

__all__ = [
    "NotTheBot",
    "ProbeReachError",
    "Served",
    "call_factory",
    "check_reach",
    "command_name",
    "described",
    "inferred_commands",
    "is_async",
    "scenario_files",
    "source_of",
]

#: A command word after its prefix: ``/note``, ``!note`` (no path such as ``/tmp/x``).
_COMMAND_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,31}")
#: Scenario files read per folder, at most (the bot's folder and its direct subfolders).
_SCENARIO_LIMIT = 200
#: Commands inferred from one bot, at most.
_INFERRED_LIMIT = 50


class NotTheBot(ConfigError):
    """A build function returned something other than its framework's bot: the probe names
    what it returned (:attr:`built`) and what it takes."""

    def __init__(self, message: str, built: object) -> None:
        super().__init__(message)
        #: What the function returned (a coroutine it returned is closed).
        self.built = built


class ProbeReachError(ConfigError):
    """The probe does not reach the bot (its gate is on another database, agent or workspace,
    or the seeded writer is unknown to it or refused): nothing it would report could be
    trusted."""


@dataclass(frozen=True)
class Served:
    """What serving the bot told the probe.

    ``commands``: what the bot says it handles (its command handlers, ``setMyCommands``);
    ``gated``: actorscope's gate is in it (the writer commands are its own); ``source``: the
    module file its commands can be inferred from; ``name``: how the report names the bot.
    """

    commands: tuple[str, ...]
    gated: bool
    source: Path | None
    name: str


def _accepted(found: Callable[..., Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """The keyword arguments of ``overrides`` that ``found`` takes (all with ``**kwargs``)."""
    try:
        parameters = inspect.signature(found).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: give it nothing
        return {}
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return dict(overrides)
    named = {
        p.name
        for p in parameters
        if p.kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    }
    return {key: value for key, value in overrides.items() if key in named}


def call_factory(
    found: Callable[..., Any], spec: str, what: str, *args: Any, **overrides: Any
) -> Any:
    """``found(*args, **the overrides it takes)``; a failure is one ConfigError naming ``spec``."""
    try:
        built = found(*args, **_accepted(found, overrides))
    except Exception as exc:  # any failure of the user's factory is a config problem
        raise ConfigError(
            f"{what} {spec!r}: building it failed: {type(exc).__name__}: {exc}"
        ) from None
    if inspect.iscoroutine(built):  # never left un-awaited: closed, and said
        built.close()
        raise NotTheBot(f"{what} {spec!r} returned a coroutine", built)
    return built


def described(value: object) -> str:
    """What ``value`` is, in words (``a string``, ``a Router object (from aiogram)``)."""
    if value is None:
        return "None"
    if inspect.iscoroutine(value):
        return "a coroutine (it is async)"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool | int | float):
        return "a number"
    if inspect.ismodule(value):
        return f"the module {value.__name__}"
    kind = value if inspect.isclass(value) else type(value)
    root = kind.__module__.partition(".")[0]
    origin = "" if root in ("builtins", "__main__") else f" (from {root})"
    if inspect.isclass(value):
        return f"the class {kind.__qualname__}{origin}"
    if inspect.isroutine(value):
        return f"a function{origin}"
    if root == "builtins":
        return f"a {kind.__qualname__}"
    return f"a {kind.__qualname__} object{origin}"


def is_async(found: object) -> bool:
    """Whether calling ``found`` gives a coroutine or an async generator (an ``async def``, a
    partial of one, an object whose ``__call__`` is one), which the probe never calls."""
    if inspect.iscoroutinefunction(found) or inspect.isasyncgenfunction(found):
        return True
    if inspect.isroutine(found) or inspect.isclass(found) or not callable(found):
        return False
    call = inspect.getattr_static(type(found), "__call__", None)
    return inspect.iscoroutinefunction(call) or inspect.isasyncgenfunction(call)


def check_reach(
    spec: str,
    what: str,
    env: AgentEnv,
    fix: str,
    *,
    database: Database,
    agent: Agent,
    workspace: Path,
) -> None:
    """The gate of the ``what`` (``application``, ``dispatcher``) ``spec`` names opened on the
    probe's database, agent and workspace (what its ``Gate.opened`` says it opened); one
    ProbeReachError otherwise, ending with ``fix`` (what the build function should do, after
    "let <its name> ...")."""
    advice = f"let {spec.rpartition(':')[2] or spec} {fix}"
    if database is not env.db:
        raise ProbeReachError(
            f"the {what}'s gate opened {database.path}, not the probe's database: {advice}"
        )
    if agent.id != env.agent.id:
        raise ProbeReachError(
            f"the {what}'s gate runs as agent {agent.key!r}, not the probe's "
            f"{env.agent.key!r}: {advice}"
        )
    root = env.workspace.root if env.workspace is not None else None
    if root is not None and workspace.resolve() != root.resolve():
        raise ProbeReachError(
            f"the {what}'s gate uses the workspace {workspace}, not the probe's: {advice}"
        )


def command_name(command: str) -> str:
    """``/note@bot x`` or ``!note x`` → ``note`` (a leading mention of the bot is skipped)."""
    head = re.sub(r"^\s*<@!?\d+>\s*", "", command).strip().partition(" ")[0]
    return head.lstrip("/!$.?-+").split("@", 1)[0].lower()


def source_of(found: object, spec: str = "") -> Path | None:
    """The module file of the bot: the module ``spec`` (``module:attribute``) names when it is
    imported, else the one ``found`` (a function or class) is defined in; ``None`` for an
    object without one (an instance of a library's class, a builtin)."""
    module = sys.modules.get(spec.partition(":")[0]) if ":" in spec else None
    named = getattr(module, "__file__", None)
    if isinstance(named, str):
        return Path(named)
    if not (inspect.isfunction(found) or inspect.isclass(found)):
        return None
    try:
        path = inspect.getsourcefile(found)
    except TypeError:  # a builtin: no source
        return None
    return Path(path) if path else None


def scenario_files(folder: Path, handler: str) -> list[Path]:
    """The ``*.scenario.yaml`` files in ``folder`` and its direct subfolders whose
    ``setup.handler`` is ``handler``."""
    found: list[Path] = []
    for pattern in ("*.scenario.yaml", "*/*.scenario.yaml"):
        for path in sorted(folder.glob(pattern))[:_SCENARIO_LIMIT]:
            data = _yaml(path)
            setup = data.get("setup") if isinstance(data, dict) else None
            if isinstance(setup, dict) and setup.get("handler") == handler:
                found.append(path)
    return found


def _yaml(path: Path) -> Any:
    try:
        return yaml.safe_load(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):  # not ours to judge: skipped
        return None


def _texts_in_yaml(data: Any) -> Iterable[str]:
    """Every string under a ``text`` key, at any depth (bounded by the document)."""
    if isinstance(data, dict):
        for key, value in data.items():
            if key == "text" and isinstance(value, str):
                yield value
            else:
                yield from _texts_in_yaml(value)
    elif isinstance(data, list):
        for item in data:
            yield from _texts_in_yaml(item)


def _strings_in_source(path: Path) -> Iterable[str]:
    try:
        tree = ast.parse(path.read_text("utf-8"), filename=str(path))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):  # unreadable: nothing inferred
        return []
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]


def inferred_commands(
    sources: Iterable[Path], scenarios: Iterable[Path], prefixes: str
) -> list[str]:
    """The commands that string literals of ``sources`` and step texts of ``scenarios`` start
    with (a prefix of ``prefixes`` and a command word), in order of appearance."""
    texts: list[str] = []
    for path in sources:
        texts.extend(_strings_in_source(path))
    for path in scenarios:
        texts.extend(_texts_in_yaml(_yaml(path)))
    found: dict[str, None] = {}
    for text in texts:
        head = text.strip().partition(" ")[0]
        if len(head) > 1 and head[0] in prefixes and _COMMAND_WORD.fullmatch(head[1:]):
            found[head] = None
        if len(found) >= _INFERRED_LIMIT:
            break
    return list(found)

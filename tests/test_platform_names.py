"""Outside the modules that are about them, no code names a built-in platform.

A decision a platform makes belongs to its subpackage, reached through the registry
(``actorscope.platforms``) and the contract (``actorscope.channels.Platform``); docs/design.md,
"Adding a platform", lists where the built-in platforms are named on purpose. This test reads
every other module of ``src/actorscope`` and fails on Telegram's or Discord's name (or their
libraries', ``telegram``, ``discord``, ``aiogram``) in code: an identifier, an import, or a
string with no space in it (a channel name, a scope, a ``module:attribute``). Docstrings and
the text of messages and help (a string with a space) may name them.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import actorscope

SRC = Path(actorscope.__file__).resolve().parent

#: A built-in platform's name, or its library's (python-telegram-bot is ``telegram``).
NAMED = re.compile(r"telegram|discord|aiogram", re.IGNORECASE)

#: Where the built-in platforms are named on purpose (docs/design.md, "Adding a platform"):
#: folders (ending in ``/``) and modules, relative to ``src/actorscope``.
ABOUT_THEM = (
    "channels/telegram/",  # the platforms' own subpackages
    "channels/discord/",
    "platforms.py",  # the registry: the built-in registrations
    "sandbox/",  # their emulators and sandboxes
    "integrations/",  # PTB, aiogram, discord.py: each one platform's library
    "testing/_telegram_sim.py",  # the kit's simulators and probe worlds
    "testing/_discord_sim.py",
    "testing/_probe_telegram.py",
    "testing/_probe_ptb.py",
    "testing/_probe_aiogram.py",
    "testing/_served_dispatcher.py",
    "testing/_probe_dpy.py",
    "testing/telegram.py",  # the public homes of the probe worlds
    "testing/discord.py",
    "testing/__init__.py",  # the kit's face and plugin, exporting the simulators
    "testing/plugin.py",
    "testing/scenario/",  # scenario worlds speak each built-in platform's vocabulary
    "cli/_demo.py",  # actorscope demo: the built-in platforms, side by side
)


def _docstrings(tree: ast.Module) -> set[int]:
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                found.add(id(first.value))
    return found


def _spelled(node: ast.AST) -> Iterator[str]:
    """What ``node`` spells in code: its identifiers and imported modules."""
    if isinstance(node, ast.Name):
        yield node.id
    elif isinstance(node, ast.Attribute):
        yield node.attr
    elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        yield node.name
    elif isinstance(node, ast.arg | ast.keyword) and node.arg is not None:
        yield node.arg
    elif isinstance(node, ast.alias):
        yield node.name
        if node.asname is not None:
            yield node.asname
    elif isinstance(node, ast.ImportFrom) and node.module is not None:
        yield node.module


def platform_names(source: str) -> list[tuple[int, str]]:
    """``(line, what)`` of each built-in platform's name in ``source``'s code."""
    tree = ast.parse(source)
    docstrings = _docstrings(tree)
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
            if id(node) not in docstrings and NAMED.search(text) and text.split() == [text]:
                found.append((line, repr(text)))
            continue
        found.extend((line, spelled) for spelled in _spelled(node) if NAMED.search(spelled))
    return found


def _about_them(relative: str) -> bool:
    return any(
        relative.startswith(where) if where.endswith("/") else relative == where
        for where in ABOUT_THEM
    )


def test_no_module_outside_the_platforms_names_one_in_code() -> None:
    """Every module not about the built-in platforms reaches them through the registry and
    the contract: no identifier, import or key names Telegram, Discord or their libraries."""
    found = [
        f"{relative}:{line}: {what}"
        for path in sorted(SRC.rglob("*.py"))
        if not _about_them(relative := path.relative_to(SRC).as_posix())
        for line, what in platform_names(path.read_text("utf-8"))
    ]
    assert found == []


def test_every_exception_is_a_module_that_exists() -> None:
    """The list of modules about the built-in platforms names no folder or module that is
    gone (an exception outliving its module would excuse the next one of its name)."""
    assert [where for where in ABOUT_THEM if not (SRC / where).exists()] == []


def test_the_reader_finds_names_in_code_but_not_in_text() -> None:
    """An identifier, an import, a key or an f-string's key names a platform; a docstring and
    a message do not."""
    source = '''
"""Telegram's docstring."""
import discord
from telegram import Bot
from actorscope.channels.telegram import PLATFORM
def f(channel):
    """Discord's docstring."""
    if channel == "telegram":
        return f"group:discord:{channel}"
    raise ValueError(f"no Telegram channel named {channel}")
BuiltInPlatform.TELEGRAM
'''
    assert sorted(platform_names(source)) == [
        (3, "discord"),
        (4, "telegram"),
        (5, "actorscope.channels.telegram"),
        (8, "'telegram'"),
        (9, "'group:discord:'"),
        (11, "TELEGRAM"),
    ]

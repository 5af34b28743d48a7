"""The public API: every public package declares a complete, sorted ``__all__``.

Packages are discovered with :func:`pkgutil.walk_packages`, so subpackages added later are
checked without editing this file.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from types import ModuleType

import pytest

import actorscope

# Modules that run a program on import; never import them here.
_RUN_ON_IMPORT = frozenset({"actorscope.__main__", "actorscope.cli.__main__"})


def _reraise(name: str) -> None:
    """walk_packages calls this inside its ``except`` block: re-raise the import failure."""
    raise


def _is_public(name: str) -> bool:
    return not any(part.startswith("_") for part in name.split("."))


def _discover() -> tuple[list[str], list[str]]:
    """Public packages and public plain modules under actorscope (no private path segment)."""
    packages = ["actorscope"]
    modules: list[str] = []
    for info in pkgutil.walk_packages(actorscope.__path__, "actorscope.", onerror=_reraise):
        if info.name in _RUN_ON_IMPORT or not _is_public(info.name):
            continue
        (packages if info.ispkg else modules).append(info.name)
    return sorted(packages), sorted(modules)


PACKAGES, MODULES = _discover()
WITH_ALL = [
    name for name in PACKAGES + MODULES if hasattr(importlib.import_module(name), "__all__")
]
PACKAGES_WITH_ALL = [name for name in PACKAGES if name in WITH_ALL]
MODULES_WITH_ALL = [name for name in MODULES if name in WITH_ALL]


def _natural(name: str) -> list[str | int]:
    return [int(part) if i % 2 else part for i, part in enumerate(re.split(r"([0-9]+)", name))]


def _isort_key(name: str) -> tuple[int, list[str | int]]:
    """Ruff's RUF022 order: CONSTANTS, then Classes, then everything else; natural within."""
    if len(name) > 1 and name.isupper():
        category = 0
    elif name[:1].isupper():
        category = 1
    else:
        category = 2
    return category, _natural(name)


def _defined_in_actorscope(obj: object) -> bool:
    module = getattr(obj, "__module__", None) or ""
    return module == "actorscope" or module.startswith("actorscope.")


def _all_of(module: ModuleType) -> list[str]:
    exported = getattr(module, "__all__", None)
    assert isinstance(exported, list | tuple), f"{module.__name__}.__all__ must be a list"
    assert all(isinstance(name, str) for name in exported)
    return list(exported)


def test_discovery_finds_the_known_packages_and_modules() -> None:
    """Discovery sees the packages and modules that exist today (and skips private ones)."""
    assert {"actorscope", "actorscope.cli", "actorscope.store"} <= set(PACKAGES_WITH_ALL)
    assert {"actorscope.identity", "actorscope.context", "actorscope.messages"} <= set(MODULES)
    assert all(_is_public(name) for name in PACKAGES + MODULES)


def test_isort_key_matches_ruff_ordering() -> None:
    """The sort key orders constants, then classes, then the rest, with numbers naturally."""
    names = ["item10", "item2", "Item", "ITEM_2", "A", "__version__", "_x", "a1", "a_1", "ab"]
    assert sorted(names, key=_isort_key) == [
        "ITEM_2",
        "A",
        "Item",
        "__version__",
        "_x",
        "a1",
        "a_1",
        "ab",
        "item2",
        "item10",
    ]


@pytest.mark.parametrize("name", PACKAGES)
def test_package_declares_all_when_it_exports_anything(name: str) -> None:
    """A public package that holds public actorscope classes or functions declares __all__."""
    package = importlib.import_module(name)
    if hasattr(package, "__all__"):
        return
    exported = [
        attr
        for attr, obj in vars(package).items()
        if not attr.startswith("_")
        and (inspect.isclass(obj) or inspect.isfunction(obj))
        and _defined_in_actorscope(obj)
    ]
    assert exported == [], f"{name} exports {exported} but has no __all__"


@pytest.mark.parametrize("name", WITH_ALL)
def test_all_names_exist_and_are_sorted_unique(name: str) -> None:
    """Every name in __all__ exists, and __all__ is unique and in ruff's isort-style order."""
    module = importlib.import_module(name)
    exported = _all_of(module)
    missing = [attr for attr in exported if not hasattr(module, attr)]
    assert missing == [], f"{name}.__all__ names missing attributes: {missing}"
    assert len(set(exported)) == len(exported), f"{name}.__all__ has duplicates"
    assert exported == sorted(exported, key=_isort_key), f"{name}.__all__ is not sorted"


@pytest.mark.parametrize("name", PACKAGES_WITH_ALL)
def test_package_all_lists_every_public_class_and_function(name: str) -> None:
    """Every public actorscope class or function a package holds (not a submodule) is in __all__."""
    package = importlib.import_module(name)
    exported = set(_all_of(package))
    unlisted = sorted(
        attr
        for attr, obj in vars(package).items()
        if not attr.startswith("_")
        and not isinstance(obj, ModuleType)
        and (inspect.isclass(obj) or inspect.isfunction(obj))
        and _defined_in_actorscope(obj)
        and attr not in exported
    )
    assert unlisted == [], f"{name} holds public names missing from __all__: {unlisted}"


@pytest.mark.parametrize("name", MODULES_WITH_ALL)
def test_module_all_lists_every_class_and_function_it_defines(name: str) -> None:
    """Every public class or function a plain module defines itself is in its __all__."""
    module = importlib.import_module(name)
    exported = set(_all_of(module))
    unlisted = sorted(
        attr
        for attr, obj in vars(module).items()
        if not attr.startswith("_")
        and (inspect.isclass(obj) or inspect.isfunction(obj))
        and getattr(obj, "__module__", None) == name
        and attr not in exported
    )
    assert unlisted == [], f"{name} defines public names missing from __all__: {unlisted}"


def test_top_level_reexports_the_documented_names() -> None:
    """actorscope re-exports the core identity, context, message and store names."""
    for attr in (
        "Identity",
        "PeerKind",
        "SenderKind",
        "bind_identity",
        "sender_id_from_context",
        "InboundMessage",
        "RunRequest",
        "Database",
        "ActorscopeError",
        "__version__",
    ):
        assert attr in actorscope.__all__

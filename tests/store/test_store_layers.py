"""The store's layering: backends behind the store, the interface naming no backend."""

from __future__ import annotations

from pathlib import Path

from tests._imports import imports_of

import actorscope
import actorscope.store

DRIVERS = frozenset({"sqlite3", "aiosqlite", "asyncpg"})
BACKENDS = frozenset({"actorscope.store._sqlite", "actorscope.store._postgres"})
STORE = Path(actorscope.store.__file__).parent


def test_nothing_above_the_store_imports_a_database_driver() -> None:
    """No module outside store/ imports sqlite3, aiosqlite or asyncpg (the store wraps them)."""
    src = Path(actorscope.__file__).parent
    found = [
        f"{path.relative_to(src).as_posix()}: {module}"
        for path in sorted(src.rglob("*.py"))
        if STORE not in path.parents
        for module in imports_of(path)
        if module.split(".")[0] in DRIVERS
    ]
    assert found == []


def test_the_interface_names_no_backend() -> None:
    """_base.py imports no backend module, not even lazily: the store's face imports them, and
    Database.connect asks each of its subclasses which targets it opens."""
    assert not BACKENDS & set(imports_of(STORE / "_base.py"))
    assert {backend.__module__ for backend in actorscope.store.Database.__subclasses__()} >= (
        BACKENDS
    )


def test_each_backend_knows_no_other_backend() -> None:
    """_sqlite.py and _postgres.py do not import each other."""
    for backend in BACKENDS:
        path = STORE / (backend.rsplit(".", 1)[1] + ".py")
        named = set(imports_of(path))
        assert not (BACKENDS - {backend}) & named, path.name

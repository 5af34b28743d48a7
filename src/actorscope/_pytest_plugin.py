"""The ``pytest11`` entry point ``actorscope``: the testing kit's plugin, when it can load.

pytest imports this module in every run of an environment that has actorscope and pytest. The
kit (:mod:`actorscope.testing.plugin`) needs pytest-asyncio, which only the ``testing`` extra
installs, so the kit's plugin is loaded (through ``pytest_plugins``) only where pytest-asyncio
is importable: a project that has pytest but not ``actorscope[testing]`` runs its tests as if
actorscope were not installed, rather than failing to start.
"""

from __future__ import annotations

__all__ = ["pytest_plugins"]

#: The kit's plugin module: registered by pytest, like this one, under its module name.
KIT_PLUGIN = "actorscope.testing.plugin"

try:
    import pytest_asyncio  # noqa: F401 - imported only to learn whether the extra is installed
except ModuleNotFoundError as exc:
    if exc.name != "pytest_asyncio":
        raise
    #: The plugins pytest loads next to this one: none without the ``testing`` extra.
    pytest_plugins: list[str] = []
else:
    pytest_plugins = [KIT_PLUGIN]

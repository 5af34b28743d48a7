"""The probe's aiogram mode: the user's ``Dispatcher``, served on the simulator.

``module:function`` names a function returning an aiogram 3 ``Dispatcher``; it is called with
:func:`~actorscope.integrations.aiogram.install`'s keyword arguments when it takes them, and
with none for a plain dispatcher. The simulator makes the ``Bot`` (an aiogram session pointed
at its Bot API emulator) and starts the dispatcher as ``start_polling`` would, *adopted*
(:meth:`~actorscope.integrations.Adoption.bind`): a gate ``install()`` put into it opens on the
probe's database, agent and workspace whatever it was given, and the probe checks that it did
(``Gate.opened``) before any case. Without a gate it is a plain aiogram bot, probed as it is:
the probe shows who can use each command today. Its commands are the ``Command`` filters of
its routers' message handlers (nested routers too) and what it registers with
``setMyCommands``.

aiogram is imported only when a dispatcher is served (it is the extra ``aiogram``). A build
function is told from the others without calling it: it takes keyword arguments only (a PTB
build function takes the builder), and it says it returns a ``Dispatcher`` (its return
annotation) or, unannotated, comes from a module that uses aiogram (a discord.py bot factory
takes keyword arguments only too).
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Mapping
from types import ModuleType
from typing import Any

from actorscope.errors import ConfigError
from actorscope.testing._probe_target import (
    NotTheBot,
    ProbeReachError,
    Served,
    call_factory,
    check_reach,
    source_of,
)
from actorscope.testing._telegram_sim import TelegramSim

__all__ = ["AIOGRAM"]

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def _is_dispatcher(found: object) -> bool:
    """Whether ``found`` is an aiogram ``Dispatcher`` (without importing aiogram)."""
    return _is_dispatcher_class(type(found))


def _of_aiogram(value: object) -> bool:
    name = value.__name__ if isinstance(value, ModuleType) else getattr(value, "__module__", "")
    return isinstance(name, str) and (name == "aiogram" or name.startswith("aiogram."))


def _builds_a_dispatcher(found: object) -> bool:
    """Whether ``found`` is a function taking keyword arguments only (no PTB build function)
    that says it returns a ``Dispatcher``, or, saying nothing, comes from a module using
    aiogram."""
    if not callable(found) or inspect.isclass(found):
        return False
    try:
        signature = inspect.signature(found)
    except (TypeError, ValueError):  # no signature to read: not ours to claim
        return False
    if any(p.kind in _POSITIONAL and p.default is p.empty for p in signature.parameters.values()):
        return False
    returns = signature.return_annotation
    if returns is signature.empty:
        module = sys.modules.get(getattr(found, "__module__", "") or "")
        return module is not None and any(_of_aiogram(v) for v in vars(module).values())
    if isinstance(returns, str):
        return returns.rpartition(".")[2] == "Dispatcher"
    return inspect.isclass(returns) and _is_dispatcher_class(returns)


def _is_dispatcher_class(cls: type) -> bool:
    return any(
        c.__name__ == "Dispatcher" and c.__module__.startswith("aiogram.") for c in cls.__mro__
    )


def _is_router_class(cls: type) -> bool:
    """Whether ``cls`` is an aiogram ``Router`` class other than a ``Dispatcher``."""
    routers = [c for c in cls.__mro__ if c.__module__.startswith("aiogram.")]
    return any(c.__name__ == "Router" for c in routers) and not _is_dispatcher_class(cls)


def _returns_a_router(found: object) -> bool:
    """Whether ``found`` is a function saying it returns an aiogram ``Router`` (its return
    annotation; a name, under ``from __future__ import annotations``, from a module using
    aiogram)."""
    if not inspect.isroutine(found):
        return False
    try:
        returns = inspect.signature(found).return_annotation
    except (TypeError, ValueError):  # no signature to read: says nothing
        return False
    if isinstance(returns, str):
        module = sys.modules.get(getattr(found, "__module__", "") or "")
        uses_aiogram = module is not None and any(_of_aiogram(v) for v in vars(module).values())
        return uses_aiogram and returns.rpartition(".")[2] == "Router"
    return inspect.isclass(returns) and _is_router_class(returns)


def _commands(dispatcher: Any) -> list[str]:
    """``/name`` of every ``Command`` filter on a message handler of ``dispatcher``'s routers."""
    from aiogram.filters import Command

    names: list[str] = []
    for router in dispatcher.chain_tail:
        for handler in router.message.handlers:
            for event_filter in handler.filters or ():
                if isinstance(event_filter.callback, Command):
                    names.extend(
                        f"/{c}" for c in event_filter.callback.commands if isinstance(c, str)
                    )
    return names


class _Aiogram:
    """aiogram 3: a function returning a ``Dispatcher``."""

    name = "aiogram"

    def recognises(self, found: object) -> bool:
        """A ``Dispatcher`` (refused when served) or a function building one."""
        return _is_dispatcher(found) or _builds_a_dispatcher(found)

    def describe(self, found: object) -> str | None:
        """A ``Router`` (its class, or a function saying it returns one), not a dispatcher."""
        if _is_router_class(found if inspect.isclass(found) else type(found)):
            what = "an aiogram Router"
        elif _returns_a_router(found):
            what = "a function returning an aiogram Router"
        else:
            return None
        return f"{what}: the probe takes a function returning a Dispatcher that includes it"

    async def serve(
        self, found: object, spec: str, sim: TelegramSim, overrides: Mapping[str, Any]
    ) -> Served:
        """Build, start and check the dispatcher ``found`` returns."""
        if _is_dispatcher(found):
            raise ConfigError(
                f"application {spec!r} is a Dispatcher already built: name a function that "
                "returns it (taking install()'s keyword arguments, or none), so that the probe "
                "builds a fresh one on its own database"
            )
        if not callable(found):
            raise ConfigError(f"application {spec!r} is not a function")
        built = call_factory(found, spec, "dispatcher", **overrides)
        if not _is_dispatcher(built):
            raise NotTheBot(f"application {spec!r} did not return an aiogram Dispatcher", built)
        try:
            gate = await sim.serve_dispatcher(built)  # adopted: its gate opens on the probe's
        except RuntimeError as exc:  # the gate opened before, or elsewhere: out of reach
            raise ProbeReachError(f"dispatcher {spec!r}: {exc}") from None
        if gate is not None:
            fix = "build the Dispatcher and leave starting it (its startup) to the probe"
            opened = gate.opened
            check_reach(
                spec,
                "dispatcher",
                sim.env,
                fix,
                database=opened.database,
                agent=opened.agent,
                workspace=opened.workspace,
            )
        registered = [f"/{c['command']}" for listed in sim.emu.commands.values() for c in listed]
        commands = tuple(dict.fromkeys([*_commands(built), *registered]))
        return Served(commands, gate is not None, source_of(found, spec), f"dispatcher {spec!r}")


#: The aiogram framework of the probe.
AIOGRAM = _Aiogram()

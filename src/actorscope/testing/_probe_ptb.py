"""The probe's python-telegram-bot mode: the user's application, built against the simulator.

The function ``module:function`` names is called with the simulator's ``ApplicationBuilder``
(and, when it takes them, :func:`~actorscope.integrations.ptb.install`'s keyword arguments);
a build function taking only the builder is fine. The application is started as
``run_polling`` would, *adopted* (:meth:`~actorscope.integrations.Adoption.bind`): a gate that
``install()`` put into it opens on the probe's database, agent and workspace whatever it was
given, and the probe checks that it did (``Gate.opened``) before any case. Without a gate it
is a plain PTB bot, probed as it is: the probe shows who can use each command today. Its
commands are its ``CommandHandler`` s (inside ``ConversationHandler`` s too) and what it
registers with ``setMyCommands``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from telegram.ext import Application, BaseHandler, CommandHandler, ConversationHandler

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

__all__ = ["PTB"]

_App = Application[Any, Any, Any, Any, Any, Any]
_Handler = BaseHandler[Any, Any, Any]
#: How deep ConversationHandlers nested in ConversationHandlers are read.
_NESTING = 8


def _command_handlers(handlers: Iterable[_Handler], depth: int = 0) -> list[str]:
    """``/name`` of every ``CommandHandler`` among ``handlers`` (conversations included)."""
    names: list[str] = []
    for handler in handlers:
        if isinstance(handler, CommandHandler):
            names.extend(f"/{name}" for name in sorted(handler.commands))
        elif isinstance(handler, ConversationHandler) and depth < _NESTING:
            inner = [*handler.entry_points, *handler.fallbacks]
            inner += [h for state in handler.states.values() for h in state]
            names.extend(_command_handlers(inner, depth + 1))
    return names


class _PTB:
    """python-telegram-bot: a function building an ``Application`` from a builder."""

    name = "python-telegram-bot"

    def recognises(self, found: object) -> bool:
        """A built ``Application`` (refused when served) or any other callable."""
        return isinstance(found, Application) or callable(found)

    def describe(self, found: object) -> str | None:
        """A handler of the application, not the application."""
        if isinstance(found, BaseHandler):
            return (
                "a python-telegram-bot handler: the probe takes a function that builds the "
                "Application adding it (from the ApplicationBuilder it is given)"
            )
        return None

    async def serve(
        self, found: object, spec: str, sim: TelegramSim, overrides: Mapping[str, Any]
    ) -> Served:
        """Build, start and check the application ``found`` builds."""
        if isinstance(found, Application):
            raise ConfigError(
                f"application {spec!r} is an Application already built: name a function that "
                "takes an ApplicationBuilder (and install()'s keyword arguments) and builds it, "
                "so that the probe can build it against its emulator"
            )
        if not callable(found):
            raise ConfigError(f"application {spec!r} is not a function")
        built = call_factory(found, spec, "application", sim.application_builder(), **overrides)
        if not isinstance(built, Application):
            raise NotTheBot(
                f"application {spec!r} did not return a python-telegram-bot Application", built
            )
        app: _App = built
        try:
            gate = await sim.serve_application(app)  # adopted: its gate opens on the probe's
        except RuntimeError as exc:  # the gate opened before, or elsewhere: out of reach
            raise ProbeReachError(f"application {spec!r}: {exc}") from None
        if gate is not None:
            fix = "build the Application and leave starting it (initialize, post_init) to the probe"
            opened = gate.opened
            check_reach(
                spec,
                "application",
                sim.env,
                fix,
                database=opened.database,
                agent=opened.agent,
                workspace=opened.workspace,
            )
        registered = [f"/{c['command']}" for listed in sim.emu.commands.values() for c in listed]
        handled = _command_handlers(h for group in app.handlers.values() for h in group)
        commands = tuple(dict.fromkeys([*handled, *registered]))
        return Served(commands, gate is not None, source_of(found, spec), f"application {spec!r}")


#: The python-telegram-bot framework of the probe.
PTB = _PTB()

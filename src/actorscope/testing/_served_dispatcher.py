"""An aiogram ``Dispatcher`` served by the Telegram simulator (``serve_dispatcher``).

The dispatcher runs as ``start_polling`` runs it, without the polling: its startup handlers
(the gate opens there, adopted onto the test's database), one ``Bot`` whose aiogram session
talks to the simulator's Bot API emulator over loopback (every call the bot makes is
recorded by the emulator), each event fed with ``Dispatcher.feed_update`` and awaited to the
end (a handler that raises fails the test), and its shutdown handlers when the simulator
stops. Imported only when a test serves a dispatcher: aiogram is the ``aiogram`` extra.
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any, Protocol

from aiogram import Bot, Dispatcher
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer
from aiogram.types import Update

from actorscope.channels import Ingress
from actorscope.host import Prepared
from actorscope.integrations import Adoption
from actorscope.integrations.aiogram import Gate
from actorscope.permissions import Decision
from actorscope.sandbox import BotApiServer

__all__ = ["Listener", "ServedDispatcher"]


class Listener(Protocol):
    """What the simulator hears from a served dispatcher's gate."""

    def on_ingress(self, result: Ingress, prepared: Prepared | None) -> None:
        """The pipeline's result for the event being processed."""

    def record_decision(self, action: str, decision: Decision) -> None:
        """A decision the gate made for a handler."""


class _Recorder:
    """Hears the gate: its pipeline results and decisions."""

    def __init__(self, listener: Listener) -> None:
        self._listener = listener

    def on_ingress(self, update: Update, result: Ingress, prepared: Prepared | None) -> None:
        self._listener.on_ingress(result, prepared)

    def on_decision(self, config_type: str, decision: Decision) -> None:
        self._listener.record_decision(config_type, decision)


class ServedDispatcher:
    """One dispatcher, its bot against the emulator's server, started and fed."""

    def __init__(self, dispatcher: Dispatcher, server: BotApiServer, token: str) -> None:
        if not isinstance(dispatcher, Dispatcher):
            raise TypeError(
                f"serve_dispatcher() takes an aiogram Dispatcher, got {type(dispatcher).__name__}"
            )
        self.dispatcher = dispatcher
        self.gate = Gate.of(dispatcher)
        api = TelegramAPIServer.from_base(server.root_url)
        self.bot = Bot(token, session=AiohttpSession(api=api))
        self._started = False

    def _workflow(self) -> dict[str, Any]:
        """What ``start_polling`` hands the startup and shutdown handlers."""
        data: dict[str, Any] = {
            "dispatcher": self.dispatcher,
            "bots": (self.bot,),
            **self.dispatcher.workflow_data,
        }
        data.pop("bot", None)
        return data

    async def start(self, listener: Listener, adoption: Adoption | None) -> Gate | None:
        """Run the startup handlers (inside ``adoption``, if any); return the gate."""
        the_gate = self.gate
        if the_gate is not None:
            if adoption is not None and the_gate.is_open:
                if the_gate.opened.database is not adoption.database:
                    raise RuntimeError(
                        "the dispatcher's gate is open already, on its own database: hand it "
                        "to serve_dispatcher before starting it"
                    )
                adoption = None  # opened on the test's database by the test itself
            the_gate.observe(_Recorder(listener))
        else:
            adoption = None
        with adoption.bind() if adoption is not None else nullcontext():
            await self.dispatcher.emit_startup(bot=self.bot, **self._workflow())
        self._started = True
        if (
            adoption is not None
            and the_gate is not None
            and (not the_gate.is_open or the_gate.opened.adopted is not adoption)
        ):
            raise RuntimeError("the dispatcher's gate did not open on the test's database")
        return the_gate

    async def feed(self, update: dict[str, Any]) -> None:
        """The dispatcher handles ``update`` (as polling would); a handler's error is raised."""
        parsed = Update.model_validate(update, context={"bot": self.bot})
        await self.dispatcher.feed_update(self.bot, parsed)

    async def stop(self) -> None:
        """Run the shutdown handlers and close the bot's session."""
        try:
            if self._started:
                self._started = False
                await self.dispatcher.emit_shutdown(bot=self.bot, **self._workflow())
        finally:
            await self.bot.session.close()

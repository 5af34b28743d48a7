"""The notes bot the aiogram way: ``/note <text>`` appends to the chat's notes.md.

A plain aiogram 3 bot (``Dispatcher``, a ``Router``, ``Command`` and magic filters,
``start_polling``) plus the gate: ``install`` attaches the scope and the actor to every update
(a handler takes ``identity: Identity``) and changes nothing else until it denies
(``/addwriter``, ``/removewriter``, ``/writers`` manage the writers); ``@requires("file_writer")``
lets only writers (anyone in a private chat) save a note, and the others (anonymous admins and
channels too) get ``denied: <reason>``. The note goes to the workspace of the *scope* (the whole
group shares one); the permission is decided for the *actor*. The "show notes" button answers
its click itself, as aiogram asks.

``TELEGRAM_BOT_TOKEN=... python examples/aiogram_notes_bot.py``, or offline against a Bot API
emulator: ``python examples/aiogram_notes_bot.py --sandbox`` (docs/guides/aiogram.md shows what to
type).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import Any

from aiogram import Bot, Dispatcher, F, Router
from aiogram.filters import Command, CommandObject
from aiogram.types import CallbackQuery, InlineKeyboardButton, InlineKeyboardMarkup, Message

from actorscope.bots import BotServices
from actorscope.identity import Identity
from actorscope.integrations.aiogram import install, requires, run_sandbox
from actorscope.tools import FileMissingError

NOTES_FILE = "notes.md"
SHOW = "show"


def notes_router() -> Router:
    """The bot's handlers, on a router of their own (a new one for each dispatcher)."""
    router = Router(name="notes")

    @router.message(Command("note"))
    @requires("file_writer")
    async def note(message: Message, command: CommandObject, identity: Identity) -> None:
        """``/note <text>``: append to the chat's notes (the actor is a writer: ``requires``)."""
        if not command.args:
            await message.reply("usage: /note <text>")
            return
        services = BotServices.current()
        line = f"- {command.args} (by {identity.sender_id or identity.user_id})\n"
        services.workspace.append(services.agent, identity, NOTES_FILE, line)
        button = InlineKeyboardButton(text="show notes", callback_data=SHOW)
        await message.reply("saved", reply_markup=InlineKeyboardMarkup(inline_keyboard=[[button]]))

    @router.callback_query(F.data == SHOW)
    async def show(callback: CallbackQuery, identity: Identity) -> None:
        """The "show notes" button: anyone in the chat may read the chat's notes."""
        await callback.answer()  # the click is yours to answer: actorscope answers only a denial
        services = BotServices.current()
        try:
            notes = services.workspace.read(services.agent, identity, NOTES_FILE)
        except FileMissingError:
            notes = "no notes yet"
        if isinstance(callback.message, Message):
            await callback.message.edit_text(notes)

    return router


def build_dispatcher(**actorscope: Any) -> Dispatcher:
    """The bot: a dispatcher with actorscope installed and the notes router.

    ``actorscope`` overrides :func:`~actorscope.integrations.aiogram.install`'s settings.
    """
    dp = Dispatcher()
    install(dp, **{"database": "notes.db", "agent": "notes", **actorscope})
    dp.include_router(notes_router())
    return dp


def main(argv: list[str]) -> int:
    """Poll Telegram with ``TELEGRAM_BOT_TOKEN``, or (``--sandbox``) an emulator, offline."""
    parser = argparse.ArgumentParser(prog="aiogram_notes_bot.py", description=__doc__)
    parser.add_argument("--sandbox", action="store_true", help="run against a local emulator")
    if parser.parse_args(argv).sandbox:
        return run_sandbox(build_dispatcher)
    token = os.environ.get("TELEGRAM_BOT_TOKEN", "")
    if not token:
        print(
            "aiogram_notes_bot: error: set TELEGRAM_BOT_TOKEN (or use --sandbox)", file=sys.stderr
        )
        return 2
    asyncio.run(build_dispatcher().start_polling(Bot(token)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

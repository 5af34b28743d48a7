"""The notes bot the python-telegram-bot way: ``/note <text>`` appends to the chat's notes.md.

A plain PTB bot (``ApplicationBuilder``, ``CommandHandler``, ``CallbackQueryHandler``,
``run_polling``) plus the gate: ``install`` attaches the scope and the actor to every update
and changes nothing else until it denies (``/addwriter``, ``/removewriter``, ``/writers``
manage the writers); ``@requires("file_writer")`` lets only writers (anyone in a private chat)
save a note, and the others (anonymous admins and channels too) get ``denied: <reason>``. The
note goes to the workspace of the *scope* (the whole group shares one); the permission is
decided for the *actor*. The "show notes" button answers its click itself, as PTB asks.

``TELEGRAM_BOT_TOKEN=... python examples/ptb_notes_bot.py``, or offline against a Bot API
emulator: ``python examples/ptb_notes_bot.py --sandbox`` (docs/guides/ptb.md shows what to
type).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.ext import (
    Application,
    ApplicationBuilder,
    CallbackQueryHandler,
    CommandHandler,
    ContextTypes,
)

from actorscope.bots import BotServices
from actorscope.integrations.ptb import bound, identity_of, install, requires, run_sandbox
from actorscope.tools import FileMissingError

NOTES_FILE = "notes.md"
SHOW = "show"
App = Application[Any, Any, Any, Any, Any, Any]


@requires("file_writer")
async def note(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """``/note <text>``: append to the chat's notes (the actor is a writer: ``requires``)."""
    message = update.effective_message
    if message is None:
        return
    text = " ".join(context.args or [])
    if not text:
        await message.reply_text("usage: /note <text>")
        return
    who, services = identity_of(update, context), BotServices.current()
    line = f"- {text} (by {who.sender_id or who.user_id})\n"
    services.workspace.append(services.agent, who, NOTES_FILE, line)
    keyboard = InlineKeyboardMarkup([[InlineKeyboardButton("show notes", callback_data=SHOW)]])
    await message.reply_text("saved", reply_markup=keyboard)


@bound
async def show(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """The "show notes" button: anyone in the chat may read the chat's notes."""
    query = update.callback_query
    if query is None:
        return
    await query.answer()  # the click is yours to answer: actorscope answers only a denial
    who, services = identity_of(update, context), BotServices.current()
    try:
        notes = services.workspace.read(services.agent, who, NOTES_FILE)
    except FileMissingError:
        notes = "no notes yet"
    await query.edit_message_text(notes)


def build_application(
    builder: ApplicationBuilder[Any, Any, Any, Any, Any, Any], **actorscope: Any
) -> App:
    """The bot: ``builder``'s application with actorscope installed and the ``/note`` handler.

    ``actorscope`` overrides :func:`~actorscope.integrations.ptb.install`'s settings.
    """
    app = builder.build()
    install(app, **{"database": "notes.db", "agent": "notes", **actorscope})
    app.add_handler(CommandHandler("note", note))
    app.add_handler(CallbackQueryHandler(show, pattern=f"^{SHOW}$"))
    return app


def main(argv: list[str]) -> int:
    """Poll Telegram with ``TELEGRAM_BOT_TOKEN``, or (``--sandbox``) an emulator, offline."""
    parser = argparse.ArgumentParser(prog="ptb_notes_bot.py", description=__doc__)
    parser.add_argument("--sandbox", action="store_true", help="run against a local emulator")
    if parser.parse_args(argv).sandbox:
        return run_sandbox(build_application)
    token = os.environ.get("TELEGRAM_BOT_TOKEN", "")
    if not token:
        print("ptb_notes_bot: error: set TELEGRAM_BOT_TOKEN (or use --sandbox)", file=sys.stderr)
        return 2
    build_application(ApplicationBuilder().token(token)).run_polling()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The notes bot the python-telegram-bot way: ``/note <text>`` appends to the chat's notes.md.

A plain PTB bot (``ApplicationBuilder``, ``CommandHandler``, ``run_polling``) plus the gate:
``install`` runs every update through actorscope (non-persons and other bots' commands never
reach ``note``; ``/addwriter``, ``/removewriter``, ``/writers`` manage the writers) and
``@requires("file_writer")`` lets only writers (anyone in a private chat) save a note; the
others get ``denied: <reason>``. The note goes to the workspace of the *scope* (the whole
group shares one); the permission is decided for the *actor*.

``TELEGRAM_BOT_TOKEN=... python examples/ptb_notes_bot.py``, or offline against a Bot API
emulator: ``python examples/ptb_notes_bot.py --sandbox`` (type ``/as alice @devs /note hi``).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from telegram import Update
from telegram.ext import Application, ApplicationBuilder, CommandHandler, ContextTypes

from actorscope.bots import current_services
from actorscope.integrations.ptb import identity, install, requires, run_sandbox

NOTES_FILE = "notes.md"
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
    who, services = identity(update, context), current_services()
    line = f"- {text} (by {who.sender_id or who.user_id})\n"
    services.workspace.append(services.agent, who, NOTES_FILE, line)
    await message.reply_text("saved")


def build_application(
    builder: ApplicationBuilder[Any, Any, Any, Any, Any, Any], **actorscope: Any
) -> App:
    """The bot: ``builder``'s application with actorscope installed and the ``/note`` handler.

    ``actorscope`` overrides :func:`~actorscope.integrations.ptb.install`'s settings.
    """
    app = builder.build()
    install(app, **{"database": "notes.db", "agent": "notes", **actorscope})
    app.add_handler(CommandHandler("note", note))
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

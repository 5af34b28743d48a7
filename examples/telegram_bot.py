"""A Telegram notes bot: ``/note <text>`` saves to the chat's workspace, for writers only.

The handler gets each :class:`~actorscope.messages.RunRequest` with its identity bound. The
note goes to the workspace of the request's *scope* (``user_id``: the whole group shares one),
and whether it may be written is decided for the *actor* (``sender_id``) by
``PermissionPolicy.check_file_writer``: in a group only writers may; in a private chat anyone.

Run it with ``actorscope run examples/bot.toml`` (``TELEGRAM_BOT_TOKEN`` set), or offline with
``actorscope run examples/bot.toml --sandbox``, or ``python examples/telegram_bot.py [--sandbox]``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from actorscope.bots import BotConfig, BotServices, run_in_terminal
from actorscope.context import current_identity
from actorscope.errors import ActorscopeError
from actorscope.messages import RunRequest

CONFIG = Path(__file__).with_name("bot.toml")
NOTES_FILE = "notes.md"
COMMANDS = ("/note", "!note")


def note_text(content: str) -> str | None:
    """The text of a ``/note`` (or ``!note``) command, ``""`` when empty, else ``None``."""
    head, _, rest = content.strip().partition(" ")
    command = head.split("@", 1)[0].lower()
    return rest.strip() if command in COMMANDS else None


async def handle(request: RunRequest) -> str | None:
    """``/note <text>``: append to the scope's notes if the actor is a writer."""
    text = note_text(request.content)
    if text is None:
        return None
    if not text:
        return "usage: /note <text>"
    services = BotServices.current()
    decision = await services.policy.check_file_writer(current_identity())
    if not decision.allowed:
        return f"denied: {decision.reason}"
    line = f"- {text} (by {request.sender_id or request.user_id})\n"
    # append() adds under a file lock: two notes at once never overwrite each other.
    services.workspace.append(services.agent, request.identity(), NOTES_FILE, line)
    return "saved"


def main(argv: list[str]) -> int:
    """Run ``bot.toml`` next to this file, as ``actorscope run bot.toml [--sandbox]`` does."""
    parser = argparse.ArgumentParser(
        prog="telegram_bot.py",
        description="The notes bot of bot.toml, as `actorscope run` runs it.",
    )
    parser.add_argument(
        "--sandbox",
        action="store_true",
        help="Run Telegram against a Bot API emulator on 127.0.0.1 (no token) with a prompt.",
    )
    sandbox = parser.parse_args(argv).sandbox
    try:
        return run_in_terminal(BotConfig.load(CONFIG), sandbox=sandbox, source=str(CONFIG))
    except ActorscopeError as exc:
        print(f"telegram_bot: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

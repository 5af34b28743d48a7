"""A memo bot: ``/remember TEXT`` keeps one memo per conversation, ``/memo`` shows it.

The walkthrough "Two accounts in the sandbox" of docs/concepts.md runs it, with
``examples/memo_bot.toml`` (``links = "dm"``: a linked account's direct chat uses the person's
scope). Each reply names the scope (``request.user_id``) the memo lives in. Run it offline with
``actorscope run examples/memo_bot.toml --sandbox`` (Telegram, then ``/discord``).
"""

from __future__ import annotations

from actorscope.bots import BotServices
from actorscope.messages import RunRequest
from actorscope.tools import FileMissingError

MEMO_FILE = "memo.md"


async def handle(request: RunRequest) -> str | None:
    """``/remember TEXT`` (``!remember`` on Discord) writes the memo; ``/memo`` reads it."""
    command, _, text = request.content.strip().partition(" ")
    command = command.split("@", 1)[0].lstrip("/!").lower()
    services = BotServices.current()
    if command == "remember" and text.strip():
        services.workspace.write(services.agent, request.identity(), MEMO_FILE, text.strip())
        return f"remembered (scope {request.user_id})"
    if command == "memo":
        try:
            return services.workspace.read(services.agent, request.identity(), MEMO_FILE)
        except FileMissingError:
            return f"no memo here (scope {request.user_id})"
    return None

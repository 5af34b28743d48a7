"""A Discord notes bot: ``!note <text>`` saves to the member's workspace, for writers only.

In a Discord guild the scope is per member (``guild:<gid>:user:<uid>``), and writers are
granted guild-wide (``guild:<gid>:*``) with ``!addwriter @user`` or ``/addwriter``; someone
with *Manage Server* adds the first one. The bot needs the privileged *Message Content* intent
(Developer Portal → Bot) for ``!`` commands in messages that do not mention it.

Run: ``DISCORD_BOT_TOKEN=... python examples/discord_bot.py`` (uses ``bot.toml``'s
``[discord]`` section, with this module's handler), or offline with ``--sandbox``: the bot runs
against the Discord emulator on 127.0.0.1 and you type as guild members (``/discord`` on the
prompt, then ``/as carol @general @bot !note hi``; ``/help`` lists the rest).
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


async def handle(request: RunRequest) -> str | None:
    """``!note <text>`` (or ``/note``): append to the scope's notes if the actor is a writer."""
    head, _, rest = request.content.strip().partition(" ")
    if head.lower() not in ("!note", "/note"):
        return None
    text = rest.strip()
    if not text:
        return "usage: !note <text>"
    services = BotServices.current()
    decision = await services.policy.check_file_writer(current_identity())
    if not decision.allowed:
        return f"denied: {decision.reason}"
    line = f"- {text} (by {request.sender_id})\n"
    # append() adds under a file lock: two notes at once never overwrite each other.
    services.workspace.append(services.agent, request.identity(), NOTES_FILE, line)
    return "saved"


def main(argv: list[str]) -> int:
    """Run only the ``[discord]`` section of ``bot.toml``, enabled, with :func:`handle`."""
    parser = argparse.ArgumentParser(
        prog="discord_bot.py", description="The notes bot on the [discord] section of bot.toml."
    )
    parser.add_argument(
        "--sandbox", action="store_true", help="Run against the Discord emulator on 127.0.0.1."
    )
    sandbox = parser.parse_args(argv).sandbox
    try:
        config = BotConfig.load(CONFIG)
        section = config.section("discord")
        if section is None:
            print("discord_bot: error: bot.toml has no [discord] section", file=sys.stderr)
            return 2
        discord = section.model_copy(update={"enabled": True})
        config = config.model_copy(
            update={"handler": "discord_bot:handle", "telegram": None, "discord": discord}
        )
        return run_in_terminal(config, sandbox=sandbox, source=str(CONFIG))
    except ActorscopeError as exc:
        print(f"discord_bot: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

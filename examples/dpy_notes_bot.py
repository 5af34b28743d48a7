"""The notes bot, written the discord.py way: your ``commands.Bot``, actorscope as a Cog.

``!note <text>`` or ``/note text:`` appends to the member's notes, for writers only (others are
told ``denied: <reason>``; the Cog logs one INFO line, no ``on_command_error`` needed). In a guild
the scope is per member (``guild:<gid>:user:<uid>``) and writers are granted guild-wide with
``!addwriter @user`` or ``/addwriter`` (the Cog's commands); a member with *Manage Server* adds
the first one. The same bot as ``discord_bot.py`` (an ``actorscope run`` handler), as code
you own: add commands, views, tasks as in any discord.py bot.

Run: ``DISCORD_BOT_TOKEN=... python examples/dpy_notes_bot.py`` (database, agent, owners and
workspace from ``bot.toml``). The bot needs the privileged *Message Content* intent
(Developer Portal → Bot) for ``!`` commands.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import discord
from discord import app_commands
from discord.ext import commands

from actorscope.bots import BotConfig
from actorscope.channels.discord import bot_intents
from actorscope.errors import ActorscopeError
from actorscope.integrations.discord_ext import ActorscopeCog, bound, requires, services
from actorscope.store import Database

CONFIG = Path(__file__).with_name("bot.toml")
NOTES_FILE = "notes.md"


async def save_note(source: commands.Context[Any] | discord.Interaction[Any], text: str) -> str:
    """Append ``text`` to the notes of the scope the command runs in; the reply."""
    if not text.strip():
        return "usage: !note <text>"
    bot = services(source)
    async with bound(source) as who:
        line = f"- {text} (by {who.sender_id})\n"
        # append() adds under a file lock: two notes at once never overwrite each other.
        bot.workspace.append(bot.agent, who, NOTES_FILE, line)
    return "saved"


class Notes(commands.Cog):
    """``!note`` and ``/note``."""

    @commands.command(name="note")
    @requires("file_writer")
    async def note(self, ctx: commands.Context[Any], *, text: str = "") -> None:
        """!note <text>: save a note (writers only)."""
        await ctx.reply(await save_note(ctx, text), mention_author=False)

    @app_commands.command(name="note", description="Save a note (writers only)")
    @requires("file_writer")
    async def note_slash(self, interaction: discord.Interaction[Any], text: str) -> None:
        """/note text: save a note (writers only)."""
        await interaction.response.send_message(await save_note(interaction, text))


class NotesBot(commands.Bot):
    """A ``commands.Bot`` with the actorscope Cog and the notes commands."""

    def __init__(
        self,
        *,
        database: str | os.PathLike[str] | Database,
        agent: str = "notes",
        tenant: str = "default",
        owners: Iterable[int | str] = (),
        workspace: str | os.PathLike[str] = "workspace",
    ) -> None:
        super().__init__(command_prefix="!", intents=bot_intents())
        self.actorscope = ActorscopeCog(
            self, database=database, agent=agent, tenant=tenant, owners=owners, workspace=workspace
        )

    async def setup_hook(self) -> None:
        """Add the Cogs (the actorscope one opens the database) and register slash commands."""
        await self.add_cog(self.actorscope)
        await self.add_cog(Notes())
        await self.tree.sync()


def main() -> int:
    """Run the bot with ``bot.toml``'s database, agent, owners and workspace."""
    token = os.environ.get("DISCORD_BOT_TOKEN", "")
    if not token:
        print("dpy_notes_bot: error: set DISCORD_BOT_TOKEN", file=sys.stderr)
        return 2
    try:
        config = BotConfig.load(CONFIG)
    except ActorscopeError as exc:
        print(f"dpy_notes_bot: error: {exc}", file=sys.stderr)
        return 2
    bot = NotesBot(
        database=config.database,
        agent=config.agent,
        tenant=config.tenant,
        owners=config.owners,
        workspace=config.workspace,
    )
    try:
        bot.run(token)
    except discord.LoginFailure as exc:
        print(f"dpy_notes_bot: error: the bot token was rejected: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Discord writer commands: ``!addwriter @user`` / ``!removewriter @user`` / ``!writers``.

The same three exist as application (slash) commands with a ``user`` option. The target is the
user Discord resolved (the message's ``mentions``, the option's resolved user), never a name or
id parsed from text. Platform admin means the invoking member has *Manage Guild*: for a
message, ``author.guild_permissions``; for an interaction, ``interaction.permissions`` (what
Discord computed for the member). Writers are guild-wide (``guild:<gid>:*``).
:func:`handle_discord_writer_command` passes that to the
:class:`~actorscope.permissions.WriterManager` as ``platform_admin``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import discord

from actorscope.channels._writer_commands import WriterCommand, execute_writer_command
from actorscope.identity import Identity
from actorscope.permissions import WriterManager

__all__ = [
    "DISCORD_WRITER_USAGE",
    "WriterTarget",
    "handle_discord_writer_command",
    "member_manages_guild",
    "mention_target",
    "user_target",
]

DISCORD_WRITER_USAGE = "mention exactly one person: !addwriter @user (or /addwriter user:)"


@dataclass(frozen=True, slots=True)
class WriterTarget:
    """A person Discord resolved for a command: snowflake and display name."""

    user_id: str
    name: str


def member_manages_guild(author: discord.abc.User) -> bool:
    """Whether a message author is a guild member with the Manage Guild permission."""
    return isinstance(author, discord.Member) and author.guild_permissions.manage_guild


def user_target(user: discord.abc.User | None) -> WriterTarget | None:
    """A resolved user as a target; bots, webhooks and system users are nobody's writer."""
    if user is None or user.bot or user.system:
        return None
    return WriterTarget(str(user.id), f"@{user.name} ({user.id})")


def mention_target(mentions: Sequence[discord.abc.User]) -> WriterTarget | None:
    """The one person a message mentions (bots left out); ``None`` for none or several."""
    people = {user.id: user for user in mentions if not user.bot and not user.system}
    if len(people) != 1:
        return None
    return user_target(next(iter(people.values())))


async def handle_discord_writer_command(
    manager: WriterManager,
    command: WriterCommand,
    identity: Identity,
    *,
    target: WriterTarget | None,
    manage_guild: bool,
    agent_id: str | None,
    tenant_id: str | None = None,
) -> str:
    """Run a writer command by ``identity`` (its Manage Guild given); return the reply text."""
    bound = replace(identity, agent_id=agent_id, tenant_id=tenant_id)
    return await execute_writer_command(
        manager,
        command,
        bound,
        target=target.user_id if target else "",
        target_name=target.name if target else "",
        usage=DISCORD_WRITER_USAGE,
        platform_admin=manage_guild,
    )

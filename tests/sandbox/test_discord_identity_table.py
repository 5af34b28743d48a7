"""The identity table (docs/design.md) through the Discord emulator and the production runner.

Every row is a real gateway event from the emulator to the runner's discord.py client: the
pipeline's identity and the bot's permission decision for each kind of Discord sender.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import pytest

from actorscope.identity import PeerKind, SenderKind
from actorscope.sandbox import DiscordWorld
from actorscope.testing import DiscordSim, Grants, SimulatedEvent, Turn

#: Plays one event in the world; gets the simulator, the guild and its #general.
Play = Callable[[DiscordSim, DiscordWorld.Guild, DiscordWorld.Channel], Awaitable[SimulatedEvent]]


@dataclass(frozen=True)
class Row:
    """One row of the identity table: an event and what the runner must make of it."""

    play: Play
    #: ``{guild}``, ``{sender}``, ``{webhook}`` and ``{bot}`` are filled in with the ids.
    user_id: str
    sender: str  # the name of the acting person, or "" for a non-person
    peer_kind: PeerKind
    sender_kind: SenderKind
    allowed: bool
    reason: str


async def _member(
    sim: DiscordSim, guild: DiscordWorld.Guild, general: DiscordWorld.Channel
) -> SimulatedEvent:
    return await sim.message("carol", "write", general)


async def _thread(
    sim: DiscordSim, guild: DiscordWorld.Guild, general: DiscordWorld.Channel
) -> SimulatedEvent:
    return await sim.message("carol", "write", sim.thread(general, "design"))


async def _dm(
    sim: DiscordSim, guild: DiscordWorld.Guild, general: DiscordWorld.Channel
) -> SimulatedEvent:
    return await sim.dm("dave", "write")


async def _webhook(
    sim: DiscordSim, guild: DiscordWorld.Guild, general: DiscordWorld.Channel
) -> SimulatedEvent:
    return await sim.webhook(general, "write", name="ci")


async def _bot(
    sim: DiscordSim, guild: DiscordWorld.Guild, general: DiscordWorld.Channel
) -> SimulatedEvent:
    return await sim.bot_message("deploy-bot", "write", general)


async def _slash(
    sim: DiscordSim, guild: DiscordWorld.Guild, general: DiscordWorld.Channel
) -> SimulatedEvent:
    return await sim.slash("dave", "write", general, options={"file": "a.md"})


async def _click(
    sim: DiscordSim, guild: DiscordWorld.Guild, general: DiscordWorld.Channel
) -> SimulatedEvent:
    # The bot posted a message with a "save" button earlier; carol presses it.
    button = {"type": 2, "style": 1, "label": "Save", "custom_id": "save"}
    await sim.emulator.post(
        sim.bot, general, "choose", components=[{"type": 1, "components": [button]}]
    )
    return await sim.click("carol", general, "save")


MEMBER = "guild:{guild}:user:{sender}"
ROWS = {
    "guild member": Row(_member, MEMBER, "carol", PeerKind.GROUP, SenderKind.USER, True, "granted"),
    "thread": Row(_thread, MEMBER, "carol", PeerKind.GROUP, SenderKind.USER, True, "granted"),
    "DM": Row(_dm, "{sender}", "dave", PeerKind.DIRECT, SenderKind.USER, True, "not_group_context"),
    "webhook": Row(
        _webhook,
        "guild:{guild}:webhook:{webhook}",
        "",
        PeerKind.GROUP,
        SenderKind.WEBHOOK,
        False,
        "empty_sender",
    ),
    "other bot": Row(
        _bot, "guild:{guild}:bot:{bot}", "", PeerKind.GROUP, SenderKind.BOT, False, "empty_sender"
    ),
    "slash command": Row(
        _slash, MEMBER, "dave", PeerKind.GROUP, SenderKind.USER, False, "no_grant"
    ),
    "component click": Row(
        _click, MEMBER, "carol", PeerKind.GROUP, SenderKind.USER, True, "granted"
    ),
}


@pytest.mark.parametrize("row", ROWS.values(), ids=list(ROWS))
async def test_identity_table_row(
    discord_sim: DiscordSim, actorscope_grants: Grants, row: Row
) -> None:
    """Each Discord sender kind gets the table's scope, actor, kinds and decision."""
    discord_sim.config = discord_sim.config.model_copy(update={"ignore_bots": False})
    carol = discord_sim.user("carol")
    discord_sim.user("dave")
    deploy = discord_sim.user("deploy-bot", bot=True)
    lab = discord_sim.guild("lab")
    general = discord_sim.channel(lab, "general")
    await actorscope_grants.allow(f"guild:{lab.id}:*", carol)

    @discord_sim.handler
    async def bot(turn: Turn) -> None:
        decision = await turn.check("file_writer")
        await turn.reply(f"{'ok' if decision.allowed else 'no'}: {decision.reason}")

    sender = str(discord_sim.find_user(row.sender).id) if row.sender else ""
    expect = discord_sim.should_allow if row.allowed else discord_sim.should_deny
    expect("file_writer", reason=row.reason, sender=sender or None)  # "" is checked below
    discord_sim.should_send(text=f"{'ok' if row.allowed else 'no'}: {row.reason}")
    event = await row.play(discord_sim, lab, general)
    identity = event.identity
    assert identity is not None
    hooks = [hook.id for hook in discord_sim.world.webhooks.values()]
    user_id = row.user_id.format(
        guild=lab.id, sender=sender, webhook=hooks[0] if hooks else "", bot=deploy.id
    )
    assert (identity.user_id, identity.sender_id) == (user_id, sender)
    assert (identity.peer_kind, identity.sender_kind) == (row.peer_kind, row.sender_kind)

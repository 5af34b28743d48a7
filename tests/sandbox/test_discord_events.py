"""The emulator's dispatches arrive as discord.py events, in a plain client."""

from __future__ import annotations

import asyncio
from typing import Any

import discord
from tests.sandbox.conftest import BOUND, Connect

from actorscope.sandbox import DiscordEmulator


class Recorder(discord.Client):
    """Puts (event name, detail) on a queue for every event under test."""

    def __init__(self) -> None:
        intents = discord.Intents.default()
        intents.message_content = True
        intents.members = True
        super().__init__(intents=intents)
        self.events: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()

    async def next(self, name: str) -> Any:
        """The detail of the next ``name`` event (others before it are dropped)."""
        async with asyncio.timeout(BOUND):
            while True:
                event, detail = await self.events.get()
                if event == name:
                    return detail

    async def on_message(self, message: discord.Message) -> None:
        """Record a message."""
        await self.events.put(("message", message))

    async def on_message_edit(self, before: discord.Message, after: discord.Message) -> None:
        """Record an edit of a cached message."""
        await self.events.put(("edit", after))

    async def on_raw_message_delete(self, payload: discord.RawMessageDeleteEvent) -> None:
        """Record a deletion."""
        await self.events.put(("delete", payload.message_id))

    async def on_thread_create(self, thread: discord.Thread) -> None:
        """Record a new thread."""
        await self.events.put(("thread", thread))

    async def on_member_join(self, member: discord.Member) -> None:
        """Record a join."""
        await self.events.put(("join", member))

    async def on_member_update(self, before: discord.Member, after: discord.Member) -> None:
        """Record a member change."""
        await self.events.put(("member", after))

    async def on_interaction(self, interaction: discord.Interaction[Any]) -> None:
        """Record an interaction."""
        await self.events.put(("interaction", interaction))


async def test_messages_edits_deletes_and_webhooks(emu: DiscordEmulator, connect: Connect) -> None:
    """MESSAGE_CREATE/UPDATE/DELETE and a webhook post arrive with the right authors."""
    client = Recorder()
    async with connect(client):
        sent = await emu.say("carol", "design", "in the thread")
        message = await client.next("message")
        assert isinstance(message.channel, discord.Thread)
        assert message.author.name == "carol"
        await emu.edit(sent, "edited")
        assert (await client.next("edit")).content == "edited"
        await emu.delete(sent)
        assert await client.next("delete") == sent.id
        await emu.webhook_post("ci", "build green")
        hooked = await client.next("message")
    assert hooked.webhook_id == emu.world.webhook("ci").id
    assert hooked.content == "build green"


async def test_threads_and_members(emu: DiscordEmulator, connect: Connect) -> None:
    """THREAD_CREATE, GUILD_MEMBER_ADD and GUILD_MEMBER_UPDATE reach the client's cache."""
    client = Recorder()
    guild = emu.world.guild()
    async with connect(client):
        await emu.open_thread("bob", "general", "plans")
        assert (await client.next("thread")).name == "plans"
        erin = await emu.add_member(guild, "erin")
        assert (await client.next("join")).id == erin.id
        managers = next(r for r in guild.roles.values() if r.name == "managers")
        await emu.give_role(guild, erin, managers)
        updated = await client.next("member")
    assert updated.guild_permissions.manage_guild


async def test_select_and_dm(emu: DiscordEmulator, connect: Connect) -> None:
    """A string select sends its values; a DM arrives as a DM channel message."""
    client = Recorder()
    async with connect(client):
        bot = emu.world.bot
        menu = {
            "type": 1,
            "components": [
                {"type": 3, "custom_id": "pick", "options": [{"label": "a", "value": "a"}]}
            ],
        }
        shown = await emu.post(bot, emu.world.channel("general"), "pick", components=[menu])
        await emu.select("carol", shown, "pick", ["a"])
        interaction = await client.next("interaction")
        assert interaction.data == {"custom_id": "pick", "component_type": 3, "values": ["a"]}
        await emu.dm("bob", "psst")
        message = await client.next("message")
    assert isinstance(message.channel, discord.DMChannel)
    assert message.content == "psst"

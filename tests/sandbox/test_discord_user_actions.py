"""The Discord emulator's newer user actions and routes, read by a plain discord.py client:
reactions, modals, context menus, resolved options and selects, new channels, timeouts, the
system channel, member queries and components-only messages. discord.py parsing each event
into its own objects is the test of the payload's shape."""

from __future__ import annotations

import asyncio
import datetime
from typing import Any

import discord
import pytest
from discord import app_commands
from tests.sandbox.conftest import BOUND, Connect

from actorscope.errors import ConfigError
from actorscope.sandbox import DiscordEmulator
from actorscope.sandbox._world import ChannelType as DiscordChannelType
from actorscope.sandbox._world import Permission as DiscordPermission

JSON = dict[str, Any]


async def ready_guild(client: discord.Client, guild_id: int) -> discord.Guild:
    """The client's guild, once the client is ready (its guilds are in its cache)."""
    await asyncio.wait_for(client.wait_until_ready(), BOUND)
    guild = client.get_guild(guild_id)
    assert guild is not None
    return guild


class Client(discord.Client):
    """Records raw reactions and interactions; has a command tree."""

    def __init__(self) -> None:
        intents = discord.Intents.default()
        intents.members = True
        super().__init__(intents=intents)
        self.tree = app_commands.CommandTree(self)
        self.events: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()

    async def next(self, name: str) -> Any:
        """The detail of the next ``name`` event."""
        async with asyncio.timeout(BOUND):
            while True:
                event, detail = await self.events.get()
                if event == name:
                    return detail

    async def on_raw_reaction_add(self, payload: discord.RawReactionActionEvent) -> None:
        """Record a reaction."""
        await self.events.put(("add", payload))

    async def on_raw_reaction_remove(self, payload: discord.RawReactionActionEvent) -> None:
        """Record a reaction taken back."""
        await self.events.put(("remove", payload))

    async def on_guild_channel_create(self, channel: discord.abc.GuildChannel) -> None:
        """Record a new channel."""
        await self.events.put(("channel", channel))

    async def on_member_update(self, before: discord.Member, after: discord.Member) -> None:
        """Record a member change."""
        await self.events.put(("member", after))


async def test_reactions_arrive_as_raw_reaction_events(
    emu: DiscordEmulator, connect: Connect
) -> None:
    """react / unreact: MESSAGE_REACTION_ADD (with the member) and _REMOVE; a guild's custom
    emoji by name; no second reaction with the same emoji; unknown emojis are refused."""
    guild = emu.world.guild()
    owl = emu.world.add_emoji(guild, "owl")
    client = Client()
    async with connect(client):
        message = await emu.say("bob", "general", "react here")
        await emu.react("carol", message, "👍")
        added = await client.next("add")
        assert (added.emoji.name, added.user_id, added.message_id) == (
            "👍",
            emu.world.user("carol").id,
            message.id,
        )
        assert added.member is not None
        assert added.member.name == "carol"
        assert added.message_author_id == emu.world.user("bob").id
        await emu.react("carol", message, "owl")
        custom = await client.next("add")
        assert (custom.emoji.name, str(custom.emoji.id)) == ("owl", owl.rpartition(":")[2])
        await emu.unreact("carol", message, "👍")
        removed = await client.next("remove")
        assert (removed.emoji.name, removed.member) == ("👍", None)
        with pytest.raises(ConfigError, match="has reacted with owl already"):
            await emu.react("carol", message, "owl")
        with pytest.raises(ConfigError, match="'parrot' is no emoji of this guild"):
            await emu.react("carol", message, "parrot")
        with pytest.raises(ConfigError, match="has not reacted with 👍"):
            await emu.unreact("carol", message, "👍")
    assert message.to_json(guild, bot_id=emu.world.bot.id)["reactions"][0]["emoji"] == {
        "id": owl.rpartition(":")[2],
        "name": "owl",
        "animated": False,
    }


async def test_a_new_reaction_needs_add_reactions(emu: DiscordEmulator) -> None:
    """A member without Add Reactions may join an existing reaction but not start one."""
    general = emu.world.channel("general")
    message = await emu.say("bob", general, "react here")
    general.overwrites[emu.world.guild().id] = (0, int(DiscordPermission.ADD_REACTIONS))
    with pytest.raises(ConfigError, match="may not add new reactions here"):
        await emu.react("carol", message, "🎉")
    general.overwrites.clear()
    await emu.react("bob", message, "🎉")
    general.overwrites[emu.world.guild().id] = (0, int(DiscordPermission.ADD_REACTIONS))
    await emu.react("carol", message, "🎉")
    assert message.reactions["🎉"] == {emu.world.user("bob").id, emu.world.user("carol").id}


class Feedback(discord.ui.Modal, title="Feedback"):
    """A modal with a required and an optional input."""

    name: discord.ui.TextInput[Feedback] = discord.ui.TextInput(label="Name")
    words: discord.ui.TextInput[Feedback] = discord.ui.TextInput(
        label="Words", required=False, default="none", max_length=10
    )

    def __init__(self, seen: asyncio.Queue[tuple[str, str]]) -> None:
        super().__init__()
        self.seen = seen

    async def on_submit(self, interaction: discord.Interaction[Any]) -> None:
        """Answer with what was typed."""
        await self.seen.put((self.name.value, self.words.value))
        await interaction.response.send_message("thanks", ephemeral=True)


async def test_a_modal_is_submitted_once_with_what_was_typed(
    emu: DiscordEmulator, connect: Connect
) -> None:
    """The bot answers a command with a modal; submit_modal sends its inputs (prefilled ones
    kept), checked as a client checks them, once."""
    client = Client()
    seen: asyncio.Queue[tuple[str, str]] = asyncio.Queue()

    @client.tree.command(name="feedback", description="Give feedback")
    async def feedback(interaction: discord.Interaction[Any]) -> None:
        await interaction.response.send_modal(Feedback(seen))

    async with connect(client):
        await client.tree.sync()
        command = await emu.slash("bob", "general", "feedback")
        await emu.wait_for(lambda: command.modal)
        assert command.modal is not None
        name, words = [r["components"][0]["custom_id"] for r in command.modal["components"]]
        with pytest.raises(ConfigError, match=f"the modal's input {name!r} is required"):
            await emu.submit_modal("bob", command, {})
        with pytest.raises(ConfigError, match="takes 0-10 characters"):
            await emu.submit_modal("bob", command, {name: "Bob", words: "far too many words"})
        with pytest.raises(ConfigError, match="the modal is bob's, not carol's"):
            await emu.submit_modal("carol", command, {name: "Carol"})
        submit = await emu.submit_modal("bob", command, {name: "Bob"})
        async with asyncio.timeout(BOUND):
            assert await seen.get() == ("Bob", "none")
        reply = await emu.wait_for_reply(submit)
        assert (reply.content, reply.ephemeral_to) == ("thanks", emu.world.user("bob"))
        with pytest.raises(ConfigError, match="with no modal"):
            await emu.submit_modal("bob", command, {name: "Bob"})


async def test_context_menus_and_resolved_options(emu: DiscordEmulator, connect: Connect) -> None:
    """User and message commands run with their target; channel and role options arrive
    resolved (discord.py hands the callbacks the objects)."""
    client = Client()
    got: asyncio.Queue[object] = asyncio.Queue()
    guild = emu.world.guild()
    managers = next(r for r in guild.roles.values() if r.name == "managers")

    @client.tree.context_menu(name="Wave")
    async def wave(interaction: discord.Interaction[Any], member: discord.Member) -> None:
        await got.put(member.name)
        await interaction.response.send_message("waved")

    @client.tree.context_menu(name="Quote")
    async def quote(interaction: discord.Interaction[Any], message: discord.Message) -> None:
        await got.put(message.content)
        await interaction.response.send_message("quoted")

    @client.tree.command(name="where", description="A channel and a role")
    async def where(
        interaction: discord.Interaction[Any], channel: discord.TextChannel, role: discord.Role
    ) -> None:
        await got.put((channel.name, role.name))
        await interaction.response.send_message("noted")

    async with connect(client):
        await client.tree.sync()
        await emu.context_menu("alice", "general", "Wave", "carol")
        said = await emu.say("bob", "general", "quote me")
        await emu.context_menu("alice", "general", "Quote", said)
        await emu.slash("alice", "general", "where", channel="random", role="managers")
        async with asyncio.timeout(BOUND):
            assert [await got.get() for _ in range(3)] == [
                "carol",
                "quote me",
                ("random", managers.name),
            ]
        with pytest.raises(ConfigError, match="'Wave' is a user command: pass the user"):
            await emu.context_menu("alice", "general", "Wave", said)
        with pytest.raises(ConfigError, match="'Quote' is a context-menu command"):
            await emu.slash("alice", "general", "Quote")
        with pytest.raises(ConfigError, match="/where needs the option 'role'"):
            await emu.slash("alice", "general", "where", channel="random")


async def test_user_and_channel_selects_send_resolved_picks(
    emu: DiscordEmulator, connect: Connect
) -> None:
    """User and channel selects (nested in a container) send ids with resolved objects; min
    and max values and channel types are checked."""
    client = Client()
    async with connect(client):
        menu = [
            {
                "type": 17,
                "components": [
                    {
                        "type": 1,
                        "components": [
                            {"type": 5, "custom_id": "who", "min_values": 1, "max_values": 2}
                        ],
                    },
                    {
                        "type": 1,
                        "components": [{"type": 8, "custom_id": "where", "channel_types": [0]}],
                    },
                ],
            }
        ]
        panel = await emu.post(emu.world.bot, emu.world.channel("general"), "", components=menu)
        people = await emu.select("alice", panel, "who", ["bob", "carol"])
        ids = [str(emu.world.user(n).id) for n in ("bob", "carol")]
        assert people.data["values"] == ids
        assert set(people.data["resolved"]["members"]) == set(ids)
        place = await emu.select("alice", panel, "where", ["random"])
        random = emu.world.channel("random")
        assert place.data["resolved"]["channels"][str(random.id)]["name"] == "random"
        with pytest.raises(ConfigError, match="takes 1 to 2 values"):
            await emu.select("alice", panel, "who", ["alice", "bob", "carol"])
        with pytest.raises(ConfigError, match="not one of the channel types"):
            await emu.select("alice", panel, "where", ["design"])


async def test_creating_a_channel_with_overwrites(emu: DiscordEmulator, connect: Connect) -> None:
    """POST /guilds/{id}/channels: a text or voice channel with role and member overwrites
    (CHANNEL_CREATE), refused without Manage Channels or when granting what the bot lacks."""
    guild = emu.world.guild()
    client = Client()
    async with connect(client):
        disco = await ready_guild(client, guild.id)
        with pytest.raises(discord.Forbidden):
            await disco.create_text_channel("nope")
        bots = emu.world.add_role(guild, "bots", int(DiscordPermission.MANAGE_CHANNELS))
        guild.members[emu.world.bot.id].roles.append(bots.id)
        bob = emu.world.user("bob")
        overwrites: Any = {
            disco.default_role: discord.PermissionOverwrite(view_channel=False),
            discord.Object(bob.id, type=discord.Member): discord.PermissionOverwrite(
                view_channel=True
            ),
        }
        made = await disco.create_text_channel("Secret Plans", overwrites=overwrites)
        created = await client.next("channel")
        assert (made.name, created.id) == ("secret-plans", made.id)
        plans = emu.world.channels[made.id]
        view = int(DiscordPermission.VIEW_CHANNEL)
        assert plans.overwrites == {guild.id: (0, view), bob.id: (view, 0)}
        assert plans.member_overwrites == {bob.id}
        voice = await disco.create_voice_channel("Lounge")
        assert isinstance(voice, discord.VoiceChannel)
        assert emu.world.channels[voice.id].type is DiscordChannelType.VOICE
        grant: Any = {disco.default_role: discord.PermissionOverwrite(administrator=True)}
        with pytest.raises(discord.Forbidden):
            await disco.create_text_channel("power", overwrites=grant)


async def test_a_member_is_timed_out(emu: DiscordEmulator, connect: Connect) -> None:
    """PATCH /guilds/{id}/members/{id}: a timeout needs Moderate Members and updates the
    member (GUILD_MEMBER_UPDATE); the owner cannot be timed out."""
    guild = emu.world.guild()
    moderators = emu.world.add_role(guild, "mods", int(DiscordPermission.MODERATE_MEMBERS))
    guild.members[emu.world.bot.id].roles.append(moderators.id)
    client = Client()
    async with connect(client):
        disco = await ready_guild(client, guild.id)
        carol = await disco.fetch_member(emu.world.user("carol").id)
        await carol.timeout(discord.utils.utcnow() + datetime.timedelta(minutes=5))
        updated = await client.next("member")
        assert updated.is_timed_out()
        owner = await disco.fetch_member(guild.owner_id)
        with pytest.raises(discord.Forbidden):
            await owner.timeout(discord.utils.utcnow() + datetime.timedelta(minutes=5))


async def test_the_guild_has_a_system_channel(emu: DiscordEmulator, connect: Connect) -> None:
    """A guild's first text channel is its system channel, as a new guild's #general is."""
    client = Client()
    async with connect(client):
        disco = await ready_guild(client, emu.world.guild().id)
        assert disco.system_channel is not None
        assert disco.system_channel.name == "general"


async def test_member_queries_return_the_asked_members(
    emu: DiscordEmulator, connect: Connect
) -> None:
    """REQUEST_GUILD_MEMBERS answers the user ids or the name prefix asked for, not everyone."""
    client = discord.Client(intents=discord.Intents.default())
    async with connect(client):
        disco = await ready_guild(client, emu.world.guild().id)
        carol = emu.world.user("carol")
        (found,) = await disco.query_members(user_ids=[carol.id])
        assert found.name == "carol"
        named = await disco.query_members("da", limit=5)
        assert [m.name for m in named] == ["dave"]


async def test_components_only_messages_keep_their_flag(emu: DiscordEmulator) -> None:
    """A message sent with IS_COMPONENTS_V2 keeps the flag and may carry no content."""
    general = emu.world.channel("general")
    layout = [{"type": 17, "components": [{"type": 10, "content": "hi"}]}]
    message = await emu.post(emu.world.bot, general, "", components=layout, flags=1 << 15)
    assert message.to_json(emu.world.guild())["flags"] == 1 << 15
    with pytest.raises(ConfigError, match="no component 'x' of that kind"):
        await emu.click("bob", message, "x")

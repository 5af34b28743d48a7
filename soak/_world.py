"""The two emulated platforms the soak plays on: who is there, where they talk.

Telegram: supergroups with the bot as an administrator (it sees everything), a few thousand
people (Zipf ranks), other bots and a channel to post as, a probe chat. Discord: guilds spread
over every shard, each with text channels, a webhook, the same people as members, another bot.
The driver turns :func:`bench._streams.mixed_stream` events into these people's actions.
"""

from __future__ import annotations

from dataclasses import dataclass

from actorscope.sandbox import BotApiEmulator, DiscordWorld

__all__ = ["DiscordSide", "TelegramSide", "discord_side", "telegram_side"]

BOT_USERNAME = "soak_bot"
_FIRST_SENDER = 100_000


@dataclass(slots=True)
class TelegramSide:
    """The Telegram emulator and its people and chats."""

    emu: BotApiEmulator
    people: list[BotApiEmulator.User]
    chats: list[BotApiEmulator.Chat]
    other_bot: BotApiEmulator.User
    channel: BotApiEmulator.Chat
    probe_chat: BotApiEmulator.Chat
    probe_user: BotApiEmulator.User


@dataclass(slots=True)
class DiscordSide:
    """The Discord world and its people, guilds and channels (the emulator is made from it)."""

    world: DiscordWorld
    people: list[DiscordWorld.User]
    guilds: list[DiscordWorld.Guild]
    channels: list[DiscordWorld.Channel]
    other_bot: DiscordWorld.User
    shard_count: int

    def shard_of(self, guild: DiscordWorld.Guild) -> int:
        """The shard Discord sends ``guild``'s events to."""
        return (guild.id >> 22) % self.shard_count

    def guild_of(self, channel: DiscordWorld.Channel) -> DiscordWorld.Guild:
        """The guild ``channel`` belongs to."""
        guild = self.world.guild_of(channel)
        assert guild is not None
        return guild


def telegram_side(*, people: int, chats: int) -> TelegramSide:
    """A Bot API emulator with ``people`` users and ``chats`` supergroups."""
    emu = BotApiEmulator(bot_username=BOT_USERNAME, bot_name="Soak")
    state = emu.state
    users = [
        state.add_user(f"User{i}", username=f"user{i}", user_id=_FIRST_SENDER + i)
        for i in range(people)
    ]
    groups = [
        state.add_chat("supergroup", title=f"chat {c}", bot_status="administrator")
        for c in range(chats)
    ]
    other_bot = state.add_user("Other", username="other_helper_bot", is_bot=True)
    channel = state.add_chat("channel", title="news", bot_status="administrator")
    probe_chat = state.add_chat("supergroup", title="probes", bot_status="administrator")
    probe_user = state.add_user("Probe", username="soak_probe", user_id=_FIRST_SENDER - 1)
    return TelegramSide(emu, users, groups, other_bot, channel, probe_chat, probe_user)


def discord_side(*, people: int, shard_count: int, channels_per_guild: int = 3) -> DiscordSide:
    """Two guilds per shard, each with channels and a webhook; ``people`` members in each."""
    world = DiscordWorld(bot_name="soak-bot")
    owner = world.add_user("guild-owner")
    users = [world.add_user(f"member{i}") for i in range(people)]
    other_bot = world.add_user("other-bot", bot=True)
    guilds = []
    channels = []
    for g in range(2 * shard_count):
        guild = world.add_guild(f"guild {g}", owner=owner)
        for user in (*users, other_bot):
            world.join(guild, user)
        for c in range(channels_per_guild):
            channel = world.add_channel(guild, f"g{g}-c{c}")
            channels.append(channel)
            if c == 0:
                world.add_webhook(channel, f"hook{g}")
        guilds.append(guild)
    return DiscordSide(world, users, guilds, channels, other_bot, shard_count)

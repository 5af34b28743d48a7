"""The Discord sandbox prompt: type as people into the Discord emulator, watch the bot.

The grammar both prompts share is in :mod:`actorscope.sandbox._prompt`; for example::

    /as carol @general hello        carol writes "hello" in #general
    /as carol @general#design hi    ... in its thread "design" (or #<thread id>)
    /as dave hi                     dave writes to the bot in a DM
    /as bob @random                 speak as bob in #random from now on
    /click show                     the speaker presses the button "show" of the bot's
                                    latest message here that has it

In a line, ``@bot`` mentions the bot and ``@NAME`` that person (in guilds the bot answers
mentions); a channel of another guild is ``@GUILD/CHANNEL``.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from actorscope.errors import ConfigError
from actorscope.sandbox._emulator import DiscordEmulator, button_ids
from actorscope.sandbox._prompt import Command, Output, Prompt, Settle, Speak
from actorscope.sandbox._world import Channel, ChannelType, Message, User

__all__ = ["DISCORD_HELP", "DiscordConsole"]

# ``@name`` typed at the prompt (not inside a ``<@id>`` mention already).
_AT_NAME = re.compile(r"(?<![<\w])@([A-Za-z0-9_-]+)")


class DiscordConsole(Prompt):
    """One prompt session on the Discord emulator: who types where; prints what the bot posts.

    ``settle``, when given, is awaited after each line that sent the bot an event, with that
    event's id: ``actorscope run --sandbox`` waits there until its runner has taken the event
    in (and says when the bot ignored it), so the next line, or the end of the input, never
    overtakes it.
    """

    PLACE = "@CHANNEL[#THREAD]"
    BUTTON = "custom id"
    PRIVATE = "a DM"
    NOTE = (
        "in a line @NAME mentions that person and @bot the bot (in guilds the bot answers mentions)"
    )

    def __init__(
        self,
        emulator: DiscordEmulator,
        echo: Output,
        *,
        settle: Settle | None = None,
    ) -> None:
        super().__init__(echo, settle=settle)
        self.emu = emulator
        self.who: User | None = None
        self.where: Channel | None = None
        emulator.listeners.append(self._show)

    def close(self) -> None:
        """Stop printing the bot's messages."""
        if self._show in self.emu.listeners:
            self.emu.listeners.remove(self._show)

    def _show(self, message: Message) -> None:
        if message.author.id == self.emu.world.bot.id:
            place = f"{_place(message.channel)} msg {message.id}"
            if message.ephemeral_to is not None:
                place += f", only {message.ephemeral_to.username} sees it"
            buttons = " ".join(f"[{b}]" for b in button_ids(message))
            shown = f"[bot -> {place}] {message.content}"
            self.out(f"{shown}  {buttons}" if buttons else shown)

    # -- the shared grammar -------------------------------------------------------------

    @property
    def speaking(self) -> bool:
        """Whether someone speaks (after the first ``/as``)."""
        return self.who is not None

    def here(self) -> str:
        """``carol in #general``."""
        who, where = self._speaker()
        return f"{who.username} in {_place(where)}"

    async def become(self, speak: Speak) -> None:
        """Speak as ``speak.name`` in a channel, a thread of it, or a DM with the bot."""
        world = self.emu.world
        who = world.user(speak.name)
        if who.bot:
            raise ConfigError(f"{who.username} is a bot: the prompt types as people")
        self.who, self.where = who, self._channel(who, speak.place, speak.topic)

    def _channel(self, who: User, place: str | None, topic: str | None) -> Channel:
        world = self.emu.world
        if place is None:
            return world.dm_channel(who)
        guild_name, _, name = place.rpartition("/")
        guild = world.guild(guild_name) if guild_name else None
        channel = world.channel(name, guild=guild)
        if topic is None:
            return channel
        for thread in world.channels.values():
            if thread.parent_id == channel.id and topic in (thread.name, str(thread.id)):
                return thread
        raise ConfigError(f"#{channel.name} has no thread {topic!r}")

    async def say(self, text: str) -> int | None:
        """The speaker writes ``text`` (``@bot``, ``@NAME`` become mentions)."""
        who, where = self._speaker()
        return (await self.emu.say(who, where, self._mentions(text))).id

    async def press(self, message: int | None, button: str | None) -> int | None:
        """The speaker clicks ``button`` of the bot's ``message`` (or its latest with it)."""
        who, where = self._speaker()
        if message is None:
            target = self.emu.latest_with_button(where, button, viewer=who)
        else:
            found = self.emu.message(message, viewer=who)
            if found is None or found.deleted or found.channel.id != where.id:
                raise ConfigError(f"no message {message} in {_place(where)}")
            target = found
        buttons = button_ids(target)
        if not buttons:
            raise ConfigError(f"message {target.id} has no buttons")
        return (await self.emu.click(who, target, button or buttons[0])).id

    def _speaker(self) -> tuple[User, Channel]:
        if self.who is None or self.where is None:
            raise ConfigError("say who you are first: /as NAME [@CHANNEL] TEXT  (see /help)")
        return self.who, self.where

    # -- the Discord commands -----------------------------------------------------------

    async def _thread(self, rest: str) -> int | None:
        who, where = self._speaker()
        if not rest:
            raise ConfigError("usage: /thread NAME")
        self.where = await self.emu.open_thread(who, where, rest)
        self.out(f"opened thread #{self.where.name}")
        return None

    async def _webhook(self, rest: str) -> int | None:
        name, _, body = rest.partition(" ")
        if not name or not body.strip():
            raise ConfigError("usage: /webhook NAME TEXT")
        return (await self.emu.webhook_post(name, body.strip())).id

    async def _slash(self, rest: str) -> int | None:
        who, where = self._speaker()
        name, *pairs = rest.split() or [""]
        if not name:
            raise ConfigError("usage: /slash CMD key:value ...")
        options: dict[str, object] = {}
        for pair in pairs:
            key, _, value = pair.partition(":")
            options[key] = value
        return (await self.emu.slash(who, where, name, **options)).id

    async def _who(self, rest: str) -> int | None:
        world = self.emu.world
        self.out("people: " + ", ".join(u.username for u in world.users.values() if not u.bot))
        self.out("bots:   " + ", ".join(u.username for u in world.users.values() if u.bot))
        names = [_place(c) for c in world.channels.values() if c.guild_id is not None]
        self.out("channels: " + ", ".join(names))
        self.out("webhooks: " + ", ".join(h.name for h in world.webhooks.values()))
        return None

    COMMANDS: ClassVar[tuple[Command[Any], ...]] = (
        Command("/thread", "/thread NAME", "open a thread here and move into it", _thread),
        Command("/webhook", "/webhook NAME TEXT", "the webhook NAME posts TEXT", _webhook),
        Command("/slash", "/slash CMD k:v ...", "run the bot's slash command CMD", _slash),
        Command("/who", "/who", "people, channels, threads and webhooks", _who),
    )

    def _mentions(self, text: str) -> str:
        """``text`` with ``@bot`` and ``@NAME`` of a known user written as Discord mentions."""
        world = self.emu.world
        ids = {user.username: user.id for user in world.users.values()}
        ids.setdefault("bot", world.bot.id)

        def mention(match: re.Match[str]) -> str:
            found = ids.get(match.group(1))
            return match.group(0) if found is None else f"<@{found}>"

        return _AT_NAME.sub(mention, text)


def _place(channel: Channel) -> str:
    """``#general``, or ``DM with carol``."""
    if channel.type is ChannelType.DM and channel.recipient is not None:
        return f"DM with {channel.recipient.username}"
    return f"#{channel.name}"


#: The prompt's help, as /help prints it.
DISCORD_HELP = DiscordConsole.help_text()

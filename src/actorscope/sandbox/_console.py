"""The prompt behind ``actorscope sandbox --platform discord``: type as people into the emulator.

Lines are commands or text: text is posted as the current person in the current channel.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Awaitable, Callable

from actorscope.errors import ActorscopeError, ConfigError
from actorscope.sandbox._emulator import DiscordEmulator
from actorscope.sandbox._world import Channel, Message, User

__all__ = ["DISCORD_HELP", "DiscordConsole", "run_discord_console"]

DISCORD_HELP = """\
commands:
  /as NAME              type as NAME (a guild member)
  /in #CHANNEL          type in a channel or thread
  /thread NAME          open a thread here and move into it
  /webhook NAME TEXT    post TEXT as the webhook NAME
  /slash CMD k:v ...    run the bot's slash command CMD with options
  /click CUSTOM_ID      click that button on the bot's latest message that has it
  /who                  people, channels, threads and webhooks
  /help                 this help
  /quit                 stop
anything else is a message from the current person in the current channel;
in it @NAME mentions that person and @bot the bot (in guilds the bot answers mentions)"""

# ``@name`` typed at the prompt (not inside a ``<@id>`` mention already).
_AT_NAME = re.compile(r"(?<![<\w])@([A-Za-z0-9_-]+)")


#: Awaited with the id of each event a line sent (a message's or an interaction's id).
Settle = Callable[[int], Awaitable[None]]


class DiscordConsole:
    """One prompt session: who types where; prints what the bot posts.

    ``settle``, when given, is awaited after each line that sent the bot an event, with that
    event's id: ``actorscope run --sandbox`` waits there until its runner has taken the event
    in (and says when the bot ignored it), so the next line, or the end of the input, never
    overtakes it.
    """

    def __init__(
        self,
        emulator: DiscordEmulator,
        echo: Callable[[str], None],
        *,
        settle: Settle | None = None,
    ) -> None:
        self.emu = emulator
        self.echo = echo
        self._settle = settle
        world = emulator.world
        people = [u for u in world.users.values() if not u.bot]
        self.who: User = people[0]
        self.where: Channel = next(c for c in world.channels.values() if c.guild_id is not None)
        emulator.listeners.append(self._show)

    def close(self) -> None:
        """Stop printing the bot's messages."""
        if self._show in self.emu.listeners:
            self.emu.listeners.remove(self._show)

    def _show(self, message: Message) -> None:
        if message.author.id == self.emu.world.bot.id:
            self.echo(f"[bot -> #{message.channel.name} msg {message.id}] {message.content}")

    def prompt(self) -> str:
        """Where the next line goes."""
        return f"{self.who.username} in #{self.where.name}"

    async def handle(self, line: str) -> bool:
        """Act on one line; False after ``/quit``. Mistakes print one line and change nothing."""
        text = line.strip()
        if not text:
            return True
        if text == "/quit":
            return False
        try:
            event = await self._dispatch(text)
        except ActorscopeError as exc:
            self.echo(f"error: {exc}")
            return True
        if event is not None and self._settle is not None:
            await self._settle(event)
        return True

    async def _dispatch(self, text: str) -> int | None:
        """Act on ``text``; the id of the event it sent the bot, if any."""
        command, _, rest = text.partition(" ")
        rest = rest.strip()
        world = self.emu.world
        if command == "/as":
            self.who = world.user(rest)
            self.echo(f"now typing as {self.prompt()}")
        elif command == "/in":
            self.where = world.channel(rest)
            self.echo(f"now typing as {self.prompt()}")
        elif command == "/thread":
            self.where = await self.emu.open_thread(self.who, self.where, rest)
            self.echo(f"opened thread #{self.where.name}")
        elif command == "/webhook":
            name, _, body = rest.partition(" ")
            return (await self.emu.webhook_post(name, body)).id
        elif command == "/slash":
            name, *pairs = rest.split() or [""]
            if not name:
                raise ConfigError("usage: /slash CMD key:value ...")
            options: dict[str, object] = {}
            for pair in pairs:
                key, _, value = pair.partition(":")
                options[key] = value
            return (await self.emu.slash(self.who, self.where, name, **options)).id
        elif command == "/click":
            message = self._latest_with(rest)
            return (await self.emu.click(self.who, message, rest)).id
        elif command == "/who":
            self._who()
        elif command == "/help":
            self.echo(DISCORD_HELP)
        else:
            return (await self.emu.say(self.who, self.where, self._mentions(text))).id
        return None

    def _mentions(self, text: str) -> str:
        """``text`` with ``@bot`` and ``@NAME`` of a known user written as Discord mentions."""
        world = self.emu.world
        ids = {user.username: user.id for user in world.users.values()}
        ids.setdefault("bot", world.bot.id)

        def mention(match: re.Match[str]) -> str:
            found = ids.get(match.group(1))
            return match.group(0) if found is None else f"<@{found}>"

        return _AT_NAME.sub(mention, text)

    def _latest_with(self, custom_id: str) -> Message:
        for message in reversed(self.emu.messages):
            for row in message.components:
                if any(c.get("custom_id") == custom_id for c in row.get("components", [])):
                    return message
        raise ConfigError(f"no message has a button {custom_id!r}")

    def _who(self) -> None:
        world = self.emu.world
        self.echo("people: " + ", ".join(u.username for u in world.users.values() if not u.bot))
        self.echo("bots:   " + ", ".join(u.username for u in world.users.values() if u.bot))
        names = [f"#{c.name}" for c in world.channels.values() if c.guild_id is not None]
        self.echo("channels: " + ", ".join(names))
        self.echo("webhooks: " + ", ".join(h.name for h in world.webhooks.values()))


async def run_discord_console(console: DiscordConsole, lines: AsyncIterator[str]) -> None:
    """Feed ``lines`` to the console until ``/quit`` or the end of the input."""
    async for line in lines:
        if not await console.handle(line):
            break

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
import shlex
from typing import Any, ClassVar

from actorscope.errors import ConfigError
from actorscope.sandbox._emulator import DiscordEmulator, button_ids
from actorscope.sandbox._payloads import modal_inputs, select_ids, walk_components
from actorscope.sandbox._prompt import Command, Output, Prompt, Settle, Speak
from actorscope.sandbox._world import Channel, ChannelType, Interaction, Message, User

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
        emulator.modal_listeners.append(self._show_modal)

    def close(self) -> None:
        """Stop printing the bot's messages and modals."""
        if self._show in self.emu.listeners:
            self.emu.listeners.remove(self._show)
        if self._show_modal in self.emu.modal_listeners:
            self.emu.modal_listeners.remove(self._show_modal)

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

    def _message_here(self, ref: str | None) -> Message:
        """Message ``ref`` (an id) here, or the latest message here (anyone's)."""
        who, where = self._speaker()
        if ref is not None:
            found = self.emu.message(int(ref), viewer=who)
            if found is None or found.deleted or found.channel.id != where.id:
                raise ConfigError(f"no message {ref} in {_place(where)}")
            return found
        for message in reversed(self.emu.messages):
            if message.channel.id == where.id and not message.deleted:
                return message
        raise ConfigError(f"no message in {_place(where)} yet")

    def _message_and_rest(self, rest: str, usage: str) -> tuple[Message, list[str]]:
        try:
            parts = shlex.split(rest)
        except ValueError:
            raise ConfigError(usage) from None
        ref = parts.pop(0) if parts and parts[0].isdigit() else None
        if not parts:
            raise ConfigError(usage)
        return self._message_here(ref), parts

    async def _react(self, rest: str) -> int | None:
        message, parts = self._message_and_rest(rest, "usage: /react [MESSAGE] EMOJI")
        await self.emu.react(self._speaker()[0], message, parts[0])
        self.out(f"{self._speaker()[0].username} reacts {parts[0]} to message {message.id}")
        return None

    async def _unreact(self, rest: str) -> int | None:
        message, parts = self._message_and_rest(rest, "usage: /unreact [MESSAGE] EMOJI")
        await self.emu.unreact(self._speaker()[0], message, parts[0])
        self.out(f"{self._speaker()[0].username} takes back {parts[0]} on message {message.id}")
        return None

    async def _pick(self, rest: str) -> int | None:
        usage = "usage: /pick [MESSAGE] SELECT VALUE...  (users, channels, roles by name)"
        try:
            parts = shlex.split(rest)
        except ValueError:
            raise ConfigError(usage) from None
        ref = parts.pop(0) if parts and parts[0].isdigit() else None
        if len(parts) < 1:
            raise ConfigError(usage)
        who, where = self._speaker()
        select, values = parts[0], [v.removeprefix("#").removeprefix("@") for v in parts[1:]]
        if ref is None:
            target = self._latest_with_select(where, who, select)
        else:
            target = self._message_here(ref)
        return (await self.emu.select(who, target, select, values)).id

    def _latest_with_select(self, where: Channel, who: User, select: str) -> Message:
        seen = [m for m in self.emu.ephemeral if m.visible_to(who)]
        for message in sorted([*self.emu.messages, *seen], key=lambda m: m.id, reverse=True):
            if (
                message.channel.id == where.id
                and not message.deleted
                and select in select_ids(message)
            ):
                return message
        raise ConfigError(f"no message in {_place(where)} has a select {select!r}")

    async def _menu(self, rest: str) -> int | None:
        usage = "usage: /menu COMMAND @NAME  or  /menu COMMAND MESSAGE"
        try:
            parts = shlex.split(rest)
        except ValueError:
            raise ConfigError(usage) from None
        if len(parts) != 2:
            raise ConfigError(usage + "  (quote a COMMAND with spaces)")
        who, where = self._speaker()
        name, target = parts
        if target.isdigit():
            interaction = await self.emu.context_menu(who, where, name, self._message_here(target))
        else:
            user = self.emu.world.user(target.removeprefix("@"))
            interaction = await self.emu.context_menu(who, where, name, user)
        return interaction.id

    async def _modal(self, rest: str) -> int | None:
        usage = "usage: /modal [INPUT=VALUE ...]  (INPUT: its label or custom id; quote spaces)"
        try:
            pairs = shlex.split(rest)
        except ValueError:
            raise ConfigError(usage) from None
        who, _ = self._speaker()
        opened = [
            (i, i.modal) for i in self.emu.interactions.values() if i.modal and i.user.id == who.id
        ]
        if not opened:
            raise ConfigError(f"the bot has opened no modal for {who.username}")
        interaction, modal = opened[-1]
        inputs = modal_inputs(modal)
        given: dict[str, list[str]] = {}
        for pair in pairs:
            key, sep, value = pair.partition("=")
            if not sep:
                raise ConfigError(usage)
            given.setdefault(inputs.get(key.lower(), key), []).append(value)
        values: dict[str, str | list[str]] = {
            key: picks if self._is_select(modal, key) else picks[-1] for key, picks in given.items()
        }
        return (await self.emu.submit_modal(who, interaction, values)).id

    @staticmethod
    def _is_select(modal: dict[str, Any], custom_id: str) -> bool:
        return any(
            c.get("custom_id") == custom_id and c.get("type") in (3, 5, 6, 7, 8)
            for c in walk_components(modal.get("components", []))
        )

    async def _join(self, rest: str) -> int | None:
        name, _, guild_name = rest.partition(" ")
        if not name:
            raise ConfigError("usage: /join NAME [GUILD]")
        guild = self.emu.world.guild(guild_name.strip() or None)
        user = await self.emu.add_member(guild, name.removeprefix("@"))
        self.out(f"{user.username} joined {guild.name}")
        return None

    def _show_modal(self, interaction: Interaction) -> None:
        modal = interaction.modal or {}
        labels = ", ".join(modal_inputs(modal)) or "no inputs"
        self.out(
            f"[bot opens the modal {modal.get('title', '')!r} for {interaction.user.username}:"
            f" {labels}]  (/modal INPUT=VALUE ...)"
        )

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
        Command("/menu", "/menu COMMAND @NAME|MESSAGE", "run a context-menu command", _menu),
        Command("/pick", "/pick [MESSAGE] SELECT VALUE...", "pick values in a select", _pick),
        Command("/modal", "/modal INPUT=VALUE ...", "fill in and submit the bot's modal", _modal),
        Command("/react", "/react [MESSAGE] EMOJI", "react to MESSAGE (default: latest)", _react),
        Command("/unreact", "/unreact [MESSAGE] EMOJI", "take the reaction back", _unreact),
        Command("/join", "/join NAME [GUILD]", "a new person NAME joins the guild", _join),
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

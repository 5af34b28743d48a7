"""The one grammar of both sandbox prompts, Telegram's and Discord's.

A line is a command or text. What both prompts share reads the same on each platform::

    /as NAME [@WHERE[#TOPIC]] [TEXT]   speak as NAME in WHERE (default: the private chat)
    TEXT                               the current speaker says TEXT where they are
    /click [MESSAGE] [BUTTON]          press BUTTON on the bot's MESSAGE
    /help  /quit

``WHERE`` is a Telegram chat (``@devs``, ``#TOPIC`` a forum topic) or a Discord channel
(``@general``, ``#TOPIC`` a thread of it); without it NAME speaks in their private chat (DM)
with the bot. A line starting with ``/`` that is no prompt command is text (a bot command).

:class:`Prompt` parses the shared commands and dispatches the platform's own, each declared
once as a :class:`Command` (what to type, what it does, the method that does it), so the help
is the table. A command returns the id of the event it sent the bot, if any, and the prompt
awaits the prompt's ``settle`` with it, when given (``actorscope run --sandbox`` waits there
until its runner has taken the event in).
"""

from __future__ import annotations

import asyncio
import shlex
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

from actorscope.errors import ActorscopeError, ConfigError

__all__ = [
    "Command",
    "Output",
    "Prompt",
    "Settle",
    "Speak",
    "parse_as",
    "parse_click",
    "until_quiet",
]

Output = Callable[[str], None]
#: Awaited with the id of each event a line sent the bot (a message's, an interaction's).
Settle = Callable[[int], Awaitable[None]]

#: A bot is done with a line once it has made no call for this long (seconds) ...
QUIET = 0.3
#: ... and a prompt waits for that at most this long.
SETTLE = 3.0


async def until_quiet(calls: Callable[[], int]) -> None:
    """Return once ``calls()`` (how many calls the bot has made) stays the same for
    :data:`QUIET` seconds. A bot says nothing when it is done with an event, so a piped line
    waits for its answer this way before the next line is sent; the caller bounds the wait."""
    while True:
        before = calls()
        await asyncio.sleep(QUIET)
        if calls() == before:
            return


P = TypeVar("P", bound="Prompt")
_AS_USAGE = "usage: /as NAME [@WHERE[#TOPIC]] [TEXT]"
_CLICK_USAGE = "usage: /click [MESSAGE] [BUTTON]"
_QUIT = frozenset({"/quit", "/exit"})
_SAY_WHO = "say who you are first: /as NAME [@WHERE] TEXT  (see /help)"


@dataclass(frozen=True, slots=True)
class Command(Generic[P]):
    """A prompt command: its name, what to type, what it does, and the method doing it
    (given the rest of the line; it returns the id of the event it sent the bot, if any)."""

    name: str
    usage: str
    summary: str
    run: Callable[[P, str], Awaitable[int | None]]


@dataclass(frozen=True, slots=True)
class Speak:
    """A parsed ``/as`` line: who speaks, where (``None``: their private chat), in which
    topic or thread, and what they say at once (may be empty)."""

    name: str
    place: str | None
    topic: str | None
    text: str


def parse_as(rest: str) -> Speak:
    """``NAME [@WHERE[#TOPIC]] [TEXT]``; a missing NAME or WHERE is a ConfigError (usage)."""
    name, _, tail = rest.strip().partition(" ")
    name = name.removeprefix("@")
    if not name:
        raise ConfigError(_AS_USAGE)
    tail = tail.strip()
    place = topic = None
    if tail.startswith("@"):
        ref, _, tail = tail.partition(" ")
        place, _, topic_ref = ref[1:].partition("#")
        if not place:
            raise ConfigError(_AS_USAGE)
        topic = topic_ref or None
    return Speak(name, place, topic, tail.strip())


def parse_click(rest: str) -> tuple[int | None, str | None]:
    """``[MESSAGE] [BUTTON]``: the message id (a number) and the button (quotes allowed)."""
    try:
        parts = shlex.split(rest)
    except ValueError:
        raise ConfigError(_CLICK_USAGE) from None
    if len(parts) > 2 or (len(parts) == 2 and not parts[0].isdigit()):
        raise ConfigError(_CLICK_USAGE)
    if len(parts) == 2:
        return int(parts[0]), parts[1]
    if len(parts) == 1:
        return (int(parts[0]), None) if parts[0].isdigit() else (None, parts[0])
    return None, None


class Prompt(ABC):
    """One prompt session: the shared grammar, and the platform's commands from
    :attr:`COMMANDS`. Mistakes print one line (``error: ...``) and change nothing."""

    #: Each platform's own commands, in the order the help lists them.
    COMMANDS: ClassVar[tuple[Command[Any], ...]] = ()
    #: How WHERE and TOPIC read on this platform, for the help (``@CHAT[#TOPIC]``).
    PLACE: ClassVar[str] = "@WHERE[#TOPIC]"
    #: The button a ``/click`` names on this platform (callback data, custom id).
    BUTTON: ClassVar[str] = "the button"
    #: The private chat with the bot, in this platform's words.
    PRIVATE: ClassVar[str] = "a private chat"
    #: What the help says last, about this platform's world.
    NOTE: ClassVar[str] = ""

    def __init__(self, out: Output, *, settle: Settle | None = None) -> None:
        self.out = out
        self._settle = settle

    @classmethod
    def help_text(cls) -> str:
        """The help: the shared grammar, then the platform's commands."""
        rows = [
            (f"/as NAME [{cls.PLACE}] [TEXT]", "speak as NAME there from now on, and say TEXT"),
            ("", f"(no place: in {cls.PRIVATE} with the bot)"),
            ("TEXT", "the current speaker says TEXT where they are"),
            ("/click [MESSAGE] [BUTTON]", f"press BUTTON ({cls.BUTTON}; default: the first) on"),
            ("", "the bot's MESSAGE (default: its latest here with BUTTON)"),
            *((command.usage, command.summary) for command in cls.COMMANDS),
            ("/help  /quit", "this help; stop"),
        ]
        width = max(len(usage) for usage, _ in rows)
        lines = [f"{usage:<{width}}  {summary}".rstrip() for usage, summary in rows]
        return "\n".join([*lines, cls.NOTE] if cls.NOTE else lines)

    async def handle(self, line: str) -> bool:
        """Act on one line; ``False`` after ``/quit``."""
        text = line.strip()
        if not text:
            return True
        command, _, rest = text.partition(" ")
        name = command.lower()
        if name in _QUIT:
            return False
        commands = {command.name: command for command in self.COMMANDS}
        needs_speaker = name == "/click" or name not in {"/help", "/as", *commands}
        if needs_speaker and not self.speaking:
            self.out(_SAY_WHO)
            return True
        try:
            if name == "/help":
                event = None
                self.out(self.help_text())
            elif name == "/as":
                event = await self._as(parse_as(rest))
            elif name == "/click":
                event = await self.press(*parse_click(rest))
            elif name in commands:
                event = await commands[name].run(self, rest.strip())
            else:
                event = await self.say(text)
        except ActorscopeError as exc:
            self.out(f"error: {exc}")
            return True
        if event is not None and self._settle is not None:
            await self._settle(event)
        return True

    async def _as(self, speak: Speak) -> int | None:
        await self.become(speak)
        if speak.text:
            return await self.say(speak.text)
        self.out(f"now speaking as {self.here()}")
        return None

    async def run(self, lines: AsyncIterator[str]) -> None:
        """Feed ``lines`` (stdin's, say) to the prompt until ``/quit`` or the end of the
        input."""
        async for line in lines:
            if not await self.handle(line):
                break

    @property
    @abstractmethod
    def speaking(self) -> bool:
        """Whether someone speaks (after the first ``/as``)."""

    @abstractmethod
    def here(self) -> str:
        """Who speaks where, in words (``carol in #general``)."""

    @abstractmethod
    async def become(self, speak: Speak) -> None:
        """Make ``speak.name`` the speaker in ``speak.place`` (and topic)."""

    @abstractmethod
    async def say(self, text: str) -> int | None:
        """The speaker says ``text`` where they are; the event's id."""

    @abstractmethod
    async def press(self, message: int | None, button: str | None) -> int | None:
        """The speaker presses ``button`` on the bot's ``message``; the event's id."""

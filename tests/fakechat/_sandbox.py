"""The fake chat's sandbox (its contract's ``sandbox`` member): its server, populated, with a
console, for ``actorscope run --sandbox`` and ``actorscope sandbox``.

The server lives in this process (``FakeChat.serving(token)`` finds it), so there is no port
to listen on and no bot to run in another process. The console reads::

    /as NAME [@ROOM] [TEXT]   speak as NAME in ROOM (default: their DM with the bot)
    TEXT                      the current speaker says TEXT there
    /help  /quit

and prints each post of the bot as ``[bot -> CHAT] TEXT``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AsyncExitStack
from typing import Any

from tests._wait import wait_until
from tests.fakechat._chat import FakeChat, Post

from actorscope.channels import ChannelSection
from actorscope.errors import ConfigError

__all__ = ["SANDBOX", "FakeChatConsole", "FakeChatSandbox", "FakeChatSession"]

Output = Callable[[str], None]
#: Seconds the console waits for the bot to take a typed event in.
_WAIT = 10.0
HELP = """\
  /as NAME [@ROOM] [TEXT]   speak as NAME in ROOM (default: their DM with the bot)
  TEXT                      the current speaker says TEXT there
  /help  /quit"""


class FakeChatConsole:
    """Types as people of the fake chat; prints what the bot posts."""

    def __init__(self, chat: FakeChat, out: Output, *, runner: bool) -> None:
        self.chat = chat
        self._out = out
        self._runner = runner
        self._who: str | None = None
        self._room: str | None = None
        chat.listeners.append(self._show)

    @property
    def speaking(self) -> bool:
        """Whether ``/as`` said who speaks."""
        return self._who is not None

    def here(self) -> str:
        """Who speaks where."""
        return f"{self._who} in {self._room or 'their DM'}"

    def help_text(self) -> str:
        """The console's commands."""
        return HELP

    async def handle(self, line: str) -> bool:
        """Act on one line; ``False`` on ``/quit``."""
        text = line.strip()
        if text == "/quit":
            return False
        if text == "/help":
            self._out(HELP)
        elif text.startswith("/as "):
            name, _, rest = text[4:].strip().partition(" ")
            room, _, said = rest.strip().partition(" ") if rest.startswith("@") else ("", "", rest)
            self._who = self.chat.person(name)
            self._room = self.chat.room(room[1:]) if room else None
            if said.strip():
                await self._say(said.strip())
        elif text:
            if self._who is None:
                self._out("error: use /as NAME first")
            else:
                await self._say(text)
        return True

    async def _say(self, text: str) -> None:
        """Send the event; with a runner, wait (bounded) until it has taken the event in."""
        event = self.chat.message(self._who, text, self._room, to_bot=True)
        taken = len(self.chat.handled)
        self.chat.updates.put_nowait(event)
        self._out(f"  -> event {event['event_id']} ({self.here()})")
        if self._runner:
            await wait_until(lambda: len(self.chat.handled) > taken, _WAIT)

    async def run(self, lines: AsyncIterator[str]) -> None:
        """Every line until ``/quit`` or the end of ``lines``."""
        async for line in lines:
            if not await self.handle(line):
                break

    def close(self) -> None:
        """Stop printing the bot's posts."""
        if self._show in self.chat.listeners:
            self.chat.listeners.remove(self._show)

    def _show(self, post: Post) -> None:
        self._out(f"[bot -> {post.chat}] {post.text}")


class FakeChatSession:
    """The fake chat's server, running in this process."""

    def __init__(self, chat: FakeChat, out: Output, *, runner: bool) -> None:
        self.chat = chat
        self.console = FakeChatConsole(chat, out, runner=runner)

    @property
    def token(self) -> str:
        """The server's bot token."""
        return self.chat.token

    def runner_options(self) -> dict[str, Any]:
        """The runner takes the server itself."""
        return {"chat": self.chat}

    async def ready(self) -> None:
        """Nothing to wait for: the runner polls the server's queue from its start."""

    async def drained(self) -> None:
        """Nothing left: the console waited for each typed event."""

    def connect_lines(self) -> list[str]:
        """A bot in this process finds the server by its token."""
        return ["connect: FakeChat.serving(TOKEN), in this process"]

    async def bot_process(self, command: Sequence[str], lines: AsyncIterator[str]) -> str:
        """The fake chat runs no bot in another process."""
        raise ConfigError(SANDBOX.command_problem(command))


class FakeChatSandbox:
    """The fake chat's sandbox: a server with alice, bob and the room ``ideas``."""

    def token_problem(self, token: str) -> str:
        """The server makes its own token."""
        return "is not taken: the fake chat's server makes its own token"

    def command_problem(self, command: Sequence[str]) -> str:
        """A bot of the fake chat runs in this process."""
        return "a fake chat bot runs in the sandbox's own process"

    async def open(
        self,
        stack: AsyncExitStack,
        section: ChannelSection | None,
        out: Output,
        *,
        port: int = 0,
        token: str | None = None,
    ) -> FakeChatSession:
        """The populated server and its banner; the console closes with ``stack``."""
        if token is not None:
            raise ConfigError(f"--token {self.token_problem(token)}")
        chat = FakeChat()
        for person in ("alice", "bob"):
            chat.person(person)
        chat.room("ideas")
        session = FakeChatSession(chat, out, runner=section is not None)
        stack.callback(session.console.close)
        out(f"fakechat: a fake chat server in this process (bot {chat.bot})")
        if section is None:
            out(f"token:    {chat.token}")
        return session


#: The sandbox the fake chat's contract names (``tests.fakechat._sandbox:SANDBOX``).
SANDBOX = FakeChatSandbox()

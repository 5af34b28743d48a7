"""``actorscope sandbox --platform discord`` and its prompt."""

from __future__ import annotations

import io
import re
import socket
import sys

import discord
import pytest
from tests.sandbox.conftest import Connect

from actorscope.cli import main
from actorscope.sandbox import DiscordEmulator
from actorscope.sandbox._console import DiscordConsole


class EchoBot(discord.Client):
    """Echoes people's messages into the same channel."""

    async def on_message(self, message: discord.Message) -> None:
        """Echo."""
        if message.author != self.user:
            await message.channel.send(f"echo {message.author.name}: {message.content}")


def test_discord_sandbox_prints_its_address_and_runs_until_eof(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The command prints where it listens and the token, runs the prompt, stops at EOF."""
    monkeypatch.setattr(sys, "stdin", io.StringIO("/who\n/as nobody\n"))
    assert main(["sandbox", "--platform", "discord", "--port", "0", "--token", "tok"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"listening: http://127\.0\.0\.1:\d+\n", out)
    assert re.search(r"gateway: +ws://127\.0\.0\.1:\d+/gateway\n", out)
    assert "token:     tok\n" in out
    assert "people: alice, bob, carol, dave" in out
    assert "error: the sandbox has no user named 'nobody'" in out
    assert out.endswith("sandbox stopped\n")


def test_discord_sandbox_on_a_busy_port_is_one_line_exit_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A port that is taken is one line on stderr and exit status 2."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["sandbox", "--platform", "discord", "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"cannot listen on 127.0.0.1 --port {port}" in err


def test_unknown_platform_is_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    """--platform takes telegram or discord only."""
    assert main(["sandbox", "--platform", "irc"]) == 2
    assert "--platform must be telegram or discord" in capsys.readouterr().err


async def test_console_types_as_people_and_shows_the_bot(
    emu: DiscordEmulator, connect: Connect
) -> None:
    """/as with a channel, /thread and plain lines post as people; the bot's answers print."""
    printed: list[str] = []
    console = DiscordConsole(emu, printed.append)
    intents = discord.Intents.default()
    intents.message_content = True
    try:
        async with connect(EchoBot(intents=intents)):
            assert await console.handle("/as carol @random")
            assert await console.handle("hi there")
            await emu.wait_for(lambda: any("[bot -> #random" in p for p in printed) or None)
            assert await console.handle("/thread ideas")
            assert await console.handle("in a thread")
            await emu.wait_for(lambda: any("[bot -> #ideas" in p for p in printed) or None)
            assert not await console.handle("/quit")
    finally:
        console.close()
    assert any(p.endswith("echo carol: hi there") for p in printed)
    assert any(p.endswith("echo carol: in a thread") for p in printed)


async def test_console_writes_at_names_as_mentions_and_settles_each_event(
    emu: DiscordEmulator,
) -> None:
    """@bot and @NAME become mentions (unknown names stay text); settle gets each event's id."""
    printed: list[str] = []
    settled: list[int] = []

    async def settle(event: int) -> None:
        settled.append(event)

    console = DiscordConsole(emu, printed.append, settle=settle)
    try:
        assert await console.handle("/as dave @general")
        assert await console.handle("@bot !addwriter @carol and @nobody, mail a@b")
        assert await console.handle("/help")
        assert await console.handle("/webhook ci built")
    finally:
        console.close()
    said, hooked = emu.messages[-2:]
    bot, carol = emu.world.bot.id, emu.world.user("carol").id
    assert said.content == f"<@{bot}> !addwriter <@{carol}> and @nobody, mail a@b"
    assert settled == [said.id, hooked.id]
    assert any("@bot the bot" in line for line in printed)

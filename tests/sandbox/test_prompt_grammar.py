"""One grammar for both sandbox prompts: ``/as NAME [@WHERE[#TOPIC]] [TEXT]``, ``/click``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from actorscope.errors import ConfigError
from actorscope.sandbox import BotApiEmulator, DiscordEmulator
from actorscope.sandbox._console import DISCORD_HELP, DiscordConsole
from actorscope.sandbox._prompt import Speak, parse_as, parse_click
from actorscope.sandbox._telegram.console import HELP, TelegramConsole
from actorscope.sandbox._world import ChannelType


async def lines_of(*lines: str) -> AsyncIterator[str]:
    """An in-memory prompt input."""
    for line in lines:
        yield line + "\n"


@pytest.mark.parametrize(
    ("rest", "parsed"),
    [
        ("carol", Speak("carol", None, None, "")),
        ("@carol hi there", Speak("carol", None, None, "hi there")),
        ("carol @general", Speak("carol", "general", None, "")),
        ("carol @general#design hi", Speak("carol", "general", "design", "hi")),
        ("carol @lab/general @bot !note x", Speak("carol", "lab/general", None, "@bot !note x")),
    ],
)
def test_as_lines_parse_alike_on_both_platforms(rest: str, parsed: Speak) -> None:
    """NAME, an optional @WHERE[#TOPIC] right after it, and the rest is the text."""
    assert parse_as(rest) == parsed


@pytest.mark.parametrize("rest", ["", "carol @", "carol @#design"])
def test_as_without_a_name_or_place_is_the_usage(rest: str) -> None:
    """A missing name or an empty place is one usage line."""
    with pytest.raises(ConfigError, match=r"usage: /as NAME \[@WHERE\[#TOPIC\]\] \[TEXT\]"):
        parse_as(rest)


@pytest.mark.parametrize(
    ("rest", "parsed"),
    [
        ("", (None, None)),
        ("show", (None, "show")),
        ("12", (12, None)),
        ("12 show", (12, "show")),
        ('12 "two words"', (12, "two words")),
    ],
)
def test_click_lines_name_a_message_and_a_button(
    rest: str, parsed: tuple[int | None, str | None]
) -> None:
    """``/click [MESSAGE] [BUTTON]``: a number is the message, the rest the button."""
    assert parse_click(rest) == parsed


@pytest.mark.parametrize("rest", ["show 12", "1 2 3", '"unclosed'])
def test_bad_click_lines_are_the_usage(rest: str) -> None:
    """Anything else is one usage line."""
    with pytest.raises(ConfigError, match=r"usage: /click \[MESSAGE\] \[BUTTON\]"):
        parse_click(rest)


def test_both_helps_start_with_the_same_grammar() -> None:
    """The shared lines read the same on both prompts, in each platform's words."""
    telegram, discord = HELP.splitlines(), DISCORD_HELP.splitlines()
    assert telegram[0].startswith("/as NAME [@CHAT[#TOPIC]] [TEXT]")
    assert discord[0].startswith("/as NAME [@CHANNEL[#THREAD]] [TEXT]")
    for lines in (telegram, discord):
        assert lines[2].startswith("TEXT ")
        assert lines[3].startswith("/click [MESSAGE] [BUTTON] ")
        assert any(line.startswith("/help  /quit ") for line in lines)


async def test_discord_as_speaks_in_a_channel_a_thread_or_a_dm(emu: DiscordEmulator) -> None:
    """@general, @general#design and no place (a DM) on Discord, as @devs... on Telegram."""
    printed: list[str] = []
    console = DiscordConsole(emu, printed.append)
    try:
        await console.run(
            lines_of(
                "hello?",
                "/as carol @general hi all",
                "/as carol @general#design in the thread",
                "/as carol psst",
                "/as bob @random",
                "plain line",
                "/as bob @nowhere hi",
                "/as bob @general#nosuch hi",
                "/as deploy-bot @general hi",
            ),
        )
    finally:
        console.close()
    said = [(m.author.username, m.channel.name, m.content) for m in emu.messages]
    assert said == [
        ("carol", "general", "hi all"),
        ("carol", "design", "in the thread"),
        ("carol", "carol", "psst"),
        ("bob", "random", "plain line"),
    ]
    assert emu.messages[2].channel.type is ChannelType.DM
    assert printed[0].startswith("say who you are first")
    assert "now speaking as bob in #random" in printed
    assert printed[-3:] == [
        "error: the sandbox has no single channel named #nowhere",
        "error: #general has no thread 'nosuch'",
        "error: deploy-bot is a bot: the prompt types as people",
    ]


async def test_discord_click_presses_the_bots_latest_message_here(emu: DiscordEmulator) -> None:
    """/click BUTTON finds the bot's latest message in the speaker's channel that has it."""
    world = emu.world
    general, random = world.channel("general"), world.channel("random")

    def buttons(*ids: str) -> list[dict[str, object]]:
        row = [{"type": 2, "style": 1, "label": i, "custom_id": i} for i in ids]
        return [{"type": 1, "components": row}]

    older = await emu.post(world.bot, general, "menu", components=buttons("show", "hide"))
    newer = await emu.post(world.bot, general, "again", components=buttons("show"))
    await emu.post(world.bot, random, "elsewhere", components=buttons("show", "other"))
    printed: list[str] = []
    console = DiscordConsole(emu, printed.append)
    try:
        await console.run(
            lines_of(
                "/click show",
                "/as carol @general",
                "/click show",
                "/click hide",
                f"/click {older.id}",
                "/click other",
                f"/click {newer.id} hide",
            ),
        )
    finally:
        console.close()
    clicks = [(i.message, i.data["custom_id"]) for i in emu.interactions.values()]
    assert clicks == [(newer, "show"), (older, "hide"), (older, "show")]
    assert all(i.user.username == "carol" for i in emu.interactions.values())
    assert printed[0].startswith("say who you are first")
    assert printed[-2:] == [
        "error: no message of the bot in #general has a button 'other'",
        f"error: message {newer.id} has no component 'hide' of that kind",
    ]


async def test_telegram_click_presses_the_bots_latest_message_here() -> None:
    """/click DATA finds the bot's latest message in the chat with that callback data."""
    emu = BotApiEmulator()
    emu.populate()
    devs = emu.state.chat("@devs").id

    async def menu(*data: str) -> int:
        markup = {"inline_keyboard": [[{"text": d, "callback_data": d} for d in data]]}
        sent = await emu.call("sendMessage", {"chat_id": devs, "text": "m", "reply_markup": markup})
        return int(sent.body["result"]["message_id"])

    await emu.call("getUpdates", {"timeout": 0})
    older = await menu("show", "hide")
    newer = await menu("show")
    printed: list[str] = []
    console = TelegramConsole(emu, printed.append)
    await console.run(
        lines_of("/as bob @devs", "/click show", "/click hide", f"/click {older}", "/click nope"),
    )
    clicks = [
        (u["callback_query"]["message"]["message_id"], u["callback_query"]["data"])
        for u in emu.queue.pending()
        if "callback_query" in u
    ]
    assert clicks == [(newer, "show"), (older, "hide"), (older, "show")]
    assert printed[-1] == (
        "error: Bad Request: no message of the bot in this chat has a button with callback"
        " data 'nope'"
    )


def test_the_sandboxes_guide_shows_each_prompts_help() -> None:
    """docs/guides/sandboxes.md shows both helps exactly as /help prints them."""
    guide = (Path(__file__).resolve().parents[2] / "docs" / "guides" / "sandboxes.md").read_text()
    for help_text in (HELP, DISCORD_HELP):
        assert f"```text\n{help_text}\n```" in guide

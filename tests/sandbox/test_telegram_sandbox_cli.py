"""``actorscope sandbox``: the prompt, the command, and a real bot talking through it."""

from __future__ import annotations

import asyncio
import io
import logging
import os
import re
import shutil
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from telegram import Update
from telegram.ext import ApplicationBuilder, CommandHandler, ContextTypes

from actorscope._aio import read_lines
from actorscope.bots import BotConfig, run_bots
from actorscope.cli import main
from actorscope.sandbox import BotApiEmulator
from actorscope.sandbox._telegram import MemberStatus as TelegramMemberStatus
from actorscope.sandbox._telegram.console import TelegramConsole
from actorscope.sandbox._telegram.files import Upload
from actorscope.sandbox._telegram.updates import UPDATE_TYPES as UPDATE_KINDS


async def lines_of(*lines: str) -> AsyncIterator[str]:
    """An in-memory prompt input."""
    for line in lines:
        yield line + "\n"


EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture
def example_config(tmp_path: Path) -> Path:
    """examples/bot.toml and its handler, copied to ``tmp_path`` (its database goes there)."""
    for name in ("bot.toml", "telegram_bot.py"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    return tmp_path / "bot.toml"


@pytest.fixture
def sandbox() -> tuple[BotApiEmulator, TelegramConsole, list[str]]:
    """A populated emulator, its console, and everything the console printed."""
    emu = BotApiEmulator()
    emu.populate()
    printed: list[str] = []
    return emu, TelegramConsole(emu, printed.append), printed


async def test_as_user_in_chat_topic_and_private(
    sandbox: tuple[BotApiEmulator, TelegramConsole, list[str]],
) -> None:
    """/as queues updates in a group topic and in a private chat; plain lines follow /as."""
    emu, console, printed = sandbox
    await console.run(
        lines_of(
            "/as alice @devs hello",
            "/as alice @devs#ideas idea",
            "/as bob hi bot",
            "/as carol @ops",
            "plain line",
        ),
    )
    messages = [u["message"] for u in emu.queue.pending()]
    assert [(m["from"]["username"], m["chat"].get("username"), m["text"]) for m in messages] == [
        ("alice", "devs", "hello"),
        ("alice", "devs", "idea"),
        ("bob", "bob", "hi bot"),
        ("carol", "ops", "plain line"),
    ]
    assert messages[1]["message_thread_id"] == 2
    assert messages[2]["chat"]["type"] == "private"
    assert "now speaking as @carol in @ops" in printed


async def test_unknown_users_and_chats_are_created_on_first_use(
    sandbox: tuple[BotApiEmulator, TelegramConsole, list[str]],
) -> None:
    """/as with a new name and a new chat creates both; /users and /chats list them."""
    emu, console, printed = sandbox
    await console.run(lines_of("/as dave @lab hey", "/users", "/chats"))
    assert emu.state.user("dave").first_name == "Dave"
    lab = emu.state.chat("@lab")
    assert lab.type.value == "supergroup"
    assert any(line.startswith("@dave") for line in printed)
    assert any(line.startswith("@lab") and "@dave(member)" in line for line in printed)
    assert any("#ideas=2" in line for line in printed)


async def test_bot_replies_and_log_are_printed(
    sandbox: tuple[BotApiEmulator, TelegramConsole, list[str]],
) -> None:
    """The bot's sendMessage shows up at once with its place; /log lists its calls."""
    emu, console, printed = sandbox
    devs = emu.state.chat("@devs").id
    markup = {"inline_keyboard": [[{"text": "OK", "callback_data": "ok"}]]}
    await emu.call("getUpdates", {"timeout": 0})
    response = await emu.call(
        "sendMessage",
        {"chat_id": devs, "text": "welcome", "message_thread_id": 2, "reply_markup": markup},
    )
    mid = response.body["result"]["message_id"]
    assert f"[bot -> @devs#2 msg {mid}] welcome  [OK:ok]" in printed
    await emu.call("sendMessage", {"chat_id": 1, "text": "x"})
    assert "[bot sendMessage failed: Bad Request: chat not found]" in printed
    await console.run(lines_of("/log", "/as bob @devs#ideas hm", f"/click {mid}"))
    log = [line for line in printed if line.startswith("sendMessage ")]
    assert len(log) == 2
    assert '"text": "welcome"' in log[0]
    assert log[0].endswith("-> 200")
    assert emu.queue.pending()[-1]["callback_query"]["data"] == "ok"
    console.close()
    await emu.call("sendMessage", {"chat_id": devs, "text": "unseen"})
    assert not any("unseen" in line for line in printed)


async def test_media_chat_actions_and_deletes_are_printed(
    sandbox: tuple[BotApiEmulator, TelegramConsole, list[str]],
) -> None:
    """Typing, photos, polls and deletes show up at the prompt in words."""
    emu, _, printed = sandbox
    devs = emu.state.chat("@devs").id
    await emu.call("sendChatAction", {"chat_id": devs, "action": "typing"})
    photo = Upload("p.png", "image/png", b"png")
    sent = await emu.call("sendPhoto", {"chat_id": devs, "photo": photo, "caption": "chart"})
    mid = sent.body["result"]["message_id"]
    await emu.call("sendPoll", {"chat_id": devs, "question": "Lunch?", "options": ["a", "b"]})
    await emu.call("deleteMessage", {"chat_id": devs, "message_id": mid})
    assert printed[0] == "[bot shows typing in @devs]"
    assert printed[1] == f"[bot -> @devs msg {mid}] (photo) chart"
    assert printed[2] == f"[bot -> @devs msg {mid + 1}] (regular) Lunch? [a] [b]"
    assert printed[3] == f"[bot deletes message {mid} in @devs]"


async def test_reply_anon_join_errors_and_quit(
    sandbox: tuple[BotApiEmulator, TelegramConsole, list[str]],
) -> None:
    """/reply, /anon and /join queue realistic updates; bad input prints; /quit stops."""
    emu, console, printed = sandbox
    await console.run(
        lines_of(
            "hello?",
            "/as bob @ops first",
            "/reply 1 second",
            "/anon @devs from the admins",
            "/join erin @ops",
            "/as bob @devs#nosuch hi",
            "/as x",
            "/quit",
            "/as bob after quit",
        ),
    )
    kinds = [
        (next(k for k in u if k != "update_id"), u.get("message", {})) for u in emu.queue.pending()
    ]
    messages = [m for kind, m in kinds if kind == "message"]
    assert messages[1]["reply_to_message"]["message_id"] == 1
    assert messages[2]["sender_chat"]["username"] == "devs"
    assert messages[3]["new_chat_members"][0]["username"] == "erin"
    assert len(messages) == 4
    assert printed[0].startswith("say who you are first")
    assert "error: Bad Request: message thread not found" in printed
    assert any(line.startswith("error: not a user name") for line in printed)


async def test_user_action_commands_queue_what_telegram_delivers(
    sandbox: tuple[BotApiEmulator, TelegramConsole, list[str]], tmp_path: Path
) -> None:
    """Each user-action command of the prompt queues the update its action makes."""
    emu, console, printed = sandbox
    bob = emu.state.user("bob")
    emu.state.private_chat(bob)
    emu.state.set_member("@ops", emu.bot, TelegramMemberStatus.LEFT)
    emu.queue.set_allowed(list(UPDATE_KINDS))
    await emu.call(
        "sendMessage",
        {
            "chat_id": bob.id,
            "text": "pick",
            "reply_markup": {
                "keyboard": [
                    ["Tea", "Coffee"],
                    [
                        {"text": "Poll", "request_poll": {}},
                        {"text": "App", "web_app": {"url": "https://a"}},
                    ],
                ]
            },
        },
    )
    await emu.call(
        "sendPoll",
        {
            "chat_id": bob.id,
            "question": "Lunch?",
            "options": ["pizza", "sushi"],
            "is_anonymous": False,
        },
    )
    await emu.call(
        "sendInvoice",
        {
            "chat_id": bob.id,
            "title": "Owl",
            "description": "An owl",
            "payload": "owl",
            "currency": "EUR",
            "provider_token": "p",
            "prices": [{"label": "Owl", "amount": 500}],
        },
    )
    report = tmp_path / "report.txt"
    report.write_text("all good\n")
    await console.run(
        lines_of(
            "/as bob",
            "/press Tea",
            "/photo look /here",
            f"/document {report} the report",
            "/location 51.5 -0.12",
            "/vote sushi",
            '/poll "Tea or coffee?" Tea Coffee',
            "/pay",
            '/webapp App {"v":1}',
            "/link https://t.me/actorscope_sandbox_bot?start=ref",
            "/as carol @ops",
            "/addbot",
            "/leave bob @ops",
            "/removebot",
            "/as bob",
            "/block",
            "/unblock",
            "/press Nope",
            "/vote 2 fries",
            "/location north",
        ),
    )
    kinds = [next(k for k in u if k != "update_id") for u in emu.queue.pending()]
    messages = [u["message"] for u in emu.queue.pending() if "message" in u]
    assert messages[0]["text"] == "Tea"
    assert messages[1]["caption"] == "look /here"
    assert messages[2]["document"]["file_name"] == "report.txt"
    assert messages[3]["location"] == {"latitude": 51.5, "longitude": -0.12}
    assert messages[4]["poll"]["question"] == "Tea or coffee?"
    assert messages[5]["web_app_data"] == {"data": '{"v":1}', "button_text": "App"}
    assert messages[6]["text"] == "/start ref"
    assert "poll_answer" in kinds
    assert "pre_checkout_query" in kinds
    assert kinds.count("my_chat_member") == 4  # added, removed, blocked, unblocked
    assert any(m.get("left_chat_member", {}).get("username") == "bob" for m in messages)
    assert (
        "error: Bad Request: no keyboard button 'Nope' (shown: 'Tea', 'Coffee', 'Poll', 'App')"
        in printed
    )
    assert "error: the poll has no option 'fries' (options: 'pizza', 'sushi')" in printed
    assert "error: usage: /location LATITUDE LONGITUDE" in printed


async def test_read_lines_reads_a_blocking_stream_until_eof() -> None:
    """read_lines yields each line of a blocking stream and ends at EOF."""
    got = [line async for line in read_lines(io.StringIO("a\nb\n"))]
    assert got == ["a\n", "b\n"]


def test_sandbox_command_runs_until_eof(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`actorscope sandbox` prints base_url and token, runs the prompt, and stops at EOF."""
    monkeypatch.setattr(sys, "stdin", io.StringIO("/users\n/as bob hello\n"))
    assert main(["sandbox", "--port", "0", "--token", "123:abc"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"base_url: http://127\.0\.0\.1:\d+/bot\n", out)
    assert "token:    123:abc" in out
    assert "@alice" in out
    assert "update 1: message" in out
    assert out.endswith("sandbox stopped\n")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--port", "70000"], "--port must be between 0 and 65535"),
        (["--token", "nonsense"], "--token must look like <bot id>:<secret>"),
    ],
)
def test_sandbox_bad_options_exit_2(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bad --port or --token is one line on stderr and exit status 2."""
    assert main(["sandbox", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert message in err


async def test_real_bot_talks_through_the_sandbox_process() -> None:
    """A PTB bot polls a sandbox subprocess over HTTP; its reply is printed at the prompt."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "actorscope",
        "sandbox",
        "--port",
        "0",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    try:
        header = await asyncio.wait_for(_read_until(proc.stdout, "bot:"), 15.0)
        base_url = re.search(r"base_url: (\S+)", header)
        token = re.search(r"token: +(\S+)", header)
        assert base_url
        assert token

        async def start(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
            assert update.effective_message is not None
            await update.effective_message.reply_text("hi from the bot")

        app = ApplicationBuilder().token(token[1]).base_url(base_url[1]).build()
        app.add_handler(CommandHandler("start", start))
        async with app:
            await app.start()
            assert app.updater is not None
            await app.updater.start_polling(poll_interval=0.0, timeout=1)
            try:
                proc.stdin.write(b"/as alice @devs#ideas /start\n")
                await proc.stdin.drain()
                shown = await asyncio.wait_for(_read_until(proc.stdout, "[bot ->"), 10.0)
            finally:
                await asyncio.wait_for(app.updater.stop(), 10.0)
                await asyncio.wait_for(app.stop(), 10.0)
        assert re.search(r"\[bot -> @devs#2 msg \d+\] hi from the bot", shown)
        proc.stdin.write(b"/quit\n")
        await proc.stdin.drain()
        rest = await asyncio.wait_for(proc.stdout.read(), 10.0)
        assert await asyncio.wait_for(proc.wait(), 10.0) == 0
        assert rest.decode().endswith("sandbox stopped\n")
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def _read_until(stream: asyncio.StreamReader, marker: str) -> str:
    """Read lines until one contains ``marker`` (the caller bounds the wait)."""
    text = ""
    while marker not in text:
        line = await stream.readline()
        if not line:
            raise AssertionError(f"output ended before {marker!r}: {text}")
        text += line.decode()
    return text


async def test_run_sandbox_stops_cleanly_when_stdin_is_closed(example_config: Path) -> None:
    """`run --sandbox </dev/null` stops with nothing on stderr, run after run."""
    for _ in range(3):
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "actorscope",
            "run",
            str(example_config),
            "--sandbox",
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={k: v for k, v in os.environ.items() if k != "TELEGRAM_BOT_TOKEN"},
        )
        try:
            out, err = await asyncio.wait_for(proc.communicate(), 30.0)
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
        assert proc.returncode == 0
        assert err.decode() == ""
        assert out.decode().endswith("stopping\nstopped\n")


async def run_sandbox(config_path: Path, *lines: str) -> list[str]:
    """`run --sandbox` in process with ``lines`` as its whole input; what it printed."""
    printed: list[str] = []
    async with asyncio.timeout(30):
        await run_bots(
            BotConfig.load(config_path), sandbox=True, out=printed.append, lines=lines_of(*lines)
        )
    return printed


async def test_run_sandbox_answers_input_that_ends_at_once(
    example_config: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Scripted input is fetched and answered before the sandbox stops, without warnings."""
    caplog.set_level(logging.WARNING)
    printed = await run_sandbox(example_config, "/as alice @devs#ideas /note buy milk")
    assert not any("ignored" in line for line in printed)
    assert any(re.fullmatch(r"\[bot -> @devs#2 msg \d+\] denied: no_grant", x) for x in printed)
    assert printed[-1] == "stopped"
    assert [r.getMessage() for r in caplog.records] == []


async def test_run_sandbox_says_why_the_bot_ignored_an_update(
    example_config: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Each update the bot ignores is shown with its reason (an IgnoreReason value)."""
    caplog.set_level(logging.WARNING)
    printed = await run_sandbox(
        example_config,
        "/as carol @ops hello",
        "/anon @devs hi",
        "/as alice @devs /note@some_other_bot hi",
        "/join dave @ops",
    )
    ignored = [line for line in printed if "ignored" in line]
    assert ignored == [
        "  <- update 1 ignored by the bot: not_mentioned",
        "  <- update 2 ignored by the bot: nonperson_sender",
        "  <- update 3 ignored by the bot: not_for_this_bot",
        "  <- update 4 ignored by the bot: service_message",
    ]
    assert [r.getMessage() for r in caplog.records] == []


async def test_link_with_a_code_or_nothing_is_text_to_the_bot(
    sandbox: tuple[BotApiEmulator, TelegramConsole, list[str]],
) -> None:
    """/link CODE and a bare /link are sent as typed; only t.me / tg:// links are opened."""
    emu, console, printed = sandbox
    await console.run(
        lines_of(
            "/as bob",
            "/link M8H45-46T75",
            "/link",
            "/link tg://resolve?domain=actorscope_sandbox_bot&start=ref",
            "/link https://t.me/other_bot?start=x",
        )
    )
    texts = [u["message"]["text"] for u in emu.queue.pending() if "message" in u]
    assert texts == ["/link M8H45-46T75", "/link", "/start ref"]
    assert not any("is not a t.me" in line or "usage: /link" in line for line in printed)
    assert printed[-1] == (
        "error: Bad Request: 'https://t.me/other_bot?start=x' is a link to @other_bot, not this bot"
    )

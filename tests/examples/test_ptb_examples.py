"""python-telegram-bot 22.8's own example bots, unchanged, against the Bot API emulator.

Each example runs in a subprocess (``launch.py`` points it at the emulator: token and base URL
only) and is driven the way its users drive it, through the emulator's user actions only: they
write, click, vote, pay, send photos, locations and web app data, open deep links, add the bot
to groups and share Telegram Passport data. No test pushes a raw update. The custom-webhook
examples get their updates POSTed by the emulator through a webhook route.
"""

from __future__ import annotations

import contextlib
import re
import socket
import struct
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from tests.examples._run import PTB, Example, launched

from actorscope.sandbox import BotApiEmulator, BotApiServer
from actorscope.sandbox._telegram import ChatType as TelegramChatType
from actorscope.sandbox._telegram import MemberStatus as TelegramMemberStatus
from actorscope.sandbox._telegram import make_token

JSON = dict[str, Any]
_MESSAGE_METHODS = frozenset(
    {"sendmessage", "editmessagetext", "sendpoll", "sendinvoice", "sendphoto", "senddocument"}
)


def png(width: int = 2, height: int = 1) -> bytes:
    """A tiny valid PNG image (what a user's photo is made of)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def world(*, token: str | None = None, **options: Any) -> BotApiEmulator:
    """An emulator with alice, bob and carol."""
    emu = BotApiEmulator(token or make_token(7_000_000_001), bot_username="example_bot", **options)
    for name in ("alice", "bob", "carol"):
        emu.state.add_user(name.title(), username=name)
    return emu


class Running:
    """A running example and its emulator, with waits on what the bot says."""

    def __init__(self, emu: BotApiEmulator, example: Example, restart: Restart) -> None:
        self.emu = emu
        self.example = example
        self._restart = restart

    async def restart(self) -> None:
        """Stop the example as Ctrl-C does and start it again (same folder, same emulator)."""
        await self.example.stop()
        polls = len(self.emu.calls_to("getUpdates"))
        self.example = await self._restart()
        await self.example.wait(lambda: len(self.emu.calls_to("getUpdates")) > polls)

    def messages(self) -> list[JSON]:
        """The bot's messages as they are now (sent, edited), oldest first, one per id."""
        found: dict[tuple[int, int], JSON] = {}
        for call in self.emu.calls:
            result = call.result
            if call.method.lower() in _MESSAGE_METHODS and isinstance(result, dict):
                found[(result["chat"]["id"], result["message_id"])] = result
        return list(found.values())

    async def says(self, text: str, *, chat: int | None = None, after: int = 0) -> JSON:
        """The bot's first message (sent or edited) whose text contains ``text`` (in ``chat``,
        with an id above ``after``)."""

        def match() -> JSON | None:
            for message in self.messages():
                shown = message.get("text") or message.get("caption") or ""
                if (
                    text in shown
                    and (chat is None or message["chat"]["id"] == chat)
                    and message["message_id"] > after
                ):
                    return message
            return None

        await self.example.wait(lambda: match() is not None)
        found = match()
        assert found is not None
        return found

    async def called(self, method: str, count: int = 1) -> list[JSON]:
        """The parameters of the bot's successful ``method`` calls, once there are ``count``."""

        def done() -> list[JSON]:
            return [c.params for c in self.emu.calls_to(method) if c.response and c.response.ok]

        await self.example.wait(lambda: len(done()) >= count)
        return done()


Restart = Callable[[], Awaitable[Example]]


@contextlib.asynccontextmanager
async def running(
    name: str,
    cwd: Path,
    emu: BotApiEmulator | None = None,
    *,
    routes: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
    polls: bool = True,
) -> AsyncIterator[Running]:
    """Run the PTB example ``name`` against ``emu`` (default: :func:`world`) for the block;
    ``polls``: wait until it has polled for updates."""
    emu = emu if emu is not None else world()
    async with (
        BotApiServer(emu, webhook_routes=routes) as server,
        contextlib.AsyncExitStack() as stack,
    ):
        pointed = {
            "EXAMPLE_TELEGRAM_TOKEN": emu.token,
            "EXAMPLE_TELEGRAM_BASE_URL": server.base_url,
            "EXAMPLE_TELEGRAM_FILE_URL": f"http://127.0.0.1:{server.port}/file/bot",
            **(env or {}),
        }

        async def launch() -> Example:
            return await stack.enter_async_context(launched("telegram", PTB / name, cwd, pointed))

        example = await launch()
        if polls:
            await example.until(emu.queue.first_poll())
        yield Running(emu, example, launch)


async def test_echobot_greets_and_echoes(tmp_path: Path) -> None:
    """echobot: /start greets the user by name, /help helps, any other text comes back."""
    async with running("echobot.py", tmp_path) as bot:
        bot.emu.user_message("alice", "/start")
        greeting = await bot.says("Hi ")
        assert greeting["text"] == "Hi Alice!"  # reply_html's mention, as users see it
        (mention,) = greeting["entities"]
        assert (mention["type"], mention["user"]["username"]) == ("text_mention", "alice")
        bot.emu.user_message("alice", "/help")
        await bot.says("Help!")
        bot.emu.user_message("alice", "the owl flies at night")
        echo = await bot.says("the owl flies at night")
        assert echo["from"]["username"] == "example_bot"


async def test_rawapibot_echoes_with_the_bare_bot(tmp_path: Path) -> None:
    """rawapibot (a bare ``Bot`` polling getUpdates itself) replies with each message."""
    async with running("rawapibot.py", tmp_path) as bot:
        bot.emu.user_message("bob", "ping")
        reply = await bot.says("ping")
        assert reply["chat"]["username"] == "bob"


async def test_timerbot_beeps_when_the_timer_is_over(tmp_path: Path) -> None:
    """timerbot: /set 1 sets a one-second timer (the job queue) that then beeps."""
    async with running("timerbot.py", tmp_path) as bot:
        bot.emu.user_message("alice", "/set 1")
        await bot.says("Timer successfully set!")
        await bot.says("Beep! 1.0 seconds are over!")
        bot.emu.user_message("alice", "/unset")
        await bot.says("You have no active timer.")


async def test_errorhandlerbot_reports_the_error_to_the_developer(tmp_path: Path) -> None:
    """errorhandlerbot: /bad_command raises; the error handler tells the developer's chat."""
    emu = world()
    developer = emu.state.add_user("Dev", username="dev", user_id=123456789)
    emu.user_message(developer, "/start")  # the developer has a chat with the bot
    async with running("errorhandlerbot.py", tmp_path, emu) as bot:
        await bot.says("Your chat id is", chat=developer.id)
        bot.emu.user_message("alice", "/bad_command")
        report = await bot.says("An exception was raised", chat=developer.id)
        assert "wrong_method_name" in report["text"]


async def test_inlinebot_answers_inline_queries(tmp_path: Path) -> None:
    """inlinebot: ``@bot text`` in any chat gets three results: caps, bold and italic."""
    async with running("inlinebot.py", tmp_path) as bot:
        query = bot.emu.inline_query("carol", "hello")
        assert query is not None
        query_id = query["inline_query"]["id"]
        await bot.example.wait(lambda: bot.emu.inline_answers[query_id] is not None)
        answer = bot.emu.inline_answers[query_id]
        assert answer is not None
        titles = [result["title"] for result in answer["results"]]
        assert titles == ["Caps", "Bold", "Italic"]
        contents = [r["input_message_content"]["message_text"] for r in answer["results"]]
        assert contents[0] == "HELLO"


async def test_inlinekeyboard_edits_the_message_to_the_choice(tmp_path: Path) -> None:
    """inlinekeyboard: /start shows three options; a click answers and edits the message."""
    async with running("inlinekeyboard.py", tmp_path) as bot:
        bot.emu.user_message("alice", "/start")
        menu = await bot.says("Please choose:")
        chat = menu["chat"]["id"]
        bot.emu.callback_click("alice", chat, menu["message_id"], "2")
        await bot.says("Selected option: 2")
        assert list(bot.emu.callback_answers.values()) == [
            {"text": "", "show_alert": False, "url": None}
        ]


async def test_inlinekeyboard2_walks_the_routes_to_the_end(tmp_path: Path) -> None:
    """inlinekeyboard2: a menu edited in place, click by click, until "See you next time!"."""
    async with running("inlinekeyboard2.py", tmp_path) as bot:
        bot.emu.user_message("alice", "/start")
        menu = await bot.says("Start handler, Choose a route")
        chat, mid = menu["chat"]["id"], menu["message_id"]
        bot.emu.callback_click("alice", chat, mid, "0")
        await bot.says("First CallbackQueryHandler")
        bot.emu.callback_click("alice", chat, mid, "2")
        await bot.says("Third CallbackQueryHandler")
        bot.emu.callback_click("alice", chat, mid, "1")
        await bot.says("See you next time!")


async def test_conversationbot_asks_gender_photo_location_and_bio(tmp_path: Path) -> None:
    """conversationbot: a keyboard answer, a photo (downloaded), a location, then a bio."""
    async with running("conversationbot.py", tmp_path) as bot:
        bot.emu.user_message("alice", "/start")
        await bot.says("Are you a boy or a girl?")
        bot.emu.press_button("alice", "Girl")
        await bot.says("Please send me a photo of yourself")
        bot.emu.user_photo("alice", png())
        await bot.says("Gorgeous! Now, send me your location please")
        assert (tmp_path / "user_photo.jpg").read_bytes() == png()
        bot.emu.user_location("alice", 51.5, -0.12)
        await bot.says("Maybe I can visit you sometime!")
        bot.emu.user_message("alice", "I like owls.")
        await bot.says("Thank you! I hope we can talk again some day.")
        assert "Location of Alice: 51.500000 / -0.120000" in bot.example.output()


async def test_conversationbot2_collects_facts_from_keyboard_choices(tmp_path: Path) -> None:
    """conversationbot2: keyboard choices and answers, then Done lists the facts learned."""
    async with running("conversationbot2.py", tmp_path) as bot:
        bot.emu.user_message("bob", "/start")
        await bot.says("Why don't you tell me something about yourself?")
        bot.emu.press_button("bob", "Age")
        await bot.says("Your age? Yes, I would love to hear about that!")
        bot.emu.user_message("bob", "33")
        await bot.says("Neat! Just so you know")
        bot.emu.press_button("bob", "Done")
        done = await bot.says("I learned these facts about you")
        assert "Age - 33" in done["text"]


async def test_nestedconversationbot_adds_yourself_and_shows_the_data(tmp_path: Path) -> None:
    """nestedconversationbot: nested menus by button labels; the data shows what was typed."""
    async with running("nestedconversationbot.py", tmp_path) as bot:
        bot.emu.user_message("carol", "/start")
        menu = await bot.says("You may choose to add a family member")
        chat, mid = menu["chat"]["id"], menu["message_id"]
        bot.emu.callback_click("carol", chat, mid, button="Add yourself")
        await bot.says("Okay, please tell me about yourself.")
        bot.emu.callback_click("carol", chat, mid, button="Add info")
        await bot.says("Please select a feature to update.")
        bot.emu.callback_click("carol", chat, mid, button="Name")
        await bot.says("Okay, tell me.")
        bot.emu.user_message("carol", "Carol")
        features = await bot.says("Got it! Please select a feature to update.")
        bot.emu.callback_click("carol", chat, features["message_id"], button="Done")
        top = await bot.says("You may choose to add a family member", after=mid)
        bot.emu.callback_click("carol", chat, top["message_id"], button="Show data")
        shown = await bot.says("Yourself:")
        assert "Name: Carol, Age: -" in shown["text"]


async def test_persistentconversationbot_remembers_across_a_restart(tmp_path: Path) -> None:
    """persistentconversationbot: what a user told it survives a restart (a pickle file)."""
    async with running("persistentconversationbot.py", tmp_path) as bot:
        bot.emu.user_message("alice", "/start")
        await bot.says("I will hold a more complex conversation with you.")
        bot.emu.press_button("alice", "Favourite colour")
        await bot.says("Your favourite colour? Yes, I would love to hear about that!")
        bot.emu.user_message("alice", "Teal")
        await bot.says("Neat! Just so you know")
        await bot.restart()
        bot.emu.user_message("alice", "/show_data")
        shown = await bot.says("This is what you already told me")
        assert "favourite colour - teal" in shown["text"]


async def test_arbitrarycallbackdatabot_keeps_button_data_across_a_restart(
    tmp_path: Path,
) -> None:
    """arbitrarycallbackdatabot: buttons carry Python objects; they still work after a restart."""
    async with running("arbitrarycallbackdatabot.py", tmp_path) as bot:
        bot.emu.user_message("bob", "/start")
        menu = await bot.says("Please choose:")
        chat, mid = menu["chat"]["id"], menu["message_id"]
        bot.emu.callback_click("bob", chat, mid, button="3")
        await bot.says("So far you've selected [3]. Choose the next item:")
        await bot.restart()
        bot.emu.callback_click("bob", chat, mid, button="5")
        await bot.says("So far you've selected [3, 5]. Choose the next item:")
        bot.emu.user_message("bob", "/clear")
        await bot.says("All clear!")
        bot.emu.callback_click("bob", chat, mid, button="1")
        await bot.says("Sorry, I could not process this button click")


async def test_contexttypesbot_counts_clicks_per_message(tmp_path: Path) -> None:
    """contexttypesbot: custom context types count each message's clicks and the users."""
    async with running("contexttypesbot.py", tmp_path) as bot:
        bot.emu.user_message("alice", "/start")
        button = await bot.says("This button was clicked 0 times.")
        chat, mid = button["chat"]["id"], button["message_id"]
        bot.emu.callback_click("alice", chat, mid, button="Click me!")
        await bot.says("This button was clicked 1 times.")
        bot.emu.callback_click("alice", chat, mid, button="Click me!")
        twice = await bot.says("This button was clicked 2 times.")
        assert twice["entities"] == [{"type": "italic", "offset": 24, "length": 1}]
        bot.emu.user_message("bob", "/print_users")
        users = await bot.says("The following user IDs have used this bot")
        for name in ("alice", "bob"):
            assert str(bot.emu.state.user(name).id) in users["text"]


async def test_deeplinking_follows_the_links_it_hands_out(tmp_path: Path) -> None:
    """deeplinking: each level's link, opened by the user, reaches the next level."""
    emu = world()
    club = emu.state.add_chat(
        TelegramChatType.SUPERGROUP,
        title="Club",
        username="club",
        bot_status=TelegramMemberStatus.LEFT,
    )
    emu.state.set_member(club, "alice", TelegramMemberStatus.ADMINISTRATOR)
    async with running("deeplinking.py", tmp_path, emu) as bot:
        bot.emu.user_message("alice", "/start")
        first = await bot.says("Feel free to tell your friends about it")
        link = first["text"].split()[-1]
        assert link == "https://t.me/example_bot?startgroup=check-this-out"
        bot.emu.open_link("alice", link, group=club)
        level_one = await bot.says("Awesome, you just accessed hidden functionality!")
        assert level_one["chat"]["id"] == club.id
        (row,) = level_one["reply_markup"]["inline_keyboard"]
        bot.emu.open_link("alice", row[0]["url"])
        level_two = await bot.says("You can also mask the deep-linked URLs as links")
        (masked,) = [e for e in level_two["entities"] if e["type"] == "text_link"]
        bot.emu.open_link("alice", masked["url"])
        level_three = await bot.says("It is also possible to make deep-linking")
        query = bot.emu.callback_click(
            "alice", level_three["chat"]["id"], level_three["message_id"]
        )
        assert query is not None
        query_id = query["callback_query"]["id"]
        await bot.example.wait(lambda: bot.emu.callback_answers[query_id] is not None)
        answer = bot.emu.callback_answers[query_id]
        assert answer is not None
        bot.emu.open_link("alice", answer["url"])
        last = await bot.says("Congratulations! This is as deep as it gets")
        assert "The payload was: ['using-keyboard-here']" in last["text"]


async def test_chatmemberbot_tracks_its_chats_and_greets_members(tmp_path: Path) -> None:
    """chatmemberbot: added to a group as an admin, it greets joiners, says goodbye to leavers
    and lists the chats it is in."""
    emu = world()
    club = emu.state.add_chat(
        TelegramChatType.SUPERGROUP,
        title="Club",
        username="club",
        bot_status=TelegramMemberStatus.LEFT,
    )
    emu.state.set_member(club, "alice", TelegramMemberStatus.CREATOR)
    async with running("chatmemberbot.py", tmp_path, emu) as bot:
        bot.emu.user_message("carol", "hi")
        await bot.says("Welcome Carol. Use /show_chats to see what chats I'm in.")
        bot.emu.add_bot("alice", club, admin=True)
        await bot.example.wait(lambda: "added the bot to the group Club" in bot.example.output())
        bot.emu.member_joins("bob", club)
        welcome = await bot.says("was added by", chat=club.id)
        assert welcome["text"] == "Bob was added by Bob. Welcome!"
        bot.emu.member_leaves("bob", club)
        await bot.says("is no longer with us", chat=club.id)
        bot.emu.user_message("carol", "/show_chats")
        chats = await bot.says("is currently in a conversation with the user IDs")
        assert str(club.id) in chats["text"]
        assert str(bot.emu.state.user("carol").id) in chats["text"]
        bot.emu.remove_bot("alice", club)
        await bot.example.wait(
            lambda: "removed the bot from the group Club" in bot.example.output()
        )


async def test_pollbot_polls_quizzes_and_previews(tmp_path: Path) -> None:
    """pollbot: votes are announced and the poll stops after three; a quiz stops after three
    answers; a poll the user makes with the keyboard button comes back as a closed copy."""
    emu = world()
    friends = emu.state.add_chat(TelegramChatType.SUPERGROUP, title="Friends", username="friends")
    for name in ("alice", "bob", "carol"):
        emu.state.set_member(friends, name, TelegramMemberStatus.MEMBER)
    async with running("pollbot.py", tmp_path, emu) as bot:
        bot.emu.user_message("alice", "/poll", friends)
        await bot.called("sendPoll")
        poll = next(m for m in bot.messages() if "poll" in m)
        for voter, choice in (("alice", [0]), ("bob", [1, 2]), ("carol", [3])):
            bot.emu.vote(voter, friends, poll["message_id"], choice)
            await bot.says(f"{voter.title()} feels")
        await bot.says("Bob feels Really good and Fantastic!")
        (stop,) = await bot.called("stopPoll")
        assert stop["message_id"] == poll["message_id"]
        stopped = bot.emu.context.polls.in_message(friends.id, poll["message_id"])
        assert stopped is not None
        assert stopped.closed
        bot.emu.user_message("alice", "/quiz", friends)
        await bot.called("sendPoll", 2)
        quiz = [m for m in bot.messages() if "poll" in m][-1]
        assert quiz["poll"]["type"] == "quiz"
        for voter in ("alice", "bob", "carol"):
            bot.emu.vote(voter, friends, quiz["message_id"], [2])
        await bot.called("stopPoll", 2)
        bot.emu.user_message("bob", "/preview")
        await bot.says("Press the button to let the bot generate a preview for your poll")
        bot.emu.user_poll("bob", "Tea or coffee?", ["Tea", "Coffee"])
        await bot.called("sendPoll", 3)
        preview = [m for m in bot.messages() if "poll" in m][-1]
        assert preview["poll"]["question"] == "Tea or coffee?"
        assert preview["poll"]["is_closed"] is True


@pytest.mark.parametrize(
    ("command", "steps"),
    [
        ("/shipping", ["shipping_query", "pre_checkout_query", "paid"]),
        ("/noshipping", ["pre_checkout_query", "paid"]),
    ],
)
async def test_paymentbot_takes_a_payment(tmp_path: Path, command: str, steps: list[str]) -> None:
    """paymentbot: an invoice, paid by the user: shipping options (when the invoice asks for
    an address), the pre-checkout confirmation, and the thanks after the payment."""
    async with running("paymentbot.py", tmp_path) as bot:
        bot.emu.user_message("bob", command)
        await bot.called("sendInvoice")
        invoice = next(m for m in bot.messages() if "invoice" in m)
        assert invoice["invoice"]["total_amount"] == 100
        first = bot.emu.pay(
            "bob", invoice["chat"]["id"], invoice["message_id"], shipping_option="2"
        )
        assert first is not None
        assert steps[0] in first
        await bot.says("Thank you for your payment.")
        (checkout,) = bot.emu.checkouts
        assert checkout.stage == "paid"
        if command == "/shipping":
            assert (checkout.shipping_option_id, checkout.total) == ("2", 100 + 150 + 200)
            assert checkout.order_info["shipping_address"]["city"] == "Springfield"
        else:
            assert (checkout.shipping_option_id, checkout.total) == (None, 100)


async def test_webappbot_reads_what_the_web_app_sends(tmp_path: Path) -> None:
    """webappbot: the keyboard button opens the color picker; the data it sends is answered."""
    async with running("webappbot.py", tmp_path) as bot:
        bot.emu.user_message("carol", "/start")
        await bot.says("Please press the button below to choose a color via the WebApp.")
        color = '{"hex": "#ff0000", "rgb": {"r": 255, "g": 0, "b": 0}}'
        bot.emu.web_app_data("carol", "Open the color picker!", color)
        answer = await bot.says("You selected the color with the HEX value #ff0000.")
        assert "The corresponding RGB value is (255, 0, 0)." in answer["text"]
        assert bot.emu.context.outbox.keyboards == {}  # ReplyKeyboardRemove took it away


def _passport_keys(folder: Path) -> bytes:
    """A bot's passport key pair: the private key in ``folder/private.key`` (where passportbot
    reads it), the public key (PEM, what its owner gives BotFather) returned."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    (folder / "private.key").write_bytes(private)
    return key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def scans(folder: Path) -> list[bytes]:
    """The contents of the ``.jpg`` files in ``folder`` (what passportbot downloaded)."""
    return [path.read_bytes() for path in sorted(folder.glob("*.jpg"))]


async def test_passportbot_decrypts_and_downloads_passport_data(tmp_path: Path) -> None:
    """passportbot: a user shares their phone, email and a utility bill scan; the bot decrypts
    them with its private key and downloads the decrypted scan."""
    emu = world(passport_public_key=_passport_keys(tmp_path))
    scan = b"\xff\xd8\xff\xe0 a scanned utility bill"
    async with running("passportbot.py", tmp_path, emu) as bot:
        bot.emu.share_passport(
            "alice",
            "thisisatest",
            {
                "phone_number": "15551234567",
                "email": "alice@example.com",
                "utility_bill": {"files": [scan]},
            },
        )
        await bot.example.wait(lambda: "Email: alice@example.com" in bot.example.output())
        assert "Phone: 15551234567" in bot.example.output()
        await bot.example.wait(lambda: scans(tmp_path) != [])
        assert scans(tmp_path) == [scan]


async def fetch(url: str) -> tuple[int, str]:
    """GET ``url`` as a browser would: the status and the body."""
    async with aiohttp.ClientSession() as web, web.get(url) as response:
        return response.status, await response.text()


def _free_port() -> int:
    """A port nothing listens on now (for an example that insists on choosing its own)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize(
    "name",
    [
        "customwebhookbot/starlettebot.py",
        "customwebhookbot/flaskbot.py",
        "customwebhookbot/quartbot.py",
        "customwebhookbot/djangobot.py",
    ],
)
async def test_customwebhookbot_gets_updates_through_its_webhook(tmp_path: Path, name: str) -> None:
    """customwebhookbot (each web framework): Telegram POSTs updates to the webhook it set;
    its own endpoints forward a user's payload to the admin's chat."""
    emu = world(token="123:ABC")  # noqa: S106 - the example's placeholder, as it is
    admin = emu.state.add_user("Admin", username="admin", user_id=123456)
    emu.user_message(admin, "hello")  # the admin has a private chat with the bot
    port = _free_port()
    routes = {"https://domain.tld": f"http://127.0.0.1:{port}"}
    listen = {"EXAMPLE_LISTEN_PORT": str(port)}
    async with running(name, tmp_path, emu, routes=routes, env=listen, polls=False) as bot:
        (hook,) = await bot.called("setWebhook")
        assert hook["url"] == "https://domain.tld/telegram"
        bot.emu.user_message("alice", "/start")
        instructions = await bot.says("To check if the bot is still running, call")
        assert "https://domain.tld/healthcheck" in instructions["text"]
        alice = bot.emu.state.user("alice")
        site = f"http://127.0.0.1:{port}"
        health = await bot.example.until(fetch(f"{site}/healthcheck"))
        assert health == (200, "The bot is still running fine :)")
        submit = await bot.example.until(
            fetch(f"{site}/submitpayload?user_id={alice.id}&payload=owls")
        )
        assert submit[0] == 200, submit
        report = await bot.says("has sent a new payload", chat=admin.id)
        assert report["text"].startswith("The user Alice has sent a new payload.")
        assert report["text"].endswith("• owls")


def test_every_example_is_run() -> None:
    """Each example file of the vendored folder is run by a test of this module."""
    named = set(re.findall(r'"([\w/]+\.py)"', Path(__file__).read_text(encoding="utf-8")))
    examples = {p.relative_to(PTB).as_posix() for p in PTB.rglob("*.py")}
    assert examples - named == set()

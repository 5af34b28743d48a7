"""The Telegram sandbox prompt: type as different users in different chats, watch the bot.

The grammar both prompts share is in :mod:`actorscope.sandbox._prompt`; for example::

    /as alice @devs hello           alice writes "hello" in @devs
    /as alice @devs#ideas hi        ... in the forum topic "ideas" (or #<thread id>)
    /as bob hello                   bob writes in his private chat with the bot
    /as carol @ops                  speak as carol in @ops from now on; plain lines go there
    /click ok                       the speaker presses the button "ok" of the bot's latest
                                    message here that has it (/click 12 ok: of message 12)

Unknown users and chats are created on first use (chats as supergroups).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import urlsplit

from actorscope.sandbox._prompt import (
    SETTLE,
    Command,
    Output,
    Prompt,
    Speak,
    until_quiet,
)
from actorscope.sandbox._telegram.emulator import BotApiEmulator, RecordedCall
from actorscope.sandbox._telegram.errors import BotApiError
from actorscope.sandbox._telegram.models import Chat, ChatType, User
from actorscope.sandbox._telegram.polls import PollRecord

__all__ = ["HELP", "TelegramConsole"]

_NAME = re.compile(r"^@?[A-Za-z][A-Za-z0-9_]{2,31}$")


@dataclass(slots=True)
class _Where:
    user: User
    chat: Chat | None
    topic: str | None


class TelegramConsole(Prompt):
    """Interprets prompt lines against a Bot API emulator and prints what the bot does."""

    PLACE = "@CHAT[#TOPIC]"
    BUTTON = "callback data"
    NOTE = "unknown users and chats are created on first use (chats as supergroups)"

    def __init__(self, emu: BotApiEmulator, out: Output, *, wait_for_bot: bool = False) -> None:
        super().__init__(out, settle=self.until_handled if wait_for_bot else None)
        self.emu = emu
        self._where: _Where | None = None
        self._last: dict[str, Any] | None = None
        emu.add_listener(self._show_bot_call)

    async def until_handled(self, update_id: int) -> None:
        """Wait (bounded) until a polling bot has fetched update ``update_id`` and then made no
        call for a moment, so the next line (a click on its answer) finds the answer there.
        Before a bot has polled at all nothing is waited for."""
        if not self.emu.calls_to("getUpdates"):
            return
        fetched = asyncio.Event()

        def fetches(call: RecordedCall) -> None:
            result = call.result if call.method.lower() == "getupdates" else None
            got = isinstance(result, list) and any(u.get("update_id") == update_id for u in result)
            if got or not self._pending(update_id):
                fetched.set()

        if not self._pending(update_id):
            fetched.set()
        self.emu.add_listener(fetches)
        try:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(SETTLE):
                    await fetched.wait()
                    await until_quiet(lambda: len(self.emu.bot_calls()))
        finally:
            self.emu.remove_listener(fetches)

    def _pending(self, update_id: int) -> bool:
        return any(u["update_id"] == update_id for u in self.emu.queue.pending())

    def close(self) -> None:
        """Stop printing the bot's calls."""
        self.emu.remove_listener(self._show_bot_call)

    # -- the shared grammar -------------------------------------------------------------

    @property
    def speaking(self) -> bool:
        """Whether someone speaks (after the first ``/as``)."""
        return self._where is not None

    def here(self) -> str:
        """``@carol in @ops``."""
        where = self._need_where()
        return f"{where.user.display_name} in {self._place(where)}"

    async def become(self, speak: Speak) -> None:
        """Speak as ``speak.name`` (created on first use) in a chat (created too) or topic."""
        user = self._user(speak.name)
        chat = None if speak.place is None else self._chat(f"@{speak.place}")
        self._where = _Where(user, chat, speak.topic)

    async def say(self, text: str) -> int | None:
        """The speaker writes ``text``."""
        return self._say(self._need_where(), text, reply_to=None)

    async def press(self, message: int | None, button: str | None) -> int | None:
        """The speaker clicks ``button`` of the bot's ``message`` (or its latest with it)."""
        where = self._need_where()
        chat = where.chat or self.emu.state.private_chat(where.user)
        return self._show_update(self.emu.callback_click(where.user, chat, message, button))

    def _need_where(self) -> _Where:
        if self._where is None:
            raise BotApiError(400, "say who you are first: /as NAME [@CHAT] TEXT  (see /help)")
        return self._where

    # -- the Telegram commands -----------------------------------------------------------

    async def _reply(self, rest: str) -> int | None:
        message_id, _, text = rest.partition(" ")
        if not message_id.isdigit() or not text.strip():
            raise BotApiError(400, "usage (after /as): /reply MESSAGE TEXT")
        return self._say(self._need_where(), text.strip(), reply_to=int(message_id))

    async def _anon(self, rest: str) -> int | None:
        chat, _, message = rest.partition(" ")
        return self._show_update(self.emu.anonymous_admin_message(self._chat(chat), message))

    async def _join(self, rest: str) -> int | None:
        user, _, chat = rest.partition(" ")
        return self._show_update(self.emu.member_joins(self._user(user), self._chat(chat.strip())))

    async def _leave(self, rest: str) -> int | None:
        user, _, chat = rest.partition(" ")
        return self._show_update(self.emu.member_leaves(self._user(user), self._chat(chat.strip())))

    def _group(self, rest: str, usage: str) -> tuple[Chat, str]:
        """The ``@CHAT`` a command starts with (default: where the speaker is) and the rest."""
        where = self._need_where()
        if rest.startswith("@"):
            name, _, tail = rest.partition(" ")
            return self._chat(name), tail.strip()
        if where.chat is None:
            raise BotApiError(400, usage)
        return where.chat, rest

    async def _addbot(self, rest: str) -> int | None:
        chat, tail = self._group(rest, "usage: /addbot [@CHAT] [admin]")
        if tail not in ("", "admin"):
            raise BotApiError(400, "usage: /addbot [@CHAT] [admin]")
        user = self._need_where().user
        return self._show_update(self.emu.add_bot(user, chat, admin=tail == "admin"))

    async def _removebot(self, rest: str) -> int | None:
        chat, _ = self._group(rest, "usage: /removebot [@CHAT]")
        return self._show_update(self.emu.remove_bot(self._need_where().user, chat))

    async def _block(self, rest: str) -> int | None:
        return self._show_update(self.emu.block_bot(self._need_where().user))

    async def _unblock(self, rest: str) -> int | None:
        return self._show_update(self.emu.unblock_bot(self._need_where().user))

    def _here(self) -> tuple[User, Chat]:
        where = self._need_where()
        return where.user, where.chat or self.emu.state.private_chat(where.user)

    async def _press(self, rest: str) -> int | None:
        if not rest:
            raise BotApiError(400, "usage: /press BUTTON")
        user, chat = self._here()
        return self._show_update(self.emu.press_button(user, rest, chat))

    async def _photo(self, rest: str) -> int | None:
        user, chat = self._here()
        return self._show_update(self.emu.user_photo(user, None, chat, caption=rest or None))

    async def _document(self, rest: str) -> int | None:
        parts = _split(rest, "usage: /document PATH [CAPTION]")
        if not parts:
            raise BotApiError(400, "usage: /document PATH [CAPTION]")
        path = Path(parts[0])
        try:
            content = await asyncio.to_thread(lambda: path.expanduser().read_bytes())
        except OSError as exc:
            raise BotApiError(400, f"can't read {path}: {exc.strerror or exc}") from None
        user, chat = self._here()
        caption = " ".join(parts[1:]) or None
        update = self.emu.user_document(user, content, path.name, chat, caption=caption)
        return self._show_update(update)

    async def _location(self, rest: str) -> int | None:
        usage = "usage: /location LATITUDE LONGITUDE"
        try:
            latitude, longitude = (float(x) for x in rest.split())
        except ValueError:
            raise BotApiError(400, usage) from None
        user, chat = self._here()
        return self._show_update(self.emu.user_location(user, latitude, longitude, chat))

    async def _poll(self, rest: str) -> int | None:
        parts = _split(rest, "usage: /poll QUESTION OPTION OPTION...")
        if len(parts) < 3:
            raise BotApiError(400, "usage: /poll QUESTION OPTION OPTION...  (quote spaces)")
        user, chat = self._here()
        return self._show_update(self.emu.user_poll(user, parts[0], parts[1:], chat))

    async def _vote(self, rest: str) -> int | None:
        parts = _split(rest, "usage: /vote [MESSAGE] OPTION...")
        user, chat = self._here()
        message_id = int(parts.pop(0)) if parts and parts[0].isdigit() else None
        record = self._poll_record(chat, message_id)
        texts = [option["text"] for option in record.poll["options"]]
        unknown = [part for part in parts if part not in texts]
        if unknown:
            shown = ", ".join(repr(text) for text in texts)
            raise BotApiError(400, f"the poll has no option {unknown[0]!r} (options: {shown})")
        chosen = [texts.index(part) for part in parts]
        return self._show_update(self.emu.vote(user, chat, record.message_id, chosen))

    def _poll_record(self, chat: Chat, message_id: int | None) -> PollRecord:
        polls = self.emu.context.polls
        if message_id is not None:
            found = polls.in_message(chat.id, message_id)
            if found is None:
                raise BotApiError(400, f"message {message_id} has no poll")
            return found
        for message in reversed(self.emu.state.messages(chat)):
            found = polls.in_message(chat.id, message["message_id"])
            if found is not None:
                return found
        raise BotApiError(400, "no poll here to vote in")

    async def _pay(self, rest: str) -> int | None:
        parts = _split(rest, "usage: /pay [MESSAGE] [SHIPPING_OPTION]")
        user, chat = self._here()
        message_id = int(parts.pop(0)) if parts and parts[0].isdigit() else None
        if message_id is None:
            invoices = [m for m in self.emu.state.messages(chat) if "invoice" in m]
            if not invoices:
                raise BotApiError(400, "no invoice here to pay")
            message_id = invoices[-1]["message_id"]
        option = parts[0] if parts else None
        return self._show_update(self.emu.pay(user, chat, message_id, shipping_option=option))

    async def _webapp(self, rest: str) -> int | None:
        usage = "usage: /webapp BUTTON DATA  (quote a BUTTON with spaces; DATA is the rest)"
        if rest[:1] in ('"', "'"):
            end = rest.find(rest[0], 1)
            button, data = (rest[1:end], rest[end + 1 :].strip()) if end > 0 else ("", "")
        else:
            button, _, data = rest.partition(" ")
        if not button or not data:
            raise BotApiError(400, usage)
        user = self._need_where().user
        return self._show_update(self.emu.web_app_data(user, button, data))

    async def _link(self, rest: str) -> int | None:
        url, _, group = rest.partition(" ")
        if not _is_deep_link(url):
            # "/link CODE" (or a bare /link) is a message to the bot, such as a link command
            return self._say(self._need_where(), f"/link {rest}".strip(), reply_to=None)
        target = self._chat(group.strip()) if group.strip() else None
        return self._show_update(self.emu.open_link(self._need_where().user, url, group=target))

    async def _again(self, rest: str) -> int | None:
        last = self._last
        if last is None:
            raise BotApiError(400, "no update to deliver again yet")
        kind = next(key for key in last if key != "update_id")
        return self._show_update(self.emu.queue.push(kind, last[kind]))

    def _say(self, where: _Where, text: str, *, reply_to: int | None) -> int | None:
        topic: int | str | None = where.topic
        if isinstance(topic, str) and topic.isdigit():
            topic = int(topic)
        update = self.emu.user_message(where.user, text, where.chat, topic=topic, reply_to=reply_to)
        return self._show_update(update)

    async def _chats(self, rest: str) -> int | None:
        for chat in self.emu.state.chats():
            members = ", ".join(
                f"{user.display_name}({status.value})"
                for user, status in self.emu.state.members(chat)
                if status.is_present and user.id != self.emu.bot.id
            )
            topics = ", ".join(f"#{t.name}={t.thread_id}" for t in chat.topics.values())
            line = f"{chat.label:<16} {chat.type.value:<10} id={chat.id}"
            self.out(line + (f"  topics: {topics}" if topics else "") + f"  members: {members}")
        return None

    async def _users(self, rest: str) -> int | None:
        for user in self.emu.state.users():
            self.out(f"{user.display_name:<16} id={user.id}  {user.first_name}")
        return None

    async def _log(self, rest: str) -> int | None:
        calls = self.emu.bot_calls()
        if not calls:
            self.out("(the bot has made no calls yet, apart from polling)")
        for call in calls:
            status = "pending" if call.response is None else call.response.status
            self.out(f"{call.method} {json.dumps(call.params, ensure_ascii=False)} -> {status}")
        return None

    # -- lookups that create on first use ------------------------------------------------

    def _user(self, name: str) -> User:
        if not _NAME.match(name):
            raise BotApiError(400, f"not a user name: {name!r} (letters, digits, _; 3+ chars)")
        found = self.emu.state.find_user(name)
        if found is not None:
            return found
        username = name.removeprefix("@")
        return self.emu.state.add_user(username.capitalize(), username=username)

    def _chat(self, name: str) -> Chat:
        if not _NAME.match(name):
            raise BotApiError(400, f"not a chat name: {name!r} (like @devs)")
        found = self.emu.state.find_chat(name)
        if found is not None:
            return found
        username = name.removeprefix("@")
        return self.emu.state.add_chat(ChatType.SUPERGROUP, title=username, username=username)

    # -- output --------------------------------------------------------------------------

    def _place(self, where: _Where) -> str:
        if where.chat is None:
            return "a private chat with the bot"
        return where.chat.label + (f"#{where.topic}" if where.topic else "")

    def _show_update(self, update: dict[str, Any] | None) -> int | None:
        """Print the update the bot is sent; its id (``None``: the bot does not get it)."""
        if update is None:
            self.out("(the bot does not receive this kind of update)")
            return None
        self._last = update
        kind = next(key for key in update if key != "update_id")
        body = update[kind]
        message = body.get("message", body) if kind == "callback_query" else body
        mid = message.get("message_id", "?")
        self.out(f"  -> update {update['update_id']}: {kind} (message {mid})")
        return int(update["update_id"])

    def show_ignored(self, update_id: int, reason: str) -> None:
        """Say that the bot ignored an update, and why (an ``IgnoreReason`` value)."""
        self.out(f"  <- update {update_id} ignored by the bot: {reason}")

    def _show_bot_call(self, call: RecordedCall) -> None:
        if call.response is None or call.method.lower() == "getupdates":
            return
        if not call.response.ok:
            self.out(f"[bot {call.method} failed: {call.response.body.get('description')}]")
            return
        result = call.result
        method = call.method.lower()
        if isinstance(result, dict) and "chat" in result and "message_id" in result:
            self.out(f"[bot -> {_message_place(result)}] {_summary(result)}{_buttons(result)}")
            keyboard = _keyboard(call.params.get("reply_markup"))
            if keyboard:
                self.out(f"  keyboard: {keyboard}  (/press BUTTON)")
        elif method == "answercallbackquery":
            self.out(f"[bot answers the click] {call.params.get('text', '')}")
        elif method in _SHOWN_ACTIONS:
            chat = self.emu.state.find_chat(call.params.get("chat_id", ""))
            place = chat.label if chat is not None else call.params.get("chat_id")
            detail = call.params.get("action") or call.params.get("message_id", "")
            self.out(f"[bot {_SHOWN_ACTIONS[method]} {detail} in {place}]")

    COMMANDS: ClassVar[tuple[Command[Any], ...]] = (
        Command("/reply", "/reply MESSAGE TEXT", "the speaker replies to MESSAGE", _reply),
        Command("/anon", "/anon @CHAT TEXT", "an anonymous admin of CHAT writes", _anon),
        Command("/join", "/join NAME @CHAT", "NAME joins CHAT", _join),
        Command("/leave", "/leave NAME @CHAT", "NAME leaves CHAT", _leave),
        Command("/addbot", "/addbot [@CHAT] [admin]", "the speaker adds the bot to CHAT", _addbot),
        Command("/removebot", "/removebot [@CHAT]", "the speaker removes the bot", _removebot),
        Command("/block", "/block", "the speaker blocks the bot (/unblock: undoes it)", _block),
        Command("/unblock", "/unblock", "the speaker unblocks the bot", _unblock),
        Command("/press", "/press BUTTON", "the speaker presses a reply-keyboard button", _press),
        Command("/photo", "/photo [CAPTION]", "the speaker sends a (sample) photo", _photo),
        Command("/document", "/document PATH [CAPTION]", "the speaker sends a file", _document),
        Command("/location", "/location LAT LON", "the speaker shares a location", _location),
        Command("/poll", "/poll QUESTION OPTION...", "the speaker sends a poll", _poll),
        Command("/vote", "/vote [MESSAGE] OPTION...", "the speaker votes (latest poll)", _vote),
        Command("/pay", "/pay [MESSAGE] [SHIPPING]", "the speaker pays an invoice", _pay),
        Command("/webapp", "/webapp BUTTON DATA", "the web app of BUTTON sends DATA", _webapp),
        Command(
            "/link",
            "/link URL [@GROUP]",
            "the speaker opens a t.me deep link (/link CODE: says it)",
            _link,
        ),
        Command("/again", "/again", "Telegram delivers the last update again (a retry)", _again),
        Command("/chats", "/chats", "the chats, their topics and members", _chats),
        Command("/users", "/users", "the users", _users),
        Command("/log", "/log", "the calls the bot made", _log),
    )


def _is_deep_link(word: str) -> bool:
    """Whether ``word`` is a t.me / telegram.me or ``tg://resolve`` link (``/link`` opens it)."""
    parts = urlsplit(word)
    if parts.scheme in ("http", "https"):
        return parts.hostname in ("t.me", "telegram.me")
    return parts.scheme == "tg" and parts.netloc == "resolve"


def _split(rest: str, usage: str) -> list[str]:
    """``rest`` split like a shell line (quotes keep spaces); the usage when it cannot be."""
    try:
        return shlex.split(rest)
    except ValueError:
        raise BotApiError(400, usage) from None


#: The prompt's help, as /help prints it.
HELP = TelegramConsole.help_text()


# Calls without a message result that the prompt still shows: what the bot did, in words.
_SHOWN_ACTIONS = {
    "sendchataction": "shows",
    "deletemessage": "deletes message",
    "pinchatmessage": "pins message",
    "setmessagereaction": "reacts to message",
}


def _summary(message: dict[str, Any]) -> str:
    """A message's text, or its kind and caption (photo, document, poll, invoice, ...)."""
    if "text" in message:
        return str(message["text"])
    if "poll" in message:
        poll = message["poll"]
        options = " ".join(f"[{o['text']}]" for o in poll["options"])
        closed = " (closed)" if poll["is_closed"] else ""
        return f"({poll['type']}) {poll['question']} {options}{closed}"
    if "invoice" in message:
        invoice = message["invoice"]
        price = f"{invoice['total_amount']} {invoice['currency']}"
        return f"(invoice) {invoice['title']}: {price} (smallest units; /pay pays it)"
    kind = next((k for k in ("photo", "document") if k in message), "message")
    label = message.get("caption") or message.get("document", {}).get("file_name", "")
    return f"({kind}) {label}".rstrip()


def _message_place(message: dict[str, Any]) -> str:
    chat = message["chat"]
    place = f"@{chat['username']}" if chat.get("username") else str(chat["id"])
    if chat.get("type") == "private":
        place = f"private {place}"
    if message.get("is_topic_message"):
        place += f"#{message['message_thread_id']}"
    return f"{place} msg {message['message_id']}"


def _buttons(message: dict[str, Any]) -> str:
    rows = message.get("reply_markup", {}).get("inline_keyboard", [])
    labels = [f"[{b['text']}:{b.get('callback_data', '')}]" for row in rows for b in row]
    return ("  " + " ".join(labels)) if labels else ""


def _keyboard(markup: object) -> str:
    """The buttons of a reply keyboard a call shows (empty for none)."""
    rows = markup.get("keyboard") if isinstance(markup, dict) else None
    if not isinstance(rows, list):
        return ""
    labels = []
    for row in rows:
        for button in row if isinstance(row, list) else []:
            text = button.get("text", "") if isinstance(button, dict) else str(button)
            kind = next(
                (
                    k
                    for k in ("web_app", "request_poll")
                    if isinstance(button, dict) and k in button
                ),
                "",
            )
            labels.append(f"[{text}{':' + kind if kind else ''}]")
    return " ".join(labels)

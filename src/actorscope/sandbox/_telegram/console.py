"""The sandbox prompt: type as different users in different chats, watch the bot answer.

Commands (one per line)::

    /as alice @devs hello           alice writes "hello" in @devs
    /as alice @devs#ideas hi        ... in the forum topic "ideas" (or #<thread id>)
    /as bob hello                   bob writes in his private chat with the bot
    /as carol @ops                  speak as carol in @ops from now on; plain lines go there
    /reply 12 thanks                the current speaker replies to message 12
    /click 12 [DATA]                the current speaker clicks a button of message 12
    /anon @devs hi                  an anonymous admin of @devs writes
    /join dave @ops                 dave joins @ops
    /again                          Telegram delivers the last update again (a retry)
    /chats  /users  /log  /help  /quit

Unknown users and chats are created on first use (chats as supergroups).
"""

from __future__ import annotations

import asyncio
import json
import re
import shlex
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, TextIO

from actorscope.errors import BotApiError
from actorscope.sandbox._telegram.emulator import BotApiEmulator, RecordedCall
from actorscope.sandbox._telegram.models import Chat, ChatType, MemberStatus, User

__all__ = ["HELP", "SandboxConsole", "populate_sandbox", "read_lines", "run_console"]

HELP = (__doc__ or "").split("::", 1)[1].split("Unknown users", 1)[0].strip("\n")
_NAME = re.compile(r"^@?[A-Za-z][A-Za-z0-9_]{2,31}$")
Output = Callable[[str], None]


def populate_sandbox(emu: BotApiEmulator) -> None:
    """alice, bob and carol; @devs (a forum, alice admin) and @ops (a basic group)."""
    state = emu.state
    alice = state.add_user("Alice", username="alice", last_name="Liddell")
    bob = state.add_user("Bob", username="bob")
    carol = state.add_user("Carol", username="carol")
    devs = state.add_chat("supergroup", title="Developers", username="devs", is_forum=True)
    state.set_member(devs, alice, MemberStatus.ADMINISTRATOR)
    state.set_member(devs, bob, MemberStatus.MEMBER)
    state.add_topic(devs, "ideas")
    state.add_topic(devs, "releases")
    ops = state.add_chat("group", title="Operations", username="ops")
    state.set_member(ops, carol, MemberStatus.CREATOR)
    state.set_member(ops, bob, MemberStatus.MEMBER)


@dataclass(slots=True)
class _Where:
    user: User
    chat: Chat | None
    topic: str | None


class SandboxConsole:
    """Interprets prompt lines against an emulator and prints what the bot does."""

    def __init__(self, emu: BotApiEmulator, out: Output) -> None:
        self.emu = emu
        self._out = out
        self._where: _Where | None = None
        self._last: dict[str, Any] | None = None
        emu.add_listener(self._show_bot_call)

    def close(self) -> None:
        """Stop printing the bot's calls."""
        self.emu.remove_listener(self._show_bot_call)

    def handle(self, line: str) -> bool:
        """Run one line; ``False`` when the session should end."""
        text = line.strip()
        if not text:
            return True
        command, _, rest = text.partition(" ")
        try:
            return self._dispatch(command.lower(), rest.strip(), text)
        except BotApiError as exc:
            self._out(f"error: {exc.description}")
            return True

    def _dispatch(self, command: str, rest: str, text: str) -> bool:
        if command in ("/quit", "/exit"):
            return False
        simple: dict[str, Callable[[], None]] = {
            "/help": lambda: self._out(HELP),
            "/chats": self._chats,
            "/users": self._users,
            "/log": self._log,
        }
        if command in simple:
            simple[command]()
        elif command == "/as":
            self._as(rest)
        elif command == "/reply":
            self._reply(rest)
        elif command == "/click":
            self._click(rest)
        elif command == "/again":
            self._again()
        elif command == "/anon":
            chat, _, message = rest.partition(" ")
            self._show_update(self.emu.anonymous_admin_message(self._chat(chat), message))
        elif command == "/join":
            user, _, chat = rest.partition(" ")
            self._show_update(self.emu.member_joins(self._user(user), self._chat(chat.strip())))
        elif self._where is None:
            self._out("say who you are first: /as NAME [@CHAT] TEXT  (see /help)")
        else:
            self._say(self._where, text, reply_to=None)
        return True

    # -- commands -----------------------------------------------------------------------

    def _as(self, rest: str) -> None:
        name, _, tail = rest.partition(" ")
        if not name:
            raise BotApiError(400, "usage: /as NAME [@CHAT[#TOPIC]] [TEXT]")
        user = self._user(name)
        chat_ref, topic = None, None
        if tail.startswith("@"):
            chat_ref, _, tail = tail.partition(" ")
            chat_ref, _, topic_ref = chat_ref.partition("#")
            topic = topic_ref or None
        chat = None if chat_ref is None else self._chat(chat_ref)
        self._where = _Where(user, chat, topic)
        if tail.strip():
            self._say(self._where, tail.strip(), reply_to=None)
        else:
            self._out(f"now speaking as {user.display_name} in {self._place(self._where)}")

    def _reply(self, rest: str) -> None:
        message_id, _, text = rest.partition(" ")
        if self._where is None or not message_id.isdigit() or not text.strip():
            raise BotApiError(400, "usage (after /as): /reply MESSAGE_ID TEXT")
        self._say(self._where, text.strip(), reply_to=int(message_id))

    def _click(self, rest: str) -> None:
        parts = shlex.split(rest)
        if self._where is None or not parts or not parts[0].isdigit():
            raise BotApiError(400, "usage (after /as): /click MESSAGE_ID [DATA]")
        where = self._where
        chat = where.chat or self.emu.state.private_chat(where.user)
        data = parts[1] if len(parts) > 1 else None
        self._show_update(self.emu.callback_click(where.user, chat, int(parts[0]), data))

    def _again(self) -> None:
        last = self._last
        if last is None:
            raise BotApiError(400, "no update to deliver again yet")
        kind = next(key for key in last if key != "update_id")
        self._show_update(self.emu.queue.push(kind, last[kind]))

    def _say(self, where: _Where, text: str, *, reply_to: int | None) -> None:
        topic: int | str | None = where.topic
        if isinstance(topic, str) and topic.isdigit():
            topic = int(topic)
        update = self.emu.user_message(where.user, text, where.chat, topic=topic, reply_to=reply_to)
        self._show_update(update)

    def _chats(self) -> None:
        for chat in self.emu.state.chats():
            members = ", ".join(
                f"{user.display_name}({status.value})"
                for user, status in self.emu.state.members(chat)
                if status.is_present and user.id != self.emu.bot.id
            )
            topics = ", ".join(f"#{t.name}={t.thread_id}" for t in chat.topics.values())
            line = f"{chat.label:<16} {chat.type.value:<10} id={chat.id}"
            self._out(line + (f"  topics: {topics}" if topics else "") + f"  members: {members}")

    def _users(self) -> None:
        for user in self.emu.state.users():
            self._out(f"{user.display_name:<16} id={user.id}  {user.first_name}")

    def _log(self) -> None:
        calls = self.emu.bot_calls()
        if not calls:
            self._out("(the bot has made no calls yet, apart from polling)")
        for call in calls:
            status = "pending" if call.response is None else call.response.status
            self._out(f"{call.method} {json.dumps(call.params, ensure_ascii=False)} -> {status}")

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

    def _show_update(self, update: dict[str, Any] | None) -> None:
        if update is None:
            self._out("(the bot does not receive this kind of update)")
            return
        self._last = update
        kind = next(key for key in update if key != "update_id")
        body = update[kind]
        message = body.get("message", body) if kind == "callback_query" else body
        mid = message.get("message_id", "?")
        self._out(f"  -> update {update['update_id']}: {kind} (message {mid})")

    def show_ignored(self, update_id: int, reason: str) -> None:
        """Say that the bot ignored an update, and why (an ``IgnoreReason`` value)."""
        self._out(f"  <- update {update_id} ignored by the bot: {reason}")

    def _show_bot_call(self, call: RecordedCall) -> None:
        if call.response is None or call.method.lower() == "getupdates":
            return
        if not call.response.ok:
            self._out(f"[bot {call.method} failed: {call.response.body.get('description')}]")
            return
        result = call.result
        method = call.method.lower()
        if isinstance(result, dict) and "chat" in result and "message_id" in result:
            self._out(f"[bot -> {_message_place(result)}] {_summary(result)}{_buttons(result)}")
        elif method == "answercallbackquery":
            self._out(f"[bot answers the click] {call.params.get('text', '')}")
        elif method in _SHOWN_ACTIONS:
            chat = self.emu.state.find_chat(call.params.get("chat_id", ""))
            place = chat.label if chat is not None else call.params.get("chat_id")
            detail = call.params.get("action") or call.params.get("message_id", "")
            self._out(f"[bot {_SHOWN_ACTIONS[method]} {detail} in {place}]")


# Calls without a message result that the prompt still shows: what the bot did, in words.
_SHOWN_ACTIONS = {
    "sendchataction": "shows",
    "deletemessage": "deletes message",
    "pinchatmessage": "pins message",
    "setmessagereaction": "reacts to message",
}


def _summary(message: dict[str, Any]) -> str:
    """A message's text, or its kind and caption (photo, document, poll, ...)."""
    if "text" in message:
        return str(message["text"])
    kind = next((k for k in ("photo", "document", "poll") if k in message), "message")
    label = message.get("caption") or message.get("poll", {}).get("question", "")
    label = label or message.get("document", {}).get("file_name", "")
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


async def run_console(console: SandboxConsole, lines: AsyncIterator[str]) -> None:
    """Feed ``lines`` to the console until ``/quit`` or the end of the input."""
    async for line in lines:
        if not console.handle(line):
            break


async def read_lines(stream: TextIO) -> AsyncIterator[str]:
    """Lines of a blocking stream (stdin), read on a daemon thread so the event loop keeps running.

    A daemon thread (not the loop's executor) because a ``readline`` blocked on a terminal
    cannot be cancelled, and ``asyncio.run`` would wait for an executor thread at exit.
    """
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[str | None] = asyncio.Queue()

    def post(item: str | None) -> bool:
        try:
            loop.call_soon_threadsafe(queue.put_nowait, item)
        except RuntimeError:  # the loop is closed: nobody is listening any more
            return False
        return True

    def pump() -> None:
        for line in stream:
            if not post(line):
                return
        post(None)

    threading.Thread(target=pump, name="sandbox-stdin", daemon=True).start()
    while (line := await queue.get()) is not None:
        yield line

"""The transport-agnostic Telegram Bot API emulator: state, update queue and call log.

:meth:`BotApiEmulator.call` answers one Bot API call exactly as the HTTP API would (the
``{"ok": ..., "result"|"error_code"+"description"}`` body plus an HTTP status); the in-memory
PTB request (:mod:`.request`) and the loopback server (:mod:`.server`) both sit on it. Every
call is recorded, in the order it was made, before it is answered.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import secrets
import string
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias
from urllib.parse import parse_qsl, urlsplit

from telegram._utils.types import ODVInput
from telegram.error import TimedOut
from telegram.request import BaseRequest, RequestData

from actorscope.sandbox._telegram import (
    methods_bot,
    methods_chats,
    methods_media,
    methods_messages,
    methods_payments,
)
from actorscope.sandbox._telegram.actions_media import MediaActions
from actorscope.sandbox._telegram.actions_members import MemberActions
from actorscope.sandbox._telegram.context import BotSetup, MethodContext, Outbox
from actorscope.sandbox._telegram.errors import BotApiError
from actorscope.sandbox._telegram.files import FileStore, StoredFile
from actorscope.sandbox._telegram.models import Chat, ForumTopic, MemberStatus, User
from actorscope.sandbox._telegram.params import Params
from actorscope.sandbox._telegram.payments import Checkout, PaymentBook
from actorscope.sandbox._telegram.polls import PollBook
from actorscope.sandbox._telegram.request import (
    decode_request_data,
    split_bot_url,
    split_file_url,
)
from actorscope.sandbox._telegram.state import BotApiState
from actorscope.sandbox._telegram.updates import UpdateQueue

__all__ = ["ApiResponse", "BotApiEmulator", "EmulatorRequest", "RecordedCall", "make_token"]

JSON = dict[str, Any]
Handler = Callable[[MethodContext, Params], Awaitable[Any]]
CallListener = Callable[["RecordedCall"], None]

# Method names are case-insensitive on Telegram, so the table is keyed in lower case.
_METHODS: dict[str, Handler] = {
    "getme": methods_bot.get_me,
    "getupdates": methods_bot.get_updates,
    "setmycommands": methods_bot.set_my_commands,
    "getmycommands": methods_bot.get_my_commands,
    "deletemycommands": methods_bot.delete_my_commands,
    "setwebhook": methods_bot.set_webhook,
    "deletewebhook": methods_bot.delete_webhook,
    "getwebhookinfo": methods_bot.get_webhook_info,
    "close": methods_bot.close,
    "logout": methods_bot.log_out,
    "getchat": methods_chats.get_chat,
    "getchatmember": methods_chats.get_chat_member,
    "getchatadministrators": methods_chats.get_chat_administrators,
    "pinchatmessage": methods_chats.pin_chat_message,
    "unpinchatmessage": methods_chats.unpin_chat_message,
    "createforumtopic": methods_chats.create_forum_topic,
    "sendmessage": methods_messages.send_message,
    "editmessagetext": methods_messages.edit_message_text,
    "editmessagereplymarkup": methods_messages.edit_message_reply_markup,
    "deletemessage": methods_messages.delete_message,
    "forwardmessage": methods_messages.forward_message,
    "copymessage": methods_messages.copy_message,
    "setmessagereaction": methods_messages.set_message_reaction,
    "answercallbackquery": methods_messages.answer_callback_query,
    "answerinlinequery": methods_messages.answer_inline_query,
    "sendchataction": methods_media.send_chat_action,
    "sendphoto": methods_media.send_photo,
    "senddocument": methods_media.send_document,
    "sendpoll": methods_media.send_poll,
    "stoppoll": methods_media.stop_poll,
    "getfile": methods_media.get_file,
    "sendinvoice": methods_payments.send_invoice,
    "answershippingquery": methods_payments.answer_shipping_query,
    "answerprecheckoutquery": methods_payments.answer_pre_checkout_query,
}


def make_token(bot_id: int, secret: str | None = None) -> str:
    """A token of Telegram's shape, ``<bot id>:<35 characters>``."""
    alphabet = string.ascii_letters + string.digits + "_-"
    tail = secret if secret is not None else "".join(secrets.choice(alphabet) for _ in range(35))
    return f"{bot_id}:{tail}"


@dataclass(frozen=True, slots=True)
class ApiResponse:
    """One answer: the HTTP status and the JSON body."""

    status: int
    body: JSON

    @property
    def ok(self) -> bool:
        """Whether the call succeeded."""
        return bool(self.body.get("ok"))

    def to_bytes(self) -> bytes:
        """The body as UTF-8 JSON, as sent over HTTP."""
        return json.dumps(self.body, ensure_ascii=False).encode()

    @classmethod
    def success(cls, result: Any) -> ApiResponse:
        """``{"ok": true, "result": result}`` with status 200."""
        return cls(200, {"ok": True, "result": result})

    @classmethod
    def failure(cls, error: BotApiError) -> ApiResponse:
        """``{"ok": false, "error_code": ..., "description": ...}`` with that status."""
        body = {"ok": False, "error_code": error.error_code, "description": error.description}
        return cls(error.error_code, body)


@dataclass(slots=True)
class RecordedCall:
    """A call the bot made: method name as sent, decoded parameters, and the answer."""

    method: str
    params: JSON
    response: ApiResponse | None = field(default=None, compare=False)

    @property
    def result(self) -> Any:
        """The call's ``result`` (``None`` while pending or when it failed)."""
        return None if self.response is None else self.response.body.get("result")


class BotApiEmulator(MediaActions, MemberActions):
    """An in-memory Telegram Bot API server for one bot.

    ``passport_public_key`` is the PEM public key the bot's owner gave BotFather for Telegram
    Passport (``share_passport`` encrypts for it).

    Its world is made of :attr:`User` (a person or bot), :attr:`Chat` (a private chat, group,
    supergroup or channel; its ``type`` is the Bot API string, ``"supergroup"``) and
    :attr:`ForumTopic` objects, which its methods create and return (``emu.state.add_user``,
    ``add_chat``, ``add_topic``); read their attributes, and give them back to its actions.
    """

    #: A Telegram user or bot of the emulated world.
    User: TypeAlias = User
    #: A chat of the emulated world.
    Chat: TypeAlias = Chat
    #: A forum topic of a supergroup (``thread_id``, ``name``).
    ForumTopic: TypeAlias = ForumTopic

    def __init__(
        self,
        token: str | None = None,
        *,
        bot_username: str = "actorscope_sandbox_bot",
        bot_name: str = "Actorscope Sandbox",
        privacy_mode: bool = False,
        max_poll_timeout: float = 30.0,
        clock: Callable[[], float] | None = None,
        passport_public_key: bytes | None = None,
    ) -> None:
        self.token = token if token is not None else make_token(7_000_000_001)
        bot_id, sep, _ = self.token.partition(":")
        if not sep or not bot_id.isdigit():
            raise BotApiError(401, "Unauthorized: a token looks like <bot id>:<secret>")
        self.bot = User(int(bot_id), bot_name, username=bot_username, is_bot=True)
        self.state = BotApiState(self.bot) if clock is None else BotApiState(self.bot, clock=clock)
        self.queue = UpdateQueue(max_timeout=max_poll_timeout)
        self.calls: list[RecordedCall] = []
        #: What the method handlers see: built once, shared with the user actions.
        self.context = MethodContext(
            state=self.state,
            updates=self.queue,
            files=FileStore(),
            outbox=Outbox(),
            setup=BotSetup(passport_public_key=passport_public_key),
            polls=PollBook(),
            payments=PaymentBook(),
            privacy_mode=privacy_mode,
        )
        self._query_ids = itertools.count(4_000_000_000_000_001)
        self._listeners: list[CallListener] = []

    def populate(self) -> None:
        """Add the sandbox's people and chats: alice, bob and carol; @devs (a forum with the
        topics "ideas" and "releases", alice admin, bob member) and @ops (a basic group, carol
        its creator, bob member). ``actorscope sandbox`` and each ``run_sandbox`` start so."""
        state = self.state
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

    @property
    def privacy_mode(self) -> bool:
        """Whether the bot runs with privacy mode on (in groups it sees commands and replies)."""
        return self.context.privacy_mode

    @property
    def commands(self) -> dict[str, list[dict[str, str]]]:
        """The bot's command lists, by scope and language."""
        return self.context.setup.commands

    @property
    def webhook(self) -> JSON:
        """What the bot's last ``setWebhook`` asked for (empty while it polls)."""
        return self.context.setup.webhook

    @property
    def callback_answers(self) -> dict[str, JSON | None]:
        """Each callback query's answer (``None`` until answered)."""
        return self.context.outbox.callback_answers

    @property
    def inline_answers(self) -> dict[str, JSON | None]:
        """Each inline query's answer (``None`` until answered)."""
        return self.context.outbox.inline_answers

    @property
    def checkouts(self) -> list[Checkout]:
        """Every payment users started, oldest first (``stage``: ``shipping``,
        ``pre_checkout``, ``paid`` or ``failed``, with the bot's ``error``)."""
        return list(self.context.payments.checkouts.values())

    @property
    def reactions(self) -> dict[tuple[int, int], list[JSON]]:
        """The bot's reactions, by ``(chat id, message id)``."""
        return self.context.outbox.reactions

    async def call(
        self, method: str, params: Mapping[str, Any] | None = None, *, token: str | None = None
    ) -> ApiResponse:
        """Answer one Bot API call; ``token`` (when given) must be the bot's token."""
        if token is not None and token != self.token:
            return ApiResponse(401, {"ok": False, "error_code": 401, "description": "Unauthorized"})
        decoded = Params(params or {})
        record = RecordedCall(method, decoded.as_dict())
        self.calls.append(record)
        handler = _METHODS.get(method.lower())
        if handler is None:
            response = ApiResponse.failure(BotApiError(404, "Not Found: method not found"))
        else:
            try:
                response = ApiResponse.success(await handler(self.context, decoded))
            except BotApiError as exc:
                response = ApiResponse.failure(exc)
        record.response = response
        for listener in list(self._listeners):
            listener(record)
        return response

    def request(self, *, read_timeout: float | None = 5.0) -> EmulatorRequest:
        """A python-telegram-bot ``BaseRequest`` answered by this emulator, without a socket
        (a slower answer than ``read_timeout`` seconds raises PTB's ``TimedOut``)::

            app = (
                ApplicationBuilder()
                .token(emu.token)
                .request(emu.request())
                .get_updates_request(emu.request())
                .build()
            )
        """
        return EmulatorRequest(self, read_timeout=read_timeout)

    def add_listener(self, listener: CallListener) -> None:
        """Call ``listener(record)`` after every answered call (e.g. to print bot replies)."""
        self._listeners.append(listener)

    def remove_listener(self, listener: CallListener) -> None:
        """Stop calling ``listener``."""
        self._listeners.remove(listener)

    def calls_to(self, method: str) -> list[RecordedCall]:
        """The recorded calls of one method (case-insensitive), in order."""
        return [c for c in self.calls if c.method.lower() == method.lower()]

    def bot_calls(self) -> list[RecordedCall]:
        """Every recorded call except ``getUpdates`` polling."""
        return [c for c in self.calls if c.method.lower() != "getupdates"]

    def sent_messages(self) -> list[JSON]:
        """The messages the bot sent successfully, in order."""
        return [c.result for c in self.calls_to("sendMessage") if c.response and c.response.ok]

    def download(self, file_path: str, *, token: str) -> StoredFile:
        """The file at ``/file/bot<token>/<file_path>``; 401 for a wrong token, else 404."""
        if token != self.token:
            raise BotApiError(401, "Unauthorized")
        stored = self.context.files.by_path(file_path)
        if stored is None:
            raise BotApiError(404, "Not Found")
        return stored

    def close(self) -> None:
        """End waiting long polls now (for server shutdown); later polls return at once."""
        self.queue.close()


class EmulatorRequest(BaseRequest):
    """Routes PTB's Bot API requests straight into an emulator (no network at all)."""

    __slots__ = ("_emulator", "_initialized", "_read_timeout")

    def __init__(self, emulator: BotApiEmulator, *, read_timeout: float | None = 5.0) -> None:
        self._emulator = emulator
        self._read_timeout = read_timeout
        self._initialized = False

    @property
    def read_timeout(self) -> float | None:
        """The default read timeout in seconds (PTB adds the poll timeout for getUpdates)."""
        return self._read_timeout

    async def initialize(self) -> None:
        """Nothing to open; remembers that it was initialized."""
        self._initialized = True

    async def shutdown(self) -> None:
        """Nothing to close."""
        self._initialized = False

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        write_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        connect_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        pool_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        """Answer one request from the emulator; a slow answer raises ``TimedOut``."""
        if not self._initialized:
            raise RuntimeError("This EmulatorRequest is not initialized!")
        token, file_path = split_file_url(url)
        if file_path:
            try:
                return 200, self._emulator.download(file_path, token=token).content
            except BotApiError as exc:
                return exc.error_code, ApiResponse.failure(exc).to_bytes()
        token, api_method = split_bot_url(url)
        if not api_method:
            return 404, b'{"ok": false, "error_code": 404, "description": "Not Found"}'
        params = dict(parse_qsl(urlsplit(url).query))
        params.update(decode_request_data(request_data))
        timeout = read_timeout if isinstance(read_timeout, float | int) else self._read_timeout
        if read_timeout is None:
            timeout = None
        call = self._emulator.call(api_method, params, token=token)
        try:
            response = await asyncio.wait_for(call, timeout)
        except TimeoutError as exc:
            raise TimedOut from exc
        return response.status, response.to_bytes()

"""The people: play the stream through both emulators, and see what the bot answers.

Every text carries a nonce (``~<n>``) that the handler echoes, so each reply finds its event;
a click is found by its callback query or interaction id, a writer command's answer by the
message it replies to. Probes are ordinary messages pinned to one worker (Telegram) or sent
into one guild (Discord), whose replies say what that worker decided, whether it hears grant
changes (``L``) and whether its store answers (``S``).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import time
from collections import deque
from collections.abc import Iterator
from typing import Any, TypeVar

from bench._streams import Doing, StreamEvent

from actorscope.errors import ConfigError
from actorscope.sandbox import BotApiCall, BotApiError, DiscordEmulator, DiscordMessage
from soak._dispatcher import Dispatcher
from soak._model import Expect, Reply, Sent, parse_soak_line
from soak._world import BOT_USERNAME, DiscordSide, TelegramSide

__all__ = ["Driver"]

_T = TypeVar("_T")

# What the bot does with each kind of event.
_EXPECT = {
    Doing.TEXT: Expect.TURN,
    Doing.MENTION: Expect.TURN,
    Doing.COMMAND: Expect.TURN,
    Doing.ASK: Expect.TURN,
    Doing.EDIT: Expect.TURN,
    Doing.CLICK: Expect.TURN,
    Doing.WRITER_COMMAND: Expect.ANSWER,
    Doing.OTHER_BOT: Expect.NOTHING,
    Doing.ANONYMOUS_ADMIN: Expect.NOTHING,
    Doing.AS_CHANNEL: Expect.NOTHING,
    Doing.BOT: Expect.NOTHING,
    Doing.WEBHOOK: Expect.NOTHING,
}


def _json_field(value: Any) -> Any:
    """A Bot API parameter that may arrive JSON-encoded (form posts) or decoded."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


class Driver:
    """Plays events, registers what each should produce, and matches the replies."""

    def __init__(
        self,
        telegram: TelegramSide,
        discord: DiscordSide,
        demu: DiscordEmulator,
        dispatcher: Dispatcher,
        slot_of_shard: dict[int, int],
        seed: int,
    ) -> None:
        self.tg = telegram
        self.dc = discord
        self.demu = demu
        self.dispatcher = dispatcher
        self._slot_of_shard = slot_of_shard
        self._rng = random.Random(seed)  # noqa: S311 - a reproducible run, not a secret
        self._nonces: Iterator[int] = itertools.count(1)
        self.sent: dict[str, Sent] = {}
        #: Replies no event was waiting for (a bug, or a reply to the soak's own setup).
        self.stray: list[Reply] = []
        self._waiters: dict[str, asyncio.Future[Reply]] = {}
        # (user, chat, message id) of recent person messages, for edits (each edited once).
        self._editable: deque[tuple[int, int, int]] = deque(maxlen=500)
        # The bot's recent replies with a button, for clicks.
        self._tg_buttons: deque[tuple[int, int]] = deque(maxlen=200)
        self._dc_buttons: deque[DiscordMessage] = deque(maxlen=200)
        self.skipped = 0
        telegram.emu.add_listener(self._telegram_call)
        demu.listeners.append(self._discord_message)

    # -- registering and matching ---------------------------------------------------------

    def _register(self, sent: Sent) -> Sent:
        self.sent[sent.key] = sent
        return sent

    def _reply(self, key: str, reply: Reply) -> None:
        sent = self.sent.get(key)
        if sent is None:
            self.stray.append(reply)
            return
        sent.replies.append(reply)
        waiter = self._waiters.pop(key, None)
        if waiter is not None and not waiter.done():
            waiter.set_result(reply)

    async def wait_reply(self, key: str, within: float) -> Reply | None:
        """The first reply to event ``key`` within ``within`` seconds, else ``None``."""
        sent = self.sent[key]
        if sent.replies:
            return sent.replies[0]
        waiter = self._waiters.setdefault(key, asyncio.get_running_loop().create_future())
        try:
            return await asyncio.wait_for(asyncio.shield(waiter), within)
        except TimeoutError:
            return None

    def _telegram_call(self, call: BotApiCall) -> None:
        if call.method.lower() != "sendmessage" or call.response is None or not call.response.ok:
            return
        now = time.time()
        params = call.params
        text = str(params.get("text", ""))
        result = call.result or {}
        markup = _json_field(params.get("reply_markup"))
        if isinstance(markup, dict) and markup.get("inline_keyboard"):
            self._tg_buttons.append((int(result["chat"]["id"]), int(result["message_id"])))
        fields = parse_soak_line(text)
        if fields is not None:
            key = f"n{fields['n']}" if fields.get("n", "-") != "-" else f"c:tg:{fields['id']}"
            self._reply(key, Reply(now, fields))
            return
        reply_to = _json_field(params.get("reply_parameters")) or {}
        message_id = reply_to.get("message_id") if isinstance(reply_to, dict) else None
        self._reply(f"a:tg:{params.get('chat_id')}:{message_id}", Reply(now, {"text": text}))

    def _discord_message(self, message: DiscordMessage) -> None:
        if message.author.id != self.dc.world.bot.id:
            return
        now = time.time()
        if message.components:
            self._dc_buttons.append(message)
        fields = parse_soak_line(message.content)
        if fields is not None:
            key = f"n{fields['n']}" if fields.get("n", "-") != "-" else f"c:dc:{fields['id']}"
            self._reply(key, Reply(now, fields))
            return
        reference = message.reference or {}
        self._reply(f"a:dc:{reference.get('message_id')}", Reply(now, {"text": message.content}))

    # -- playing --------------------------------------------------------------------------

    async def play(self, event: StreamEvent) -> Sent | None:
        """Make someone do ``event``; the registered event, or ``None`` if it could not happen
        (nothing to edit or click yet)."""
        try:
            if event.platform == "telegram":
                return self._telegram(event)
            return await self._discord(event)
        except (BotApiError, ConfigError, IndexError):
            self.skipped += 1
            return None

    def _pick(self, items: deque[_T]) -> _T:
        """A random one of ``items``; IndexError (the event is skipped) when there is none."""
        if not items:
            raise IndexError("nothing to pick yet")
        return items[self._rng.randrange(len(items))]

    def _nonce(self, text: str) -> tuple[str, str]:
        n = next(self._nonces)
        return f"n{n}", f"{text} ~{n}"

    def _telegram(self, event: StreamEvent) -> Sent | None:
        tg = self.tg
        emu = tg.emu
        chat = tg.chats[event.chat % len(tg.chats)]
        person = tg.people[event.sender % len(tg.people)]
        key, text = self._nonce(event.text)
        pair = (f"group:telegram:{chat.id}", str(person.id))
        expect = _EXPECT[event.doing]
        doing = event.doing
        if doing is Doing.MENTION:
            text = f"@{BOT_USERNAME} {text}"
        if doing is Doing.EDIT:
            user_id, chat_id, message_id = self._editable.popleft()
            update = emu.user_edit(user_id, chat_id, message_id, text)
            pair = (f"group:telegram:{chat_id}", str(user_id))
        elif doing is Doing.CLICK:
            chat_id, message_id = self._pick(self._tg_buttons)
            update = emu.callback_click(person, chat_id, message_id)
            assert update is not None
            key = f"c:tg:{update['callback_query']['id']}"
            pair = (f"group:telegram:{chat_id}", str(person.id))
        elif doing is Doing.ANONYMOUS_ADMIN:
            update = emu.anonymous_admin_message(chat, text)
            pair = ("", "")
        elif doing is Doing.AS_CHANNEL:
            update = emu.message_as_channel(tg.channel, chat, text)
            pair = ("", "")
        elif doing is Doing.BOT:
            update = emu.user_message(tg.other_bot, text, chat)
            pair = ("", "")
        else:
            if doing is Doing.WRITER_COMMAND:
                text = event.text
            update = emu.user_message(person, text, chat)
            if update is not None and doing is Doing.WRITER_COMMAND:
                key = f"a:tg:{chat.id}:{update['message']['message_id']}"
            elif update is not None and doing in (Doing.TEXT, Doing.MENTION):
                self._editable.append((person.id, chat.id, update["message"]["message_id"]))
        if update is None:
            return None
        return self._register(
            Sent(key, "telegram", doing, time.time(), expect, pair, int(update["update_id"]))
        )

    async def _discord(self, event: StreamEvent) -> Sent | None:
        dc = self.dc
        channel = dc.channels[event.chat % len(dc.channels)]
        guild = dc.guild_of(channel)
        person = dc.people[event.sender % len(dc.people)]
        slot = self._slot_of_shard[dc.shard_of(guild)]
        key, text = self._nonce(event.text)
        pair = (f"guild:{guild.id}", str(person.id))
        expect = _EXPECT[event.doing]
        doing = event.doing
        excuse = self._shard_excuse(guild.id)
        sent_at = time.time()
        if doing is Doing.MENTION:
            await self.demu.say(person, channel, f"<@{dc.world.bot.id}> {text}")
        elif doing is Doing.ASK:
            interaction = await self.demu.slash(person, channel, "ask", q=text)
            del interaction
        elif doing is Doing.WRITER_COMMAND:
            message = await self.demu.say(person, channel, event.text)
            key = f"a:dc:{message.id}"
        elif doing is Doing.CLICK:
            clicked = self._pick(self._dc_buttons)
            guild = dc.guild_of(clicked.channel)
            slot = self._slot_of_shard[dc.shard_of(guild)]
            excuse = self._shard_excuse(guild.id)
            pair = (f"guild:{guild.id}", str(person.id))
            interaction = await self.demu.click(person, clicked, "again")
            key = f"c:dc:{interaction.id}"
        elif doing is Doing.BOT:
            await self.demu.say(dc.other_bot, channel, text)
            pair = ("", "")
        elif doing is Doing.WEBHOOK:
            hook = next(h for h in dc.world.webhooks.values() if h.guild_id == guild.id)
            await self.demu.webhook_post(hook, text)
            pair = ("", "")
        else:
            await self.demu.say(person, channel, text)
        return self._register(
            Sent(key, "discord", doing, sent_at, expect, pair, slot=slot, excuse=excuse)
        )

    def _shard_excuse(self, guild_id: int) -> str:
        """Why an event in ``guild_id`` reaches no worker (its shard is down), or ``""``."""
        if any(s.covers(guild_id) for s in self.demu.connected_sessions()):
            return ""
        return "sent to a shard while its worker was down (not delivered)"

    # -- probes ---------------------------------------------------------------------------

    def telegram_probe(
        self, slot: int, *, chat_id: int | None = None, user_id: int | None = None
    ) -> str:
        """A message pinned to worker ``slot``; the key of its event.

        Without a chat and user: the probe user in the probe chat (granted there), asking the
        worker whether its store answers and whether it hears grant changes.
        """
        tg = self.tg
        chat = tg.probe_chat.id if chat_id is None else chat_id
        user = tg.probe_user.id if user_id is None else user_id
        key, text = self._nonce("probe" if chat_id is None else "check")
        update = tg.emu.user_message(user, text, chat)
        assert update is not None
        update_id = int(update["update_id"])
        self.dispatcher.pinned[update_id] = slot
        pair = (f"group:telegram:{chat}", str(user))
        self._register(
            Sent(key, "telegram", "probe", time.time(), Expect.TURN, pair, update_id, probe=True)
        )
        return key

    async def discord_probe(self, guild_index: int, user_id: int) -> str:
        """A message from ``user_id`` in guild ``guild_index`` (its shard's worker answers)."""
        dc = self.dc
        guild = dc.guilds[guild_index]
        channel = next(c for c in dc.channels if c.guild_id == guild.id)
        person = dc.world.users[user_id]
        key, text = self._nonce("check")
        excuse = self._shard_excuse(guild.id)
        sent_at = time.time()
        await self.demu.say(person, channel, text)
        slot = self._slot_of_shard[dc.shard_of(guild)]
        pair = (f"guild:{guild.id}", str(user_id))
        self._register(
            Sent(
                key, "discord", "probe", sent_at, Expect.TURN, pair, slot=slot, probe=True,
                excuse=excuse,
            )
        )  # fmt: skip
        return key

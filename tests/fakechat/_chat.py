"""The fake chat's server: its people and rooms, the events it delivers, what the bot posted.

Everything a platform's emulator is, in memory: it hands out the bot's token, numbers the
events, says who a reply answers (the trustworthy target of a writer command, as a real
platform's server does) and records every message the bot sends.
"""

from __future__ import annotations

import asyncio
import secrets
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["FakeChat", "Post"]


@dataclass(frozen=True, slots=True)
class Post:
    """A message the bot sent: the room (or DM chat), its thread, the text."""

    chat: str
    thread: str
    text: str


#: The servers of this process by their bot's token, as a runner given only a token finds its.
_SERVERS: weakref.WeakValueDictionary[str, FakeChat] = weakref.WeakValueDictionary()


class FakeChat:
    """One fake chat server: people and rooms named by strings (``alice``, ``ideas``)."""

    def __init__(self, *, bot: str = "fakebot") -> None:
        self.bot = bot
        self.token = secrets.token_hex(16)
        _SERVERS[self.token] = self
        self.people: dict[str, str] = {}
        self.rooms: set[str] = set()
        self.posted: list[Post] = []
        #: The events a running bot has not fetched yet (its runner's "long poll").
        self.updates: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        #: Every event the runner took, with what its pipeline made of it (an ``Ingress``).
        self.handled: list[tuple[dict[str, Any], object]] = []
        #: Told every post (a simulator records them for ``should_send``).
        self.listeners: list[Callable[[Post], None]] = []
        self._authors: dict[str, str] = {}
        self._count = 0

    @staticmethod
    def serving(token: str) -> FakeChat | None:
        """The server of this process whose bot has ``token`` (how a runner connects)."""
        return _SERVERS.get(token)

    def person(self, person_id: str, name: str = "") -> str:
        """Add a person; their id."""
        self.people[person_id] = name or person_id
        return person_id

    def room(self, room_id: str) -> str:
        """Add a group room; its id."""
        self.rooms.add(room_id)
        return room_id

    @staticmethod
    def dm_of(person_id: str) -> str:
        """The id of the direct chat between ``person_id`` and the bot."""
        return f"dm.{person_id}"

    def message(
        self,
        sender: str | None,
        text: str,
        room: str | None = None,
        *,
        bot: bool = False,
        thread: str = "",
        reply_to: str = "",
        to_bot: bool = False,
    ) -> dict[str, Any]:
        """The raw event of ``sender`` (``None``: a post without an author, as a room's
        system notices) writing ``text`` in ``room`` (``None``: their DM with the bot).
        ``reply_to`` is a message id the server knows the author of; ``to_bot`` marks a
        message that names the bot."""
        self._count += 1
        message_id = f"m{self._count}"
        if room is None and sender is None:
            raise ValueError("a direct message has a sender")
        chat = (
            {"id": self.dm_of(sender or ""), "type": "direct"}
            if room is None
            else {"id": room, "type": "group"}
        )
        event: dict[str, Any] = {
            "event_id": self._count,
            "kind": "message",
            "chat": chat,
            "message_id": message_id,
            "text": text,
            "to_bot": to_bot,
        }
        if sender is not None:
            event["from"] = {"id": sender, "name": self.people.get(sender, sender), "bot": bot}
            self._authors[message_id] = sender
        if thread:
            event["thread"] = thread
        if reply_to:
            event["reply_to"] = {"message_id": reply_to, "from": self._authors.get(reply_to)}
        return event

    def post(self, chat: str, text: str, thread: str = "") -> Post:
        """The bot posts ``text`` (the runner's send)."""
        posted = Post(chat, thread, text)
        self.posted.append(posted)
        for listener in self.listeners:
            listener(posted)
        return posted

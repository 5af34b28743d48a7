"""Polls and quizzes: who voted for what, and the updates a vote or a stop produces.

Every poll posted in the emulator (by the bot with ``sendPoll``, or by a user) is kept in a
:class:`PollBook` with its votes. The poll object inside the stored message is the same dict
the book updates, so the message always shows the current counts. As on Telegram, the bot
hears about votes only in polls it sent itself: a ``poll_answer`` for each vote in a
non-anonymous poll, and a ``poll`` update (the new state) after every vote and when a poll is
stopped.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from actorscope.sandbox._telegram.errors import BotApiError
from actorscope.sandbox._telegram.models import User

__all__ = ["PollBook", "PollRecord"]

JSON = dict[str, Any]
_FIRST_POLL_ID = 5_000_000_000_000_001


@dataclass(slots=True)
class PollRecord:
    """One poll: where it was posted, by whom, and each voter's chosen options."""

    chat_id: int
    message_id: int
    #: The ``Poll`` object, shared with the stored message.
    poll: JSON
    by_bot: bool
    votes: dict[int, list[int]] = field(default_factory=dict)

    @property
    def closed(self) -> bool:
        """Whether the poll no longer takes votes."""
        return bool(self.poll["is_closed"])

    def snapshot(self) -> JSON:
        """The poll as a ``poll`` update carries it (a copy, so later votes do not change it)."""
        return {**self.poll, "options": [dict(option) for option in self.poll["options"]]}


class PollBook:
    """Every poll of the emulator, by poll id."""

    def __init__(self) -> None:
        self._polls: dict[str, PollRecord] = {}
        self._ids = itertools.count(_FIRST_POLL_ID)

    def new_id(self) -> str:
        """A fresh poll id."""
        return str(next(self._ids))

    def add(self, message: JSON, *, by_bot: bool) -> PollRecord:
        """Keep the poll of ``message`` (a stored message with a ``poll``)."""
        poll = message["poll"]
        record = PollRecord(message["chat"]["id"], message["message_id"], poll, by_bot)
        self._polls[poll["id"]] = record
        return record

    def get(self, poll_id: str) -> PollRecord:
        """The poll with ``poll_id``; ``Bad Request: poll not found`` otherwise."""
        record = self._polls.get(poll_id)
        if record is None:
            raise BotApiError(400, "Bad Request: poll not found")
        return record

    def in_message(self, chat_id: int, message_id: int) -> PollRecord | None:
        """The poll posted as message ``message_id`` of ``chat_id``, or ``None``."""
        return next(
            (r for r in self._polls.values() if (r.chat_id, r.message_id) == (chat_id, message_id)),
            None,
        )

    def vote(self, record: PollRecord, voter: User, option_ids: Sequence[int]) -> JSON | None:
        """``voter`` chooses ``option_ids`` (empty: retracts); the ``PollAnswer`` JSON, or
        ``None`` when the poll is anonymous (nobody learns who voted)."""
        poll = record.poll
        chosen = _checked_choice(poll, option_ids)
        if record.closed:
            raise BotApiError(400, "Bad Request: the poll is closed")
        earlier = record.votes.get(voter.id, [])
        if not earlier and not chosen:
            raise BotApiError(400, "Bad Request: there is no vote to retract")
        if earlier == chosen:
            raise BotApiError(400, "Bad Request: these options are chosen already")
        if earlier and not poll.get("allows_revoting", False):
            raise BotApiError(400, "Bad Request: the vote can't be changed in this poll")
        for index in earlier:
            poll["options"][index]["voter_count"] -= 1
        for index in chosen:
            poll["options"][index]["voter_count"] += 1
        if chosen:
            record.votes[voter.id] = chosen
        else:
            record.votes.pop(voter.id, None)
        poll["total_voter_count"] = len(record.votes)
        if poll["is_anonymous"]:
            return None
        return {
            "poll_id": poll["id"],
            "user": voter.to_json(),
            "option_ids": chosen,
            "option_persistent_ids": [poll["options"][i]["persistent_id"] for i in chosen],
        }

    @staticmethod
    def close(record: PollRecord) -> None:
        """Stop ``record``'s poll; ``poll has already been closed`` when it was."""
        if record.closed:
            raise BotApiError(400, "Bad Request: poll has already been closed")
        record.poll["is_closed"] = True


def _checked_choice(poll: JSON, option_ids: Sequence[int]) -> list[int]:
    """``option_ids`` as a sorted list, if they are a valid choice in ``poll``."""
    count = len(poll["options"])
    if any(isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < count for i in option_ids):
        raise BotApiError(400, f"Bad Request: the poll has options 0 to {count - 1}")
    chosen = sorted(set(option_ids))
    if len(chosen) != len(option_ids):
        raise BotApiError(400, "Bad Request: an option is chosen twice")
    if len(chosen) > 1 and not poll["allows_multiple_answers"]:
        raise BotApiError(400, "Bad Request: the poll allows one answer only")
    if not chosen and poll["type"] == "quiz":
        raise BotApiError(400, "Bad Request: a quiz answer can't be retracted")
    return chosen

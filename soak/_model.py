"""What the soak records while it runs: each event sent, each reply seen, each fault.

The driver registers every event it makes a person (or a non-person) do as a :class:`Sent`
with what it expects (a turn of the handler, a writer command's answer, nothing); the
observer attaches each bot reply it sees on either emulator to its :class:`Sent`. The report
judges them afterwards.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

__all__ = ["Expect", "Fault", "Reply", "Sent", "parse_soak_line"]


class Expect(StrEnum):
    """What an event should produce."""

    TURN = "turn"  # one reply from the handler
    ANSWER = "answer"  # one answer to a writer command (the pipeline's)
    NOTHING = "nothing"  # the bot ignores it (non-persons, another bot's command)


@dataclass(slots=True)
class Reply:
    """One bot message answering an event, as the emulator saw it."""

    seen: float
    fields: dict[str, str] = field(default_factory=dict)

    @property
    def pid(self) -> int:
        """The worker process that ran the turn (0 for a writer command's answer)."""
        return int(self.fields.get("w", "0"))

    @property
    def reason(self) -> str:
        """The permission check's reason."""
        return self.fields.get("r", "")

    @property
    def decided(self) -> float:
        """When the worker decided (its clock: the same machine's)."""
        return float(self.fields.get("t", "0"))


@dataclass(slots=True)
class Sent:
    """One event the driver played, what it expects, and the replies seen for it."""

    key: str
    platform: str
    doing: str
    sent: float
    expect: Expect
    #: ``(scope group, sender id)`` whose grant the turn's check reads ("" if none).
    pair: tuple[str, str] = ("", "")
    #: Telegram: the update id; Discord: -1.
    update_id: int = -1
    #: Discord: the slot whose shard got it (-1 for Telegram).
    slot: int = -1
    probe: bool = False
    replies: list[Reply] = field(default_factory=list)
    #: Why a missing or doubled reply is the platform's doing, not actorscope's ("" if not).
    excuse: str = ""


@dataclass(slots=True)
class Fault:
    """One injected fault and how long the workers took to be whole again."""

    kind: str
    at: float
    target: str = ""
    recovered: float | None = None
    note: str = ""

    @property
    def recovery(self) -> float | None:
        """Seconds from the fault to every worker answering from the store again."""
        return None if self.recovered is None else self.recovered - self.at


def parse_soak_line(text: str) -> dict[str, str] | None:
    """The ``key=value`` fields of a handler reply (``soak n=... id=...``), else ``None``."""
    if not text.startswith("soak "):
        return None
    fields: dict[str, str] = {}
    for part in text[5:].split():
        key, sep, value = part.partition("=")
        if sep:
            fields[key] = value
    return fields

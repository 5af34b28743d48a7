"""nonebug-style expectations: declare what the bot should do, then let an event happen.

A simulator records an :class:`Observation` for every reply the bot sends and every
permission decision it asks for. Expectations declared before an event
(:meth:`Expectations.should_send`, :meth:`~Expectations.should_allow`,
:meth:`~Expectations.should_deny`) are matched against that event's observations **in order**;
any mismatch, unexpected extra or missing observation fails with :class:`ExpectationError`,
whose message names the step and lists expected and actual side by side. An event with no
declared expectations is not checked (its observations stay available for plain asserts).
Each expectation remembers the ``file:line`` that declared it, so one left unused when the
test ends is reported at that line.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from actorscope.permissions import Decision

__all__ = [
    "ExpectationError",
    "Expectations",
    "Expected",
    "Observation",
    "ObservationKind",
    "declared_at",
    "diff",
    "hide_on_expectation_failure",
]


#: The kit's own source folder: frames in it are never "where the test declared" something.
_KIT = Path(__file__).resolve().parent


class ObservationKind(StrEnum):
    """What the bot did: sent a message or had a permission decided."""

    SEND = "send"
    DECISION = "decision"


@dataclass(frozen=True, slots=True)
class Observation:
    """One thing the bot did, as plain strings (``fields`` keys depend on the kind).

    ``send``: ``text``, ``chat``, ``topic``, ``message`` (the sent message's id) and
    ``ephemeral`` (``"true"`` for a Discord message only its interaction's user sees);
    ``decision``: ``action``, ``allowed`` (``"true"``/``"false"``), ``reason``, ``sender``,
    ``scope``.
    """

    kind: ObservationKind
    fields: Mapping[str, str]

    @property
    def message_id(self) -> int:
        """The id of the message the bot sent (a ``send`` observation), e.g. to click it."""
        raw = self.fields.get("message", "")
        if not raw.isdigit():
            raise ValueError(f"{self.describe()} is not a message the bot sent")
        return int(raw)

    def describe(self) -> str:
        """``send(text='hi', chat='-100', topic='7')``."""
        return _describe(self.kind, self.fields)


@dataclass(frozen=True, slots=True)
class Expected:
    """An expectation: the kind, only the fields the test cares about, and where it was declared
    (``file:line``, empty when not declared from code, e.g. by a scenario file)."""

    kind: ObservationKind
    fields: Mapping[str, str]
    where: str = ""

    def mismatches(self, observation: Observation) -> list[str]:
        """Why ``observation`` does not satisfy this expectation (empty: it does)."""
        if observation.kind is not self.kind:
            return [f"kind: expected {self.kind.value}, got {observation.kind.value}"]
        return [
            f"{name}: expected {want!r}, got {observation.fields.get(name, '')!r}"
            for name, want in self.fields.items()
            if observation.fields.get(name, "") != want
        ]

    def describe(self) -> str:
        """``should_deny(reason='no_grant')`` style text."""
        if self.kind is ObservationKind.SEND:
            return "should_" + _describe(self.kind, self.fields)
        allowed = self.fields.get("allowed")
        rest = {k: v for k, v in self.fields.items() if k != "allowed"}
        verb = "should_allow" if allowed == "true" else "should_deny"
        return _describe(verb, rest)

    def declared(self) -> str:
        """``describe()`` followed by where the test declared it, when known."""
        return f"{self.describe()} (declared at {self.where})" if self.where else self.describe()


class ExpectationError(AssertionError):
    """The bot did not do what the test declared, in that order."""


def hide_on_expectation_failure(excinfo: pytest.ExceptionInfo[BaseException] | None) -> bool:
    """pytest's ``__tracebackhide__`` for the kit's modules: when an expectation fails, their
    frames are left out so the failure ends at the test's own line (real errors keep them)."""
    return excinfo is not None and excinfo.errisinstance(ExpectationError)


#: pytest reads this per frame (locals, then module globals): every frame of this module.
__tracebackhide__ = hide_on_expectation_failure


def _describe(name: str, fields: Mapping[str, str]) -> str:
    inner = ", ".join(f"{key}={value!r}" for key, value in fields.items())
    return f"{name}({inner})"


def declared_at() -> str:
    """``file:line`` of the innermost caller outside the testing kit (the test's own line);
    the path is relative to the working directory when it lies below it."""
    frame = inspect.currentframe()
    while frame is not None:  # bounded: the call stack is finite
        path = Path(frame.f_code.co_filename)
        if not path.resolve().is_relative_to(_KIT):
            return f"{_shown(path)}:{frame.f_lineno}"
        frame = frame.f_back
    return ""


def _shown(path: Path) -> str:
    here = Path.cwd()
    return (
        str(path.relative_to(here))
        if path.is_absolute() and path.is_relative_to(here)
        else str(path)
    )


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@dataclass
class Expectations:
    """The declared expectations and the observations of the current event."""

    pending: list[Expected] = field(default_factory=list)
    observed: list[Observation] = field(default_factory=list)
    history: list[Observation] = field(default_factory=list)

    def should_send(
        self,
        *,
        text: str | None = None,
        chat: object = None,
        topic: object = None,
        ephemeral: bool | None = None,
    ) -> None:
        """Expect the bot to send a message (``None`` fields match anything)."""
        wanted = {"text": text, "chat": chat, "topic": topic, "ephemeral": ephemeral}
        self.pending.append(
            Expected(
                ObservationKind.SEND,
                {key: _text(value) for key, value in wanted.items() if value is not None},
                declared_at(),
            )
        )

    def should_allow(
        self, action: str | None = None, *, reason: str | None = None, sender: str | None = None
    ) -> None:
        """Expect a permission check that allows (optionally: this action, reason, sender)."""
        self._decision(True, action, reason, sender)

    def should_deny(
        self, action: str | None = None, *, reason: str | None = None, sender: str | None = None
    ) -> None:
        """Expect a permission check that denies (optionally: this action, reason, sender)."""
        self._decision(False, action, reason, sender)

    def _decision(
        self, allowed: bool, action: str | None, reason: str | None, sender: str | None
    ) -> None:
        wanted = {"allowed": _text(allowed), "action": action, "reason": reason, "sender": sender}
        self.pending.append(
            Expected(
                ObservationKind.DECISION,
                {key: _text(value) for key, value in wanted.items() if value is not None},
                declared_at(),
            )
        )

    def record(self, kind: ObservationKind, **fields: object) -> Observation:
        """Record what the bot just did."""
        observation = Observation(kind, {key: _text(value) for key, value in fields.items()})
        self.observed.append(observation)
        self.history.append(observation)
        return observation

    def record_decision(self, action: str, decision: Decision) -> Observation:
        """Record a permission decision the bot made (for ``should_allow`` / ``should_deny``)."""
        return self.record(
            ObservationKind.DECISION,
            action=action,
            allowed=decision.allowed,
            reason=str(decision.reason),
            sender=decision.sender_id,
            scope=decision.scope,
        )

    def begin(self) -> None:
        """Start a new event: forget the previous event's observations."""
        self.observed = []

    def settle(self, label: str) -> list[Observation]:
        """Check this event's observations against the declared expectations, then clear them
        (``label`` names the event in the failure, e.g. ``step 3 (telegram message by @bob)``)."""
        __tracebackhide__ = True  # pytest: the failure is the test's line, not this one
        expected, observed = self.pending, self.observed
        self.pending = []
        if expected:
            problems = diff(expected, observed)
            if problems:
                raise ExpectationError(f"expectations not met for {label}:\n{problems}")
        return observed

    def pop_unused(self) -> str:
        """What was declared but never met by an event, one line each with where it was
        declared; empty when nothing is left. The declarations are cleared."""
        left, self.pending = self.pending, []
        if not left:
            return ""
        lines = "\n".join(f"  {expected.declared()}" for expected in left)
        return f"expectations declared but no event followed:\n{lines}"

    def verify_done(self) -> None:
        """Fail if expectations were declared but no event came to use them."""
        __tracebackhide__ = True
        problem = self.pop_unused()
        if problem:
            raise ExpectationError(problem)


def diff(expected: list[Expected], observed: list[Observation]) -> str:
    """A line-per-position report of expected vs observed; empty when everything matches."""
    lines: list[str] = []
    failed = False
    for index in range(max(len(expected), len(observed))):
        want = expected[index] if index < len(expected) else None
        got = observed[index] if index < len(observed) else None
        if want is not None and got is not None:
            why = want.mismatches(got)
        else:
            why = ["missing" if got is None else "unexpected"]
        mark = "  " if not why else "! "
        failed = failed or bool(why)
        lines.append(f"{mark}#{index + 1} expected {want.declared() if want else '(nothing)'}")
        lines.append(f"{mark}   actual   {got.describe() if got else '(nothing)'}")
        lines.extend(f"{mark}     {problem}" for problem in why)
    return "\n".join(lines) if failed else ""

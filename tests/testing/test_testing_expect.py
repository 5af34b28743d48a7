"""Expectations: declared before an event, matched in order, a readable diff on failure."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from actorscope.testing._expect import (
    ExpectationError,
    Expectations,
    ObservationKind,
    hide_on_expectation_failure,
)

HERE = Path(__file__).name


def _next_line() -> int:
    """The line number after the caller's current line."""
    frame = inspect.currentframe()
    assert frame is not None
    assert frame.f_back is not None
    return frame.f_back.f_lineno + 1


def test_matching_observations_in_order_pass() -> None:
    """A decision then a send, declared in that order, settle without error."""
    expect = Expectations()
    expect.should_deny("file_writer", reason="no_grant")
    expect.should_send(text="no", chat="-100", topic="7")
    expect.begin()
    expect.record(ObservationKind.DECISION, action="file_writer", allowed=False, reason="no_grant")
    expect.record(ObservationKind.SEND, text="no", chat="-100", topic="7")
    assert len(expect.settle("event")) == 2
    assert expect.pending == []


def test_out_of_order_fails_with_both_sides() -> None:
    """A send observed where a decision was expected fails and names both, position by position."""
    expect = Expectations()
    expect.should_allow("file_writer")
    expect.should_send(text="ok")
    expect.begin()
    expect.record(ObservationKind.SEND, text="ok", chat="1", topic="")
    expect.record(ObservationKind.DECISION, action="file_writer", allowed=True, reason="granted")
    with pytest.raises(ExpectationError) as failure:
        expect.settle("telegram message by alice")
    text = str(failure.value)
    assert text.startswith("expectations not met for telegram message by alice:")
    assert "! #1 expected should_allow(action='file_writer')" in text
    assert "kind: expected decision, got send" in text
    assert "! #2 expected should_send(text='ok')" in text


def test_missing_and_unexpected_are_reported() -> None:
    """Too few observations say 'missing'; extra ones say 'unexpected'."""
    expect = Expectations()
    expect.should_send(text="a")
    expect.should_send(text="b")
    expect.begin()
    expect.record(ObservationKind.SEND, text="a", chat="1", topic="")
    missing = r"(?s)#2 expected should_send\(text='b'\)[^\n]*\n.*missing"
    with pytest.raises(ExpectationError, match=missing):
        expect.settle("e")
    expect.should_send(text="a")
    expect.begin()
    expect.record(ObservationKind.SEND, text="a", chat="1", topic="")
    expect.record(ObservationKind.SEND, text="z", chat="1", topic="")
    with pytest.raises(ExpectationError, match="unexpected"):
        expect.settle("e")


def test_field_mismatch_names_the_field() -> None:
    """A wrong reason is reported as that field, expected against actual."""
    expect = Expectations()
    expect.should_deny(reason="no_grant")
    expect.begin()
    expect.record(ObservationKind.DECISION, action="cron", allowed=False, reason="empty_sender")
    with pytest.raises(ExpectationError, match="reason: expected 'no_grant', got 'empty_sender'"):
        expect.settle("e")


def test_events_without_expectations_are_not_checked() -> None:
    """Observations of an event with nothing declared are returned, not judged."""
    expect = Expectations()
    expect.begin()
    expect.record(ObservationKind.SEND, text="anything", chat="1", topic="")
    assert [o.fields["text"] for o in expect.settle("e")] == ["anything"]


def test_declared_but_unused_expectations_fail() -> None:
    """verify_done fails when expectations were declared and no event consumed them."""
    expect = Expectations()
    expect.should_send(text="never")
    with pytest.raises(ExpectationError, match="no event followed"):
        expect.verify_done()
    expect.verify_done()  # cleared: a second call passes


def test_expectations_remember_the_line_that_declared_them() -> None:
    """Each should_* records the test's own file:line; a mismatch shows it next to the diff."""
    expect = Expectations()
    line = _next_line()
    expect.should_allow("file_writer")
    assert expect.pending[0].where.endswith(f"{HERE}:{line}")
    expect.begin()
    expect.record(ObservationKind.DECISION, action="file_writer", allowed=False, reason="no_grant")
    with pytest.raises(
        ExpectationError,
        match=rf"should_allow\(action='file_writer'\) \(declared at .*{HERE}:{line}\)",
    ):
        expect.settle("step 1 (e)")


def test_unused_expectation_names_its_declaring_line() -> None:
    """An expectation no event met is reported with the file:line that declared it, once."""
    expect = Expectations()
    line = _next_line()
    expect.should_send(text="never")
    problem = expect.pop_unused()
    assert problem.startswith("expectations declared but no event followed:")
    assert f"should_send(text='never') (declared at tests/testing/{HERE}:{line})" in problem
    assert expect.pop_unused() == ""


def test_kit_frames_are_hidden_only_for_expectation_failures() -> None:
    """The kit hides its frames for a failed expectation, never for a real error."""
    with pytest.raises(ExpectationError) as failed:
        raise ExpectationError("not met")
    with pytest.raises(ValueError, match="bug") as broken:
        raise ValueError("a bug in the kit")
    assert hide_on_expectation_failure(failed)
    assert not hide_on_expectation_failure(broken)
    assert not hide_on_expectation_failure(None)

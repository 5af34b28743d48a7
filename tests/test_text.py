"""Text no store can hold (issue 13 item 2): how it is found and how it is written down."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from actorscope._text import escape_unstorable, has_lone_surrogate, has_unstorable


@pytest.mark.parametrize(
    ("text", "unstorable"),
    [("42", False), ("caf\u00e9", False), ("\u200b", False), ("tab\there", True), ("4\x002", True),
     ("\x7f", True), ("\x85", True), ("\x9f", True), ("\xa0", False), ("\ud800", True),
     ("\U0001f600", False)],
)  # fmt: skip
def test_has_unstorable(text: str, unstorable: bool) -> None:
    """Control characters (C0, DEL, C1) and lone surrogates are unstorable; the rest is fine."""
    assert has_unstorable(text) is unstorable
    assert has_lone_surrogate(text) is ("\ud800" in text)


@given(st.text(max_size=40))
def test_escaped_text_is_always_storable(text: str) -> None:
    """Property: escape_unstorable leaves nothing a store refuses, and storable text unchanged."""
    escaped = escape_unstorable(text)
    assert not has_unstorable(escaped)
    escaped.encode("utf-8")  # a lone surrogate would raise here
    if not has_unstorable(text):
        assert escaped == text


@pytest.mark.parametrize(
    ("text", "escaped"),
    [("4\x002", "4\\x002"), ("\ud800x", "\\ud800x"), ("a\x1b\x7f\x85", "a\\x1b\\x7f\\x85"),
     ("caf\u00e9 \u200b", "caf\u00e9 \u200b")],
)  # fmt: skip
def test_escape_unstorable_writes_python_escapes(text: str, escaped: str) -> None:
    """NUL, controls and lone surrogates become ``\\x00``/``\\ud800``; other text stays."""
    assert escape_unstorable(text) == escaped

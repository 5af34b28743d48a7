"""resolve_agent_identity: the tool-boundary rules for agent_id / agent."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from actorscope.tools._identity_args import IdentityValidationError, resolve_agent_identity

INVALID: list[Any] = [None, 0, True, {}, [], "", " \t\r\n", "\u2003\u00a0", "\u200b", 1.5]
VALID = ["__shared__", "proyecto-東京-🧠", " project ", "project"]
SPELLINGS = ["agent_id", "agent"]


def _other(field: str) -> str:
    return "agent" if field == "agent_id" else "agent_id"


@pytest.mark.parametrize("field", SPELLINGS)
@pytest.mark.parametrize("value", INVALID, ids=repr)
def test_invalid_value_alone_fails_naming_the_field(field: str, value: Any) -> None:
    """An invalid value in either spelling is an error that names that spelling."""
    with pytest.raises(IdentityValidationError) as info:
        resolve_agent_identity({field: value})
    assert info.value.field == field
    assert field in str(info.value)


@pytest.mark.parametrize("field", SPELLINGS)
@pytest.mark.parametrize("value", INVALID, ids=repr)
def test_invalid_value_beside_valid_other_spelling_still_fails(field: str, value: Any) -> None:
    """A valid other spelling never rescues an invalid one: no fallback."""
    with pytest.raises(IdentityValidationError) as info:
        resolve_agent_identity({field: value, _other(field): "project"})
    assert info.value.field == field


@pytest.mark.parametrize("field", SPELLINGS)
@pytest.mark.parametrize("value", VALID)
def test_valid_value_is_returned_byte_for_byte(field: str, value: str) -> None:
    """Valid values come back exactly as given, without trimming or normalising."""
    result = resolve_agent_identity({field: value})
    assert result == value
    assert result.encode() == value.encode()


def test_neither_spelling_is_an_error() -> None:
    """At least one of agent_id / agent is required."""
    with pytest.raises(IdentityValidationError, match="agent_id is required"):
        resolve_agent_identity({"text": "hello"})


def test_canonical_wins_when_both_are_valid_even_if_they_differ() -> None:
    """agent_id takes precedence over the deprecated alias."""
    assert resolve_agent_identity({"agent_id": "alpha", "agent": "beta"}) == "alpha"


def test_alias_alone_is_accepted() -> None:
    """The deprecated alias still works on its own."""
    assert resolve_agent_identity({"agent": "beta"}) == "beta"


def test_non_mapping_arguments_are_rejected() -> None:
    """Arguments that are not an object are a clean identity error."""
    with pytest.raises(IdentityValidationError):
        resolve_agent_identity(["agent_id", "x"])  # type: ignore[arg-type]


def test_working_directory_is_never_consulted(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing is derived from the working directory when identity is missing."""
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    with pytest.raises(IdentityValidationError):
        resolve_agent_identity({})


@given(st.text(min_size=1))
def test_any_text_with_a_visible_character_round_trips(value: str) -> None:
    """Any string with a visible, non-space character is returned unchanged."""
    assume(any(ch.isprintable() and not ch.isspace() for ch in value))
    assert resolve_agent_identity({"agent_id": value}) == value

"""Id types: batch UUID validation and telemetry's nullable agent id."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from actorscope._input import NIL_UUID, InvalidUUIDError
from actorscope.agents._types import uuid_or_null, validate_uuids


def test_validate_uuids_returns_canonical_values() -> None:
    """A valid batch comes back canonical (lower case), in order."""
    values = [str(uuid.uuid4()) for _ in range(3)]
    assert validate_uuids([values[0].upper(), values[1], values[2]], "grant agent") == values
    assert validate_uuids([], "grant agent") == []


def test_validate_uuids_stops_at_the_first_bad_value() -> None:
    """The error names the first bad row's position and what the ids are."""
    good = str(uuid.uuid4())
    with pytest.raises(InvalidUUIDError, match=r"grant agent #1 must be a UUID, got 'bot'"):
        validate_uuids([good, "bot", None], "grant agent")


def test_validate_uuids_consumes_a_generator_lazily_up_to_the_bad_one() -> None:
    """It accepts any iterable and stops reading at the first bad value."""
    seen: list[int] = []

    def values() -> Iterator[str]:
        for i in range(10):
            seen.append(i)
            yield str(uuid.uuid4()) if i != 2 else "x"

    with pytest.raises(InvalidUUIDError, match="#2"):
        validate_uuids(values(), "id")
    assert seen == [0, 1, 2]


@pytest.mark.parametrize("empty", [None, "", NIL_UUID])
def test_uuid_or_null_maps_nothing_to_none(empty: object) -> None:
    """None, the empty string and the nil UUID are stored as NULL."""
    assert uuid_or_null(empty) is None


def test_uuid_or_null_keeps_real_uuids_and_refuses_garbage() -> None:
    """A UUID is stored canonical; a non-UUID is an error, not a dangling value."""
    value = str(uuid.uuid4())
    assert uuid_or_null(value.upper(), "audit agent") == value
    with pytest.raises(InvalidUUIDError, match="audit agent"):
        uuid_or_null("bot", "audit agent")

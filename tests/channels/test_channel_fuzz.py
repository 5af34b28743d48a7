"""Mutated platform payloads never raise out of an adapter and never mis-assign identity."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from actorscope.channels.base import ADAPTER_METADATA_KEYS, Ingress
from actorscope.channels.discord import inspect_dispatch
from actorscope.channels.telegram import inspect_update
from actorscope.identity import (
    PeerKind,
    SenderKind,
    is_group_scope,
    is_placeholder_sender,
    is_synthetic_sender,
)

FIXTURES = Path(__file__).parent.parent / "fixtures"


def _load(platform: str) -> list[dict[str, Any]]:
    return [json.loads(path.read_text()) for path in sorted((FIXTURES / platform).glob("*.json"))]


TELEGRAM = _load("telegram")
DISCORD = [payload for payload in _load("discord") if payload.get("t") != "GUILD_CREATE"]

Path_ = tuple[str | int, ...]


def _paths(value: Any, prefix: Path_ = ()) -> list[Path_]:
    """Every key/index path inside a JSON value (bounded by the fixture's size)."""
    found: list[Path_] = []
    if isinstance(value, dict):
        items: list[tuple[str | int, Any]] = list(value.items())
    elif isinstance(value, list):
        items = list(enumerate(value))
    else:
        return found
    for key, item in items:
        found.append((*prefix, key))
        found.extend(_paths(item, (*prefix, key)))
    return found


REPLACEMENTS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, 1, 777000, 1087968824, 136817688, -1, 2**64]),
    st.floats(allow_nan=True),
    st.text(max_size=12),
    st.sampled_from(["subagent:1", "1087968824", "group:telegram:1", "private", "supergroup"]),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
)


@st.composite
def mutated(draw: st.DrawFn, payloads: list[dict[str, Any]]) -> dict[str, Any]:
    """A fixture with one to three fields dropped or given a value of another type."""
    payload: dict[str, Any] = copy.deepcopy(draw(st.sampled_from(payloads)))
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        paths = _paths(payload)
        if not paths:
            break
        path = paths[draw(st.integers(min_value=0, max_value=len(paths) - 1))]
        parent: Any = payload
        for key in path[:-1]:
            parent = parent[key]
        if draw(st.booleans()):
            del parent[path[-1]]
        else:
            parent[path[-1]] = draw(REPLACEMENTS)
    return payload


def check(ingress: Ingress) -> None:
    """The identity invariants every adapter result must keep."""
    message = ingress.message
    if message is None:
        assert ingress.reason is not None
        return
    sender = message.sender_id
    assert not is_placeholder_sender(sender)
    assert not is_synthetic_sender(sender)
    assert sender == "" or sender.isdigit()
    if message.sender_kind is not SenderKind.USER:
        assert sender == ""
    if is_group_scope(message.user_id):
        assert message.peer_kind is PeerKind.GROUP
        assert message.sender_kind is SenderKind.USER or sender == ""
    else:
        assert message.peer_kind is PeerKind.DIRECT
        assert sender
        assert message.user_id == sender
    assert set(message.metadata) <= ADAPTER_METADATA_KEYS


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(payload=mutated(TELEGRAM), ignore_bots=st.booleans())
def test_mutated_telegram_updates(payload: dict[str, Any], ignore_bots: bool) -> None:
    """A mutated Update is normalised or ignored, never raised, and keeps the invariants."""
    check(inspect_update(payload, bot_username="actorscope_bot", ignore_bots=ignore_bots))


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(payload=mutated(DISCORD), ignore_bots=st.booleans())
def test_mutated_discord_dispatches(payload: dict[str, Any], ignore_bots: bool) -> None:
    """A mutated gateway dispatch is normalised or ignored, never raised, invariants kept."""
    check(inspect_dispatch(payload, bot_id=81234567890000001, ignore_bots=ignore_bots))


def test_unmutated_fixtures_keep_the_invariants() -> None:
    """The fixtures themselves (with non-person senders opted in) satisfy the same checks."""
    for payload in TELEGRAM:
        check(inspect_update(payload, ignore_bots=False))
    for payload in DISCORD:
        check(inspect_dispatch(payload, ignore_bots=False))

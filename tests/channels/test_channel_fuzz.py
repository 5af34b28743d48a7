"""Mutated platform payloads never raise out of an adapter and never mis-assign identity."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from actorscope.channels._base import ADAPTER_METADATA_KEYS, Ingress
from actorscope.channels._config import ChannelConfig
from actorscope.channels._policy import admit
from actorscope.channels.discord._normalize import inspect_dispatch
from actorscope.channels.telegram._normalize import inspect_update
from actorscope.identity import PeerKind, Scope, SenderKind, _is_canonical_platform_id
from actorscope.messages import InboundMessage

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
    assert not SenderKind.is_placeholder(sender)
    assert not SenderKind.is_synthetic(sender)
    assert sender == "" or _is_canonical_platform_id(sender), sender
    if message.sender_kind is not SenderKind.USER:
        assert sender == ""
    if Scope.is_group_id(message.user_id):
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


# Type mutation: a field keeps its place but changes its JSON type or spelling.
LOOKALIKES = st.sampled_from(
    [
        True, False, 1, 0, None, "true", "false", "1", "0", "",
        "042", "+42", "-42", " 42", "42\u200b", "\uff14\uff12", "\u0664\u0662", "4_2", "4e2",
        42.0, 2**63, 2**64, -(2**64), 10**30, [], {}, [1], {"id": 1},
    ]
)  # fmt: skip


@st.composite
def retyped(draw: st.DrawFn, value: Any) -> Any:
    """``value`` in another JSON type or spelling (a string of an int, an int of a string...)."""
    variants: list[Any] = [[value], {"value": value}, None]
    if isinstance(value, bool):
        variants += [int(value), str(value).lower(), not value]
    elif isinstance(value, int):
        variants += [str(value), -value, value + 2**64, float(value), value == 0]
    elif isinstance(value, str):
        variants += [len(value), value.upper(), f"0{value}", f"{value}\u200b"]
        if value.lstrip("-").isdigit():
            variants.append(int(value))
    return draw(st.one_of(st.sampled_from(variants), LOOKALIKES))


# The keys that say "no person": raising them must never leave a USER result.
FLAG_KEYS = frozenset({"is_bot", "bot", "system"})


@st.composite
def type_mutated(draw: st.DrawFn, payloads: list[dict[str, Any]]) -> dict[str, Any]:
    """A fixture with one to four fields retyped (flag fields twice as likely)."""
    payload: dict[str, Any] = copy.deepcopy(draw(st.sampled_from(payloads)))
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        paths = _paths(payload)
        if not paths:
            break
        flags = [path for path in paths if path[-1] in FLAG_KEYS]
        favour_flags: bool = draw(st.booleans())
        pool = flags if flags and favour_flags else paths
        path = pool[draw(st.integers(min_value=0, max_value=len(pool) - 1))]
        parent: Any = payload
        for key in path[:-1]:
            parent = parent[key]
        # A copy: the sampled lists and objects are shared by every example.
        parent[path[-1]] = copy.deepcopy(draw(retyped(parent[path[-1]])))
    return payload


def _clear(actor: Any, *keys: str) -> bool:
    """True iff ``actor`` is a JSON object whose flags ``keys`` are absent or exactly false."""
    return isinstance(actor, dict) and all(actor.get(key, False) is False for key in keys)


def _telegram_actor(update: dict[str, Any]) -> Any:
    """The ``from`` of the event the adapter reads first (PTB's order), or ``None``."""
    for event in ("message", "edited_message", "channel_post", "edited_channel_post"):
        if update.get(event) is not None:
            body = update[event]
            return body.get("from") if isinstance(body, dict) else None
    query = update.get("callback_query")
    return query.get("from") if isinstance(query, dict) else None


def _discord_actors(dispatch: dict[str, Any]) -> list[Any]:
    """Every object the adapter could take the actor from (author, member.user, user)."""
    data = dispatch.get("d") if "d" in dispatch and "op" in dispatch else dispatch
    if not isinstance(data, dict):
        return []
    if "author" in data:
        return [data["author"]]
    member = data.get("member")
    found = [member.get("user")] if isinstance(member, dict) and "user" in member else []
    return found + ([data["user"]] if "user" in data else [])


def _canonical(sender: str) -> bool:
    """A canonical positive ASCII integer below 2**64: no sign, leading zero or other digit."""
    return _is_canonical_platform_id(sender) and int(sender) < 2**64


def check_person(message: InboundMessage | None, actors: list[Any], flags: tuple[str, ...]) -> None:
    """A USER result has a canonical sender that is the payload's actor, whose flags are clear."""
    if message is None or message.sender_kind is not SenderKind.USER:
        return
    assert _canonical(message.sender_id), message.sender_id
    assert actors, "a person without an actor object in the payload"
    assert all(_clear(actor, *flags) for actor in actors), actors
    assert any(str(actor.get("id")) == message.sender_id for actor in actors), actors


def check_admit(message: InboundMessage | None) -> None:
    """admit() decides on whatever the adapter produced, with either platform's defaults."""
    if message is None:
        return
    for config in (
        ChannelConfig(platform="telegram", require_mention=False),
        ChannelConfig(platform="discord", require_mention=False),
    ):
        decision = admit(message, config, bot_username="actorscope_bot", bot_id="81234567890000001")
        assert decision.admitted or decision.reason is not None


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(payload=type_mutated(TELEGRAM), ignore_bots=st.booleans())
def test_type_mutated_telegram_updates(payload: dict[str, Any], ignore_bots: bool) -> None:
    """Retyped Update fields: nothing raises, and a person is a canonical, unflagged ``from``."""
    ingress = inspect_update(payload, bot_username="actorscope_bot", ignore_bots=ignore_bots)
    check(ingress)
    check_person(ingress.message, [_telegram_actor(payload)], ("is_bot",))
    check_admit(ingress.message)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(payload=type_mutated(DISCORD), ignore_bots=st.booleans())
def test_type_mutated_discord_dispatches(payload: dict[str, Any], ignore_bots: bool) -> None:
    """Retyped dispatch fields: nothing raises, and a person is canonical with clear flags."""
    ingress = inspect_dispatch(payload, bot_id=81234567890000001, ignore_bots=ignore_bots)
    check(ingress)
    check_person(ingress.message, _discord_actors(payload), ("bot", "system"))
    check_admit(ingress.message)

"""The replay guard: one attribution per signed carrier, bounded memory, expiry, thread safety."""

from __future__ import annotations

import logging
import threading

import pytest

from actorscope.context import bind_identity
from actorscope.errors import ConfigError
from actorscope.identity import Identity, SenderKind
from actorscope.messages import InboundMessage
from actorscope.propagation import (
    OriginSigner,
    spawn_subagent,
)
from actorscope.propagation._keys import META_ORIGIN_SIGNATURE
from actorscope.propagation._origin import MIN_KEY_BYTES, verified_origin
from actorscope.propagation._replay import DEFAULT_REPLAY_CAPACITY, ReplayGuard

KEY = b"r" * MIN_KEY_BYTES
NOW = 1_800_000_000.0


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> float:
        return self.now


def signed_carriers(signer: OriginSigner, count: int = 1) -> list[InboundMessage]:
    """``count`` distinct signed announces from member 42 of group -100200."""
    with bind_identity(Identity.chat("telegram", -100200, 42, group=True)):
        task = spawn_subagent("work", signer=signer)
    return [task.announce(f"part {i}", signer=signer) for i in range(count)]


def test_guard_accepts_a_signature_once() -> None:
    """The first use of a signature is accepted, every later one within its life refused."""
    guard = ReplayGuard()
    assert guard.first_use("a" * 64, expires_ms=2_000, now_ms=1_000)
    assert not guard.first_use("a" * 64, expires_ms=2_000, now_ms=1_500)
    assert guard.first_use("b" * 64, expires_ms=2_000, now_ms=1_500)
    assert len(guard) == 2


def test_guard_drops_entries_once_they_expire_in_any_order() -> None:
    """Entries go when their own expiry passes, even when they arrived out of expiry order."""
    guard = ReplayGuard()
    assert guard.first_use("late", expires_ms=9_000, now_ms=0)
    assert guard.first_use("early", expires_ms=3_000, now_ms=0)
    assert guard.first_use("x", expires_ms=9_000, now_ms=3_000)  # 3_000 is still live
    assert len(guard) == 3
    assert guard.first_use("y", expires_ms=9_000, now_ms=3_001)
    assert len(guard) == 3  # "early" evicted, "y" added
    assert guard.first_use("early", expires_ms=9_000, now_ms=3_001)
    assert guard.first_use("z", expires_ms=20_000, now_ms=9_001)
    assert len(guard) == 1


def test_full_guard_refuses_new_signatures_and_warns_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """At capacity new signatures are refused (fail closed), with one warning, until some expire."""
    guard = ReplayGuard(capacity=2)
    assert guard.first_use("a", expires_ms=5_000, now_ms=0)
    assert guard.first_use("b", expires_ms=6_000, now_ms=0)
    with caplog.at_level(logging.WARNING, logger="actorscope.propagation"):
        assert not guard.first_use("c", expires_ms=6_000, now_ms=1)
        assert not guard.first_use("d", expires_ms=6_000, now_ms=2)
    assert [r.getMessage() for r in caplog.records if "replay guard full" in r.getMessage()] != []
    assert len(caplog.records) == 1
    assert len(guard) == 2
    assert guard.first_use("c", expires_ms=9_000, now_ms=5_001)
    assert not guard.first_use("b", expires_ms=6_000, now_ms=5_001)


@pytest.mark.parametrize("capacity", [0, -1, 1.5, "10", True])
def test_bad_capacity_is_a_config_error(capacity: object) -> None:
    """A capacity that is not a positive integer raises ConfigError naming it."""
    with pytest.raises(ConfigError, match="replay capacity"):
        ReplayGuard(capacity)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="replay capacity"):
        OriginSigner(replay_capacity=capacity)  # type: ignore[arg-type]


def test_default_capacity() -> None:
    """A guard holds DEFAULT_REPLAY_CAPACITY live signatures unless told otherwise."""
    assert ReplayGuard().capacity == DEFAULT_REPLAY_CAPACITY


def test_concurrent_first_uses_of_one_signature_let_exactly_one_through() -> None:
    """Threads racing on one signature: exactly one wins."""
    guard = ReplayGuard()
    barrier = threading.Barrier(8)
    wins: list[bool] = []

    def race() -> None:
        barrier.wait(timeout=10)
        wins.append(guard.first_use("same", expires_ms=10, now_ms=0))

    threads = [threading.Thread(target=race) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert sorted(wins) == [False] * 7 + [True]


def test_consuming_verify_gives_the_origin_once() -> None:
    """verify(consume=True) returns the origin once; plain verify never consumes nor is blocked."""
    signer = OriginSigner(KEY)
    [carrier] = signed_carriers(signer)
    assert signer.verify(carrier) is not None
    assert signer.verify(carrier) is not None
    assert signer.verify(carrier, consume=True) is not None
    assert signer.verify(carrier, consume=True) is None
    assert signer.verify(carrier) is not None


def test_forged_signatures_never_take_a_slot() -> None:
    """Carriers that fail verification are not recorded: they cannot fill the guard."""
    signer = OriginSigner(KEY, replay_capacity=1)
    [carrier] = signed_carriers(signer)
    for digit in "0123456789":
        forged = InboundMessage.model_validate(
            {**carrier.model_dump(), "metadata": {
                **carrier.metadata, META_ORIGIN_SIGNATURE: digit * 64,
            }}
        )  # fmt: skip
        assert signer.verify(forged, consume=True) is None
    assert signer.verify(carrier, consume=True) is not None


def test_run_request_attributes_a_carrier_once_by_default() -> None:
    """The default build consumes: a second delivery, even after a JSON hop, stays synthetic."""
    signer = OriginSigner(KEY)
    [carrier] = signed_carriers(signer)
    first = signer.run_request(carrier)
    hopped = InboundMessage.model_validate_json(carrier.model_dump_json())
    again = signer.run_request(hopped)
    assert first.sender_id == "42"
    assert again.sender_id == carrier.sender_id
    assert (again.sender_kind, again.role, again.user_id) == (
        SenderKind.SYNTHETIC, "", carrier.user_id,
    )  # fmt: skip


def test_build_without_consuming_is_repeatable_and_leaves_the_origin_unspent() -> None:
    """consume=False verifies every time and does not spend the origin for the real run."""
    signer = OriginSigner(KEY)
    [carrier] = signed_carriers(signer)
    for _ in range(3):
        assert signer.run_request(carrier, consume=False).sender_id == "42"
    assert verified_origin(carrier, signer, consume=False) is not None
    assert signer.run_request(carrier).sender_id == "42"
    assert signer.run_request(carrier).sender_id != "42"
    assert verified_origin(carrier, signer) is None


def test_distinct_carriers_of_one_chain_are_each_attributed() -> None:
    """Different signed carriers (another text, another timestamp) are not replays of each other."""
    clock = Clock()
    signer = OriginSigner(KEY, clock=clock)
    carriers = signed_carriers(signer, 3)
    clock.now += 1
    carriers += signed_carriers(signer)
    assert [signer.run_request(c).sender_id for c in carriers] == ["42"] * 4


def test_replay_after_max_age_is_refused_by_age_and_forgotten() -> None:
    """Once a consumed signature is past max_age the age check refuses it; the guard let it go."""
    clock = Clock()
    signer = OriginSigner(KEY, clock=clock, max_age=60, replay_capacity=1)
    [old] = signed_carriers(signer)
    assert signer.run_request(old).sender_id == "42"
    clock.now += 61
    [fresh] = signed_carriers(signer)
    # capacity 1: the fresh one is accepted only because the expired entry was evicted.
    assert signer.run_request(fresh).sender_id == "42"
    assert signer.run_request(old).sender_id != "42"


def test_guard_is_per_signer() -> None:
    """Two signers with one key keep separate records (as two processes would): documented."""
    first, second = OriginSigner(KEY), OriginSigner(KEY)
    [carrier] = signed_carriers(first)
    assert first.run_request(carrier).sender_id == "42"
    assert second.run_request(carrier).sender_id == "42"
    assert second.run_request(carrier).sender_id != "42"


def test_exact_replay_of_a_spawned_task_is_not_honoured_twice() -> None:
    """docs/design.md: a replayed origin is ignored; a signed task carrier attributes only once."""
    signer = OriginSigner()
    with bind_identity(Identity.chat("telegram", -100200, 42, group=True)):
        message = spawn_subagent("summarise the thread", signer=signer).message
    first = signer.run_request(message)
    again = signer.run_request(message)
    assert (first.sender_id, again.sender_id) == ("42", message.sender_id)
    assert again.sender_kind is SenderKind.SYNTHETIC

"""The bound identity: bind_identity() and the *_from_context() helpers."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from actorscope.context import (
    bind_identity,
    current_identity,
    sender_id_from_context,
    user_id_from_context,
)
from actorscope.identity import Identity, PeerKind

GROUP = Identity(
    user_id="group:telegram:-100",
    sender_id="4242",
    channel="telegram",
    chat_id="-100",
    peer_kind=PeerKind.GROUP,
    role="admin",
    tenant_id="tenant-uuid",
    agent_id="agent-uuid",
)
DIRECT = Identity(user_id="5151", sender_id="5151", channel="telegram", chat_id="5151")


def _snapshot() -> tuple[str, str, str, str]:
    identity = current_identity()
    return (
        user_id_from_context(),
        sender_id_from_context(),
        identity.actor_id if identity is not None else "",
        identity.role if identity is not None else "",
    )


def test_helpers_return_empty_when_nothing_is_bound() -> None:
    """Every helper returns "" and current_identity() None outside any binding."""
    assert current_identity() is None
    assert _snapshot() == ("", "", "", "")


def test_bind_identity_sets_every_helper() -> None:
    """Inside bind_identity the helpers read the bound identity's fields."""
    with bind_identity(GROUP) as bound:
        assert bound is GROUP
        assert current_identity() is GROUP
        assert _snapshot() == (
            "group:telegram:-100",
            "4242",
            "4242",
            "admin",
        )
    assert current_identity() is None


def test_bound_actor_id_falls_back_to_scope() -> None:
    """The bound identity's actor_id is the scope when its sender is empty."""
    with bind_identity(Identity(user_id="api-user", sender_id="")):
        assert sender_id_from_context() == ""
        bound = current_identity()
        assert bound is not None
        assert bound.actor_id == "api-user"


def test_nested_binds_restore_the_outer_identity() -> None:
    """A nested bind shadows the outer one and restores it on exit."""
    with bind_identity(GROUP):
        with bind_identity(DIRECT):
            assert current_identity() is DIRECT
            assert sender_id_from_context() == "5151"
        assert current_identity() is GROUP
        assert sender_id_from_context() == "4242"
    assert current_identity() is None


def _fail_while_bound(identity: Identity) -> None:
    with bind_identity(identity):
        assert current_identity() is identity
        raise RuntimeError("boom")


def test_binding_resets_after_an_exception() -> None:
    """An exception raised in the with-body propagates and the previous binding returns."""
    with bind_identity(DIRECT):
        with pytest.raises(RuntimeError, match="boom"):
            _fail_while_bound(GROUP)
        assert current_identity() is DIRECT
    assert current_identity() is None


@pytest.mark.parametrize("bad", [None, "4242", {"user_id": "1", "sender_id": "1"}, 42])
def test_bind_identity_rejects_a_non_identity(bad: Any) -> None:
    """bind_identity raises TypeError for anything that is not an Identity."""
    with pytest.raises(TypeError, match="Identity"), bind_identity(bad):
        pass
    assert current_identity() is None


async def test_bind_identity_works_in_a_coroutine_across_awaits() -> None:
    """A binding inside a coroutine survives awaits in the same task."""
    with bind_identity(GROUP):
        await asyncio.sleep(0)
        assert sender_id_from_context() == "4242"
    assert current_identity() is None


async def test_task_created_inside_the_block_inherits_the_identity() -> None:
    """An asyncio task created inside bind_identity sees the bound identity, even after exit."""
    leave = asyncio.Event()

    async def child() -> tuple[Identity | None, str]:
        await leave.wait()
        return current_identity(), sender_id_from_context()

    with bind_identity(GROUP):
        task = asyncio.create_task(child())
    leave.set()
    assert await task == (GROUP, "4242")
    assert current_identity() is None


async def test_task_created_outside_the_block_does_not_see_it() -> None:
    """A task created before bind_identity never sees the later binding."""
    bound = asyncio.Event()
    checked = asyncio.Event()

    async def child() -> Identity | None:
        await bound.wait()
        seen = current_identity()
        checked.set()
        return seen

    task = asyncio.create_task(child())
    with bind_identity(GROUP):
        bound.set()
        await checked.wait()
        assert current_identity() is GROUP
    assert await task is None


async def test_binding_inside_a_task_does_not_leak_to_the_parent() -> None:
    """A child task's own binding never reaches the task that created it."""

    async def child() -> str:
        with bind_identity(DIRECT):
            await asyncio.sleep(0)
            return sender_id_from_context()

    with bind_identity(GROUP):
        assert await asyncio.create_task(child()) == "5151"
        assert sender_id_from_context() == "4242"


async def test_concurrent_tasks_each_see_only_their_own_identity() -> None:
    """100 concurrent tasks, each bound to its own identity, only ever see their own sender."""
    start = asyncio.Event()

    async def worker(n: int) -> list[str]:
        identity = Identity(user_id=f"group:telegram:-{n + 1}", sender_id=str(1000 + n))
        seen: list[str] = []
        with bind_identity(identity):
            await start.wait()
            for _ in range(5):
                await asyncio.sleep(0)
                seen.append(sender_id_from_context())
                assert current_identity() is identity
        seen.append(sender_id_from_context())
        return seen

    tasks = [asyncio.create_task(worker(n)) for n in range(100)]
    await asyncio.sleep(0)
    start.set()
    results = await asyncio.gather(*tasks)
    for n, seen in enumerate(results):
        assert seen == [str(1000 + n)] * 5 + [""]
    assert current_identity() is None

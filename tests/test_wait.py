"""The tests' one bounded poll: it returns once the condition holds and fails when it never does."""

from __future__ import annotations

import asyncio

import pytest
from tests._wait import wait_until


async def test_wait_until_returns_once_another_task_makes_the_condition_hold() -> None:
    """A condition another task sets is seen, plain or async: the wait returns, no timeout."""
    done = asyncio.Event()
    asyncio.get_running_loop().call_soon(done.set)
    await wait_until(done.is_set)
    assert done.is_set()
    later = asyncio.Event()
    asyncio.get_running_loop().call_later(0.05, later.set)

    async def later_is_set() -> bool:
        return later.is_set()

    await wait_until(later_is_set)
    assert later.is_set()


async def test_wait_until_raises_timeout_when_the_condition_never_holds() -> None:
    """A condition that never holds ends the wait with TimeoutError after ``seconds``."""
    with pytest.raises(TimeoutError):
        await wait_until(lambda: False, seconds=0.05)

    async def never() -> bool:
        return False

    with pytest.raises(TimeoutError):
        await wait_until(never, seconds=0.05)

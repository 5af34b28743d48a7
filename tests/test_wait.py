"""The tests' one bounded poll: it returns once the condition holds and fails when it never does."""

from __future__ import annotations

import asyncio

import pytest
from tests._wait import wait_until


async def test_wait_until_returns_once_another_task_makes_the_condition_hold() -> None:
    """A condition another task sets is seen: the wait returns instead of timing out."""
    done = asyncio.Event()
    asyncio.get_running_loop().call_soon(done.set)
    await wait_until(done.is_set)
    assert done.is_set()


async def test_wait_until_raises_timeout_when_the_condition_never_holds() -> None:
    """A condition that never holds ends the wait with TimeoutError after ``seconds``."""
    with pytest.raises(TimeoutError):
        await wait_until(lambda: False, seconds=0.05)

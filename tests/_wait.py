"""One bounded poll for tests: wait until a condition holds, fail when it never does."""

from __future__ import annotations

import asyncio
from collections.abc import Callable


async def wait_until(predicate: Callable[[], bool], seconds: float = 5.0) -> None:
    """Poll ``predicate`` every 10 ms until it holds; ``TimeoutError`` after ``seconds``.

    For state that changes in another task (a bot's runner, a server): wait for the marker
    itself, never sleep and then assert.
    """
    async with asyncio.timeout(seconds):
        while not predicate():  # noqa: ASYNC110 - the state changes in another task's code
            await asyncio.sleep(0.01)

"""One bounded poll for tests: wait until a condition holds, fail when it never does."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable


async def wait_until(
    predicate: Callable[[], bool] | Callable[[], Awaitable[bool]], seconds: float = 5.0
) -> None:
    """Poll ``predicate`` every 10 ms until it holds; ``TimeoutError`` after ``seconds``.

    For state that changes in another task (a bot's runner, a server) or another process (a
    row in the database: ``predicate`` may be async): wait for the marker itself, never sleep
    and then assert.
    """
    async with asyncio.timeout(seconds):
        while not await _holds(predicate):  # noqa: ASYNC110 - the state changes elsewhere
            await asyncio.sleep(0.01)


async def _holds(predicate: Callable[[], bool] | Callable[[], Awaitable[bool]]) -> bool:
    answer = predicate()
    return await answer if inspect.isawaitable(answer) else answer

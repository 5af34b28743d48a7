"""Point discord.py at a :class:`~actorscope.sandbox.DiscordEmulator` (it has no base-URL option).

discord.py reads two class attributes when it talks to Discord, and nothing else:

- ``discord.http.Route.BASE`` — the REST base (``https://discord.com/api/v10``), read each time
  a ``Route`` is built (every REST call, interaction callbacks and follow-ups included);
- ``discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY`` — the gateway a ``discord.Client``
  opens (an ``AutoShardedClient`` asks ``GET /gateway/bot``, which the emulator answers with
  its own URL; resumes use READY's ``resume_gateway_url``, also the emulator's).

:func:`discord_pointed_at` sets both for the duration of a ``with`` block and restores the
previous values on exit. They are process-wide: one emulator at a time per process. The
setting itself is :func:`~actorscope.sandbox._bootstrap.sitecustomize.point`, which also
points a bot's own process at the sandbox when it starts (it imports nothing of actorscope and
loads discord.py only when called, so the testing kit's plugin still loads no discord.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from actorscope.sandbox._bootstrap.sitecustomize import point, restore

if TYPE_CHECKING:
    from actorscope.sandbox._emulator import DiscordEmulator

__all__ = ["discord_pointed_at"]


@contextmanager
def discord_pointed_at(emulator: DiscordEmulator) -> Iterator[DiscordEmulator]:
    """Within the block, every discord.py client in this process talks to ``emulator``.

    The emulator must be running (its port is read on entry). Nothing in the bot changes:
    log in with ``emulator.world.token`` as with a real token. (A bot in its own process is
    pointed the same way at startup: ``actorscope sandbox --platform discord -- CMD``.)
    """
    previous = point(emulator.api_url, emulator.gateway_url)
    try:
        yield emulator
    finally:
        restore(previous)

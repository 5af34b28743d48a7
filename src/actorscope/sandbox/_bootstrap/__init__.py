"""What a bot's own process runs at startup to talk to the sandbox (see ``sitecustomize``).

This folder goes first on the bot process's ``PYTHONPATH``; nothing imports it as a package
but :mod:`actorscope.sandbox._connect`, for :func:`~.sitecustomize.point`.
"""

from __future__ import annotations

__all__: list[str] = []

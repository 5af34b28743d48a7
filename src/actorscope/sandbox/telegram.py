"""Telegram's sandbox, where Telegram's platform contract names it (``Platform.sandbox``:
``actorscope.sandbox.telegram:SANDBOX``).

:data:`SANDBOX` is a :class:`~actorscope.sandbox.Sandbox`: the Bot API emulator on
127.0.0.1, populated, with its console, for ``actorscope run --sandbox`` and ``actorscope
sandbox``, which load it through the contract (:func:`~actorscope.sandbox.platform_sandbox`).
"""

from actorscope.sandbox._telegram.sandbox import SANDBOX

__all__ = ["SANDBOX"]

"""Discord's sandbox, where Discord's platform contract names it (``Platform.sandbox``:
``actorscope.sandbox.discord:SANDBOX``).

:data:`SANDBOX` is a :class:`~actorscope.sandbox.Sandbox`: the gateway + REST emulator on
127.0.0.1, populated with the sandbox world, with its console, for ``actorscope run
--sandbox`` (the runner connects to it in process) and ``actorscope sandbox`` (a bot connects
from its own process), which load it through the contract
(:func:`~actorscope.sandbox.platform_sandbox`).
"""

from actorscope.sandbox._discord_sandbox import SANDBOX

__all__ = ["SANDBOX"]

"""An embedded agent host: the run step (the only copy), and a host consuming the bus with it.

:class:`MessageBus` is the host's inbox: channels and wrappers publish to it, a :class:`Host`
consumes it.
"""

from actorscope.host._bus import MessageBus
from actorscope.host._runtime import Handler, Host, Prepared, Reply, RunStep
from actorscope.host._sender import OutboundSender

__all__ = [
    "Handler",
    "Host",
    "MessageBus",
    "OutboundSender",
    "Prepared",
    "Reply",
    "RunStep",
]

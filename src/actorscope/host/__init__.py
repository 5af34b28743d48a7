"""An embedded agent host: consume the bus, bind the right identity, run the handler, reply."""

from actorscope.host.runtime import Handler, Host, Reply, reply_to
from actorscope.host.sender import MemorySender, OutboundSender

__all__ = ["Handler", "Host", "MemorySender", "OutboundSender", "Reply", "reply_to"]

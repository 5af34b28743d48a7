"""Propagation: carry the human who started a chain through sub-agents, delegates and tickers.

Wrappers read the origin from the calling run's bound identity and sign it onto the message
they synthesise; :meth:`OriginSigner.run_request` gives the next turn that human as its sender only
when the origin verifies. The ``origin_*`` metadata keys are :class:`Origin`'s wire format
(:meth:`Origin.to_metadata`, :meth:`Origin.from_metadata`);
:attr:`~actorscope.messages.MetaKey.ORIGIN_SENDER_ID` is the one a host reads to see whom a
carrier claims. See docs/design.md, "Propagation".
"""

from actorscope.propagation._origin import Origin, OriginSigner
from actorscope.propagation._run import RunInfo
from actorscope.propagation._wrappers import (
    SubagentTask,
    TickerJob,
    delegate,
    session_send,
    spawn_subagent,
    teammate_dispatch,
)

__all__ = [
    "Origin",
    "OriginSigner",
    "RunInfo",
    "SubagentTask",
    "TickerJob",
    "delegate",
    "session_send",
    "spawn_subagent",
    "teammate_dispatch",
]

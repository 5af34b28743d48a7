"""Propagation: carry the human who started a chain through sub-agents, delegates and tickers.

Wrappers read the origin from the calling run's bound identity and sign it onto the message
they synthesise; :func:`build_run_request` gives the next turn that human as its sender only
when the origin verifies. See docs/design.md, "Propagation".
"""

from actorscope.propagation._builder import build_run_request, sanitize_inbound
from actorscope.propagation._keys import (
    META_ORIGIN_AGENT_ID,
    META_ORIGIN_CHANNEL,
    META_ORIGIN_CHAT_ID,
    META_ORIGIN_PEER_KIND,
    META_ORIGIN_ROLE,
    META_ORIGIN_SENDER_ID,
    META_ORIGIN_SESSION_KEY,
    META_ORIGIN_SIGNATURE,
    META_ORIGIN_SIGNED_AT,
    META_ORIGIN_TENANT_ID,
    META_ORIGIN_TRACE_ID,
    META_ORIGIN_USER_ID,
    ORIGIN_KEYS,
)
from actorscope.propagation._origin import DEFAULT_KEY_ENV, MIN_KEY_BYTES, Origin, OriginSigner
from actorscope.propagation._replay import ReplayGuard
from actorscope.propagation._run import RunInfo, bind_run, current_run
from actorscope.propagation._wrappers import (
    DelegateTask,
    Route,
    SubagentTask,
    TickerJob,
    announce_delegate_result,
    announce_subagent_result,
    create_ticker_job,
    delegate,
    session_send,
    spawn_subagent,
    teammate_dispatch,
    ticker_run,
)

__all__ = [
    "DEFAULT_KEY_ENV",
    "META_ORIGIN_AGENT_ID",
    "META_ORIGIN_CHANNEL",
    "META_ORIGIN_CHAT_ID",
    "META_ORIGIN_PEER_KIND",
    "META_ORIGIN_ROLE",
    "META_ORIGIN_SENDER_ID",
    "META_ORIGIN_SESSION_KEY",
    "META_ORIGIN_SIGNATURE",
    "META_ORIGIN_SIGNED_AT",
    "META_ORIGIN_TENANT_ID",
    "META_ORIGIN_TRACE_ID",
    "META_ORIGIN_USER_ID",
    "MIN_KEY_BYTES",
    "ORIGIN_KEYS",
    "DelegateTask",
    "Origin",
    "OriginSigner",
    "ReplayGuard",
    "Route",
    "RunInfo",
    "SubagentTask",
    "TickerJob",
    "announce_delegate_result",
    "announce_subagent_result",
    "bind_run",
    "build_run_request",
    "create_ticker_job",
    "current_run",
    "delegate",
    "sanitize_inbound",
    "session_send",
    "spawn_subagent",
    "teammate_dispatch",
    "ticker_run",
]

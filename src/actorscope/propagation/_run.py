"""What a run knows about itself beyond its identity: session key, trace id, reply thread.

The host binds a :class:`RunInfo` next to the identity (:meth:`RunInfo.bind`), so the wrappers can
record the session and thread a chain started in without taking them from tool arguments.
Like the identity it lives in a context variable that asyncio tasks inherit.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from contextlib import AbstractContextManager
from contextvars import ContextVar
from dataclasses import dataclass

from actorscope.context import Binding
from actorscope.messages import RunRequest
from actorscope.propagation._keys import META_ORIGIN_TRACE_ID

__all__ = ["RunInfo"]


@dataclass(frozen=True, slots=True)
class RunInfo:
    """The session key, trace id and reply thread of the current run (each may be ``""``)."""

    session_key: str = ""
    trace_id: str = ""
    thread_id: str = ""

    @classmethod
    def for_request(
        cls, request: RunRequest, *, new_trace_id: Callable[[], str] | None = None
    ) -> RunInfo:
        """The run info of a turn for ``request``: its session key and reply thread, and the
        trace id its origin carries, else a new one (``new_trace_id()``, default a uuid4 hex)."""
        trace_id = request.metadata.get(META_ORIGIN_TRACE_ID) or (
            new_trace_id() if new_trace_id is not None else uuid.uuid4().hex
        )
        return cls(session_key=request.session_key, trace_id=trace_id, thread_id=request.thread_id)

    def bind(self) -> AbstractContextManager[RunInfo]:
        """Run the ``with`` body with this as the current run; the previous one returns on exit."""
        return Binding(_RUN, self)

    @staticmethod
    def current() -> RunInfo | None:
        """The bound :class:`RunInfo`, or ``None`` outside a host-run turn."""
        return _RUN.get()


_RUN: ContextVar[RunInfo | None] = ContextVar("actorscope_run", default=None)

"""What a run knows about itself beyond its identity: session key, trace id, reply thread.

The host binds a :class:`RunInfo` next to the identity (:func:`bind_run`), so the wrappers can
record the session and thread a chain started in without taking them from tool arguments.
Like the identity it lives in a context variable that asyncio tasks inherit.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from contextvars import ContextVar, Token
from dataclasses import dataclass
from types import TracebackType

__all__ = ["RunInfo", "bind_run", "current_run"]


@dataclass(frozen=True, slots=True)
class RunInfo:
    """The session key, trace id and reply thread of the current run (each may be ``""``)."""

    session_key: str = ""
    trace_id: str = ""
    thread_id: str = ""


_RUN: ContextVar[RunInfo | None] = ContextVar("actorscope_run", default=None)


class _Binding(AbstractContextManager[RunInfo]):
    # A class, not a generator context manager: the host enters one every turn.
    __slots__ = ("_info", "_token")

    def __init__(self, info: RunInfo) -> None:
        self._info = info
        self._token: Token[RunInfo | None] | None = None

    def __enter__(self) -> RunInfo:
        self._token = _RUN.set(self._info)
        return self._info

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._token is not None:
            _RUN.reset(self._token)
            self._token = None


def bind_run(info: RunInfo) -> AbstractContextManager[RunInfo]:
    """Run the ``with`` body with ``info`` as the current run; the previous one returns on exit."""
    if not isinstance(info, RunInfo):
        raise TypeError(f"bind_run() takes a RunInfo, got {type(info).__name__}")
    return _Binding(info)


def current_run() -> RunInfo | None:
    """The bound :class:`RunInfo`, or ``None`` outside a host-run turn."""
    return _RUN.get()

"""The bound identity of the current run, in one context variable.

:func:`bind_identity` is the only place that sets and resets it. asyncio tasks created
inside a ``with bind_identity(...)`` block inherit the identity; a task created outside
never sees it.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from contextvars import ContextVar, Token
from types import TracebackType
from typing import TypeVar

from actorscope.identity import Identity

__all__ = [
    "Binding",
    "bind_identity",
    "current_identity",
    "sender_id_from_context",
    "user_id_from_context",
]

_T = TypeVar("_T")

_IDENTITY: ContextVar[Identity | None] = ContextVar("actorscope_identity", default=None)


class Binding(AbstractContextManager[_T]):
    """``with`` sets a context variable to a value and resets it on exit, even on error.

    A class, not a generator context manager: the host enters one for the identity and one
    for the run every turn. :func:`bind_identity` and ``propagation.RunInfo.bind`` return one.
    """

    __slots__ = ("_token", "_value", "_var")

    def __init__(self, var: ContextVar[_T | None], value: _T) -> None:
        self._var = var
        self._value = value
        self._token: Token[_T | None] | None = None

    def __enter__(self) -> _T:
        self._token = self._var.set(self._value)
        return self._value

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._token is not None:
            self._var.reset(self._token)
            self._token = None


def bind_identity(identity: Identity) -> AbstractContextManager[Identity]:
    """Run the ``with`` body as ``identity``; the previous binding returns on exit, even on error.

    Works in sync code and inside coroutines (``with``, not ``async with``): the binding
    belongs to the current context, which each asyncio task copies at creation.
    """
    if not isinstance(identity, Identity):
        raise TypeError(f"bind_identity() takes an Identity, got {type(identity).__name__}")
    return Binding(_IDENTITY, identity)


def current_identity() -> Identity | None:
    """The bound identity, or ``None`` outside any run."""
    return _IDENTITY.get()


def user_id_from_context() -> str:
    """The scope of the bound run (memory, sessions, files), or ``""``."""
    identity = _IDENTITY.get()
    return identity.user_id if identity is not None else ""


def sender_id_from_context() -> str:
    """The actor of the bound run, for permission checks, or ``""``."""
    identity = _IDENTITY.get()
    return identity.sender_id if identity is not None else ""

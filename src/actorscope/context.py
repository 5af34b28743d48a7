"""The bound identity of the current run, in one context variable.

:func:`bind_identity` is the only place that sets and resets it. asyncio tasks created
inside a ``with bind_identity(...)`` block inherit the identity; a task created outside
never sees it.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from contextvars import ContextVar, Token
from types import TracebackType

from actorscope.identity import Identity

__all__ = [
    "actor_id_from_context",
    "agent_id_from_context",
    "bind_identity",
    "current_identity",
    "role_from_context",
    "sender_id_from_context",
    "tenant_id_from_context",
    "user_id_from_context",
]

_IDENTITY: ContextVar[Identity | None] = ContextVar("actorscope_identity", default=None)


class _Binding(AbstractContextManager[Identity]):
    # A class, not a generator context manager: the host enters one every turn.
    __slots__ = ("_identity", "_token")

    def __init__(self, identity: Identity) -> None:
        self._identity = identity
        self._token: Token[Identity | None] | None = None

    def __enter__(self) -> Identity:
        self._token = _IDENTITY.set(self._identity)
        return self._identity

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._token is not None:
            _IDENTITY.reset(self._token)
            self._token = None


def bind_identity(identity: Identity) -> AbstractContextManager[Identity]:
    """Run the ``with`` body as ``identity``; the previous binding returns on exit, even on error.

    Works in sync code and inside coroutines (``with``, not ``async with``): the binding
    belongs to the current context, which each asyncio task copies at creation.
    """
    if not isinstance(identity, Identity):
        raise TypeError(f"bind_identity() takes an Identity, got {type(identity).__name__}")
    return _Binding(identity)


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


def actor_id_from_context() -> str:
    """The sender, else the scope, of the bound run (audit, ownership, roles), or ``""``."""
    identity = _IDENTITY.get()
    return identity.actor_id if identity is not None else ""


def role_from_context() -> str:
    """The role of the bound run (``owner``, ``admin`` ...), or ``""``."""
    identity = _IDENTITY.get()
    return identity.role if identity is not None else ""


def tenant_id_from_context() -> str:
    """The tenant UUID of the bound run, or ``""``."""
    identity = _IDENTITY.get()
    return (identity.tenant_id or "") if identity is not None else ""


def agent_id_from_context() -> str:
    """The agent UUID of the bound run, or ``""``."""
    identity = _IDENTITY.get()
    return (identity.agent_id or "") if identity is not None else ""

"""What a bot handler may use besides its request: database, grants, policy, workspace.

``actorscope run`` binds one :class:`BotServices` around every handler call (the same way the
identity is bound), so a handler reaches them with :func:`current_services` instead of a
global.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from actorscope.agents.models import Agent
from actorscope.errors import ConfigError
from actorscope.permissions.grants import GrantStore
from actorscope.permissions.policy import PermissionPolicy
from actorscope.store import Database
from actorscope.tools.workspace import Workspace

__all__ = ["BotServices", "bind_services", "current_services"]


@dataclass(frozen=True, slots=True)
class BotServices:
    """The running bot's agent and stores."""

    db: Database
    agent: Agent
    grants: GrantStore
    policy: PermissionPolicy
    workspace: Workspace


_SERVICES: ContextVar[BotServices | None] = ContextVar("actorscope_bot_services", default=None)


@contextmanager
def bind_services(services: BotServices) -> Iterator[BotServices]:
    """Make ``services`` current for the ``with`` body (and the tasks it starts)."""
    token = _SERVICES.set(services)
    try:
        yield services
    finally:
        _SERVICES.reset(token)


def current_services() -> BotServices:
    """The services of the running bot; :class:`ConfigError` outside a handler call."""
    services = _SERVICES.get()
    if services is None:
        raise ConfigError("no bot is running here: current_services() works inside a handler")
    return services

"""What a bot handler may use besides its request: database, grants, policy, workspace, and
the platform library's own object.

``actorscope run`` binds one :class:`BotServices` around every handler call (the same way the
identity is bound), so a handler reaches them with :meth:`BotServices.current` instead of a
global. For what a reply cannot express, :meth:`BotServices.native` gives a running channel's
own library object by its class (``native(telegram.Bot)``: python-telegram-bot's ``Bot``;
``native(discord.Client)``: discord.py's client), as its runner offers it
(:attr:`~actorscope.channels.ChannelAdapter.native`); this module names no platform.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TypeVar

from actorscope.agents import Agent
from actorscope.assembly import Assembly
from actorscope.channels import ChannelAdapter
from actorscope.context import current_identity
from actorscope.errors import ConfigError
from actorscope.host import Handler, Reply
from actorscope.messages import RunRequest
from actorscope.permissions import GrantStore, PermissionPolicy
from actorscope.store import Database
from actorscope.tools import Workspace

__all__ = ["AUDIT_SETTLE", "BotServices"]

#: Seconds a turn's reply waits for the audit rows its checks queued (a denial's row is
#: written in the background; a reply must not tell of a decision the trail lost).
AUDIT_SETTLE = 0.5


T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class BotServices:
    """The running bot's agent and stores, and its channels by name."""

    db: Database
    agent: Agent
    grants: GrantStore
    policy: PermissionPolicy
    workspace: Workspace
    channels: Mapping[str, ChannelAdapter] = field(default_factory=dict)

    @classmethod
    def current(cls) -> BotServices:
        """The services of the running bot; :class:`ConfigError` outside a handler call."""
        services = _SERVICES.get()
        if services is None:
            raise ConfigError(
                "no bot is running here: BotServices.current() works inside a handler"
            )
        return services

    @classmethod
    def of(
        cls, assembly: Assembly, channels: Mapping[str, ChannelAdapter] | None = None
    ) -> BotServices:
        """The services of an assembled agent (:func:`~actorscope.assembly.assemble`), with
        the running ``channels`` by name."""
        return cls(
            assembly.db,
            assembly.agent,
            assembly.grants,
            assembly.policy,
            assembly.workspace,
            dict(channels or {}),
        )

    def native(self, kind: type[T]) -> T:
        """The running channel's own library object of class ``kind``, for any call a reply
        cannot make: ``native(telegram.Bot)`` is python-telegram-bot's ``Bot`` of the Telegram
        channel, ``native(discord.Client)`` discord.py's client of the Discord one.

        With several channels offering one, the one the running request came from.
        :class:`ConfigError` when no running channel offers one, or several do and no request
        of theirs is running.
        """
        if not isinstance(kind, type):
            raise ConfigError(
                "BotServices.native takes the class of the object it gives (telegram.Bot, "
                f"discord.Client), got {kind!r}"
            )
        found = {
            name: native
            for name, channel in self.channels.items()
            if isinstance(native := channel.native, kind)
        }
        identity = current_identity()
        if identity is not None and identity.channel in found:
            return found[identity.channel]
        if len(found) == 1:
            return next(iter(found.values()))
        what = f"{kind.__module__.partition('.')[0]}.{kind.__qualname__}"  # telegram.Bot
        if not found:
            raise ConfigError(f"no channel running in this bot has a {what}")
        raise ConfigError(
            f"several channels running here have a {what}; call this inside a handler"
        )

    def bind(self) -> AbstractContextManager[BotServices]:
        """Make these services current for the ``with`` body (and the tasks it starts)."""
        return _bound(self)

    def wrap(self, handler: Handler) -> Handler:
        """``handler`` with these services bound (the run step has bound the identity).

        When it returns, the audit rows its checks queued are written (at most
        :data:`AUDIT_SETTLE` s) before the run step sends its reply: a worker killed right
        after a denial has sent nobody a decision the audit log does not have.
        """

        async def run(request: RunRequest) -> Reply:
            with _bound(self):
                reply = await handler(request)
            await self.db.settle_audit(AUDIT_SETTLE)
            return reply

        return run


_SERVICES: ContextVar[BotServices | None] = ContextVar("actorscope_bot_services", default=None)


@contextmanager
def _bound(services: BotServices) -> Iterator[BotServices]:
    token = _SERVICES.set(services)
    try:
        yield services
    finally:
        _SERVICES.reset(token)

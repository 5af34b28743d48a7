"""Grant helpers bound to one agent, and the builder of a test's :class:`AgentEnv`.

``await actorscope_grants.allow("group:telegram:-100123", alice)`` (the fixture) grants
``file_writer`` to a sender in
a scope; ``deny``, ``revoke`` and ``writers`` are the same shape. Senders may be given as ids,
or as objects with an ``id`` (simulator users), so tests read like the chat they describe.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from actorscope.agents import Agent
from actorscope.context import bind_identity
from actorscope.identity import Identity, PeerKind, Scope, SenderKind
from actorscope.permissions import Grant, GrantStore, Permission
from actorscope.platforms import platform_specs

__all__ = ["Binder", "Grants", "sender_of"]


def sender_of(who: object) -> str:
    """A sender id from an id, a numeric string, ``"*"`` or an object with an ``id``."""
    if isinstance(who, str):
        return who
    if isinstance(who, int) and not isinstance(who, bool):
        return str(who)
    found = getattr(who, "id", None)
    if isinstance(found, int | str) and not isinstance(found, bool):
        return str(found)
    raise TypeError(f"cannot use {who!r} as a sender id")


class Grants:
    """Grant, deny and revoke permissions of one agent."""

    def __init__(self, store: GrantStore, agent: Agent) -> None:
        self.store = store
        self.agent = agent

    async def allow(
        self, scope: str, sender: object, config_type: str = "file_writer", *, by: str = "test"
    ) -> Grant:
        """Allow ``config_type`` to ``sender`` (``"*"``: everyone) in ``scope``."""
        return await self._set(scope, sender, config_type, Permission.ALLOW, by)

    async def deny(
        self, scope: str, sender: object, config_type: str = "file_writer", *, by: str = "test"
    ) -> Grant:
        """Deny ``config_type`` to ``sender`` in ``scope``."""
        return await self._set(scope, sender, config_type, Permission.DENY, by)

    async def _set(
        self, scope: str, sender: object, config_type: str, permission: Permission, by: str
    ) -> Grant:
        return await self.store.grant(
            agent_id=self.agent.id,
            scope=scope,
            config_type=config_type,
            sender_id=sender_of(sender),
            permission=permission,
            granted_by=by,
        )

    async def revoke(
        self, scope: str, sender: object, config_type: str = "file_writer", *, by: str = "test"
    ) -> bool:
        """Remove the grant; ``True`` iff there was one."""
        return bool(
            await self.store.revoke(
                agent_id=self.agent.id,
                scope=scope,
                config_type=config_type,
                sender_id=sender_of(sender),
                revoked_by=by,
            )
        )

    async def list(self) -> list[Grant]:
        """Every grant of the agent."""
        return await self.store.list(agent_id=self.agent.id)


class Binder:
    """Run code as an identity of the test's agent (the ``actorscope_bind`` fixture):
    ``with actorscope_bind(sender=..., scope=...):``."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent

    def identity(
        self,
        sender: object = "",
        scope: str | None = None,
        *,
        role: str = "",
        channel: str | None = None,
        chat_id: str = "",
    ) -> Identity:
        """An identity of the agent: ``scope`` defaults to the sender's direct scope, and
        ``channel`` to the platform a group scope names, else the first registered chat
        platform (the registry's default: Telegram)."""
        sender_id = sender_of(sender) if sender != "" else ""
        user_id = sender_id if scope is None else scope
        group = Scope.is_group_id(user_id)
        if channel is None:
            parsed = Scope.try_parse(user_id) if group else None
            channel = parsed.channel if parsed is not None else platform_specs()[0].name
        return Identity(
            user_id=user_id,
            sender_id=sender_id,
            channel=channel,
            chat_id=chat_id,
            peer_kind=PeerKind.GROUP if group else PeerKind.DIRECT,
            sender_kind=SenderKind.USER if sender_id else SenderKind.NONE,
            role=role,
            tenant_id=self.agent.tenant_id,
            agent_id=self.agent.id,
        )

    @contextmanager
    def __call__(
        self,
        identity: Identity | None = None,
        *,
        sender: object = "",
        scope: str | None = None,
        role: str = "",
    ) -> Iterator[Identity]:
        """Bind ``identity``, or one built from ``sender``/``scope``/``role``, for the block."""
        bound = identity if identity is not None else self.identity(sender, scope, role=role)
        with bind_identity(bound):
            yield bound

"""Writers of a group: who holds ``file_writer`` there, and who may add or remove them.

Telegram writers are granted at the group scope (``group:<channel>:<chat>``); Discord writers
guild-wide at ``guild:<gid>:*``, and removing one also revokes member-scoped grants
``guild:<gid>:user:<uid>``. May manage: configured owners, existing writers, and, only while
the scope has no writer, the group's platform admins (the platform layer says whether the
requester is one, as ``platform_admin=True``). The last writer cannot be removed. Every
outcome is a :class:`WriterDecision` with a reason.
An HTTP operator (an owner, admin or operator API key, whose user id is no platform id) manages
as ``operator=<user id>``: they may manage like an owner and are recorded as the actor; every
other rule (valid target, already a writer, last writer) holds for them too.

A *holder* has a ``file_writer`` allow row for the group; a *writer* is a holder whom the
policy's own precedence (:meth:`GrantStore.check` over :func:`candidate_scopes` of the
member's scope) allows, so a sender deny at a broader scope (``*``, ``group:*``,
``guild:<gid>:*`` ...) outranks the row. Only writers manage as writers, are listed, and count
for the last-writer rule. Holders still block the platform-admin bootstrap (a group whose
writers were all shut out by the operator is the operator's to reopen), a denied holder can be
removed (revoking the stale row), and adding a holder again reports ``already_writer``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from actorscope._input import NIL_UUID, parse_uuid_or_nil
from actorscope.context import current_identity
from actorscope.identity import Identity, Scope, SenderKind
from actorscope.permissions._audit import AuditAction, AuditEntry
from actorscope.permissions._grants import GrantStore
from actorscope.permissions._policy import PermissionPolicy
from actorscope.permissions._reasons import Reason
from actorscope.permissions._records import GrantKey, GrantLookup
from actorscope.permissions._scopes import (
    ANY,
    ConfigType,
    accepted_types,
    candidate_scopes,
    grantee_problem,
)
from actorscope.store import Transaction

__all__ = [
    "WriterDecision",
    "WriterManager",
    "WriterRole",
    "writer_scope",
]


class WriterRole(StrEnum):
    """Why the requester may manage writers (``none``: they may not)."""

    OWNER = "owner"
    WRITER = "writer"
    PLATFORM_ADMIN = "platform_admin"
    OPERATOR = "operator"
    NONE = "none"


@dataclass(frozen=True, slots=True)
class WriterDecision:
    """What happened to a request to add or remove ``target`` as a writer of ``scope``."""

    ok: bool
    reason: Reason
    scope: str
    target: str
    manager: WriterRole = WriterRole.NONE


@dataclass(frozen=True, slots=True)
class _Writers:
    """Who holds an allow row for the group, and which of them the policy allows (both sorted)."""

    holders: tuple[str, ...]
    allowed: list[str]


@dataclass(frozen=True, slots=True)
class _Request:
    """A permitted request: where, for which agent, about whom, by whose authority."""

    identity: Identity
    scope: str
    agent_id: str
    target: str
    writers: _Writers
    role: WriterRole
    #: Who is recorded as granting or revoking: the requester, or the HTTP operator.
    actor: str


def writer_scope(user_id: str) -> str | None:
    """Where a group's writers are granted, or ``None`` outside a group."""
    if not Scope.is_group_id(user_id):
        return None
    scope = Scope.try_parse(user_id)
    if scope is None:  # a malformed group scope has no writers
        return None
    if scope.guild_id:
        return f"guild:{scope.guild_id}:*"
    return user_id


def _agent_uuid(identity: Identity | None) -> str | None:
    """The identity's agent UUID in canonical lowercase, or ``None`` if it names none.

    Grant rows hold the canonical form: compared as text, ``"ABC..."`` would see an empty
    group and reopen the platform-admin bootstrap.
    """
    if identity is None:
        return None
    canonical = parse_uuid_or_nil(identity.agent_id)
    return None if canonical == NIL_UUID else canonical


def _member_prefix(scope: str) -> str | None:
    # "guild:<gid>:*" -> "guild:<gid>:user:", where legacy per-member writer grants live.
    return scope[:-1] + "user:" if scope.startswith("guild:") else None


class WriterManager:
    """Add, remove and list the writers of a group, for the agent of the identity."""

    @staticmethod
    def scope_of(user_id: str) -> str | None:
        """Where the writers of the group ``user_id`` is in are granted (a Discord guild's
        ``guild:<gid>:*``), or ``None`` outside a group."""
        return writer_scope(user_id)

    def __init__(
        self,
        store: GrantStore,
        *,
        owners: Iterable[str] = (),
    ) -> None:
        self.store = store
        self.owners = frozenset(SenderKind.normalize_id(owner) for owner in owners if owner)
        # Serialises this manager's requests; the last-writer rule itself is decided inside
        # the database's write transaction, which serialises every worker (see _remove).
        self._lock = asyncio.Lock()

    async def writers(self, identity: Identity | None = None) -> list[str]:
        """The group's writers, sorted: allow-row holders whom the policy allows."""
        identity = identity if identity is not None else current_identity()
        agent_id = _agent_uuid(identity)
        if identity is None or agent_id is None:
            return []
        scope = writer_scope(identity.user_id)
        if scope is None:
            return []
        found = await self._writers(identity, agent_id, scope)
        return found.allowed

    async def named_writers(self, identity: Identity | None = None) -> list[tuple[str, str]]:
        """:meth:`writers`, each with the name it was added under (``""`` when unknown: a
        grant made by the CLI or the HTTP API)."""
        identity = identity if identity is not None else current_identity()
        writers = await self.writers(identity)
        agent_id = _agent_uuid(identity)
        scope = writer_scope(identity.user_id) if identity is not None else None
        if not writers or agent_id is None or scope is None:
            return []
        rows = await self.store.list(
            agent_id=agent_id, scope=scope, config_type=ConfigType.FILE_WRITER
        )
        names = {
            row.sender_id: name
            for row in rows
            if isinstance(name := row.metadata.get("name"), str) and row.permission == "allow"
        }
        return [(writer, names.get(writer, "")) for writer in writers]

    async def needs_platform_admin(self, identity: Identity | None = None) -> bool:
        """Would the platform's word that the requester administers the group matter here?

        Only for a person who is neither an owner nor a writer, in a group with no writer
        yet (the bootstrap case): callers ask the platform (a Bot API call on Telegram) only
        then, so members cannot make the bot spend a platform call per writer command.
        """
        bound = identity if identity is not None else current_identity()
        scope = writer_scope(bound.user_id) if bound is not None else None
        agent_id = _agent_uuid(bound) if bound is not None else None
        if bound is None or scope is None or agent_id is None:
            return False
        writers = await self._writers(bound, agent_id, scope)
        if writers.holders:
            return False
        role = await self._role(bound, agent_id, writers, platform_admin=False)
        return role is WriterRole.NONE

    async def add_writer(
        self,
        target: str,
        identity: Identity | None = None,
        *,
        operator: str = "",
        platform_admin: bool = False,
        name: str = "",
    ) -> WriterDecision:
        """Grant ``target`` file_writer in the identity's group, if the identity may manage.

        ``operator``: the user id of an HTTP operator acting in the identity's group (the
        caller has checked the key's role); they manage like an owner. ``platform_admin``:
        the platform says the requester administers the group (Telegram ``getChatMember``,
        Discord *Manage Guild*); that lets them add the first writer only. ``name``: how
        the platform names the target (``@bob (700000002)``), kept with the grant for
        :meth:`named_writers`; display only, never an identity.
        """
        async with self._lock:
            request = await self._prepare(target, identity, operator, platform_admin)
            if isinstance(request, WriterDecision):
                return request
            scope, target_id, role = request.scope, request.target, request.role
            if target_id in request.writers.holders:
                return WriterDecision(False, Reason.ALREADY_WRITER, scope, target_id, role)
            await self.store.grant(
                agent_id=request.agent_id,
                scope=scope,
                config_type=ConfigType.FILE_WRITER,
                sender_id=target_id,
                granted_by=request.actor,
                metadata={
                    "via": "writers",
                    "manager": str(role),
                    **({"name": name} if name else {}),
                },
            )
            return WriterDecision(True, Reason.WRITER_ADDED, scope, target_id, role)

    async def remove_writer(
        self,
        target: str,
        identity: Identity | None = None,
        *,
        operator: str = "",
        platform_admin: bool = False,
    ) -> WriterDecision:
        """Revoke ``target``'s writer grants in the identity's group, unless they are the last.

        ``operator`` and ``platform_admin`` as in :meth:`add_writer`.
        """
        async with self._lock:
            request = await self._prepare(target, identity, operator, platform_admin)
            if isinstance(request, WriterDecision):
                return request
            scope, target_id, role = request.scope, request.target, request.role
            outcome = await self._remove(request)
            if outcome is Reason.WRITER_REMOVED:
                return WriterDecision(True, outcome, scope, target_id, role)
            if outcome is Reason.NOT_A_WRITER:
                return WriterDecision(False, outcome, scope, target_id, role)
            operator = request.actor if role is WriterRole.OPERATOR else ""
            return await self._refuse(request.identity, outcome, scope, target_id, role, operator)

    async def _remove(self, request: _Request) -> Reason:
        """Revoke the target's writer grants unless that leaves the group without a writer.

        Decided on the writers read inside the write transaction that revokes: write
        transactions are serialised across processes (SQLite ``BEGIN IMMEDIATE``, PostgreSQL's
        write advisory lock), so two workers removing the two last writers cannot both pass.
        """
        identity, agent_id, scope, target = (
            request.identity,
            request.agent_id,
            request.scope,
            request.target,
        )
        keys = [GrantKey(agent_id, scope, ConfigType.FILE_WRITER, target)]
        prefix = _member_prefix(scope)
        if prefix is not None:
            member = prefix + target
            keys += [
                GrantKey(agent_id, member, ConfigType.FILE_WRITER, target),
                GrantKey(agent_id, member, ConfigType.FILE_WRITER, ANY),
            ]
        async with self.store.changing([agent_id]) as tx:
            writers = await self._writers(identity, agent_id, scope, tx)
            # A writer's authority may have been revoked since the request was prepared.
            if request.role is WriterRole.WRITER and not await self._is_writer(
                identity, agent_id, writers, tx
            ):
                return Reason.NOT_AUTHORIZED
            if target not in writers.holders:
                return Reason.NOT_A_WRITER
            # A denied holder's stale row may go; the last writer the policy allows may not.
            if writers.allowed == [target]:
                return Reason.LAST_WRITER
            await self.store.revoke_many(keys, revoked_by=request.actor, tx=tx)
        return Reason.WRITER_REMOVED

    async def _prepare(
        self, target: str, identity: Identity | None, operator: str, platform_admin: bool
    ) -> WriterDecision | _Request:
        """The permitted request, or the refusal (audited)."""
        bound = identity if identity is not None else current_identity()
        none = WriterRole.NONE
        scope = writer_scope(bound.user_id) if bound is not None else None
        if bound is None or scope is None:
            return await self._refuse(bound, Reason.NOT_GROUP_CONTEXT, "", target, none, operator)
        agent_id = _agent_uuid(bound)
        if agent_id is None:
            return await self._refuse(bound, Reason.NO_AGENT, scope, target, none, operator)
        writers = await self._writers(bound, agent_id, scope)
        role = (
            WriterRole.OPERATOR
            if operator
            else await self._role(bound, agent_id, writers, platform_admin=platform_admin)
        )
        # Authority before the target: someone who may not manage writers learns only that.
        if role is None:
            reason = Reason.MANAGER_NOT_A_PERSON
            return await self._refuse(bound, reason, scope, str(target), none)
        if role is WriterRole.NONE:
            return await self._refuse(bound, Reason.NOT_AUTHORIZED, scope, str(target), none)
        target_id = SenderKind.normalize_id(target) if isinstance(target, str) else ""
        if not target_id or target_id == ANY or grantee_problem(target_id, scope):
            return await self._refuse(bound, Reason.INVALID_TARGET, scope, target, role, operator)
        actor = operator or SenderKind.normalize_id(bound.sender_id)
        return _Request(bound, scope, agent_id, target_id, writers, role, actor)

    async def _role(
        self, identity: Identity, agent_id: str, writers: _Writers, *, platform_admin: bool
    ) -> WriterRole | None:
        """The requester's authority; ``None`` if the requester is not a person at all."""
        if PermissionPolicy.non_person_reason(identity) is not None:  # the policy's own person rule
            return None
        actor = SenderKind.normalize_id(identity.sender_id)
        if actor in self.owners:
            return WriterRole.OWNER
        if await self._is_writer(identity, agent_id, writers):
            return WriterRole.WRITER
        # Platform admins bootstrap a group only: once it has a writer, writers decide.
        if platform_admin and not writers.holders:
            return WriterRole.PLATFORM_ADMIN
        return WriterRole.NONE

    async def _is_writer(
        self, identity: Identity, agent_id: str, writers: _Writers, tx: Transaction | None = None
    ) -> bool:
        """Is the requester a writer here (holds a row and the policy allows them)?"""
        actor = SenderKind.normalize_id(identity.sender_id)
        # Exactly check_file_writer's answer for this actor here: an allow row is not enough.
        return actor in writers.holders and await self._allows(
            identity, agent_id, identity.user_id, actor, tx
        )

    async def _allows(
        self,
        identity: Identity,
        agent_id: str,
        scope: str,
        sender: str,
        tx: Transaction | None = None,
    ) -> bool:
        """Does the grant precedence the policy uses allow ``sender`` file_writer at ``scope``?"""
        lookup = await self.store.check(
            agent_id=agent_id,
            scopes=candidate_scopes(scope),
            config_types=accepted_types(ConfigType.FILE_WRITER),
            sender_id=sender,
            tenant_id=identity.tenant_id or None,
            tx=tx,
        )
        return lookup is GrantLookup.ALLOW

    async def _writers(
        self, identity: Identity, agent_id: str, scope: str, tx: Transaction | None = None
    ) -> _Writers:
        prefix = _member_prefix(scope)
        holders = await self.store.holders(
            agent_id=agent_id,
            scope=scope,
            config_type=ConfigType.FILE_WRITER,
            member_prefix=prefix,
            tx=tx,
        )
        allowed = [
            holder
            for holder in holders
            # Each member checked where they speak: the group, or their own guild member scope.
            if await self._allows(
                identity, agent_id, scope if prefix is None else prefix + holder, holder, tx
            )
        ]
        return _Writers(holders, allowed)

    async def _refuse(
        self,
        identity: Identity | None,
        reason: Reason,
        scope: str,
        target: str,
        role: WriterRole,
        operator: str = "",
    ) -> WriterDecision:
        decision = WriterDecision(False, reason, scope, target, role)
        actor = operator or (identity.actor_id if identity is not None else "")
        await self.store.audit.record(
            AuditEntry(
                action=AuditAction.WRITER_REFUSED,
                sender_id=target,
                actor=actor,
                scope=identity.user_id if identity is not None else "",
                agent_id=_agent_uuid(identity),
                tenant_id=identity.tenant_id if identity is not None else None,
                config_type=ConfigType.FILE_WRITER,
                reason=reason,
                detail={"writer_scope": scope},
            )
        )
        return decision

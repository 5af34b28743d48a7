"""What the built-in tools run against: the database-backed stores, the workspace and the policy.

:class:`Toolbox` also holds the rules every built-in tool applies to the bound identity:
which agent the call acts for (the identity's agent UUID, else the toolbox's default agent),
that a scope is bound (a call with no identity has none, so it can change nothing), that
a write passes its permission check, and who may change memory in a group:

- adding an entry needs a person sender, judged by the permission policy's own rule
  (:meth:`~actorscope.permissions.PermissionPolicy.non_person_reason`: not empty, synthetic,
  a placeholder, or a look-alike id such as ``"042"`` or ``"42\u200b"`` in a Telegram/Discord
  group), refused with the policy's reason words;
- changing or deleting one needs its owner (a person, by the same rule; ``owns`` also
  accepts rows written before the actor/scope split), else a ``file_writer`` allow (a grant
  or the owner, admin and operator roles' bypass);
- every change is audited (``memory.<action>`` rows), and so is every refusal.

Outside groups the scope is one person's own, and memory needs no check (still audited).
"""

from __future__ import annotations

import os
from collections.abc import Awaitable
from dataclasses import dataclass, replace
from typing import Protocol

from actorscope._input import is_uuid
from actorscope.agents import Agent, AgentRegistry
from actorscope.errors import ActorscopeError, NotFoundError, ToolError
from actorscope.identity import Identity, Scope, SenderKind
from actorscope.permissions import (
    AuditAction,
    AuditEntry,
    AuditLog,
    Decision,
    PermissionPolicy,
    Reason,
)
from actorscope.store import Database
from actorscope.tools._cron import CronStore
from actorscope.tools._memory import DatabaseMemory, MemoryBackend, MemoryEntry
from actorscope.tools._ownership import owns
from actorscope.tools._storage import require_scope
from actorscope.tools._workspace import Workspace

__all__ = [
    "MEMORY_CONFIG_TYPE",
    "OWNER_REASON",
    "PermissionDeniedError",
    "Toolbox",
    "Verdict",
    "WritePolicy",
    "require_scope",
]


class PermissionDeniedError(ActorscopeError):
    """A built-in tool's action was refused; ``decision`` says why (the registry turns it into
    the call's ``permission_denied`` result)."""

    def __init__(self, message: str, *, decision: object = None) -> None:
        super().__init__(message)
        self.decision = decision


#: The ``config_type`` of memory audit rows and of refusals to add memory.
MEMORY_CONFIG_TYPE = "memory"
#: The audit reason of a change its entry's owner made.
OWNER_REASON = "owner"


class Verdict(Protocol):
    """What a permission check answers (``actorscope.permissions.Decision`` is one)."""

    @property
    def allowed(self) -> bool:
        """Whether the action may go ahead."""
        ...

    @property
    def reason(self) -> str:
        """Why (a ``Reason`` value)."""
        ...


class WritePolicy(Protocol):
    """The checks the built-in tools need (``actorscope.permissions.PermissionPolicy`` has them)."""

    def check_file_writer(self, identity: Identity | None = None) -> Awaitable[Verdict]:
        """May the identity's actor write files in its scope?"""
        ...

    def check_cron(self, identity: Identity | None = None) -> Awaitable[Verdict]:
        """May the identity's actor manage cron jobs in its scope?"""
        ...


@dataclass(frozen=True, slots=True)
class Toolbox:
    """The built-in tools' services; ``default_agent`` serves calls whose identity has none."""

    agents: AgentRegistry
    policy: WritePolicy
    workspace: Workspace
    memory: MemoryBackend
    crons: CronStore
    audit: AuditLog
    default_agent: Agent | None = None

    @classmethod
    def create(
        cls,
        db: Database,
        *,
        policy: WritePolicy,
        workspace_root: str | os.PathLike[str],
        default_agent: Agent | None = None,
        memory: MemoryBackend | None = None,
        agents: AgentRegistry | None = None,
        legacy_tenant: str | None = None,
    ) -> Toolbox:
        """A toolbox whose stores live in ``db`` (memory too, unless another backend is given).

        ``legacy_tenant`` (a tenant UUID) adopts workspaces of the layout before tenants; see
        :class:`~actorscope.tools.Workspace`.
        """
        registry = agents or AgentRegistry(db)
        workspace = Workspace(workspace_root, legacy_tenant=legacy_tenant)
        # A rename or remove in this process moves or archives the agent's files at once.
        registry.subscribe(workspace.on_agent_changed)
        return cls(
            agents=registry,
            policy=policy,
            workspace=workspace,
            memory=memory if memory is not None else DatabaseMemory(db),
            crons=CronStore(db),
            audit=AuditLog(db),
            default_agent=default_agent,
        )

    async def agent_for(self, identity: Identity) -> Agent:
        """The agent a call acts for: the identity's (by UUID, same tenant), else the default."""
        if not identity.agent_id:
            agent = self.default_agent
            if agent is None:
                raise ToolError("no_agent", "no agent is bound to this run")
            if identity.tenant_id and identity.tenant_id != agent.tenant_id:
                raise ToolError("no_agent", "the run's tenant does not own the default agent")
            return agent
        if not is_uuid(identity.agent_id):
            raise ToolError("no_agent", "the run's agent id is not a UUID")
        try:
            agent = await self.agents.get(identity.agent_id)
        except NotFoundError:
            raise ToolError("no_agent", "the run's agent does not exist") from None
        if identity.tenant_id and identity.tenant_id != agent.tenant_id:
            raise ToolError("no_agent", "the run's agent belongs to another tenant")
        return agent

    async def acting(self, identity: Identity) -> tuple[Agent, Identity]:
        """The call's agent, and the identity with that agent's UUID and tenant filled in."""
        agent = await self.agent_for(identity)
        return agent, replace(identity, agent_id=agent.id, tenant_id=agent.tenant_id)

    @staticmethod
    async def require(check: Awaitable[Verdict], what: str) -> None:
        """Raise :class:`PermissionDeniedError` (with the decision) unless ``check`` allows."""
        decision = await check
        if not decision.allowed:
            reason = str(decision.reason)
            raise PermissionDeniedError(f"{what} permission denied ({reason})", decision=decision)

    async def may_add_memory(self, identity: Identity) -> str:
        """The reason ``identity`` may add memory; :class:`PermissionDeniedError` if it may not.

        In a group only a person may add (the entry is theirs); the refusal is audited.
        """
        if not Scope.is_group_id(identity.user_id):
            return Reason.NOT_GROUP_CONTEXT
        reason = PermissionPolicy.non_person_reason(identity)
        if reason is None:
            return OWNER_REASON
        sender = SenderKind.normalize_id(identity.sender_id)
        decision = Decision(False, reason, identity.user_id, sender, MEMORY_CONFIG_TYPE)
        await self.audit.record(
            AuditEntry(
                action=AuditAction.CHECK_DENY,
                sender_id=sender,
                scope=identity.user_id,
                agent_id=identity.agent_id,
                tenant_id=identity.tenant_id,
                config_type=MEMORY_CONFIG_TYPE,
                reason=reason,
                detail={"sender_kind": identity.sender_kind.value},
            )
        )
        raise PermissionDeniedError(
            f"adding memory in a group needs a person sender ({reason})", decision=decision
        )

    async def may_change_memory(self, identity: Identity, entry: MemoryEntry) -> str:
        """Why ``identity`` may change or delete ``entry``; :class:`PermissionDeniedError` if not.

        In a group: its owner (a person) may; anyone else needs a ``file_writer`` allow, whose
        check audits its own denial.
        """
        if not Scope.is_group_id(identity.user_id):
            return Reason.NOT_GROUP_CONTEXT
        if owns(entry.created_by, identity):  # never true for a non-person in a group
            return OWNER_REASON
        decision = await self.policy.check_file_writer(identity)
        if not decision.allowed:
            raise PermissionDeniedError(
                f"memory entry {entry.id} belongs to another member, and file_writer is denied "
                f"({decision.reason})",
                decision=decision,
            )
        return str(decision.reason)

    async def audit_memory_change(
        self, identity: Identity, action: str, entry: MemoryEntry, reason: str
    ) -> None:
        """Record one memory change (``memory.<action>``) with who, where, which entry and why."""
        await self.audit.record(
            AuditEntry(
                action=f"memory.{action}",
                sender_id=identity.sender_id,
                actor=identity.actor_id,
                scope=identity.user_id,
                agent_id=identity.agent_id,
                tenant_id=identity.tenant_id,
                config_type=MEMORY_CONFIG_TYPE,
                reason=str(reason),
                detail={
                    "entry_id": entry.id,
                    "namespace": entry.key.namespace,
                    "owner": entry.created_by,
                    "sender_kind": identity.sender_kind.value,
                    "channel": identity.channel,
                },
            )
        )

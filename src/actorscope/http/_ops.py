"""What the API and the console do, once: over the store and policy, as an API key's user.

Each operation takes the caller's :class:`ApiKey`, works inside the key's tenant (and its one
agent, when the key names one), validates everything before writing, records the key's user
as the actor of every change, and raises :class:`Problem` for what it refuses.

The stores and run steps come from the composition root: an agent's
:class:`~actorscope.assembly.Assembly` gives its grants, writers and links and the one run
step of its messages; over a bare database (every agent of it) each agent a message reaches
is assembled once for its run step.
"""

from __future__ import annotations

import asyncio
import hashlib
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from actorscope.agents import Agent, AgentRegistry
from actorscope.assembly import AgentSettings, Assembly, assemble
from actorscope.errors import (
    ActorscopeError,
    ConflictError,
    GrantError,
    IdentityError,
    NotFoundError,
)
from actorscope.host import Handler, OutboundSender, RunStep
from actorscope.http._guard import Problem
from actorscope.http._keys import ApiKey, ApiKeyStore
from actorscope.http._sessions import ConsoleSessions
from actorscope.identity import Identity, PeerKind, SenderKind
from actorscope.messages import InboundMessage, OutboundMessage
from actorscope.permissions import (
    AuditAction,
    AuditEntry,
    ConfigType,
    Grant,
    GrantStore,
    Link,
    LinkStore,
    Permission,
    Reason,
    WriterManager,
)
from actorscope.platforms import BuiltInPlatform
from actorscope.propagation import OriginSigner
from actorscope.store import Database

__all__ = ["AUDIT_PAGE", "AuditPage", "Operations", "problem_for"]

#: Audit rows per page unless the caller asks for fewer (at most this many).
AUDIT_PAGE = 100
#: The audit actions that record a refusal or a fail-open allow (the console counts them).
REFUSALS = (AuditAction.CHECK_DENY, AuditAction.CHECK_FAIL_OPEN, AuditAction.WRITER_REFUSED)
#: The longest message content accepted (characters).
MAX_CONTENT = 32_000
#: Seconds a 503 for a database that does not answer asks the client to wait.
STORE_RETRY_AFTER = 5


def problem_for(exc: ActorscopeError) -> Problem:
    """The HTTP problem for an actorscope error: 404, 409, 422, or 503 for the store."""
    if isinstance(exc, NotFoundError):
        return Problem(404, str(exc))
    if isinstance(exc, ConflictError):
        return Problem(409, str(exc))
    if isinstance(exc, GrantError | IdentityError):
        return Problem(422, str(exc))
    return Problem(
        503,
        "the database cannot answer now (locked, busy or unreachable); try again",
        headers={"Retry-After": str(STORE_RETRY_AFTER)},
    )


@dataclass(frozen=True, slots=True)
class AuditPage:
    """One page of the audit log, newest first, and the cursor of the next (or ``None``)."""

    entries: list[AuditEntry]
    next_cursor: int | None


class _Discard(OutboundSender):
    """The ``http`` channel's sender: replies are answered in the response, not sent."""

    async def send(self, msg: OutboundMessage) -> None:
        """Nothing to deliver: :meth:`~actorscope.host.RunStep.run` returns the replies."""


#: The senders of an HTTP run step: its replies are the response.
_SENDERS = {BuiltInPlatform.HTTP.value: _Discard()}


def _chat_id(user_id: str, session: str) -> str:
    """A numeric chat id for the user's session (session keys need one): stable, per user."""
    digest = hashlib.sha256(f"{user_id}\0{session}".encode()).hexdigest()
    return str(int(digest[:15], 16) + 1)


class Operations:
    """The API's and the console's operations over one agent's assembly or a bare database.

    With an :class:`~actorscope.assembly.Assembly` the grants, writers, links and signer are
    its own and ``handler`` runs in its one run step (the served agent is its agent). Over a
    bare :class:`Database` (``create_app(db)``: a host serving every agent of it) the stores
    are the database's and each agent a message reaches is assembled once, with ``signer``.
    Either way the key's role goes with each message (``RunStep.run``'s ``role``).
    """

    def __init__(
        self,
        source: Database | Assembly,
        *,
        handler: Handler | None = None,
        served_agent: str | None = None,
        signer: OriginSigner | None = None,
    ) -> None:
        if isinstance(source, Assembly):
            self.db = source.db
            self.grants = source.grants
            self.writers = source.writers
            self.links = source.links
            self.signer = source.signer
        else:
            # No agent to assemble: the operators' stores are the whole database's, as for
            # `actorscope grants` and `actorscope links` (the run steps still come from the root).
            self.db = source
            self.grants = GrantStore(source)
            self.writers = WriterManager(self.grants)
            self.links = LinkStore(source)
            self.signer = signer or OriginSigner()
        self.keys = ApiKeyStore(self.db)
        self.sessions = ConsoleSessions(self.db)
        self.agents = AgentRegistry(self.db)
        self.handler = handler
        self.served_agent = served_agent
        # The run step of each agent the handler answers for, by agent UUID: the assembly's
        # one, or each agent's own from its assembly, made at its first message.
        self._steps: dict[str, RunStep] = {}
        self._assembling = asyncio.Lock()
        if isinstance(source, Assembly) and handler is not None:
            self._steps[source.agent.id] = source.run_step(handler, senders=_SENDERS)

    # -- who and which agent -------------------------------------------------------------

    @staticmethod
    def require_operator(key: ApiKey) -> None:
        """403 unless the key's role is owner, admin or operator."""
        if not key.operator:
            raise Problem(403, f"role {key.role!r} may not use operator endpoints")

    async def agent(self, key: ApiKey, name: str) -> Agent:
        """The live agent ``name`` (key or UUID) in the key's tenant; 404, or 403 for another
        agent than the key's own."""
        return self._own(key, await self._resolve(key, name), name)

    async def _resolve(self, key: ApiKey, name: str) -> Agent:
        try:
            return await self.agents.resolve(name, key.tenant_id)
        except ActorscopeError as exc:
            raise problem_for(exc) from None

    @staticmethod
    def _own(key: ApiKey, found: Agent, name: str) -> Agent:
        """``found``, unless the key may use only another agent (403)."""
        if key.agent_id is not None and found.id != key.agent_id:
            raise Problem(403, f"this key may use only its own agent, not {name!r}")
        return found

    async def served(self, key: ApiKey, name: str) -> Agent:
        """The agent ``name`` of the key's tenant if the handler serves it; the 404 of an
        unknown agent for any other (the served agent is compared by UUID, tenant and key,
        so an agent of the same key in another tenant is unknown here), else as
        :meth:`agent`."""
        found = await self._resolve(key, name)
        if self.served_agent is not None and found.id != self.served_agent:
            tenant = await self.agents.tenant(key.tenant_id)
            raise problem_for(NotFoundError(f"no agent {name!r} in tenant {tenant.slug!r}"))
        return self._own(key, found, name)

    async def visible_agents(self, key: ApiKey) -> list[Agent]:
        """The agents the key sees: its tenant's, or only its own agent."""
        agents = await self.agents.list(key.tenant_id)
        return [a for a in agents if key.agent_id is None or a.id == key.agent_id]

    # -- messages --------------------------------------------------------------------------

    async def message(
        self, key: ApiKey, agent_name: str, content: str, session: str = ""
    ) -> dict[str, Any]:
        """Run the handler for one message with the key's HTTP identity; its replies."""
        found = await self.served(key, agent_name)
        if self.handler is None:
            raise Problem(503, "no handler is configured for messages")
        if len(content) > MAX_CONTENT:
            raise Problem(422, f"content is longer than {MAX_CONTENT} characters")
        identity = Identity.http(key.user_id, role=key.role, tenant_id=key.tenant_id)
        step = await self._step(self.handler, found)
        message_id = uuid.uuid4().hex
        msg = InboundMessage(
            channel=BuiltInPlatform.HTTP.value,
            sender_id=identity.sender_id,
            chat_id=_chat_id(key.user_id, session),
            content=content,
            peer_kind=PeerKind.DIRECT,
            user_id=identity.user_id,
            sender_kind=SenderKind.NONE,
            message_id=message_id,
            tenant_id=found.tenant_id,
            agent_id=found.id,
        )
        replies = await step.run(msg, role=key.role)
        return {
            "agent": found.key,
            "message_id": message_id,
            "replies": [{"content": r.content, "metadata": dict(r.metadata)} for r in replies],
            "reply": replies[0].content if replies else None,
        }

    async def _step(self, handler: Handler, agent: Agent) -> RunStep:
        """The agent's run step: made once, by the composition root, at its first message."""
        step = self._steps.get(agent.id)
        if step is not None:
            return step
        async with self._assembling:
            step = self._steps.get(agent.id)
            if step is None:
                settings = AgentSettings(agent=agent.id, tenant=agent.tenant_id, signer=self.signer)
                try:
                    assembly = await assemble(self.db, settings)
                except ActorscopeError as exc:
                    raise problem_for(exc) from None
                step = assembly.run_step(handler, senders=_SENDERS)
                self._steps[agent.id] = step
        return step

    # -- grants ------------------------------------------------------------------------------

    async def list_grants(
        self,
        key: ApiKey,
        *,
        agent: str | None = None,
        scope: str | None = None,
        sender_id: str | None = None,
        config_type: str | None = None,
    ) -> list[Grant]:
        """Grants of the key's tenant (and agent) matching the filters."""
        self.require_operator(key)
        agent_id: str | None = key.agent_id
        if agent is not None:
            agent_id = (await self.agent(key, agent)).id
        try:
            return await self.grants.list(
                agent_id=agent_id,
                tenant_id=key.tenant_id,
                scope=scope,
                sender_id=sender_id,
                config_type=config_type,
            )
        except ActorscopeError as exc:
            raise problem_for(exc) from None

    async def add_grant(
        self,
        key: ApiKey,
        *,
        agent: str,
        scope: str,
        sender_id: str,
        config_type: str,
        permission: str = Permission.ALLOW,
    ) -> Grant:
        """Create or replace a grant; audited with the key's user as the actor."""
        self.require_operator(key)
        try:
            GrantStore.validate(scope, config_type, sender_id, permission)
        except ActorscopeError as exc:
            raise problem_for(exc) from None
        found = await self.agent(key, agent)
        return await self.grants.grant(
            agent_id=found.id,
            scope=scope,
            config_type=config_type,
            sender_id=sender_id,
            permission=permission,
            granted_by=key.user_id,
            metadata={"via": "http"},
        )

    async def remove_grant(
        self, key: ApiKey, *, agent: str, scope: str, sender_id: str, config_type: str
    ) -> Grant:
        """Remove a grant (404 if there is none); audited with the key's user as the actor."""
        self.require_operator(key)
        try:
            grantee = GrantStore.validate(scope, config_type, sender_id)
        except ActorscopeError as exc:
            raise problem_for(exc) from None
        found = await self.agent(key, agent)
        current = await self.grants.list(
            agent_id=found.id, scope=scope, config_type=config_type, sender_id=grantee
        )
        if not current:
            raise Problem(404, f"no grant of {config_type} for {grantee} in {scope}")
        await self.grants.revoke(
            agent_id=found.id,
            scope=scope,
            config_type=config_type,
            sender_id=grantee,
            revoked_by=key.user_id,
        )
        return current[0]

    # -- links -------------------------------------------------------------------------------

    async def list_links(
        self, key: ApiKey, *, person: str | None = None, account: str | None = None
    ) -> list[Link]:
        """Links of the key's tenant, of one person or account when given."""
        self.require_operator(key)
        try:
            return await self.links.links(
                tenant_id=key.tenant_id, person_id=person, account=account
            )
        except ActorscopeError as exc:
            raise problem_for(exc) from None

    async def add_links(
        self, key: ApiKey, accounts: list[str], *, person: str | None = None
    ) -> list[Link]:
        """Link accounts to one person of the key's tenant (409 for another person's account);
        audited with the key's user as the actor. Returns the person's links."""
        self.require_operator(key)
        try:
            return await self.links.add(
                accounts, person=person, by=key.user_id, tenant=key.tenant_id
            )
        except ActorscopeError as exc:
            raise problem_for(exc) from None

    async def remove_link(self, key: ApiKey, account: str) -> Link:
        """Unlink one account of the key's tenant (404 if it is not linked); audited."""
        self.require_operator(key)
        try:
            removed = await self.links.remove(account, by=key.user_id, tenant=key.tenant_id)
        except ActorscopeError as exc:
            raise problem_for(exc) from None
        if removed is None:
            raise Problem(404, f"{account} is not linked to a person")
        return removed

    # -- writers -----------------------------------------------------------------------------

    @staticmethod
    def group(scope: str) -> str:
        """The group a writer scope names (``group:<ch>:<chat>``, ``guild:<gid>:*`` or a member
        scope of a guild); 422 for anything else."""
        try:
            GrantStore.validate(
                scope, ConfigType.FILE_WRITER, "*"
            )  # a writer is a file_writer grant
        except GrantError as exc:
            raise Problem(422, f"scope: {exc}") from None
        where = WriterManager.scope_of(scope)
        if where is None or "*" in where.removesuffix(":*"):
            raise Problem(422, f"scope: {scope!r} is not the scope of one group")
        return where

    def _group_identity(self, key: ApiKey, agent: Agent, scope: str) -> Identity:
        return Identity(
            user_id=scope,
            sender_id="",
            channel=BuiltInPlatform.HTTP.value,
            peer_kind=PeerKind.GROUP,
            sender_kind=SenderKind.NONE,
            role=key.role,
            tenant_id=agent.tenant_id,
            agent_id=agent.id,
        )

    async def list_writers(self, key: ApiKey, agent: str, scope: str) -> list[str]:
        """The writers of one group, as the chat command ``/writers`` lists them."""
        self.require_operator(key)
        where = self.group(scope)
        found = await self.agent(key, agent)
        return await self.writers.writers(self._group_identity(key, found, where))

    async def add_writer(self, key: ApiKey, agent: str, scope: str, sender_id: str) -> None:
        """Make ``sender_id`` a writer of the group; 409 if they already are."""
        self.require_operator(key)
        where = self.group(scope)
        try:
            target = GrantStore.validate(where, ConfigType.FILE_WRITER, sender_id)
        except GrantError as exc:
            raise Problem(422, f"sender_id: {exc}") from None
        if target == "*":
            raise Problem(422, "sender_id: a writer is one person, not '*'")
        found = await self.agent(key, agent)
        identity = self._group_identity(key, found, where)
        decision = await self.writers.add_writer(target, identity, operator=key.user_id)
        if decision.reason is Reason.ALREADY_WRITER:
            raise Problem(409, f"{target} is already a writer of {where}")
        if not decision.ok:
            raise Problem(422, f"not added: {decision.reason}")

    async def remove_writer(self, key: ApiKey, agent: str, scope: str, sender_id: str) -> None:
        """Remove a writer; 404 if not one, 409 for the group's last writer."""
        self.require_operator(key)
        where = self.group(scope)
        try:
            target = GrantStore.validate(where, ConfigType.FILE_WRITER, sender_id)
        except GrantError as exc:
            raise Problem(422, f"sender_id: {exc}") from None
        found = await self.agent(key, agent)
        identity = self._group_identity(key, found, where)
        decision = await self.writers.remove_writer(target, identity, operator=key.user_id)
        if decision.reason is Reason.NOT_A_WRITER:
            raise Problem(404, f"{target} is not a writer of {where}")
        if decision.reason is Reason.LAST_WRITER:
            raise Problem(409, f"{target} is the last writer of {where}; add another first")
        if not decision.ok:
            raise Problem(422, f"not removed: {decision.reason}")

    async def groups(self, key: ApiKey) -> list[tuple[Agent, str, list[str]]]:
        """Every (agent, group, writers) the key sees: groups with a file_writer allow row."""
        self.require_operator(key)
        seen: list[tuple[Agent, str, list[str]]] = []
        for agent in await self.visible_agents(key):
            rows = await self.grants.list(agent_id=agent.id, config_type=ConfigType.FILE_WRITER)
            scopes = sorted(
                {
                    where
                    for grant in rows
                    if grant.permission == Permission.ALLOW
                    and (where := WriterManager.scope_of(grant.scope)) is not None
                    and "*" not in where.removesuffix(":*")
                }
            )
            for where in scopes:
                identity = self._group_identity(key, agent, where)
                seen.append((agent, where, await self.writers.writers(identity)))
        return seen

    # -- audit -------------------------------------------------------------------------------

    async def audit(
        self,
        key: ApiKey,
        *,
        reason: str | None = None,
        scope: str | None = None,
        sender_id: str | None = None,
        actor: str | None = None,
        action: str | None = None,
        since: str | None = None,
        cursor: int | None = None,
        limit: int = AUDIT_PAGE,
    ) -> AuditPage:
        """One page of the tenant's (or the key's agent's) audit log, newest first."""
        self.require_operator(key)
        since_text = None if since is None else _iso(since)
        entries = await self.grants.audit.list(
            tenant_id=key.tenant_id,
            agent_id=key.agent_id,
            reason=reason,
            scope=scope,
            sender_id=sender_id,
            actor=actor,
            action=action,
            since=since_text,
            before_id=cursor,
            limit=limit + 1,
        )
        more = len(entries) > limit
        entries = entries[:limit]
        return AuditPage(entries, entries[-1].id if more and entries else None)

    async def reasons_last_day(self, key: ApiKey) -> dict[str, int]:
        """How many refusals (and fail-open allows) each reason has over the last 24 hours."""
        self.require_operator(key)
        since = (datetime.now(UTC) - timedelta(days=1)).isoformat(timespec="microseconds")
        return await self.grants.audit.count_by_reason(
            since=since, tenant_id=key.tenant_id, agent_id=key.agent_id, actions=REFUSALS
        )


def _iso(value: str) -> str:
    """An ISO 8601 time as stored (UTC, microseconds); 422 for anything else."""
    try:
        parsed = datetime.fromisoformat(value)
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        # OverflowError: a time at the calendar's ends whose offset moves it past them.
        return parsed.astimezone(UTC).isoformat(timespec="microseconds")
    except (ValueError, OverflowError):
        raise Problem(422, f"since: not an ISO 8601 time from year 1 to 9999: {value!r}") from None

"""Permission checks: docs/design.md's decision order, fail-closed in groups, one ``Decision`` each.

1. not a group context → allow; 2. role owner/admin/operator → allow; 3. no agent → deny;
4. empty sender → deny; 5. synthetic, placeholder or look-alike sender (``invalid_identity``)
→ deny (:meth:`PermissionPolicy.non_person_reason`); 6. grant lookup;
7. store error → allow and audit (or deny when ``strict``).

A warm check (same agent, tenant, scope, sender, channel and type as an earlier cold one, no
grant change since; the channel decides which sender ids are well formed) is answered from the
store's cache without touching the database; an allowed warm check writes nothing, a denied one
writes its audit row.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import ClassVar

from actorscope._input import NIL_UUID, is_uuid, shown_path
from actorscope._text import has_unstorable
from actorscope.context import current_identity
from actorscope.errors import StoreError
from actorscope.identity import Identity, Scope, SenderKind
from actorscope.permissions._audit import AuditAction, AuditEntry
from actorscope.permissions._grants import GrantStore
from actorscope.permissions._links import LinkStore
from actorscope.permissions._reasons import Reason
from actorscope.permissions._records import GrantLookup
from actorscope.permissions._scopes import (
    CHECK_TYPES,
    ConfigType,
    accepted_types,
    candidate_scopes,
    parse_check_type,
)
from actorscope.platforms import registry_cache

__all__ = [
    "BYPASS_ROLES",
    "Decision",
    "DecisionObserver",
    "PermissionPolicy",
]

_log = logging.getLogger("actorscope.permissions")

#: Roles that bypass group checks (``viewer`` and no role do not).
BYPASS_ROLES: frozenset[str] = frozenset({"owner", "admin", "operator"})


# A pure function of three strings, asked again for every cold check of the same sender in the
# same scope: the look-alike folding, placeholder parsing and identity rules behind it cost
# ~1.5 us, a cache hit ~0.1 us. Bounded; typed, so a str subclass never shares an answer.
@registry_cache(maxsize=4096, typed=True)
def _sender(scope: str, sender_id: str, channel: str) -> tuple[str, Reason | None]:
    """The sender id a check looks up (legacy ``|name`` split off) and its non-person reason."""
    sender = SenderKind.normalize_id(sender_id)
    if not sender:
        return sender, Reason.EMPTY_SENDER
    if SenderKind.is_synthetic(sender):
        return sender, Reason.SYNTHETIC_SENDER
    if SenderKind.is_placeholder(sender):
        return sender, Reason.PLACEHOLDER_SENDER
    if Identity.problem(scope, sender_id, channel) is not None:
        return sender, Reason.INVALID_IDENTITY
    return sender, None


# The agent id a check uses (a UUID in any case, lowercased: stored ids are lowercase) and
# whether it can name a stored agent at all (a canonical UUID, not the nil one). Asked on every
# cold check of the same few agents: the two UUID patterns cost ~0.4 us, a hit ~0.07 us.
@lru_cache(maxsize=1024, typed=True)
def _agent_ref(agent_id: str) -> tuple[str, bool]:
    if not agent_id.islower() and is_uuid(agent_id, canonical=False):
        agent_id = agent_id.lower()
    return agent_id, is_uuid(agent_id) and agent_id != NIL_UUID


@dataclass(frozen=True, slots=True)
class Decision:
    """The outcome of one check: allowed or not, why, and for whom and where.

    Where the policy counts linked persons' grants (``links = "grants"``), ``account`` is the
    account that acted (``telegram:42``) and ``person`` the person it belongs to
    (``person:<uuid>``, ``""`` when none); both are ``""`` otherwise.
    """

    allowed: bool
    reason: Reason
    scope: str
    sender_id: str
    config_type: str
    account: str = ""
    person: str = ""


#: Told every :class:`Decision` a policy returns (the testing kit records them).
DecisionObserver = Callable[[Decision], None]

_LOOKUP_REASON = {
    GrantLookup.ALLOW: Reason.GRANTED,
    GrantLookup.DENY: Reason.DENIED_BY_GRANT,
    GrantLookup.NONE: Reason.NO_GRANT,
}
_NO_IDENTITY = Identity(user_id="", sender_id="")


# Plain strings, so a Decision's config_type compares and prints as the bare value.
_FILE_WRITER = ConfigType.FILE_WRITER.value
_CRON = ConfigType.CRON.value
_CONTEXT_FILES = ConfigType.CONTEXT_FILES.value


class PermissionPolicy:
    """Checks over a :class:`GrantStore`. ``strict=True`` denies when the store fails.

    ``audit=False`` decides exactly the same way but writes no audit row (a what-if, such as
    ``actorscope check``); a policy that guards real actions keeps the default. ``observer``
    is called with every decision a check returns, warm or cold (the testing kit records
    them for ``should_allow`` / ``should_deny``); without one a check pays a single test.
    ``links`` (an agent with ``links = "grants"``): a grant to the person an acting account
    is linked to counts as the account's own, and a deny of either wins.
    """

    #: The roles every check allows without a grant (a run's ``owner``, ``admin`` and
    #: ``operator``).
    BYPASS_ROLES: ClassVar[frozenset[str]] = BYPASS_ROLES

    @staticmethod
    def non_person_reason(identity: Identity) -> Reason | None:
        """Why the identity's sender is no person to act in its scope, or ``None`` if it is one.

        The one "is this a person" rule: the policy's own pre-lookup steps, shared by every
        other check that asks (memory tools, ownership, writer management), so they all judge
        and word a refusal alike. In order: ``empty_sender``, ``synthetic_sender``,
        ``placeholder_sender`` (look-alikes included), then ``invalid_identity`` for an id
        :meth:`~actorscope.identity.Identity.problem` refuses: one no store can hold, or in a
        Telegram/Discord group a sender that is not a canonical id (``"042"``, ``"42\u200b"``).
        """
        return _sender(identity.user_id, identity.sender_id, identity.channel)[1]

    def __init__(
        self,
        store: GrantStore,
        *,
        strict: bool = False,
        audit: bool = True,
        observer: DecisionObserver | None = None,
        links: LinkStore | None = None,
    ) -> None:
        self.store = store
        self.strict = strict
        self.audit = audit
        self.observer = observer
        self.links = links
        self._cache = store.cache

    async def check_file_writer(self, identity: Identity | None = None) -> Decision:
        """May the actor write the agent's files here? (``file_writer``)."""
        decision = self._warm(_FILE_WRITER, identity) or await self._decide(_FILE_WRITER, identity)
        if self.observer is not None:
            self.observer(decision)
        return decision

    async def check_cron(self, identity: Identity | None = None) -> Decision:
        """May the actor manage cron jobs here? (``cron`` or ``file_writer``)."""
        decision = self._warm(_CRON, identity) or await self._decide(_CRON, identity)
        if self.observer is not None:
            self.observer(decision)
        return decision

    async def check_context_files(self, identity: Identity | None = None) -> Decision:
        """May the actor change context files here? (``context_files`` or ``file_writer``)."""
        decision = self._warm(_CONTEXT_FILES, identity) or await self._decide(
            _CONTEXT_FILES, identity
        )
        if self.observer is not None:
            self.observer(decision)
        return decision

    async def check(self, config_type: str, identity: Identity | None = None) -> Decision:
        """Decide ``config_type`` for ``identity`` (default: the bound one).

        With no identity given and none bound the check denies (``empty_sender``): a run
        that forgot to bind must not pass for a direct chat.
        """
        if config_type not in CHECK_TYPES:
            parse_check_type(config_type)  # raises the one clear GrantError
        decision = self._warm(config_type, identity) or await self._decide(config_type, identity)
        if self.observer is not None:
            self.observer(decision)
        return decision

    def _warm(self, config_type: str, identity: Identity | None) -> Decision | None:
        """A cached allow, without awaiting anything; ``None`` sends the check the long way.

        Only group checks that passed every pre-lookup rule are ever cached, so a hit needs
        no further test except the role (a bypass must keep its own reason).
        """
        if identity is None or identity.role in BYPASS_ROLES:
            return None
        hit: Decision | None = self._cache.get(
            (
                identity.agent_id,
                identity.tenant_id,
                identity.user_id,
                identity.sender_id,
                identity.channel,
                config_type,
            )
        )
        return hit if hit is not None and hit.allowed else None

    async def _decide(self, config_type: str, identity: Identity | None) -> Decision:
        if identity is None:
            bound = current_identity()
            if bound is None:
                return self._deny(_NO_IDENTITY, Reason.EMPTY_SENDER, "", config_type)
            identity = bound
            warm = self._warm(config_type, identity)
            if warm is not None:
                return warm
        agent_id = identity.agent_id
        if agent_id is not None:
            stored = _agent_ref(agent_id)[0]
            if stored != agent_id:
                # Stored ids are lowercase; an uppercase spelling must name the same agent.
                identity = replace(identity, agent_id=stored)
        scope = identity.user_id
        if not Scope.is_group_id(scope):
            return Decision(True, Reason.NOT_GROUP_CONTEXT, scope, identity.sender_id, config_type)
        if identity.role in BYPASS_ROLES:
            return Decision(True, Reason.ROLE_BYPASS, scope, identity.sender_id, config_type)
        agent_id = identity.agent_id
        if agent_id is None:
            return self._deny(identity, Reason.NO_AGENT, identity.sender_id, config_type)
        cached: Decision | None = self._cache.get(
            (agent_id, identity.tenant_id, scope, identity.sender_id, identity.channel, config_type)
        )
        if cached is not None:
            if not cached.allowed:
                self._audit_deny(identity, cached)  # every denial is audited, warm or not
            return cached
        return await self._cold(identity, agent_id, config_type)

    async def _cold(self, identity: Identity, agent_id: str, config_type: str) -> Decision:
        types = accepted_types(config_type)
        sender, not_person = _sender(identity.user_id, identity.sender_id, identity.channel)
        if not_person is not None:
            return self._deny(identity, not_person, sender, config_type)
        if not _agent_ref(agent_id)[1]:
            return self._deny(identity, Reason.NO_AGENT, sender, config_type)
        scope = identity.user_id
        tenant_id = identity.tenant_id
        if tenant_id and has_unstorable(tenant_id):
            return self._deny(identity, Reason.INVALID_IDENTITY, sender, config_type)
        generation = await self.store.cache_generation(agent_id)  # starts the change feed
        account = person = ""
        try:
            if self.links is not None:
                account, person = await self._person(identity, agent_id)
            lookup = await self.store.check(
                agent_id=agent_id,
                scopes=candidate_scopes(scope),
                config_types=types,
                sender_id=sender,
                tenant_id=tenant_id or None,
                person=person,
            )
        except StoreError as exc:  # the store wraps its backend's errors, a closed one's too
            return await self._store_failed(identity, sender, config_type, exc, account, person)
        reason = _LOOKUP_REASON[lookup]
        decision = Decision(
            lookup is GrantLookup.ALLOW, reason, scope, sender, str(config_type), account, person
        )
        self._cache.put(
            (
                agent_id,
                identity.tenant_id,
                scope,
                identity.sender_id,
                identity.channel,
                config_type,
            ),
            decision,
            generation,
        )
        if not decision.allowed:
            self._audit_deny(identity, decision)
        return decision

    async def _person(self, identity: Identity, agent_id: str) -> tuple[str, str]:
        """The acting account and the person it is linked to (``person:<uuid>`` or ``""``)."""
        found = identity.account
        if found is None or self.links is None:
            return "", ""
        person = await self.links.person_of_agent_account(found, agent_id)
        return str(found), str(Scope.person(person)) if person else ""

    async def _store_failed(
        self,
        identity: Identity,
        sender: str,
        config_type: str,
        exc: Exception,
        account: str = "",
        person: str = "",
    ) -> Decision:
        if self.strict:
            _log.warning(
                "permission store failed; denying %s for sender %s in %s (agent %s, strict): %s",
                config_type,
                shown_path(sender),
                shown_path(identity.user_id),
                identity.agent_id,
                exc,
            )
            return self._deny(
                identity, Reason.STORE_ERROR_FAIL_CLOSED, sender, config_type, account, person
            )
        _log.warning(
            "permission store failed; allowing %s for sender %s in %s (agent %s): %s",
            config_type,
            shown_path(sender),
            shown_path(identity.user_id),
            identity.agent_id,
            exc,
        )
        decision = Decision(
            True,
            Reason.STORE_ERROR_FAIL_OPEN,
            identity.user_id,
            sender,
            str(config_type),
            account,
            person,
        )
        if not self.audit:
            return decision
        audited = await self.store.audit.record(
            AuditEntry(
                action=AuditAction.CHECK_FAIL_OPEN,
                sender_id=sender,
                scope=identity.user_id,
                agent_id=identity.agent_id,
                tenant_id=identity.tenant_id,
                config_type=str(config_type),
                reason=decision.reason,
                detail={"error": str(exc), **({"person": person} if person else {})},
            )
        )
        if not audited:
            # An allow nobody can see in the audit log yet: the log must say so, loudly.
            _log.error(
                "fail-open allow not audited yet (row queued for retry): allowed=%s reason=%s"
                " config_type=%s sender=%s scope=%s agent=%s",
                decision.allowed,
                decision.reason.value,
                decision.config_type,
                shown_path(decision.sender_id),
                shown_path(decision.scope),
                identity.agent_id,
            )
        return decision

    def _deny(
        self,
        identity: Identity,
        reason: Reason,
        sender: str,
        config_type: str,
        account: str = "",
        person: str = "",
    ) -> Decision:
        decision = Decision(
            False, reason, identity.user_id, sender, str(config_type), account, person
        )
        self._audit_deny(identity, decision)
        return decision

    def _audit_deny(self, identity: Identity, decision: Decision) -> None:
        # A denial does not wait for its row: the audit writer builds it and commits it with
        # its group (a flood of denials costs a few transactions and never slows the checks).
        if self.audit:
            self.store.audit.deny_later(
                identity, decision.config_type, decision.reason, decision.sender_id, decision.person
            )

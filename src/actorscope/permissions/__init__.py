"""Permissions: grants per tenant and agent, fail-closed group checks, writers, links, audit."""

from actorscope.permissions._audit import AuditAction, AuditEntry, AuditLog
from actorscope.permissions._cache import DecisionCache
from actorscope.permissions._grants import GrantStore
from actorscope.permissions._links import Link, LinkMode, LinkOutcome, LinkReason, LinkStore
from actorscope.permissions._ownership import owner_for_new_row, owns
from actorscope.permissions._policy import (
    BYPASS_ROLES,
    Decision,
    DecisionObserver,
    PermissionPolicy,
    Reason,
    non_person_reason,
)
from actorscope.permissions._records import Grant, GrantKey, GrantLookup
from actorscope.permissions._scopes import (
    CONFIG_TYPES,
    ConfigType,
    Permission,
    parse_check_type,
    parse_config_type,
    parse_grant_scope,
    parse_grantee,
    parse_permission,
)
from actorscope.permissions._watch import GrantChangeWatcher
from actorscope.permissions._writers import (
    WriterDecision,
    WriterManager,
    WriterReason,
    WriterRole,
    writer_scope,
)

__all__ = [
    "BYPASS_ROLES",
    "CONFIG_TYPES",
    "AuditAction",
    "AuditEntry",
    "AuditLog",
    "ConfigType",
    "Decision",
    "DecisionCache",
    "DecisionObserver",
    "Grant",
    "GrantChangeWatcher",
    "GrantKey",
    "GrantLookup",
    "GrantStore",
    "Link",
    "LinkMode",
    "LinkOutcome",
    "LinkReason",
    "LinkStore",
    "Permission",
    "PermissionPolicy",
    "Reason",
    "WriterDecision",
    "WriterManager",
    "WriterReason",
    "WriterRole",
    "non_person_reason",
    "owner_for_new_row",
    "owns",
    "parse_check_type",
    "parse_config_type",
    "parse_grant_scope",
    "parse_grantee",
    "parse_permission",
    "writer_scope",
]

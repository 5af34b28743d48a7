"""Permissions: grants per tenant and agent, fail-closed group checks, writers, links, audit."""

from actorscope.permissions._audit import AuditAction, AuditEntry, AuditLog
from actorscope.permissions._grants import GrantStore
from actorscope.permissions._links import Link, LinkMode, LinkOutcome, LinkStore
from actorscope.permissions._policy import (
    Decision,
    PermissionPolicy,
)
from actorscope.permissions._reasons import Reason
from actorscope.permissions._records import Grant
from actorscope.permissions._scopes import ConfigType, Permission
from actorscope.permissions._writers import (
    WriterDecision,
    WriterManager,
)

__all__ = [
    "AuditAction",
    "AuditEntry",
    "AuditLog",
    "ConfigType",
    "Decision",
    "Grant",
    "GrantStore",
    "Link",
    "LinkMode",
    "LinkOutcome",
    "LinkStore",
    "Permission",
    "PermissionPolicy",
    "Reason",
    "WriterDecision",
    "WriterManager",
]

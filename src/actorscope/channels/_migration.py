"""Moving a chat's grants when the chat changes id (Telegram group → supergroup).

The adapter reports the move as a :class:`~actorscope.channels._base.ScopeMigration`;
:func:`move_grants` applies it to a :class:`~actorscope.permissions.GrantStore`.
"""

from __future__ import annotations

from typing import Any

from actorscope.channels._base import ScopeMigration
from actorscope.permissions import GrantStore

__all__ = ["move_grants"]


async def move_grants(store: GrantStore, migration: ScopeMigration, *, moved_by: str = "") -> int:
    """Copy every grant of the old scope to the new one, then revoke the old; return the count.

    A grant already present under the same key in the new scope is newer and wins. Copying
    is one transaction and revoking another, in that order: if the second fails, the old
    (now unreachable) chat keeps stale rows and running the move again finishes it.
    Both steps are audited as ``moved_by``.
    """
    old = await store.list(scope=migration.old_scope)
    if not old:
        return 0
    present = {
        (grant.agent_id, grant.config_type, grant.sender_id)
        for grant in await store.list(scope=migration.new_scope)
    }
    rows: list[dict[str, Any]] = [
        {
            "agent_id": grant.agent_id,
            "scope": migration.new_scope,
            "config_type": grant.config_type,
            "sender_id": grant.sender_id,
            "permission": grant.permission,
            "granted_by": moved_by or grant.granted_by,
            "metadata": {**grant.metadata, "migrated_from": migration.old_scope},
        }
        for grant in old
        if (grant.agent_id, grant.config_type, grant.sender_id) not in present
    ]
    moved = await store.import_grants(rows) if rows else 0
    await store.revoke_many(old, revoked_by=moved_by)
    return moved

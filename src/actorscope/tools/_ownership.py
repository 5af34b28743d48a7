"""Row ownership: new rows are written with the actor; legacy rows carry the scope.

:func:`owns` accepts either, so rows written before the actor/scope split stay reachable;
:func:`owner_for_new_row` is what a writer stores. Ownership never goes to a non-person: in a
group context an identity whose sender is no person
(:meth:`PermissionPolicy.non_person_reason`: empty, synthetic, placeholder, or a look-alike id
such as ``"042"`` in a Telegram group) owns nothing and its new rows record no owner (``""``).
"""

from __future__ import annotations

from actorscope.identity import Identity, Scope, SenderKind
from actorscope.permissions import PermissionPolicy

__all__ = ["owner_for_new_row", "owns"]


def _no_person_in_group(identity: Identity) -> bool:
    return (
        Scope.is_group_id(identity.user_id)
        and PermissionPolicy.non_person_reason(identity) is not None
    )


def owns(owner_id: str, identity: Identity) -> bool:
    """True iff ``owner_id`` names the identity's actor (new rows) or its scope (legacy rows).

    An empty owner matches nobody; a legacy ``"<id>|<name>"`` owner is split first. In a
    group, an identity that is no person owns nothing.
    """
    owner = SenderKind.normalize_id(owner_id)
    if not owner or _no_person_in_group(identity):
        return False
    actor = SenderKind.normalize_id(identity.actor_id)
    return owner == actor or owner == identity.user_id


def owner_for_new_row(identity: Identity) -> str:
    """The owner id to store on a row this identity creates: the actor, or ``""`` for none.

    ``""`` when the identity is no person in a group context (its actor would otherwise be
    the group scope, which every member owns as a legacy row).
    """
    if _no_person_in_group(identity):
        return ""
    return SenderKind.normalize_id(identity.actor_id)

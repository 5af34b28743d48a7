"""Row ownership: new rows are written with the actor; legacy rows carry the scope.

:func:`owns` accepts either, so rows written before the actor/scope split stay reachable;
:func:`owner_for_new_row` is what a writer stores.
"""

from __future__ import annotations

from actorscope.identity import Identity, normalize_sender_id

__all__ = ["owner_for_new_row", "owns"]


def owns(owner_id: str, identity: Identity) -> bool:
    """True iff ``owner_id`` names the identity's actor (new rows) or its scope (legacy rows).

    An empty owner matches nobody; a legacy ``"<id>|<name>"`` owner is split first.
    """
    owner = normalize_sender_id(owner_id)
    if not owner:
        return False
    actor = normalize_sender_id(identity.actor_id)
    return owner == actor or owner == identity.user_id


def owner_for_new_row(identity: Identity) -> str:
    """The owner id to store on a row this identity creates: always the actor."""
    return normalize_sender_id(identity.actor_id)

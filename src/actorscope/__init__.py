"""actorscope: scope and actor identity for chat bots and agent hosts in group chats.

The scope (``user_id``) says where a message belongs; the actor (``sender_id``) says who
sent it. Memory follows the scope; permissions, audit and ownership follow the actor.
"""

from actorscope._version import __version__
from actorscope.context import (
    actor_id_from_context,
    bind_identity,
    current_identity,
    role_from_context,
    sender_id_from_context,
    user_id_from_context,
)
from actorscope.errors import ActorscopeError
from actorscope.identity import (
    Identity,
    PeerKind,
    SenderKind,
    is_group_scope,
    is_placeholder_sender,
    is_synthetic_sender,
    normalize_sender_id,
)
from actorscope.messages import InboundMessage, OutboundMessage, RunRequest
from actorscope.store import Database

__all__ = [
    "ActorscopeError",
    "Database",
    "Identity",
    "InboundMessage",
    "OutboundMessage",
    "PeerKind",
    "RunRequest",
    "SenderKind",
    "__version__",
    "actor_id_from_context",
    "bind_identity",
    "current_identity",
    "is_group_scope",
    "is_placeholder_sender",
    "is_synthetic_sender",
    "normalize_sender_id",
    "role_from_context",
    "sender_id_from_context",
    "user_id_from_context",
]

"""actorscope: scope and actor identity for chat bots and agent hosts in group chats.

The scope (``user_id``) says where a message belongs; the actor (``sender_id``) says who
sent it. Memory follows the scope; permissions, audit and ownership follow the actor.

Every name has one home: :mod:`actorscope.identity` (``Identity`` and its builders),
:mod:`actorscope.context` (``bind_identity`` and the ``*_from_context`` helpers),
:mod:`actorscope.messages`, :mod:`actorscope.errors`, ``actorscope.store.Database`` and the
other packages' faces. This module holds the version only.
"""

from actorscope._version import __version__

__all__ = ["__version__"]

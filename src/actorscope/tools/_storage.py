"""Storage keys: which files and which memory rows a run's scope reaches.

The scope string is the identity table's (docs/design.md, ``user_id``); the storage key adds
what the scope string leaves out. A group or guild scope already names its channel
(``group:telegram:-100``), so it is its own key. A direct scope is only the person's id on
some channel, and ids of different channels collide (HTTP user ``"4242"``, Telegram user
4242), so its key includes the channel: ``direct:<channel>:<user id>``, the channel with ``%``
and ``:`` escaped so the key splits one way only.

A direct scope without a channel (a system run that did not say which channel it inherits)
has no key: it is refused as ``no_scope`` rather than share ``direct::<id>`` with every other
channel's runs for that id.

A linked person's scope (``person:<uuid>``, where an agent opts in to ``links = "dm"``) is
its own key, like a group's: it is the same on every channel on purpose, and only a link
(never a platform id or an HTTP user id) makes it.

One exception keeps data written before channels were part of the key readable: a direct
scope on a platform whose registration says ``legacy_direct_keys`` (Telegram's private chats,
whose scope is the user's canonical numeric id) keeps the bare id as its key. Only one
platform may say so (a registration cannot), and no other key is all digits (the others
start with ``group:``, ``guild:``, ``person:`` or ``direct:``), so it collides with nothing.
Files and memory rows that other channels' direct scopes wrote under a bare id before the
channel joined the key are therefore seen by that platform's user of that id only.
"""

from __future__ import annotations

from actorscope._input import shown_path
from actorscope.errors import ToolError
from actorscope.identity import Identity, Scope
from actorscope.platforms import platform_spec

__all__ = ["DIRECT_PREFIX", "require_scope", "storage_scope"]

DIRECT_PREFIX = "direct:"


def require_scope(identity: Identity) -> str:
    """The identity's scope; ``no_scope`` when none is bound (no or an invalid identity)."""
    if not identity.user_id:
        raise ToolError("no_scope", "this call has no scope: no valid identity is bound to the run")
    return identity.user_id


def _escape_channel(channel: str) -> str:
    return channel.replace("%", "%25").replace(":", "%3A")


def storage_scope(identity: Identity) -> str:
    """The key the identity's files and memory are stored under (see the module text)."""
    scope = require_scope(identity)
    if Scope.is_group_id(scope) or scope.startswith(Scope.PERSON_PREFIX):
        # A linked person's scope (links = "dm") is one across channels: that is its point.
        return scope
    if not identity.channel:
        raise ToolError(
            "no_scope",
            f"the direct scope {shown_path(scope)} names no channel: a run that inherits a "
            "direct scope must say its channel (Identity.system(..., channel=...))",
        )
    if scope.isascii() and scope.isdigit() and _bare_direct_keys(identity.channel):
        return scope
    return f"{DIRECT_PREFIX}{_escape_channel(identity.channel)}:{scope}"


def _bare_direct_keys(channel: str) -> bool:
    """Whether ``channel``'s platform keeps a direct scope's bare id as its key (its
    registration's ``legacy_direct_keys``); a channel of no platform does not."""
    spec = platform_spec(channel)
    return spec is not None and spec.legacy_direct_keys

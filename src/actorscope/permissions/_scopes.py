"""What a grant may name: scope patterns, config types, grantees, and the scopes a check matches.

A grant's ``scope`` is an exact scope, ``*``, or a prefix ending in ``:*``; its ``sender_id`` is
one sender id or ``*``. A check computes every pattern that could match its scope
(:func:`candidate_scopes`), so the store answers with one indexed query.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from enum import StrEnum
from functools import lru_cache

from actorscope.errors import GrantError, IdentityError
from actorscope.identity import Identity, Scope, SenderKind
from actorscope.platforms import PlatformSpec, platform_spec

__all__ = [
    "ANY",
    "CHECK_TYPES",
    "CONFIG_TYPES",
    "ConfigType",
    "Permission",
    "accepted_types",
    "candidate_scopes",
    "grantee_problem",
    "parse_check_type",
    "parse_config_type",
    "parse_grant",
    "parse_grant_scope",
    "parse_grantee",
    "parse_permission",
]

#: The wildcard of a grant's scope, config type or sender.
ANY = "*"


class ConfigType(StrEnum):
    """What a grant permits; ``*`` covers every type."""

    FILE_WRITER = "file_writer"
    CRON = "cron"
    HEARTBEAT = "heartbeat"
    CONTEXT_FILES = "context_files"
    ANY = "*"

    @classmethod
    def parse_check(cls, value: object, *, scope: object = None) -> str:
        """A check's config type: a concrete type, never ``*``; with ``scope``, that scope
        first: a concrete one a check can run in (no ``*``, no ``<prefix>:*``). One
        :class:`~actorscope.errors.GrantError` says what is wrong."""
        return parse_check_type(value, scope=scope)


class Permission(StrEnum):
    """A grant allows or denies."""

    ALLOW = "allow"
    DENY = "deny"


CONFIG_TYPES: frozenset[str] = frozenset(ConfigType)
#: The types a check can ask about (a check is always about one concrete type).
CHECK_TYPES: frozenset[str] = CONFIG_TYPES - {ANY}

# A cron job or a context file is a weaker form of writing: a file writer may do both.
# Plain strings, not the enum members: a driver binds a str subclass through its adapter
# lookup (measured +0.5 us per check on sqlite3).
_ACCEPTED: dict[str, tuple[str, ...]] = {
    ConfigType.FILE_WRITER: (ConfigType.FILE_WRITER.value, ANY),
    ConfigType.CRON: (ConfigType.CRON.value, ConfigType.FILE_WRITER.value, ANY),
    ConfigType.HEARTBEAT: (ConfigType.HEARTBEAT.value, ANY),
    ConfigType.CONTEXT_FILES: (
        ConfigType.CONTEXT_FILES.value,
        ConfigType.FILE_WRITER.value,
        ANY,
    ),
}

_ID = re.compile(r"-?[0-9]{1,32}")
_CHANNEL = re.compile(r"[a-z0-9][a-z0-9_.-]{0,63}")
_EXACT_ID = re.compile(r"[^\s:*|]{1,256}")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _platform_id(segment: str) -> bool:
    # Canonical only ("-0100" is not "-100"), or a grant could be written that no check matches.
    return _ID.fullmatch(segment) is not None and str(int(segment)) == segment


def _literal(word: str) -> Callable[[str], bool]:
    return word.__eq__


# The segment shapes of the two group scopes: group:<channel>:<chat>, guild:<gid>:user:<uid>.
_SHAPES: dict[str, tuple[Callable[[str], bool], ...]] = {
    "group": (_literal("group"), lambda s: _CHANNEL.fullmatch(s) is not None, _platform_id),
    "guild": (_literal("guild"), _platform_id, _literal("user"), _platform_id),
}
_SCOPE_FORMS = (
    "an exact id, '*', 'group:<channel>:<chat>', 'guild:<gid>:user:<uid>', "
    "or a prefix of those ending in ':*' (e.g. 'guild:<gid>:*')"
)


def parse_config_type(value: object) -> str:
    """A grant's config type: one of ``file_writer cron heartbeat context_files *``."""
    if not isinstance(value, str) or value not in CONFIG_TYPES:
        raise GrantError(
            f"config type must be one of {', '.join(sorted(CONFIG_TYPES))}; got {value!r}"
        )
    return value


def parse_check_type(value: object, *, scope: object = None) -> str:
    """A check's config type: a concrete type, never ``*``; with ``scope``, that scope first:
    a concrete one a check can run in (no ``*``, no ``<prefix>:*``)."""
    if scope is not None:
        parse_grant_scope(scope, pattern=False)
    if not isinstance(value, str) or value not in CHECK_TYPES:
        raise GrantError(
            f"a check's config type must be one of {', '.join(sorted(CHECK_TYPES))}; got {value!r}"
        )
    return value


def accepted_types(config_type: str) -> tuple[str, ...]:
    """The grant types that answer a check of ``config_type`` (``*`` included)."""
    return _ACCEPTED[parse_check_type(config_type)]


def parse_permission(value: object) -> str:
    """``allow`` or ``deny``."""
    if value not in (Permission.ALLOW, Permission.DENY) or not isinstance(value, str):
        raise GrantError(f"permission must be 'allow' or 'deny', got {value!r}")
    return str(value)


def _segments_match(segments: list[str], *, prefix: bool) -> bool:
    shape = _SHAPES.get(segments[0])
    if shape is None:
        return False
    if len(segments) > len(shape) or (not prefix and len(segments) != len(shape)):
        return False
    if prefix and len(segments) == len(shape):
        return False  # "group:telegram:-1:*" has nothing left to match
    if segments[0] == "group" and len(segments) == 3:
        # A group's chat id is its channel's platform's form (an opaque platform's "ideas").
        return shape[1](segments[1]) and _chat_id(segments[1], segments[2])
    return all(ok(segment) for ok, segment in zip(shape, segments, strict=False))


def _chat_id(channel: str, segment: str) -> bool:
    # Canonical only, or a grant could be written that no check matches.
    try:
        return PlatformSpec.canonical_chat_id(channel, segment) == segment
    except IdentityError:
        return False


def parse_grant_scope(value: object, *, pattern: bool = True) -> str:
    """Validate a scope: exact, or (when ``pattern``) ``*`` or a ``<prefix>:*``.

    Group scopes must have the canonical shape (``group:<channel>:<chat>``,
    ``guild:<gid>:user:<uid>``) so that a grant can never be written that no check matches.
    """
    if not isinstance(value, str) or not value:
        raise GrantError(f"scope must be {_SCOPE_FORMS}; got {value!r}")
    if value == ANY:
        if pattern:
            return value
        raise GrantError("a check needs a concrete scope, not '*'")
    if value.endswith(":*"):
        if not pattern:
            raise GrantError(f"a check needs a concrete scope, not the pattern {value!r}")
        head = value[:-2].split(":")
        if _segments_match(head, prefix=True):
            return value
        raise GrantError(f"bad scope prefix {value!r}: scope must be {_SCOPE_FORMS}")
    if Scope.is_group_id(value):
        if _segments_match(value.split(":"), prefix=False):
            return value
        raise GrantError(f"bad group scope {value!r}: scope must be {_SCOPE_FORMS}")
    if _EXACT_ID.fullmatch(value):
        return value
    raise GrantError(f"bad scope {value!r}: scope must be {_SCOPE_FORMS}")


def grantee_problem(value: object, scope: str = "") -> str:
    """Why ``value`` cannot be a grant's ``sender_id`` (in ``scope``, if given); ``""`` if it can.

    With ``scope``, the sender must also be an id a check in that scope could look up, by the
    policy's own rule (:meth:`~actorscope.identity.Identity.problem`): in a Telegram or Discord
    group scope (``group:telegram:...``, ``group:discord:...``, ``guild:...``, a legacy
    two-part ``group:<chat>``, and their ``:*`` prefixes) a canonical id, so ``"042"``,
    ``"42\u200b"`` and full-width digits are refused instead of stored as a grant that no
    check matches; in any group scope no format or compatibility characters.
    """
    if not isinstance(value, str):
        return f"grant sender must be a sender id or '*', got {value!r}"
    if value == ANY:
        return ""
    if value.startswith(Scope.PERSON_PREFIX):
        # A linked person: covers each of its accounts where links = "grants".
        if _UUID.fullmatch(value[len(Scope.PERSON_PREFIX) :]) is None:
            return f"a person grantee is person:<uuid>, got {value!r}"
        return ""
    sender = SenderKind.normalize_id(value)
    if SenderKind.is_synthetic(sender) or SenderKind.is_placeholder(sender):
        return f"grant sender {value!r} is not a person; no check would ever match it"
    if not sender or _EXACT_ID.fullmatch(sender) is None:
        platform, colon, bare = sender.partition(":")
        if colon and platform_spec(platform) is not None:
            return (
                f"grant sender must be a sender id or '*', got {value!r}: a grant names the bare "
                f"id ({bare!r}) or the person of linked accounts (person:<uuid>)"
            )
        return f"grant sender must be a sender id or '*', got {value!r}"
    problem = Identity.problem(scope, sender) if scope else None
    if problem is not None:
        return f"grant sender {value!r} cannot act in scope {scope!r}: {problem}"
    return ""


def parse_grantee(value: object, scope: str = "") -> str:
    """A grant's ``sender_id``: ``*`` or one person's sender id (legacy ``id|name`` is split).

    With ``scope`` (the grant's), the id must be one a check there can match
    (:func:`grantee_problem`).
    """
    problem = grantee_problem(value, scope)
    if problem:
        raise GrantError(problem)
    return SenderKind.normalize_id(str(value))


def parse_grant(
    scope: object, config_type: object, sender_id: object, permission: object = Permission.ALLOW
) -> str:
    """What a grant names, checked as :meth:`~actorscope.permissions.GrantStore.grant` checks it,
    in this order: the scope (exact, ``*`` or a ``<prefix>:*``), the config type, the grantee
    (``*`` or a person a check in that scope can match) and ``allow`` / ``deny``. Returns the
    canonical grantee; one :class:`~actorscope.errors.GrantError` says what is wrong."""
    where = parse_grant_scope(scope)
    parse_config_type(config_type)
    grantee = parse_grantee(sender_id, where)
    parse_permission(permission)
    return grantee


# A pure function of the scope, asked by every cold check in the same group again: bounded;
# typed, so a str subclass never shares an answer.
@lru_cache(maxsize=4096, typed=True)
def candidate_scopes(scope: str) -> tuple[str, ...]:
    """Every grant scope that matches ``scope``: itself, each ``<prefix>:*``, and ``*``."""
    found = [scope]
    colon = scope.find(":")
    while colon != -1:  # one prefix per colon, shortest first
        found.append(scope[:colon] + ":*")
        colon = scope.find(":", colon + 1)
    found.append(ANY)
    return tuple(found)

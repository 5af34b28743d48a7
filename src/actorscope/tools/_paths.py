"""Workspace paths: ``tenants/<tenant UUID>/agents/<sanitised key>/`` under a root, no escape.

The same key names a different agent in each tenant, so the tenant is part of every path:
tenants that share a root never share a directory. A removed agent's directory is archived
beside the live ones as ``<key>~<agent UUID>`` (``~`` never appears in a key, so an archive
never takes a live key's name). :func:`workspace_path` is the layout before tenants
(``agents/<key>/``), kept to find workspaces written that way. Keys are case-sensitive, so
``Bot`` and ``bot`` are two agents; on a case-insensitive file system they would share a
directory.
"""

from __future__ import annotations

import re
from pathlib import Path

from actorscope._input import is_uuid
from actorscope.errors import IdentityError

__all__ = [
    "AGENTS_DIR",
    "TENANTS_DIR",
    "UnsafeKeyError",
    "archived_workspace_path",
    "sanitise_key",
    "tenant_workspace_path",
    "workspace_path",
]


class UnsafeKeyError(IdentityError):
    """An agent key cannot be used as a path segment (an
    :class:`~actorscope.errors.IdentityError`)."""


AGENTS_DIR = "agents"
TENANTS_DIR = "tenants"

# No leading dot (hidden, `.`), no trailing dot (Windows drops it: `bot.` would be `bot`).
_SAFE = re.compile(r"[A-Za-z0-9_-](?:[A-Za-z0-9._-]{0,62}[A-Za-z0-9_-])?")
# Names Windows reserves in every directory, with or without an extension.
_RESERVED = re.compile(r"(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?", re.IGNORECASE)


def sanitise_key(key: object) -> str:
    """``key`` as one safe path segment, or :class:`UnsafeKeyError` saying why it is not."""
    if not isinstance(key, str):
        raise UnsafeKeyError(f"agent key must be a string, got {key!r}")
    if not key:
        raise UnsafeKeyError("agent key is empty; it cannot name a workspace")
    if "\x00" in key:
        raise UnsafeKeyError(f"agent key {key!r} contains NUL")
    if "/" in key or "\\" in key:
        raise UnsafeKeyError(f"agent key {key!r} contains a path separator")
    if ".." in key:
        raise UnsafeKeyError(f"agent key {key!r} contains '..'")
    if _SAFE.fullmatch(key) is None:
        raise UnsafeKeyError(
            f"agent key {key!r} cannot be a path segment: use 1-64 letters, digits, '_', '-' "
            "or '.', not starting or ending with '.'"
        )
    if _RESERVED.fullmatch(key):
        raise UnsafeKeyError(f"agent key {key!r} is a reserved device name on Windows")
    return key


def workspace_path(root: str | Path, key: str) -> Path:
    """``<root>/agents/<key>/``: the layout before tenants (the directory is not created)."""
    base = Path(root) / AGENTS_DIR
    path = base / sanitise_key(key)
    # Belt and braces: the checks above already rule out every way out of `base`.
    if path.parent != base:
        raise UnsafeKeyError(f"agent key {key!r} escapes {str(base)!r}")
    return path


def _uuid_segment(value: object, what: str) -> str:
    if not is_uuid(value):
        raise UnsafeKeyError(f"{what} {value!r} is not a canonical UUID; it cannot name a path")
    return str(value)


def tenant_workspace_path(root: str | Path, tenant_id: str, key: str) -> Path:
    """``<root>/tenants/<tenant UUID>/agents/<key>/`` (the directory is not created)."""
    tenant = _uuid_segment(tenant_id, "tenant id")
    return workspace_path(Path(root) / TENANTS_DIR / tenant, key)


def archived_workspace_path(root: str | Path, tenant_id: str, key: str, agent_id: str) -> Path:
    """``<root>/tenants/<tenant UUID>/agents/<key>~<agent UUID>/``: a removed agent's files."""
    live = tenant_workspace_path(root, tenant_id, key)
    return live.with_name(f"{live.name}~{_uuid_segment(agent_id, 'agent id')}")

"""Workspace paths: ``agents/<sanitised key>/`` under a root, never a UUID, never an escape.

The root is the caller's (one per tenant when tenants share a disk: the same key names a
different agent in each tenant). Keys are case-sensitive, so ``Bot`` and ``bot`` are two
agents; on a case-insensitive file system they would share a directory.
"""

from __future__ import annotations

import re
from pathlib import Path

from actorscope.errors import UnsafeKeyError

__all__ = ["AGENTS_DIR", "sanitise_key", "workspace_path"]

AGENTS_DIR = "agents"

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
    """``<root>/agents/<key>/`` for a safe key (the directory is not created)."""
    base = Path(root) / AGENTS_DIR
    path = base / sanitise_key(key)
    # Belt and braces: the checks above already rule out every way out of `base`.
    if path.parent != base:
        raise UnsafeKeyError(f"agent key {key!r} escapes {str(base)!r}")
    return path

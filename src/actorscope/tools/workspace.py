"""Per-scope file workspaces: ``<root>/agents/<agent key>/<scope>/`` and nothing outside it.

A scope's directory is named by :func:`scope_segment`, an injective, portable encoding of the
scope (``group:telegram:-100`` and ``group_telegram_-100`` never share a directory). A path a
model gives is relative to that directory: absolute paths, ``..`` and anything that resolves
outside the directory (a symlink pointing out, say) are refused before any file is touched.
Writes are atomic: a temporary file in the target's directory, then :func:`os.replace`.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from pathlib import Path, PurePosixPath, PureWindowsPath

from actorscope._text import has_lone_surrogate
from actorscope.agents.paths import workspace_path
from actorscope.errors import ToolError

__all__ = ["MAX_FILE_BYTES", "MAX_PATH_CHARS", "Workspace", "scope_segment"]

#: The largest file a tool reads or writes (1 MiB).
MAX_FILE_BYTES = 1 << 20
#: The longest relative path a tool accepts.
MAX_PATH_CHARS = 1024

_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.")
_RESERVED = re.compile(r"(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?", re.IGNORECASE)
_MAX_SEGMENT = 200
_KEEP_BEFORE_HASH = 120


def _escape(ch: str) -> str:
    return "".join(f"%{byte:02X}" for byte in ch.encode("utf-8", "surrogatepass"))


def scope_segment(scope: str) -> str:
    """The directory name of ``scope``: one path segment, different for every scope.

    Letters, digits, ``_``, ``-`` and inner ``.`` stay; every other character becomes
    ``%XX`` per UTF-8 byte (``%`` itself included, so decoding is unambiguous). A leading or
    trailing dot, and Windows device names, are escaped too; a very long name keeps its start
    and ends in ``~`` plus a SHA-256 of the scope (``~`` never appears otherwise).
    """
    if not scope:
        raise ToolError("no_scope", "this call has no scope (no identity is bound)")
    last = len(scope) - 1
    out = "".join(
        ch if ch in _SAFE and not (ch == "." and i in (0, last)) else _escape(ch)
        for i, ch in enumerate(scope)
    )
    if _RESERVED.fullmatch(out):
        out = _escape(out[0]) + out[1:]
    if len(out) > _MAX_SEGMENT:
        digest = hashlib.sha256(scope.encode("utf-8", "surrogatepass")).hexdigest()
        out = f"{out[:_KEEP_BEFORE_HASH]}~{digest}"
    return out


def _rejected(message: str, path: str) -> ToolError:
    return ToolError("path_rejected", message, path=path)


def _parts(relative: str) -> tuple[str, ...]:
    """The components of a model-given relative path, or ``path_rejected`` saying why not."""
    if not relative or not relative.strip():
        raise _rejected("path must not be empty", relative)
    if has_lone_surrogate(relative):
        # Echo it escaped: the raw string would fail again when the error is sent as UTF-8.
        shown = relative.encode("utf-8", "backslashreplace").decode("utf-8")
        raise _rejected("path is not valid Unicode text (it has a lone surrogate)", shown)
    if len(relative) > MAX_PATH_CHARS:
        raise _rejected(f"path is longer than {MAX_PATH_CHARS} characters", relative)
    if "\x00" in relative:
        raise _rejected("path contains NUL", relative)
    if "\\" in relative:
        raise _rejected("use '/' to separate path components, not '\\'", relative)
    windows = PureWindowsPath(relative)
    if PurePosixPath(relative).is_absolute() or windows.drive or windows.root:
        raise _rejected("path must be relative to the workspace, not absolute", relative)
    parts = tuple(part for part in relative.split("/") if part not in ("", "."))
    if ".." in parts:
        raise _rejected("path must not contain '..'", relative)
    if not parts:
        raise _rejected("path names the workspace itself, not a file", relative)
    return parts


class Workspace:
    """The workspaces under one root directory (one root per tenant if tenants share a disk)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)

    def directory(self, agent_key: str, scope: str) -> Path:
        """``<root>/agents/<agent key>/<scope segment>`` (not created)."""
        return workspace_path(self.root, agent_key) / scope_segment(scope)

    def _base(self, agent_key: str, scope: str, *, create: bool) -> Path | None:
        directory = self.directory(agent_key, scope)
        if create:
            directory.mkdir(parents=True, exist_ok=True)
        elif not directory.is_dir():
            return None
        base = directory.resolve(strict=True)
        if not base.is_relative_to(self.root.resolve()):
            raise _rejected("the workspace directory resolves outside the workspace root", "")
        return base

    @staticmethod
    def _contained(base: Path, parts: tuple[str, ...], relative: str) -> Path:
        # resolve() follows every symlink on the way, so a link (or a linked directory) that
        # points out of the workspace lands outside `base` and is refused here.
        target = base.joinpath(*parts).resolve(strict=False)
        if target == base or not target.is_relative_to(base):
            raise _rejected("path resolves outside the workspace (a symlink?)", relative)
        return target

    def resolve(self, agent_key: str, scope: str, relative: str) -> Path:
        """The real path ``relative`` names inside the scope's workspace, checked to stay inside."""
        parts = _parts(relative)
        base = self._base(agent_key, scope, create=True)
        if base is None:  # unreachable: created above
            raise _rejected("the workspace directory cannot be created", relative)
        return self._contained(base, parts, relative)

    def read(self, agent_key: str, scope: str, relative: str) -> str:
        """The UTF-8 text of a file in the scope's workspace."""
        parts = _parts(relative)
        base = self._base(agent_key, scope, create=False)
        if base is None:
            raise ToolError("not_found", f"no file {relative!r} in this workspace", path=relative)
        target = self._contained(base, parts, relative)
        if not target.is_file():
            raise ToolError("not_found", f"no file {relative!r} in this workspace", path=relative)
        with target.open("rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            raise ToolError("too_large", f"{relative!r} is larger than {MAX_FILE_BYTES} bytes")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise ToolError("not_text", f"{relative!r} is not UTF-8 text", path=relative) from None

    def write(self, agent_key: str, scope: str, relative: str, content: str) -> int:
        """Replace (or create) a file atomically; return the number of bytes written."""
        try:
            data = content.encode("utf-8")
        except UnicodeEncodeError:
            raise ToolError("not_text", "content is not valid Unicode text") from None
        if len(data) > MAX_FILE_BYTES:
            raise ToolError("too_large", f"content is larger than {MAX_FILE_BYTES} bytes")
        target = self.resolve(agent_key, scope, relative)
        if target.is_dir():
            raise _rejected("path names a directory", relative)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=target.parent, prefix=".", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temp, target)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
        return len(data)

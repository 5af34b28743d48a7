"""Per-scope file workspaces: ``<root>/tenants/<tenant>/agents/<agent key>/<scope>/``.

Every path names the agent's tenant, so tenants sharing a root never share a directory, and
nothing outside the scope's directory is reachable. A scope's directory is named by
:func:`scope_segment` of its storage key (:func:`~actorscope.tools._storage.storage_scope`: a
direct scope's key includes its channel), an injective, portable encoding
(``group:telegram:-100`` and ``group_telegram_-100`` never share a directory). A path a model
gives is relative to that directory: absolute paths, ``..`` and anything that resolves outside
the directory (a symlink pointing out, say) are refused with :class:`UnsafePathError` before
any file is touched; a file that is not there is :class:`FileMissingError`.

Writes are atomic: a temporary file in the target's directory, then :func:`os.replace`.
:meth:`Workspace.append` adds to a file under an exclusive lock, so concurrent appenders (threads
or processes) never lose each other's text.

**Agents and keys.** An agent's directory carries a marker with its UUID. A removed agent's
key can be taken by a new agent; the first time the new agent uses its workspace, the old
directory is archived as ``<key>~<old agent UUID>`` and the new agent starts empty. An agent
older than the marker's is refused (``agent_replaced``): it was removed and replaced.
:meth:`Workspace.archive` archives an agent's directory right away.

**Renames and removes.** The directory follows the agent, not the key: a renamed agent's
directory moves to its new key (:meth:`Workspace.rename`), a removed agent's is archived.
:meth:`Workspace.on_agent_changed` does both as
an agent listener (``AgentRegistry.subscribe``; the toolbox subscribes it to its registry, so a
rename or remove in the same process moves the files at once). A rename made by a process
that knows no workspace is caught up on first use: an agent whose directory is missing
takes its own live directory (its marker names the agent's UUID) from under its old key.

**The layout before tenants** (``<root>/agents/<key>/``, shared by every tenant) is migrated on
first use, for one tenant only: ``legacy_tenant``, the tenant the root served (``actorscope
run``: the bot's agent's; ``actorscope mcp``: its ``--tenant``). Its agent of that key moves the
old directory to the new place the first time it needs it. No other tenant ever adopts an old
directory (whose files may be another tenant's); without ``legacy_tenant`` old directories
stay where they are, untouched, for an operator to move
(``mv <root>/agents <root>/tenants/<tenant UUID>/agents``).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import re
import tempfile
import threading
from pathlib import Path, PurePosixPath, PureWindowsPath

from actorscope._text import has_lone_surrogate
from actorscope.agents import Agent
from actorscope.errors import ToolError
from actorscope.identity import Identity
from actorscope.tools._paths import (
    archived_workspace_path,
    tenant_workspace_path,
    workspace_path,
)
from actorscope.tools._storage import storage_scope

__all__ = [
    "AGENT_MARKER",
    "MAX_FILE_BYTES",
    "MAX_PATH_CHARS",
    "FileMissingError",
    "UnsafePathError",
    "Workspace",
    "scope_segment",
]

_log = logging.getLogger("actorscope.tools.workspace")

#: The largest file a tool reads or writes (1 MiB).
MAX_FILE_BYTES = 1 << 20
#: The longest relative path a tool accepts.
MAX_PATH_CHARS = 1024
#: The file in an agent's directory that names the agent owning it (a scope segment never
#: starts with a dot, so it is never a scope's directory).
AGENT_MARKER = ".agent.json"

_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.")
_RESERVED = re.compile(r"(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?", re.IGNORECASE)
_MAX_SEGMENT = 200
_KEEP_BEFORE_HASH = 120
# How often an appender reopens a file that a concurrent write() replaced under it.
_APPEND_ATTEMPTS = 8


class UnsafePathError(ToolError):
    """A path that could reach outside the scope's workspace, or is no file name at all."""

    def __init__(self, message: str, path: str) -> None:
        super().__init__("path_rejected", message, path=path)


class FileMissingError(ToolError):
    """A safe path that names no file in the scope's workspace (yet)."""

    def __init__(self, path: str) -> None:
        super().__init__("not_found", f"no file {path!r} in this workspace", path=path)


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


def _rejected(message: str, path: str) -> UnsafePathError:
    return UnsafePathError(message, path)


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


def _encode(content: str) -> bytes:
    try:
        data = content.encode("utf-8")
    except UnicodeEncodeError:
        raise ToolError("not_text", "content is not valid Unicode text") from None
    if len(data) > MAX_FILE_BYTES:
        raise ToolError("too_large", f"content is larger than {MAX_FILE_BYTES} bytes")
    return data


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:  # bounded: every round writes at least one byte, or raises
        written = os.write(fd, view)
        if written <= 0:
            raise ToolError("io_error", "the file system accepted no bytes")
        view = view[written:]


def _read_marker(directory: Path) -> dict[str, str] | None:
    """The owner recorded in ``directory``, or ``None`` when it has no (readable) marker."""
    try:
        document = json.loads((directory / AGENT_MARKER).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (ValueError, UnicodeDecodeError):
        # A damaged marker names no owner; the directory is claimed (and the marker rewritten).
        return None
    if not isinstance(document, dict) or not isinstance(document.get("agent_id"), str):
        return None
    return {"agent_id": document["agent_id"], "created_at": str(document.get("created_at", ""))}


def _write_marker(directory: Path, agent: Agent) -> None:
    body = json.dumps({"agent_id": agent.id, "key": agent.key, "created_at": agent.created_at})
    fd, temp = tempfile.mkstemp(dir=directory, prefix=".", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(body)
        os.replace(temp, directory / AGENT_MARKER)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


class Workspace:
    """The workspaces under one root directory, kept apart per tenant, agent and scope."""

    def __init__(self, root: str | os.PathLike[str], *, legacy_tenant: str | None = None) -> None:
        self.root = Path(root)
        self.legacy_tenant = legacy_tenant
        # Serialises claiming, archiving and migrating agent directories within this process
        # (tool calls run in worker threads); another process racing it gets an OS error.
        self._claim_lock = threading.Lock()

    def agent_directory(self, agent: Agent) -> Path:
        """``<root>/tenants/<tenant UUID>/agents/<agent key>`` (not created)."""
        return tenant_workspace_path(self.root, agent.tenant_id, agent.key)

    def directory(self, agent: Agent, identity: Identity) -> Path:
        """The directory of the identity's scope (its storage key) for ``agent`` (not created)."""
        return self.agent_directory(agent) / scope_segment(storage_scope(identity))

    def archive(self, agent: Agent) -> Path | None:
        """Move ``agent``'s directory to ``<key>~<agent UUID>``; its new path, or ``None``.

        Only a directory that is ``agent``'s (or unmarked) is archived; a newer agent's is not.
        """
        with self._claim_lock:
            live = self.agent_directory(agent)
            if not live.is_dir():
                return None
            marker = _read_marker(live)
            if marker is not None and marker["agent_id"] != agent.id:
                return None
            archived = archived_workspace_path(self.root, agent.tenant_id, agent.key, agent.id)
            os.rename(live, archived)
            return archived

    def rename(self, agent: Agent, old_key: str) -> Path | None:
        """Move ``agent``'s directory from ``old_key`` to its key now; its new path, or ``None``.

        Only a directory whose marker names ``agent`` moves. A directory already under the new
        key that belongs to another (removed) agent is archived first, as on first use.
        """
        with self._claim_lock:
            old = tenant_workspace_path(self.root, agent.tenant_id, old_key)
            return self._take_own(agent, old)

    def on_agent_changed(self, before: Agent, after: Agent | None) -> None:
        """An agent listener (``AgentRegistry.subscribe``): archive on remove, move on rename.

        Runs after the registry's change committed, so it never raises: a directory that
        cannot be moved is logged and left for the agent's first use to claim.
        """
        try:
            if after is None:
                self.archive(before)
            elif after.key != before.key:
                self.rename(after, before.key)
        except OSError as exc:
            _log.warning(
                "workspace of agent %s (tenant %s) not moved after its %s: %s",
                before.key,
                before.tenant_id,
                "removal" if after is None else "rename",
                exc,
            )

    def _take_own(self, agent: Agent, source: Path) -> Path | None:
        """Move ``source`` (if it is ``agent``'s) to the agent's directory; hold the claim lock."""
        live = self.agent_directory(agent)
        if source == live or not source.is_dir() or source.is_symlink():
            return None
        marker = _read_marker(source)
        if marker is None or marker["agent_id"] != agent.id:
            return None
        if live.exists():
            owner = _read_marker(live) if live.is_dir() else None
            if owner is None or owner["agent_id"] == agent.id:
                return None  # unmarked, or already this agent's: nothing is overwritten
            os.rename(
                live,
                archived_workspace_path(self.root, agent.tenant_id, agent.key, owner["agent_id"]),
            )
        os.rename(source, live)
        return live

    def _find_own(self, agent: Agent, live: Path) -> None:
        """Take the agent's live directory from under an old key (a rename elsewhere)."""
        if not live.parent.is_dir():
            return
        for entry in sorted(live.parent.iterdir()):
            # "~" marks an archived directory: a removed agent's, never taken back.
            if "~" not in entry.name and self._take_own(agent, entry) is not None:
                return

    def _adopt_legacy(self, agent: Agent, live: Path) -> None:
        if self.legacy_tenant is None or agent.tenant_id != self.legacy_tenant:
            return
        legacy = workspace_path(self.root, agent.key)
        if legacy.is_dir() and not legacy.is_symlink():
            live.parent.mkdir(parents=True, exist_ok=True)
            os.rename(legacy, live)

    def _agent_base(self, agent: Agent, *, create: bool) -> Path | None:
        """The agent's directory, claimed for it (migrating or archiving first); else ``None``."""
        with self._claim_lock:
            live = self.agent_directory(agent)
            if not live.exists():
                self._find_own(agent, live)
            if not live.exists():
                self._adopt_legacy(agent, live)
            archived = False
            if live.is_dir():
                marker = _read_marker(live)
                if marker is not None and marker["agent_id"] != agent.id:
                    if not agent.created_at or agent.created_at <= marker["created_at"]:
                        raise ToolError(
                            "agent_replaced",
                            f"the workspace of agent {agent.key!r} belongs to a newer agent with "
                            "that key; this agent was removed",
                        )
                    old = archived_workspace_path(
                        self.root, agent.tenant_id, agent.key, marker["agent_id"]
                    )
                    os.rename(live, old)
                    marker, archived = None, True
                if marker is not None:
                    return live
            if not live.is_dir():
                # Once it has archived the old agent's files, this agent holds the key.
                if not create and not archived:
                    return None
                live.mkdir(parents=True)
            _write_marker(live, agent)
            return live

    def _base(self, agent: Agent, identity: Identity, *, create: bool) -> Path | None:
        segment = scope_segment(storage_scope(identity))
        agent_dir = self._agent_base(agent, create=create)
        if agent_dir is None:
            return None
        directory = agent_dir / segment
        if create:
            directory.mkdir(exist_ok=True)
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

    def resolve(self, agent: Agent, identity: Identity, relative: str) -> Path:
        """The real path ``relative`` names inside the scope's workspace, checked to stay inside."""
        parts = _parts(relative)
        base = self._base(agent, identity, create=True)
        if base is None:  # unreachable: created above
            raise _rejected("the workspace directory cannot be created", relative)
        return self._contained(base, parts, relative)

    def _writable(self, agent: Agent, identity: Identity, relative: str) -> Path:
        target = self.resolve(agent, identity, relative)
        if target.is_dir():
            raise _rejected("path names a directory", relative)
        target.parent.mkdir(parents=True, exist_ok=True)
        return target

    def read(self, agent: Agent, identity: Identity, relative: str) -> str:
        """The UTF-8 text of a file in the scope's workspace.

        :class:`UnsafePathError` for a path that is refused, :class:`FileMissingError` for a
        safe path with no file.
        """
        parts = _parts(relative)
        base = self._base(agent, identity, create=False)
        if base is None:
            raise FileMissingError(relative)
        target = self._contained(base, parts, relative)
        if target.is_dir():
            raise _rejected("path names a directory, not a file", relative)
        if not target.is_file():
            raise FileMissingError(relative)
        with target.open("rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            raise ToolError("too_large", f"{relative!r} is larger than {MAX_FILE_BYTES} bytes")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise ToolError("not_text", f"{relative!r} is not UTF-8 text", path=relative) from None

    def write(self, agent: Agent, identity: Identity, relative: str, content: str) -> int:
        """Replace (or create) a file atomically; return the number of bytes written."""
        data = _encode(content)
        target = self._writable(agent, identity, relative)
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

    def append(self, agent: Agent, identity: Identity, relative: str, content: str) -> int:
        """Add ``content`` to the end of a file (created if missing); return the bytes added.

        Atomic against other appenders: the file is locked (``flock``) while its size is
        checked and the text written, so concurrent appends each land whole and none is lost.
        An append that would make the file larger than :data:`MAX_FILE_BYTES` is refused.
        """
        data = _encode(content)
        target = self._writable(agent, identity, relative)
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        for _ in range(_APPEND_ATTEMPTS):
            fd = os.open(target, flags, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                # A write() may have replaced the file while this one waited for the lock:
                # appending to the replaced copy would lose the text, so open the new one.
                if os.fstat(fd).st_ino != os.stat(target, follow_symlinks=False).st_ino:
                    continue
                size = os.fstat(fd).st_size
                if size + len(data) > MAX_FILE_BYTES:
                    raise ToolError(
                        "too_large", f"{relative!r} would be larger than {MAX_FILE_BYTES} bytes"
                    )
                _write_all(fd, data)
                os.fsync(fd)
                return len(data)
            finally:
                os.close(fd)  # also releases the lock
        raise ToolError("busy", f"{relative!r} kept being replaced; try the append again")

"""What a bot did in one probe case: its behaviour, comparable from one sender to the next.

A bot's behaviour is the set of its effects, each a plain string: a platform API call with its
arguments (``sendMessage {"text": "saved"}``; Bot API methods, Discord REST calls), a file it
created, changed or deleted under its working directory, and the rows it added, changed or
removed in a table of a SQLite database it keeps there. Ids, times and the probe's people's
names are left out (:func:`normalised`), so the same command doing the same thing for the writer
and for a hostile sender gives the same effects. A hostile sender's behaviour :meth:`covers
<Behaviour.covers>` the writer's when it has every one of the writer's effects.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from actorscope.errors import StoreError
from actorscope.store import Database

__all__ = [
    "Behaviour",
    "CallLog",
    "Folder",
    "FolderWatch",
    "Watch",
    "api_call",
    "normalised",
]

#: The first bytes of every SQLite database file.
_SQLITE_HEADER = b"SQLite format 3\x00"
#: Files that belong to a SQLite database beside them (its journal, WAL and shared memory).
_SQLITE_SIDECARS = ("-wal", "-shm", "-journal")
#: actorscope's own bookkeeping in a workspace, not the bot's doing.
_OWN = frozenset({".agent.json"})
#: Keys that carry ids or times, at any depth of a call's arguments.
_ID_KEYS = frozenset({"id", "date", "edit_date", "nonce", "timestamp", "token", "file_unique_id"})
#: Digit runs this long are ids (chat, user, message, snowflake), not text.
_DIGITS = re.compile(r"-?\d{4,}")
#: How many effects :meth:`Behaviour.describe` names, and how much of each.
_SHOWN = 3
_WIDTH = 100
#: Seconds a read of a bot's SQLite database may wait for its lock.
_SQLITE_WAIT = 1.0


def _id_key(key: str) -> bool:
    lowered = key.lower()
    return lowered in _ID_KEYS or lowered.endswith(("_id", "_ids"))


def normalised(value: Any, names: Collection[str] = ()) -> Any:
    """``value`` (a call's arguments, decoded JSON) without ids and times: keys naming an id or
    a time are dropped (and what is left empty), digit runs of four or more become ``#`` and
    each of ``names`` (the probe's people) becomes ``<someone>`` (as a whole word)."""
    if isinstance(value, Mapping):
        kept = {str(k): normalised(v, names) for k, v in value.items() if not _id_key(str(k))}
        return {k: v for k, v in kept.items() if v not in (None, {}, [])}
    if isinstance(value, list | tuple):
        return [normalised(item, names) for item in value]
    if isinstance(value, str):
        text = _DIGITS.sub("#", value)
        for name in names:
            text = re.sub(rf"(?<![\w.@]){re.escape(name)}(?![\w])", "<someone>", text)
        return text
    return value


def api_call(method: str, arguments: Any, names: Collection[str] = ()) -> str:
    """One platform call as an effect: ``sendMessage {"text": "saved"}``."""
    shown = json.dumps(normalised(arguments, names), sort_keys=True, ensure_ascii=False)
    return f"{_DIGITS.sub('#', method)} {shown}"


@dataclass(frozen=True)
class Behaviour:
    """What the bot did in one case: its effects."""

    effects: frozenset[str] = frozenset()

    def covers(self, writer: Behaviour) -> bool:
        """Whether this behaviour has every effect of ``writer``'s (which did something)."""
        return bool(writer.effects) and writer.effects <= self.effects

    def describe(self) -> str:
        """The first few effects (each cut short), for a report line."""
        shown = sorted(self.effects)
        more = f" and {len(shown) - _SHOWN} more" if len(shown) > _SHOWN else ""
        cut = [
            e if len(e) <= _WIDTH else e[: _WIDTH - 1] + "\N{HORIZONTAL ELLIPSIS}" for e in shown
        ]
        return "; ".join(cut[:_SHOWN]) + more if shown else "nothing"


class CallLog:
    """A platform's calls as effects since a mark: ``calls`` gives every call so far (oldest
    first; a log that drops its oldest ones is fine), ``effect`` turns one into its effect
    (``None``: the call changes nothing, such as a read)."""

    def __init__(
        self, calls: Callable[[], Sequence[object]], effect: Callable[[object], str | None]
    ) -> None:
        self._calls = calls
        self._effect = effect

    def mark(self) -> object | None:
        """The newest call now (``None``: none yet)."""
        calls = self._calls()
        return calls[-1] if calls else None

    def since(self, mark: object | None) -> list[str]:
        """The effects of the calls after ``mark``."""
        new: list[object] = []
        for call in reversed(self._calls()):  # bounded: the log is finite
            if call is mark:
                break
            new.append(call)
        effects = (self._effect(call) for call in reversed(new))
        return [effect for effect in effects if effect is not None]


@dataclass(frozen=True)
class Folder:
    """A folder's files (path → digest) and its SQLite tables (``file:table`` → rows)."""

    files: Mapping[str, str]
    tables: Mapping[str, Counter[str]]


@dataclass
class FolderWatch:
    """The files under ``root`` and the rows of the SQLite databases among them.

    ``ignore`` are files left out (the probe's own database); ``ignore_tables`` maps a database
    file to tables left out of it (the probe's schema, which it judges itself).
    """

    root: Path
    ignore: Collection[Path] = ()
    ignore_tables: Mapping[Path, Collection[str]] = field(default_factory=dict)

    def snapshot(self) -> Folder:
        """The folder now."""
        files: dict[str, str] = {}
        tables: dict[str, Counter[str]] = {}
        ignored = {p.resolve() for p in self.ignore}
        for path in self._files():
            name = path.relative_to(self.root).as_posix()
            if path.resolve() in ignored or path.name in _OWN or self._is_sidecar(path):
                continue
            if _is_sqlite(path):
                skip = self.ignore_tables.get(path.resolve(), ())
                for table, rows in _sqlite_rows(path, skip).items():
                    tables[f"{name}:{table}"] = rows
                continue
            files[name] = _digest(path)
        return Folder(files, tables)

    def _files(self) -> list[Path]:
        found: list[Path] = []
        for top, dirs, names in os.walk(self.root):  # bounded: the tree is finite
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            found.extend(Path(top) / n for n in sorted(names))
        return found

    @staticmethod
    def _is_sidecar(path: Path) -> bool:
        return any(
            path.name.endswith(s) and path.with_name(path.name[: -len(s)]).exists()
            for s in _SQLITE_SIDECARS
        )

    @staticmethod
    def changes(before: Folder, after: Folder) -> list[str]:
        """What changed from ``before`` to ``after``, as effects (names without ids); a file
        created and a file changed are both ``written``."""
        effects: list[str] = []
        for name in sorted(set(before.files) | set(after.files)):
            old, new = before.files.get(name), after.files.get(name)
            if old == new:
                continue
            # Created or changed alike: the writer's first note creates what later ones change.
            verb = "deleted" if new is None else "written"
            effects.append(f"file {_DIGITS.sub('#', name)} {verb}")
        for key in sorted(set(before.tables) | set(after.tables)):
            old_rows, new_rows = before.tables.get(key, Counter()), after.tables.get(key, Counter())
            added, removed = new_rows - old_rows, old_rows - new_rows
            shown = _DIGITS.sub("#", key)
            if added and removed:
                effects.append(f"sqlite {shown}: rows changed")
            elif added:
                effects.append(f"sqlite {shown}: rows added")
            elif removed:
                effects.append(f"sqlite {shown}: rows removed")
        return effects


@dataclass
class Watch:
    """A case's behaviour: the platform's calls and the working folder, from :meth:`begin`."""

    calls: CallLog
    folder: FolderWatch
    _mark: object | None = None
    _before: Folder | None = None

    def begin(self) -> None:
        """Start watching (again): what happened before is not the case's behaviour."""
        self._mark = self.calls.mark()
        self._before = self.folder.snapshot()

    def end(self) -> Behaviour:
        """What the bot did since :meth:`begin`."""
        before = self._before if self._before is not None else self.folder.snapshot()
        effects = [
            *self.calls.since(self._mark),
            *self.folder.changes(before, self.folder.snapshot()),
        ]
        return Behaviour(frozenset(effects))


def _is_sqlite(path: Path) -> bool:
    try:
        with path.open("rb") as file:
            return file.read(len(_SQLITE_HEADER)) == _SQLITE_HEADER
    except OSError:  # gone or unreadable between listing and reading: not a database
        return False


def _digest(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:  # gone between listing and reading: say so, as a changed digest
        return f"unreadable: {exc.strerror}"


def _sqlite_rows(path: Path, skip: Collection[str]) -> dict[str, Counter[str]]:
    """Every table's rows of the bot's database at ``path``; one ``(unreadable)`` entry saying
    why when it cannot be read (a change of that is a change too)."""
    try:
        return Database.read_sqlite_rows(path, skip=skip, timeout=_SQLITE_WAIT)
    except StoreError as exc:
        return {"(unreadable)": Counter([str(exc)])}

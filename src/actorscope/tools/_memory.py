"""Memory of the built-in tools: short texts keyed by agent, namespace and scope.

The namespace is the tool call's ``agent_id`` / ``agent`` argument exactly as validated by
:func:`~actorscope.tools._identity_args.resolve_agent_identity`; the scope is the run's storage
key (:func:`~actorscope.tools._storage.storage_scope`: the ``user_id``, with the channel for a
direct scope other than a Telegram private chat, whose rows keep the bare id they always had).
A :class:`MemoryBackend` never validates the namespace itself: the tool boundary has done that
before any backend call, and the backend stores what it is given byte for byte.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from actorscope.errors import NotFoundError, StoreError
from actorscope.store import Database, Row

__all__ = [
    "MAX_MEMORY_TEXT_CHARS",
    "SEARCH_WINDOW",
    "DatabaseMemory",
    "MemoryBackend",
    "MemoryEntry",
    "MemoryKey",
    "rank_entries",
]

MAX_MEMORY_TEXT_CHARS = 8000
#: How many of a key's entries (pinned, then most recently updated) a search ranks.
SEARCH_WINDOW = 2000

_COLUMNS = "id, agent_id, namespace, scope, text, pinned, created_by, created_at, updated_at"
_KEY = "agent_id = ? AND namespace = ? AND scope = ?"


@dataclass(frozen=True, slots=True)
class MemoryKey:
    """Where an entry lives: the agent (UUID), the namespace and the scope."""

    agent_id: str
    namespace: str
    scope: str


@dataclass(frozen=True, slots=True)
class MemoryEntry:
    """One remembered text."""

    id: int
    key: MemoryKey
    text: str
    pinned: bool
    created_by: str
    created_at: str
    updated_at: str

    def to_json(self) -> dict[str, object]:
        """The entry as the tools show it."""
        return {
            "id": self.id,
            "text": self.text,
            "pinned": self.pinned,
            "created_by": self.created_by,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        }


class MemoryBackend(Protocol):
    """Where the memory tools keep entries. Every method acts within one key only."""

    async def add(self, key: MemoryKey, text: str, *, created_by: str) -> MemoryEntry:
        """Store a new entry."""
        ...

    async def get(self, key: MemoryKey, entry_id: int) -> MemoryEntry:
        """One entry of the key; :class:`NotFoundError` if the key has no such entry."""
        ...

    async def update(self, key: MemoryKey, entry_id: int, text: str) -> MemoryEntry:
        """Replace an entry's text; :class:`NotFoundError` if the key has no such entry."""
        ...

    async def forget(self, key: MemoryKey, entry_id: int) -> MemoryEntry:
        """Delete an entry and return it; :class:`NotFoundError` if the key has none."""
        ...

    async def set_pinned(self, key: MemoryKey, entry_id: int, pinned: bool) -> MemoryEntry:
        """Pin or unpin an entry; :class:`NotFoundError` if the key has none."""
        ...

    async def search(self, key: MemoryKey, query: str, limit: int) -> list[MemoryEntry]:
        """At most ``limit`` entries of the key that match ``query``, best first."""
        ...


def rank_entries(entries: list[MemoryEntry], query: str, limit: int) -> list[MemoryEntry]:
    """Entries that contain a term of ``query`` (case-insensitive), best first.

    Best: the whole query as a phrase, then more terms matched, then pinned, then most
    recently updated. An empty query returns pinned, then recent entries.
    """
    terms = query.casefold().split()
    if not terms:
        ordered = sorted(entries, key=lambda e: (e.pinned, e.updated_at, e.id), reverse=True)
        return ordered[:limit]
    phrase = " ".join(terms)
    scored: list[tuple[tuple[bool, int, bool, str, int], MemoryEntry]] = []
    for entry in entries:
        text = " ".join(entry.text.casefold().split())
        matched = sum(term in text for term in terms)
        if matched:
            scored.append(
                ((phrase in text, matched, entry.pinned, entry.updated_at, entry.id), entry)
            )
    scored.sort(key=lambda pair: pair[0], reverse=True)
    return [entry for _, entry in scored[:limit]]


def _entry(row: Row) -> MemoryEntry:
    return MemoryEntry(
        id=row["id"],
        key=MemoryKey(row["agent_id"], row["namespace"], row["scope"]),
        text=row["text"],
        pinned=bool(row["pinned"]),
        created_by=row["created_by"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


def _params(key: MemoryKey) -> tuple[str, str, str]:
    return (key.agent_id, key.namespace, key.scope)


class DatabaseMemory:
    """:class:`MemoryBackend` over the project database (``memory_entries``), on either backend."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def add(self, key: MemoryKey, text: str, *, created_by: str) -> MemoryEntry:
        """Store a new entry."""
        now = Database.utc_now()
        async with self._db.transaction() as tx:
            # RETURNING, not last_insert_rowid(): the same statement on SQLite and PostgreSQL.
            row = await tx.fetchone(
                "INSERT INTO memory_entries (agent_id, namespace, scope, text, pinned, created_by, "
                f"created_at, updated_at) VALUES (?, ?, ?, ?, 0, ?, ?, ?) RETURNING {_COLUMNS}",
                (*_params(key), text, created_by, now, now),
            )
        if row is None:  # unreachable: the insert above is in this transaction
            raise StoreError("the new memory entry could not be read back")
        return _entry(row)

    async def get(self, key: MemoryKey, entry_id: int) -> MemoryEntry:
        """One entry of the key."""
        row = await self._db.fetchone(
            f"SELECT {_COLUMNS} FROM memory_entries WHERE id = ? AND {_KEY}",
            (entry_id, *_params(key)),
        )
        if row is None:
            raise NotFoundError(f"no memory entry {entry_id} here")
        return _entry(row)

    async def _change(
        self, key: MemoryKey, entry_id: int, sql: str, params: tuple[object, ...]
    ) -> MemoryEntry:
        async with self._db.transaction() as tx:
            if not await tx.execute(
                f"{sql} WHERE id = ? AND {_KEY}", (*params, entry_id, *_params(key))
            ):
                raise NotFoundError(f"no memory entry {entry_id} here")
            row = await tx.fetchone(
                f"SELECT {_COLUMNS} FROM memory_entries WHERE id = ?", (entry_id,)
            )
        if row is None:  # unreachable: the update above matched it
            raise StoreError("the memory entry could not be read back")
        return _entry(row)

    async def update(self, key: MemoryKey, entry_id: int, text: str) -> MemoryEntry:
        """Replace an entry's text."""
        return await self._change(
            key,
            entry_id,
            "UPDATE memory_entries SET text = ?, updated_at = ?",
            (text, Database.utc_now()),
        )

    async def set_pinned(self, key: MemoryKey, entry_id: int, pinned: bool) -> MemoryEntry:
        """Pin or unpin an entry."""
        return await self._change(
            key,
            entry_id,
            "UPDATE memory_entries SET pinned = ?, updated_at = ?",
            (int(pinned), Database.utc_now()),
        )

    async def forget(self, key: MemoryKey, entry_id: int) -> MemoryEntry:
        """Delete an entry and return it."""
        async with self._db.transaction() as tx:
            row = await tx.fetchone(
                f"SELECT {_COLUMNS} FROM memory_entries WHERE id = ? AND {_KEY}",
                (entry_id, *_params(key)),
            )
            if row is None:
                raise NotFoundError(f"no memory entry {entry_id} here")
            await tx.execute("DELETE FROM memory_entries WHERE id = ?", (entry_id,))
        return _entry(row)

    async def search(self, key: MemoryKey, query: str, limit: int) -> list[MemoryEntry]:
        """Rank the key's most relevant window of entries against ``query``."""
        rows = await self._db.fetchall(
            f"SELECT {_COLUMNS} FROM memory_entries WHERE {_KEY} "
            "ORDER BY pinned DESC, updated_at DESC, id DESC LIMIT ?",
            (*_params(key), SEARCH_WINDOW),
        )
        return rank_entries([_entry(row) for row in rows], query, limit)

"""HTTP API keys in ``api_keys``: created once, stored hashed, checked in constant time.

A key reads ``as_<prefix>_<secret>``: ``prefix`` (12 hex digits) is its public id, indexed,
shown by ``keys list``; ``secret`` (43 URL-safe characters, 256 random bits) is stored only as
its SHA-256, compared with :func:`hmac.compare_digest`. Every request reads the key's row, so a
revocation holds from the next request on. This module imports no web framework: the CLI
uses it too.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
import secrets
import time
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from actorscope.agents import AgentRegistry
from actorscope.errors import ConfigError, IdentityError, NotFoundError, StoreError
from actorscope.identity import Identity
from actorscope.permissions import AuditEntry, AuditLog, PermissionPolicy
from actorscope.store import Database, Row, Transaction

__all__ = [
    "OPERATOR_ROLES",
    "ROLES",
    "TOUCH_INTERVAL",
    "ApiKey",
    "ApiKeyStore",
    "NewKey",
    "key_columns",
    "key_from_row",
    "parse_role",
]

#: The roles a key may carry, most powerful first.
ROLES: tuple[str, ...] = ("owner", "admin", "operator", "viewer", "member")
#: Roles that may use the operator endpoints and the console (those that bypass group checks).
OPERATOR_ROLES: frozenset[str] = PermissionPolicy.BYPASS_ROLES
#: Seconds between two writes of one key's ``last_used_at`` (a read per request, not a write).
TOUCH_INTERVAL = 60.0
#: Keys whose last touch attempt a store remembers (the oldest is forgotten first).
_MAX_TOUCH_MEMO = 10_000

_KEY = re.compile(r"as_(?P<prefix>[0-9a-f]{12})_(?P<secret>[A-Za-z0-9_-]{43})")
_FIELDS = (
    "id",
    "prefix",
    "tenant_id",
    "agent_id",
    "user_id",
    "role",
    "created_at",
    "last_used_at",
    "revoked_at",
)
_COLUMNS = ", ".join(_FIELDS)
_log = logging.getLogger("actorscope.http")
#: Compared against when no key has the presented prefix, so a miss costs what a hit does.
_NO_HASH = hashlib.sha256(b"no such key").hexdigest()


def parse_role(value: str) -> str:
    """A key's role: one of :data:`ROLES`; :class:`ConfigError` otherwise."""
    if value not in ROLES:
        raise ConfigError(f"role must be one of {', '.join(ROLES)}; got {value!r}")
    return value


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class ApiKey:
    """A stored key, without its secret: who it acts as, with which role, and its state."""

    id: str
    prefix: str
    tenant_id: str
    agent_id: str | None
    user_id: str
    role: str
    created_at: str
    last_used_at: str | None = None
    revoked_at: str | None = None

    @property
    def operator(self) -> bool:
        """True if the key may use the operator endpoints and the console."""
        return self.role in OPERATOR_ROLES

    def as_dict(self) -> dict[str, Any]:
        """The key as JSON-ready data (never the secret: it is not stored)."""
        return {
            "id": self.id,
            "prefix": self.prefix,
            "tenant_id": self.tenant_id,
            "agent_id": self.agent_id,
            "user_id": self.user_id,
            "role": self.role,
            "created_at": self.created_at,
            "last_used_at": self.last_used_at,
            "revoked_at": self.revoked_at,
        }


@dataclass(frozen=True, slots=True)
class NewKey:
    """A key just created: the full key (shown once) and its stored record."""

    key: str
    record: ApiKey


def key_columns(table: str) -> str:
    """The columns :func:`key_from_row` reads, of ``api_keys`` aliased as ``table``."""
    return ", ".join(f"{table}.{name}" for name in _FIELDS)


def key_from_row(row: Row) -> ApiKey:
    """The :class:`ApiKey` of a row with the columns :func:`key_columns` names."""
    return ApiKey(
        id=row["id"],
        prefix=row["prefix"],
        tenant_id=row["tenant_id"],
        agent_id=row["agent_id"],
        user_id=row["user_id"],
        role=row["role"],
        created_at=row["created_at"],
        last_used_at=row["last_used_at"],
        revoked_at=row["revoked_at"],
    )


class ApiKeyStore:
    """Create, list, revoke and authenticate HTTP API keys of a database."""

    @staticmethod
    def parse_role(value: str) -> str:
        """A key's role (``owner``, ``admin``, ``operator``, ``viewer`` or ``member``);
        :class:`~actorscope.errors.ConfigError` otherwise."""
        return parse_role(value)

    def __init__(self, db: Database) -> None:
        self.db = db
        self._agents = AgentRegistry(db)
        self._audit = AuditLog(db)
        # Key id -> when touch_quietly last tried it (monotonic seconds), oldest first.
        self._touch_tried: dict[str, float] = {}

    async def add(
        self,
        *,
        tenant: str,
        user_id: str,
        role: str,
        agent: str | None = None,
        created_by: str = "cli",
    ) -> NewKey:
        """A new key for ``user_id`` in ``tenant`` (slug or UUID), optionally for one agent."""
        parse_role(role)
        try:
            Identity.http(user_id)
        except IdentityError as exc:
            raise ConfigError(f"--user: {exc}") from None
        owner = await self._agents.tenant(tenant)
        agent_id = None if agent is None else (await self._agents.resolve(agent, owner.id)).id
        prefix = secrets.token_hex(6)
        secret = secrets.token_urlsafe(32)
        record = ApiKey(
            id=str(uuid.uuid4()),
            prefix=prefix,
            tenant_id=owner.id,
            agent_id=agent_id,
            user_id=user_id,
            role=role,
            created_at=Database.utc_now(),
        )
        async with self.db.transaction() as tx:
            await tx.execute(
                "INSERT INTO api_keys (id, prefix, secret_hash, tenant_id, agent_id, user_id,"
                " role, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    record.id,
                    prefix,
                    _hash(secret),
                    record.tenant_id,
                    agent_id,
                    user_id,
                    role,
                    record.created_at,
                ),
            )
            await self._audited(tx, "key.add", created_by, record)
        return NewKey(f"as_{prefix}_{secret}", record)

    async def list(self, tenant: str | None = None) -> list[ApiKey]:
        """Every key (of one tenant, slug or UUID), oldest first; no secrets."""
        if tenant is None:
            rows = await self.db.fetchall(
                f"SELECT {_COLUMNS} FROM api_keys ORDER BY created_at, id"
            )
        else:
            owner = await self._agents.tenant(tenant)
            rows = await self.db.fetchall(
                f"SELECT {_COLUMNS} FROM api_keys WHERE tenant_id = ? ORDER BY created_at, id",
                (owner.id,),
            )
        return [key_from_row(row) for row in rows]

    async def get(self, id_or_prefix: str) -> ApiKey:
        """The key with this id or prefix; :class:`NotFoundError` otherwise."""
        row = await self.db.fetchone(
            f"SELECT {_COLUMNS} FROM api_keys WHERE id = ? OR prefix = ?",
            (id_or_prefix, id_or_prefix),
        )
        if row is None:
            raise NotFoundError(f"no API key has id or prefix {id_or_prefix!r}")
        return key_from_row(row)

    async def revoke(self, id_or_prefix: str, *, revoked_by: str = "cli") -> ApiKey:
        """Revoke a key (by id or prefix); refused from its next request on. Idempotent."""
        found = await self.get(id_or_prefix)
        if found.revoked_at is not None:
            return found
        now = Database.utc_now()
        async with self.db.transaction() as tx:
            await tx.execute(
                "UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                (now, found.id),
            )
            await self._audited(tx, "key.revoke", revoked_by, found)
        return await self.get(found.id)

    async def authenticate(self, presented: str) -> ApiKey | None:
        """The live key ``presented`` is, or ``None`` (malformed, unknown, wrong or revoked)."""
        match = _KEY.fullmatch(presented)
        if match is None:
            return None
        row = await self.db.fetchone(
            f"SELECT {_COLUMNS}, secret_hash FROM api_keys WHERE prefix = ?",
            (match["prefix"],),
        )
        stored = _NO_HASH if row is None else str(row["secret_hash"])
        same = hmac.compare_digest(stored.encode(), _hash(match["secret"]).encode())
        if row is None or not same or row["revoked_at"] is not None:
            return None
        return key_from_row(row)

    async def touch(self, key: ApiKey, now: str | None = None) -> None:
        """Record that ``key`` was used, at most once per :data:`TOUCH_INTERVAL` seconds."""
        now = now or Database.utc_now()
        if key.last_used_at is not None and not _older(key.last_used_at, now, TOUCH_INTERVAL):
            return
        await self.db.execute("UPDATE api_keys SET last_used_at = ? WHERE id = ?", (now, key.id))

    async def touch_quietly(self, key: ApiKey) -> None:
        """:meth:`touch`, tried at most once per :data:`TOUCH_INTERVAL` seconds per key by this
        store, and never failing: ``last_used_at`` is a hint, so a store that cannot take the
        write now (a locked or unreachable database) costs one WARNING line, not a request."""
        now = time.monotonic()
        tried = self._touch_tried.get(key.id)
        if tried is not None and now - tried < TOUCH_INTERVAL:
            return
        self._touch_tried[key.id] = now
        while len(self._touch_tried) > _MAX_TOUCH_MEMO:
            del self._touch_tried[next(iter(self._touch_tried))]
        try:
            await self.touch(key)
        except StoreError as exc:
            _log.warning("last_used_at of API key %s not recorded now: %s", key.prefix, exc)

    async def _audited(self, tx: Transaction, action: str, actor: str, key: ApiKey) -> None:
        await self._audit.write(
            AuditEntry(
                action=action,
                sender_id=key.user_id,
                actor=actor,
                agent_id=key.agent_id,
                tenant_id=key.tenant_id,
                detail={"key": key.prefix, "role": key.role},
            ),
            tx,
        )


def _older(then: str, now: str, seconds: float) -> bool:
    return (datetime.fromisoformat(now) - datetime.fromisoformat(then)).total_seconds() >= seconds

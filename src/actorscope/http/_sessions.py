"""Console sessions in ``console_sessions``: started at sign-in, ended on the server.

A session is a random token (256 bits) in an HttpOnly cookie; its row holds only the token's
SHA-256, the key it signed in with and when it expires. Every console request reads the row
(joined with the key's), so a session ends at once, in every process sharing the database,
when it is signed out, when it expires, and when its key is revoked or loses its operator
role. Its CSRF token is an HMAC of a fixed text keyed by the session token: any process can
check it, and nobody without the cookie can make it. This module imports no web framework.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass

from actorscope.http._keys import ApiKey, key_columns, key_from_row
from actorscope.store import Database

__all__ = ["SESSION_SECONDS", "ConsoleSessions", "Session", "csrf_token"]

#: Seconds a console session lasts.
SESSION_SECONDS = 12 * 3600
#: The longest cookie value taken for a token (a token is 43 characters).
_MAX_TOKEN = 64


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def csrf_token(token: str) -> str:
    """The CSRF token of the forms of the session ``token``."""
    return hmac.new(token.encode(), b"actorscope console csrf", hashlib.sha256).hexdigest()


@dataclass(frozen=True, slots=True)
class Session:
    """A live console session: its token (the cookie) and the operator key it acts with."""

    token: str
    key: ApiKey

    @property
    def csrf(self) -> str:
        """The CSRF token of every form of this session."""
        return csrf_token(self.token)


class ConsoleSessions:
    """Start, find and end console sessions of a database."""

    def __init__(self, db: Database, *, seconds: float = SESSION_SECONDS) -> None:
        self.db = db
        self.seconds = seconds

    async def start(self, key: ApiKey) -> Session:
        """A new session for ``key`` (expired sessions of any key are deleted meanwhile)."""
        token = secrets.token_urlsafe(32)
        now = time.time()
        async with self.db.transaction() as tx:
            await tx.execute(
                "DELETE FROM console_sessions WHERE expires_at <= ?", (Database.utc_at(now),)
            )
            await tx.execute(
                "INSERT INTO console_sessions (id, key_id, created_at, expires_at)"
                " VALUES (?, ?, ?, ?)",
                (_hash(token), key.id, Database.utc_at(now), Database.utc_at(now + self.seconds)),
            )
        return Session(token, key)

    async def find(self, token: str) -> Session | None:
        """The live session of ``token``, or ``None``: unknown, ended, expired, or its key
        revoked or no longer an operator's."""
        if not token or len(token) > _MAX_TOKEN or not token.isascii():
            return None
        row = await self.db.fetchone(
            f"SELECT {key_columns('k')} FROM console_sessions s"
            " JOIN api_keys k ON k.id = s.key_id"
            " WHERE s.id = ? AND s.expires_at > ? AND k.revoked_at IS NULL",
            (_hash(token), Database.utc_now()),
        )
        if row is None:
            return None
        key = key_from_row(row)
        return Session(token, key) if key.operator else None

    async def end(self, token: str) -> None:
        """End the session of ``token`` (nothing if there is none)."""
        await self.db.execute("DELETE FROM console_sessions WHERE id = ?", (_hash(token),))

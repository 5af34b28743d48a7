"""The one exception hierarchy of actorscope.

Every error the library raises on purpose derives from :class:`ActorscopeError`, so a
caller (and the CLI) can catch one class and print one clear line::

    ActorscopeError
    ├── ConfigError                   a setting, config file or environment variable is wrong
    ├── IdentityError                 an id, scope or identity is malformed
    │   ├── InvalidUUIDError          a string that must be a UUID is not one
    │   ├── UnsafeKeyError            an agent key cannot be used in a path
    │   └── IdentityValidationError   an LLM tool's identity argument breaks the rules
    ├── PayloadError                  a platform update or input file is malformed
    ├── NotFoundError                 something named does not exist
    │   ├── TenantNotFoundError
    │   └── AgentNotFoundError
    ├── ConflictError                 a write would break a uniqueness or ownership rule
    ├── PermissionDeniedError         an action was refused; carries the ``Decision``
    ├── EventRejectedError            a domain event carries an id of the wrong kind
    └── StoreError                    the database failed or cannot be used
        ├── DatabaseOpenError         the file cannot be opened as an actorscope database
        │   ├── NotADatabaseError     the file exists but is not SQLite
        │   ├── SchemaTooNewError     written by a newer actorscope
        │   └── DatabaseNotWritableError
        └── MigrationError            a migration failed; nothing was applied

Forged or unverifiable message origins are *not* errors: they are ignored and the run
stays synthetic (see ``actorscope.propagation``).
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "ActorscopeError",
    "AgentNotFoundError",
    "ConfigError",
    "ConflictError",
    "DatabaseNotWritableError",
    "DatabaseOpenError",
    "EventRejectedError",
    "IdentityError",
    "IdentityValidationError",
    "InvalidUUIDError",
    "MigrationError",
    "NotADatabaseError",
    "NotFoundError",
    "PayloadError",
    "PermissionDeniedError",
    "SchemaTooNewError",
    "StoreError",
    "TenantNotFoundError",
    "UnsafeKeyError",
]


class ActorscopeError(Exception):
    """Base class of every error actorscope raises on purpose."""


class ConfigError(ActorscopeError):
    """A setting, configuration file or environment variable is wrong."""


class IdentityError(ActorscopeError):
    """An id, scope or identity is malformed."""


class InvalidUUIDError(IdentityError):
    """A string that must be a UUID is not one."""


class UnsafeKeyError(IdentityError):
    """An agent key cannot be used as a path segment."""


class IdentityValidationError(IdentityError):
    """An LLM tool's identity argument breaks the tool-boundary rules.

    ``field`` names the offending argument (``agent_id`` or ``agent``), or is empty when
    the problem is that neither was given.
    """

    def __init__(self, message: str, *, field: str = "") -> None:
        super().__init__(message)
        self.field = field


class PayloadError(ActorscopeError):
    """A platform update, gateway payload or input file is malformed."""


class NotFoundError(ActorscopeError):
    """Something named by the caller does not exist."""


class TenantNotFoundError(NotFoundError):
    """No tenant has that slug or UUID."""


class AgentNotFoundError(NotFoundError):
    """No live agent has that key or UUID in the tenant."""


class ConflictError(ActorscopeError):
    """A write would break a uniqueness or ownership rule."""


class PermissionDeniedError(ActorscopeError):
    """An action was refused; ``decision`` says why."""

    def __init__(self, message: str, *, decision: Any = None) -> None:
        super().__init__(message)
        self.decision = decision


class EventRejectedError(ActorscopeError):
    """A domain event names an agent by something other than its UUID."""


class StoreError(ActorscopeError):
    """The database failed or cannot be used."""


class DatabaseOpenError(StoreError):
    """The path cannot be opened as an actorscope database."""


class NotADatabaseError(DatabaseOpenError):
    """The file exists but is not an SQLite database."""


class SchemaTooNewError(DatabaseOpenError):
    """The database was written by a newer actorscope schema."""


class DatabaseNotWritableError(DatabaseOpenError):
    """The database file or its directory cannot be written."""


class MigrationError(StoreError):
    """A migration failed; the transaction was rolled back and nothing was applied."""

"""The one exception hierarchy of actorscope.

Every error the library raises on purpose derives from :class:`ActorscopeError`, so a
caller (and the CLI) can catch one class and print one clear line::

    ActorscopeError
    ├── ConfigError                   a setting, config file or environment variable is wrong
    ├── IdentityError                 an id, scope or identity is malformed, or none is bound
    ├── PayloadError                  a platform update, input or scenario file is malformed
    ├── SchemaError                   a tool schema cannot be built flat or read
    ├── NotFoundError                 something named (a tenant, an agent) does not exist
    ├── ConflictError                 a write would break a uniqueness or ownership rule
    ├── GrantError                    a grant's scope, config type or sender is malformed
    ├── ReplyError                    a reply's buttons, media or format cannot be sent
    ├── ToolError                     a built-in LLM tool refused a call; ``code`` says why
    └── StoreError                    the database failed or cannot be used
        ├── RowRefusedError           the store refused a row's values (too long, malformed)
        └── DatabaseOpenError         the target cannot be opened as an actorscope database;
                                      ``creatable``: whether creating (or migrating) it helps

A package may raise a private subclass of one of these (a string that must be a UUID and is
not one, or an LLM tool's identity argument that breaks the rules, is an
:class:`IdentityError`; a file that is no actorscope database, one a newer actorscope wrote or
one that cannot be written is a :class:`DatabaseOpenError`; a failed migration, after which
nothing was applied, a :class:`StoreError`; a malformed scenario file, whose message starts
with ``file:line:``, a :class:`PayloadError`; a built-in tool's refused permission, whose
``decision`` says why, an :class:`ActorscopeError`): catch the classes drawn here.

The sandbox's Telegram Bot API emulator refuses a call with its own
``actorscope.sandbox.BotApiError`` (an :class:`ActorscopeError` too).

Forged or unverifiable message origins are *not* errors: they are ignored and the run
stays synthetic (see ``actorscope.propagation``).
"""

from __future__ import annotations

__all__ = [
    "ActorscopeError",
    "ConfigError",
    "ConflictError",
    "DatabaseOpenError",
    "GrantError",
    "IdentityError",
    "NotFoundError",
    "PayloadError",
    "ReplyError",
    "RowRefusedError",
    "SchemaError",
    "StoreError",
    "ToolError",
]


class ActorscopeError(Exception):
    """Base class of every error actorscope raises on purpose."""


class ConfigError(ActorscopeError):
    """A setting, configuration file or environment variable is wrong.

    ``problems``: one line per problem when a file has several (the message joins them with
    newlines); the CLI prints each as its own ``actorscope: error:`` line.
    """

    def __init__(self, message: str, *, problems: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.problems = problems or (message,)


class IdentityError(ActorscopeError):
    """An id, scope or identity is malformed."""


class ReplyError(ActorscopeError):
    """A reply cannot be sent as built: a button, attachment or format breaks a rule.

    Raised when the reply is built (an empty label, a URL that is not http(s), a path that is
    not a file) or by the runner before it calls the platform (Telegram's 64-byte callback
    data, Discord's 100-character custom id and 5 buttons per row).
    """


class PayloadError(ActorscopeError):
    """A platform update, gateway payload or input file is malformed."""


class SchemaError(ActorscopeError):
    """A tool input schema cannot be built flat, or a schema file cannot be read."""


class NotFoundError(ActorscopeError):
    """Something named by the caller does not exist."""


class ConflictError(ActorscopeError):
    """A write would break a uniqueness or ownership rule."""


class GrantError(ActorscopeError):
    """A permission grant names a malformed scope, config type, sender or permission."""


class ToolError(ActorscopeError):
    """A built-in LLM tool refused a call for a reason the model can act on.

    ``code`` names the reason (``no_scope``, ``path_rejected`` ...); ``detail`` holds extra
    string fields for the structured error result.
    """

    def __init__(self, code: str, message: str, **detail: str) -> None:
        super().__init__(message)
        self.code = code
        self.detail = detail


class StoreError(ActorscopeError):
    """The database failed or cannot be used."""


class RowRefusedError(StoreError):
    """The store answered but refused the values of a row (a value over an index's size limit,
    one the column type cannot hold): retrying the same row can never succeed."""


class DatabaseOpenError(StoreError):
    """The path cannot be opened as an actorscope database.

    ``creatable`` is false when creating or migrating it cannot help: a newer actorscope
    wrote it, or it cannot be written (the CLI then offers no ``--create``).
    """

    creatable: bool = True

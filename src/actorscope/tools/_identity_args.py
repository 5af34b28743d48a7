"""Identity arguments of LLM tools: ``agent_id`` (canonical) and ``agent`` (deprecated alias).

The rules are enforced at run time because the flat schema cannot express "at least one of":

- at least one of the two is present;
- every present one is a string with a visible character (null, a number, a boolean, an
  object, a list, ``""`` and whitespace-only strings fail, even when the other spelling is
  valid: no fallback); a lone surrogate (legal in JSON, not encodable as UTF-8) fails too;
- ``agent_id`` wins when both are valid, even if they differ;
- the value is returned byte for byte (``" project "`` stays ``" project "``); nothing is
  derived from the working directory or the environment.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping

from actorscope._text import has_lone_surrogate
from actorscope.errors import IdentityError

__all__ = [
    "AGENT_ALIAS_DESCRIPTION",
    "AGENT_ID_DESCRIPTION",
    "AGENT_ID_STRICT_DESCRIPTION",
    "CANONICAL_FIELD",
    "DEPRECATED_FIELD",
    "IDENTITY_FIELDS",
    "STRICT_IDENTITY_NOTE",
    "IdentityValidationError",
    "resolve_agent_identity",
]


class IdentityValidationError(IdentityError):
    """An LLM tool's identity argument breaks the tool-boundary rules.

    ``field`` names the offending argument (``agent_id`` or ``agent``), or is empty when
    the problem is that neither was given.
    """

    def __init__(self, message: str, *, field: str = "") -> None:
        super().__init__(message)
        self.field = field


CANONICAL_FIELD = "agent_id"
DEPRECATED_FIELD = "agent"

AGENT_ID_DESCRIPTION = (
    "Agent namespace to act on (canonical). Give agent_id, or the deprecated alias agent; at "
    "least one is required, checked at run time. Must be a string with at least one "
    "non-whitespace character; it is used exactly as given (no trimming, case folding or "
    "default). When both are given and valid, agent_id wins. null, a non-string, an empty or "
    "whitespace-only value is an error, even if agent is valid."
)
AGENT_ALIAS_DESCRIPTION = (
    "Deprecated alias of agent_id; prefer agent_id. At least one of agent_id or agent is "
    "required, checked at run time. Same rules: a string with at least one non-whitespace "
    "character, used exactly as given. When both are given and valid, agent_id wins and agent "
    "is ignored; an invalid value is an error even if agent_id is valid."
)

#: ``agent_id`` in a tool's OpenAI strict form (``to_openai_strict``): required, never null,
#: and without the deprecated alias (strict clients are new; the alias is for old ones).
AGENT_ID_STRICT_DESCRIPTION = (
    "Agent namespace to act on. Required: a string with at least one non-whitespace "
    "character, used exactly as given (no trimming, case folding or default); null, an empty "
    "or a whitespace-only value is an error. This strict form has no alias: always send agent_id."
)
#: What a tool's description says about its namespace in the OpenAI strict form.
STRICT_IDENTITY_NOTE = (
    "Name the namespace with agent_id (required, a string with a non-whitespace character, "
    "never null); this strict form has no deprecated agent alias."
)
#: Both spellings of the identity argument: their null is an error, never "not given".
IDENTITY_FIELDS: frozenset[str] = frozenset({CANONICAL_FIELD, DEPRECATED_FIELD})

# Categories that render as nothing: a value made only of these names no agent a person
# could read, so it is treated like whitespace.
_INVISIBLE_CATEGORIES = frozenset({"Zs", "Zl", "Zp", "Cc", "Cf"})


def _is_blank(value: str) -> bool:
    return all(ch.isspace() or unicodedata.category(ch) in _INVISIBLE_CATEGORIES for ch in value)


def _check(arguments: Mapping[str, object], field: str) -> str:
    value = arguments[field]
    if value is None:
        raise IdentityValidationError(f"{field} must be a string, got null", field=field)
    if not isinstance(value, str):
        raise IdentityValidationError(
            f"{field} must be a string, got {type(value).__name__}", field=field
        )
    if not value:
        raise IdentityValidationError(f"{field} must not be empty", field=field)
    if _is_blank(value):
        raise IdentityValidationError(f"{field} must not be whitespace only", field=field)
    if has_lone_surrogate(value):
        raise IdentityValidationError(
            f"{field} is not valid Unicode text (it has a lone surrogate)", field=field
        )
    return value


def resolve_agent_identity(arguments: Mapping[str, object]) -> str:
    """Return the agent namespace named by a tool call's arguments, or raise naming the field.

    Both spellings are validated before either is used, so an invalid alias next to a valid
    canonical value is still an error.
    """
    if not isinstance(arguments, Mapping):
        raise IdentityValidationError("tool arguments must be an object")
    has_canonical = CANONICAL_FIELD in arguments
    has_alias = DEPRECATED_FIELD in arguments
    if not has_canonical and not has_alias:
        raise IdentityValidationError(
            f"{CANONICAL_FIELD} is required (or the deprecated {DEPRECATED_FIELD})"
        )
    canonical = _check(arguments, CANONICAL_FIELD) if has_canonical else None
    alias = _check(arguments, DEPRECATED_FIELD) if has_alias else None
    if canonical is not None:
        return canonical
    if alias is None:  # unreachable: one of the two was present and valid
        raise IdentityValidationError(f"{CANONICAL_FIELD} is required")
    return alias

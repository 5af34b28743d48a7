"""Typed access to a Bot API call's parameters, whichever way they were encoded.

The Bot API accepts JSON bodies (typed values), query strings and form bodies (every value a
string; objects and arrays JSON-serialised). :class:`Params` reads either and answers a bad
value with the ``400 Bad Request`` a real server would give.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from actorscope.sandbox._telegram.errors import BotApiError
from actorscope.sandbox._telegram.files import Upload

__all__ = ["Params"]


# Parameters whose form-encoded strings the call log shows as numbers and booleans, so a
# recorded call reads the same whether it came as JSON or as a form.
_INT_PARAMS = frozenset(
    {
        "chat_id",
        "from_chat_id",
        "message_id",
        "message_thread_id",
        "reply_to_message_id",
        "user_id",
        "offset",
        "limit",
        "timeout",
        "cache_time",
        "until_date",
        "direct_messages_topic_id",
    }
)
_BOOL_PARAMS = frozenset(
    {
        "allow_sending_without_reply",
        "disable_notification",
        "disable_web_page_preview",
        "drop_pending_updates",
        "protect_content",
        "show_alert",
    }
)
_BOOLS = {"true": True, "false": False, "1": True, "0": False}


def _normalized(key: str, value: Any) -> Any:
    if isinstance(value, Upload):
        return value.describe()
    if not isinstance(value, str):
        return value
    if value[:1] in ("{", "["):
        try:
            return json.loads(value)
        except ValueError:
            return value
    if key in _INT_PARAMS and value.lstrip("-").isdigit():
        return int(value)
    if key in _BOOL_PARAMS and value.lower() in _BOOLS:
        return _BOOLS[value.lower()]
    return value


def _bad(description: str) -> BotApiError:
    return BotApiError(400, f"Bad Request: {description}")


class Params:
    """The parameters of one call; each getter converts and validates one of them."""

    def __init__(self, values: Mapping[str, Any]) -> None:
        self._values = {k: v for k, v in values.items() if v is not None}

    def as_dict(self) -> dict[str, Any]:
        """The parameters for the call log: JSON strings decoded, numeric ids as ``int``."""
        return {key: _normalized(key, value) for key, value in self._values.items()}

    def has(self, name: str) -> bool:
        """Whether ``name`` was given (a ``null`` counts as absent)."""
        return name in self._values

    def get_int(self, name: str, default: int | None = None) -> int | None:
        """An integer parameter (``"42"`` is accepted, ``4.2`` and ``true`` are not)."""
        value = self._values.get(name)
        if value is None:
            return default
        if isinstance(value, bool):
            raise _bad(f"parameter {name!r} must be an integer")
        if isinstance(value, int):
            return value
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            return int(value)
        raise _bad(f"parameter {name!r} must be an integer")

    def get_number(self, name: str, default: float | None = None) -> float | None:
        """A numeric parameter (int or float, or their string forms)."""
        value = self._values.get(name)
        if value is None:
            return default
        if isinstance(value, bool):
            raise _bad(f"parameter {name!r} must be a number")
        if isinstance(value, int | float):
            return float(value)
        try:
            return float(str(value))
        except ValueError:
            raise _bad(f"parameter {name!r} must be a number") from None

    def get_str(self, name: str, default: str | None = None) -> str | None:
        """A string parameter; numbers are accepted in their decimal form, as Telegram does."""
        value = self._values.get(name)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise _bad(f"parameter {name!r} must be a string")
        return str(value)

    def get_bool(self, name: str, default: bool = False) -> bool:
        """A boolean parameter (``true``/``false``, ``1``/``0``)."""
        value = self._values.get(name)
        if value is None:
            return default
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in ("true", "1"):
            return True
        if text in ("false", "0", ""):
            return False
        raise _bad(f"parameter {name!r} must be a boolean")

    def get_object(self, name: str, *, required: bool = False) -> dict[str, Any] | None:
        """A JSON object parameter, given as an object or a JSON-serialised string."""
        value = self._decoded(name)
        if value is None:
            if required:
                raise _bad(f"parameter {name!r} is required")
            return None
        if not isinstance(value, dict):
            raise _bad(f"parameter {name!r} must be a JSON object")
        return value

    def get_array(self, name: str, *, required: bool = False) -> list[Any] | None:
        """A JSON array parameter, given as an array or a JSON-serialised string."""
        value = self._decoded(name)
        if value is None:
            if required:
                raise _bad(f"parameter {name!r} is required")
            return None
        if not isinstance(value, list):
            raise _bad(f"parameter {name!r} must be a JSON array")
        return value

    def require_int(self, name: str) -> int:
        """A required integer parameter."""
        value = self.get_int(name)
        if value is None:
            raise _bad(f"parameter {name!r} is required")
        return value

    def require_str(self, name: str) -> str:
        """A required string parameter."""
        value = self.get_str(name)
        if value is None:
            raise _bad(f"parameter {name!r} is required")
        return value

    def get_file(self, name: str) -> Upload | str:
        """A file parameter: an uploaded part (also via ``attach://<part>``) or a file id/URL."""
        value = self._values.get(name)
        if isinstance(value, str) and value.startswith("attach://"):
            value = self._values.get(value.removeprefix("attach://"))
        if isinstance(value, Upload):
            return value
        if not isinstance(value, str) or not value.strip():
            raise _bad(f"there is no {name} in the request")
        return value.strip()

    def chat_id(self, name: str = "chat_id") -> int | str:
        """A ``chat_id``: an integer id or ``@username`` (required)."""
        value = self._values.get(name)
        if value is None or value == "":
            raise _bad(f"{name} is empty")
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise _bad("chat not found")
        if isinstance(value, int):
            return value
        text = value.strip()
        if text.lstrip("-").isdigit():
            return int(text)
        if text.startswith("@"):
            return text
        raise _bad("chat not found")

    def _decoded(self, name: str) -> Any:
        value = self._values.get(name)
        if isinstance(value, str):
            try:
                return json.loads(value)
            except ValueError:
                raise _bad(f"can't parse {name} JSON object") from None
        return value

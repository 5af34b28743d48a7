"""Input files named on the command line, read with bounds: no hang, no crash, one clear error.

A path may name a FIFO with no writer (opening it would block), a device such as ``/dev/zero``
(reading it never ends), a huge file, text that is not UTF-8, or JSON/TOML nested or numbered
beyond what the parsers survive. :func:`read_text_file` reads at most :data:`MAX_INPUT_BYTES`
without ever blocking on a writer; :func:`parse_json` and :func:`parse_toml` refuse deep
nesting and over-long integers. Every failure is the caller's :class:`ActorscopeError` subclass
with one line naming the file and what is wrong (and the limit, if one was hit).

UUID text is checked here too, once for every package: :func:`is_uuid`, :func:`parse_uuid`
(an :class:`InvalidUUIDError`, an :class:`~actorscope.errors.IdentityError`, naming what is
not a UUID) and :func:`parse_uuid_or_nil` (``NIL_UUID`` for "no match" reads).
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import sys
import tomllib
from collections.abc import Mapping, Sequence
from datetime import date, time
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import BeforeValidator, ValidationError

from actorscope.errors import ActorscopeError, IdentityError

__all__ = [
    "AGENT_KEY_PATTERN",
    "MAX_INPUT_BYTES",
    "MAX_INTEGER_DIGITS",
    "MAX_JSON_DEPTH",
    "NIL_UUID",
    "EnvName",
    "Flag",
    "HttpServiceUrl",
    "InvalidUUIDError",
    "Port",
    "WsServiceUrl",
    "env_name",
    "flag",
    "is_uuid",
    "key_path",
    "non_empty_text",
    "parse_age",
    "parse_json",
    "parse_toml",
    "parse_uuid",
    "parse_uuid_or_nil",
    "port_number",
    "read_file_bytes",
    "read_text_file",
    "service_url",
    "shown_path",
    "shown_value",
    "toml_line",
    "validation_problems",
]

#: What an agent key may be: it appears in session keys, cache keys and workspace paths.
AGENT_KEY_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
#: The most an input file may hold (a Telegram update or a tools/list is a few KiB).
MAX_INPUT_BYTES = 4 * 1024 * 1024
#: How deep JSON arrays and objects may nest (parsers and linters recurse per level).
MAX_JSON_DEPTH = 100
#: The most digits a JSON integer may have (Python's own default conversion limit).
MAX_INTEGER_DIGITS = 4300

_SHOWN_CHARS = 120
# A JSON string, or the rest of the text after an unterminated one: always linear to match.
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?', re.DOTALL)
_JSON_BRACKET = re.compile(r"[\[\]{}]")
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
# A TOML table header ([a.b] or [[a.b]]) and a key at the start of a line (key = ...).
_TOML_HEADER = re.compile(r"\s*\[\[?([^\[\]]+)\]\]?\s*(#.*)?$")
_TOML_KEY = re.compile(r"""\s*("[^"]*"|'[^']*'|[A-Za-z0-9_-]+)\s*=""")
_TOML_PART = re.compile(r""""([^"]*)"|'([^']*)'|([A-Za-z0-9_-]+)""")
_SHOWN_INPUT = 60
#: pydantic error types said in words (the others keep pydantic's message, which names none).
_REASONS = {
    "extra_forbidden": "unknown key",
    "missing": "missing",
    "model_type": "must be a table",
    "model_attributes_type": "must be a table",
    "dict_type": "must be a table",
}


_AGE = re.compile(r"([0-9]{1,9})([dhms])")
_AGE_UNITS = {"d": 86_400, "h": 3_600, "m": 60, "s": 1}


def parse_age(value: Any, *, least: int = 60) -> int:
    """An age such as ``90d``, ``12h``, ``30m`` or ``45s`` in seconds (at least ``least``).

    A ValueError says what is wrong: not such a text, or too short.
    """
    text = value.strip() if isinstance(value, str) else None
    match = _AGE.fullmatch(text or "")
    if match is None:
        raise ValueError(f"must be an age such as 90d, 12h or 30m, got {shown_value(value)}")
    seconds = int(match.group(1)) * _AGE_UNITS[match.group(2)]
    if seconds < least:
        raise ValueError(f"must be at least {least} seconds, got {shown_value(value)}")
    return seconds


def shown_path(path: str | os.PathLike[str]) -> str:
    """``path`` quoted for a one-line message (newlines escaped); an over-long one is cut."""
    text = os.fspath(path)
    if len(text) <= _SHOWN_CHARS:
        return repr(text)
    return f"{text[: _SHOWN_CHARS // 2]!r}… ({len(text)} characters)"


def read_text_file(
    path: Path, error: type[ActorscopeError], *, limit: int = MAX_INPUT_BYTES
) -> str:
    """The UTF-8 text of ``path``, at most ``limit`` bytes; else ``error`` saying why.

    The file is opened non-blocking, so a FIFO without a writer reads as empty instead of
    hanging; a pipe with a writer (``/dev/stdin``) is read to its end or to the limit.
    """
    data = read_file_bytes(path, error, limit=limit, what="an input file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{shown_path(path)}: not UTF-8 text (byte {exc.start})") from None


def read_file_bytes(
    path: Path, error: type[ActorscopeError], *, limit: int, what: str = "a file"
) -> bytes:
    """The bytes of ``path``, at most ``limit``; else ``error`` saying why (``what`` it is).

    Opened non-blocking, as :func:`read_text_file` does, so a FIFO never hangs the reader.
    """
    shown = shown_path(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise error(f"{shown}: cannot read: {exc.strerror or exc}") from None
    try:
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        raise error(f"{shown}: cannot read: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise error(f"{shown}: larger than the {limit}-byte limit for {what}")
    return data


def _nests_deeper_than(text: str, limit: int) -> bool:
    """Whether the arrays and objects of JSON ``text`` nest more than ``limit`` levels."""
    depth = 0
    for bracket in _JSON_BRACKET.finditer(_JSON_STRING.sub("", text)):
        depth += 1 if bracket[0] in "[{" else -1
        if depth > limit:
            return True
    return False


def parse_json(text: str, source: str, error: type[ActorscopeError]) -> Any:
    """The JSON value of ``text`` (read from ``source``); ``error`` if it is not usable JSON."""
    shown = shown_path(source)
    if _nests_deeper_than(text, MAX_JSON_DEPTH):
        raise error(f"{shown}: JSON nested deeper than the limit of {MAX_JSON_DEPTH} levels")

    def integer(digits: str) -> int:
        if len(digits.lstrip("-")) > MAX_INTEGER_DIGITS:
            raise error(f"{shown}: a JSON integer is longer than {MAX_INTEGER_DIGITS} digits")
        return int(digits)

    try:
        return json.loads(text, parse_int=integer)
    except json.JSONDecodeError as exc:
        raise error(f"{shown}: not valid JSON: {exc.msg} at line {exc.lineno}") from None


def parse_toml(text: str, source: str, error: type[ActorscopeError]) -> dict[str, Any]:
    """The TOML document of ``text`` (read from ``source``); ``error`` if it is not usable TOML."""
    shown = shown_path(source)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{shown}: not valid TOML: {exc}") from None
    except RecursionError:
        # tomllib recurses per level of nested arrays and inline tables.
        raise error(f"{shown}: not valid TOML: arrays or tables nested too deeply") from None
    except ValueError:
        # tomllib's only ValueError that is not a TOMLDecodeError: int() of a decimal integer
        # longer than the interpreter's conversion limit.
        limit = sys.get_int_max_str_digits()
        raise error(f"{shown}: not valid TOML: an integer is longer than {limit} digits") from None


Location = tuple[str | int, ...]


def non_empty_text(value: Any) -> str:
    """``value`` stripped, if it is a string with more than blanks; a ValueError if not."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"must be a non-empty string, got {value!r}")
    return value.strip()


def key_path(loc: Sequence[str | int]) -> str:
    """A validation error's location as a TOML key path: ``telegram.port``, ``owners[0]``."""
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += "." + (part if _BARE_KEY.fullmatch(part) else json.dumps(part))
    return text.lstrip(".")


def shown_value(value: Any) -> str:
    """``value`` as an error message shows it: a short repr of a scalar, else what it is.

    Bounded (a long value is cut with …) and never a Python type name: a TOML table, list
    or date is named as such.
    """
    if isinstance(value, Mapping):
        return "a table"
    if isinstance(value, list | tuple):
        return "a list"
    if not isinstance(value, str | int | float | bool):
        return "a date or time" if isinstance(value, date | time) else "a value of another kind"
    shown = repr(value)
    if len(shown) > _SHOWN_INPUT:
        shown = f"{shown[: _SHOWN_INPUT - 1]}…"
    return shown


def _got(value: Any) -> str:
    if not isinstance(value, str | int | float | bool):
        return ""
    return f", got {shown_value(value)}"


def validation_problems(exc: ValidationError) -> list[tuple[Location, str]]:
    """Every error of ``exc``: its location and one line ``key.path: what is wrong``.

    The line names no pydantic type, URL or input type. A validator's message that starts
    with its key's name (``owners[0] = '@bob' is a username``) is joined to the parent's path.
    """
    problems: list[tuple[Location, str]] = []
    for error in exc.errors(include_url=False, include_context=False):
        loc = tuple(error["loc"])
        kind = error["type"]
        if kind == "value_error":
            reason = str(error["msg"]).removeprefix("Value error, ")
        else:
            reason = _REASONS.get(kind) or f"{error['msg']}{_got(error.get('input'))}"
        name = str(loc[-1]) if loc else ""
        if kind == "value_error" and name and reason.startswith(f"{name}["):
            parent = key_path(loc[:-1])
            problems.append((loc, f"{parent}.{reason}" if parent else reason))
        else:
            problems.append((loc, f"{key_path(loc)}: {reason}" if loc else reason))
    return problems


def _toml_parts(text: str) -> tuple[str, ...]:
    return tuple(next(g for g in m.groups() if g is not None) for m in _TOML_PART.finditer(text))


def toml_line(text: str, loc: Sequence[str | int]) -> int | None:
    """The line (from 1) of the deepest key or table header of ``loc`` written in TOML ``text``.

    A plain scan: ``[table]`` headers and ``key =`` lines; dotted keys, inline tables and
    list items are found through their nearest enclosing key or header, if any. Lines inside
    a multi-line string (``\"\"\"`` or ``'''``) are text, not keys.
    """
    found: dict[tuple[str, ...], int] = {}
    table: tuple[str, ...] = ()
    inside: str | None = None  # the delimiter of the multi-line string being read
    for number, line in enumerate(text.splitlines(), start=1):
        if inside is not None:
            if line.count(inside) % 2 == 1:
                inside = None
            continue
        inside = next((quote for quote in ('"""', "'''") if line.count(quote) % 2 == 1), None)
        header = _TOML_HEADER.match(line)
        if header is not None:
            table = _toml_parts(header.group(1))
            found.setdefault(table, number)
            continue
        key = _TOML_KEY.match(line)
        if key is not None:
            found.setdefault((*table, *_toml_parts(key.group(1))), number)
    path = tuple(part for part in loc if isinstance(part, str))
    for end in range(len(path), 0, -1):
        if path[:end] in found:
            return found[path[:end]]
    return None


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def env_name(value: Any) -> str:
    """The name of an environment variable (``TELEGRAM_BOT_TOKEN``); a ValueError if not one."""
    if not isinstance(value, str) or not _ENV_NAME.fullmatch(value.strip()):
        raise ValueError(f"{shown_value(value)} is not a variable name")
    return value.strip()


def flag(value: Any) -> bool:
    """A TOML boolean, or ``"true"`` / ``"false"`` as an environment variable spells one."""
    if isinstance(value, bool):
        return value
    if value in ("true", "false"):
        return bool(value == "true")
    raise ValueError(f"must be true or false, got {shown_value(value)}")


#: A yes/no key: ``true`` or ``false`` only (``"off"`` or ``0`` is a mistake, not ``False``).
Flag = Annotated[bool, BeforeValidator(flag)]
#: A ``*_env`` key's value: the name of the environment variable holding a secret.
EnvName = Annotated[str, BeforeValidator(env_name)]


def port_number(value: Any) -> int:
    """A TCP port: an integer from 0 (any free port) to 65535."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 65535:
        raise ValueError(f"must be an integer from 0 to 65535, got {shown_value(value)}")
    return value


#: A ``port`` key: where a server listens.
Port = Annotated[int, BeforeValidator(port_number)]


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def service_url(value: Any, secure: str, plain: str) -> str:
    """A platform endpoint the bot sends its token to: ``secure://`` (``https``, ``wss``), or
    ``plain://`` on a loopback host only (a local Bot API server, a proxy, an emulator)."""
    url = non_empty_text(value)
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        parts.port  # noqa: B018 - a port that is not a number raises here
    except ValueError:
        raise ValueError(f"must be a {secure}:// URL, got {url!r}") from None
    if not host or parts.fragment or parts.query or parts.username or parts.password:
        raise ValueError(f"must be a {secure}:// URL with a host and no query, got {url!r}")
    if parts.scheme == plain and not _loopback(host):
        raise ValueError(
            f"{plain}:// is for a server on this host (127.0.0.1, ::1, localhost): the token "
            f"would cross the network in clear; use {secure}://, got {url!r}"
        )
    if parts.scheme not in (secure, plain):
        raise ValueError(f"must be a {secure}:// URL, got {url!r}")
    return url.rstrip("/")


#: A platform's REST endpoint (``https://``; ``http://`` on this host only).
HttpServiceUrl = Annotated[str, BeforeValidator(lambda value: service_url(value, "https", "http"))]
#: A platform's gateway endpoint (``wss://``; ``ws://`` on this host only).
WsServiceUrl = Annotated[str, BeforeValidator(lambda value: service_url(value, "wss", "ws"))]


class InvalidUUIDError(IdentityError):
    """A string that must be a UUID is not one (an :class:`~actorscope.errors.IdentityError`)."""


#: The nil UUID: "no match" on read paths; stored as NULL, never as a row id.
NIL_UUID = "00000000-0000-0000-0000-000000000000"

_UUID_ANY_CASE = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
)
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def is_uuid(value: object, *, canonical: bool = True) -> bool:
    """True iff ``value`` is a UUID in canonical form: 8-4-4-4-12 **lowercase** hex; with
    ``canonical=False``, a hyphenated UUID in either case (a UUID, not an agent key).

    Canonical by default: stored ids are lowercase, so an uppercase spelling compared as text
    would silently match nothing (no grant, no writer); callers with outside text use
    :func:`parse_uuid`, which lowercases.
    """
    pattern = _UUID if canonical else _UUID_ANY_CASE
    return isinstance(value, str) and pattern.fullmatch(value) is not None


def parse_uuid(value: object, what: str = "id") -> str:
    """Return ``value`` as a canonical lowercase UUID string, or raise naming ``what``.

    Only the hyphenated 36-character form is accepted (either case): braces, URNs and bare
    hex are spellings a typo can produce, and a typo must not become a different id.
    """
    if not is_uuid(value, canonical=False):
        raise InvalidUUIDError(f"{what} must be a UUID, got {value!r}")
    return str(value).lower()


def parse_uuid_or_nil(value: object) -> str:
    """Like :func:`parse_uuid`, but ``NIL_UUID`` for anything invalid: for "no match" reads only."""
    return str(value).lower() if is_uuid(value, canonical=False) else NIL_UUID

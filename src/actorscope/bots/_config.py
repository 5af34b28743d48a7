"""The configuration of ``actorscope run``: one TOML file, tokens from the environment.

::

    database = "actorscope.db"        # relative paths are relative to this file
    agent = "notes"                   # the agent key; created on first run
    tenant = "default"
    handler = "notes_bot:handle"      # module:function; this file's directory is searched first
    owners = [4242]                   # numeric sender ids, on every platform
    workspace = "workspace"           # files the handler writes, one directory per scope
    shared_dedup = true               # claim updates in the database (default: on PostgreSQL)
    strict = true                     # deny when the grant store fails (default: allow, logged)

    [<platform>]                      # one per chat platform (its name: the registry's): any
    token_env = "BOT_TOKEN"           # ChannelConfig field, enabled, and the platform's own
    group_policy = "open"             # keys (its contract's section model; the keys of the
                                      # built-in ones: docs/reference/config.md)

    [audit]
    keep = "90d"                      # delete audit rows older than this (default: keep all)

    [http]                            # `actorscope serve`: the HTTP API and operator console
    host = "127.0.0.1"
    port = 8080                       # 0: any free port (printed)
    agent = "notes"                   # the agent messages go to (default: the top-level agent)
    handler = "http_bot:handle"       # default: the top-level one; none: no messages
    max_connections = 100             # open at once; the oldest idle one yields to a new one
    header_timeout = 10               # seconds to send a complete request head
    body_timeout = 30                 # seconds to send a request body
    trusted_proxies = []              # addresses or networks whose X-Forwarded-For is believed

A handler is ``async def handle(request: RunRequest) -> str | OutboundMessage | None``; it runs
with the request's identity bound.

The file is one model, :class:`BotConfig` (pydantic-settings), with a model per section.
Environment variables ``ACTORSCOPE_<KEY>`` and ``ACTORSCOPE_<SECTION>__<KEY>`` win over the
file (``ACTORSCOPE_DATABASE``, ``ACTORSCOPE_HTTP__PORT=9090``, ...), each read as its key's
type: a number from its digits, a list or a table as JSON; tokens themselves are only ever
read from the variables the sections name. Every problem is one line of one
:class:`~actorscope.errors.ConfigError`: ``file:line: key.path: what is wrong``.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.machinery
import importlib.util
import inspect
import ipaddress
import json
import logging
import os
import re
import socket
import sys
import types
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import (
    Annotated,
    Any,
    ClassVar,
    Literal,
    TypeVar,
    Union,
    cast,
    get_args,
    get_origin,
    overload,
)

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    create_model,
    field_validator,
    model_validator,
)
from pydantic.fields import FieldInfo
from pydantic.json_schema import SkipJsonSchema
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from actorscope._input import (
    Flag,
    Port,
    is_uuid,
    non_empty_text,
    parse_age,
    parse_toml,
    parse_uuid,
    read_text_file,
    shown_value,
    toml_line,
    validation_problems,
)
from actorscope.agents import AgentRegistry
from actorscope.assembly import AgentSettings
from actorscope.channels import ChannelSection, SenderIds, platform
from actorscope.errors import ConfigError, IdentityError
from actorscope.host import Handler
from actorscope.permissions import LinkMode
from actorscope.platforms import platform_specs, registry_cache

__all__ = [
    "ENV_PREFIX",
    "AuditSection",
    "BotConfig",
    "HttpSection",
    "ProbeSection",
    "load_handler",
    "load_object",
    "resolve_token",
]

#: Environment variables ``ACTORSCOPE_<KEY>`` (``ACTORSCOPE_<SECTION>__<KEY>``) override the file.
ENV_PREFIX = "ACTORSCOPE_"
_HANDLER = re.compile(r"([A-Za-z_][A-Za-z0-9_.]*):([A-Za-z_][A-Za-z0-9_]*)")
#: A number as JSON (and TOML) writes one: what a variable of a number key is read as.
_NUMBER = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")


def _handler_spec(value: Any) -> str:
    if not isinstance(value, str) or not _HANDLER.fullmatch(value):
        raise ValueError(f"must look like module:function, got {shown_value(value)}")
    return value


def _optional_handler(value: Any) -> str:
    # [http] handler = "": the API answers everything but messages (the console needs none).
    return "" if value == "" else _handler_spec(value)


def _name(value: Any, kind: Literal["agent", "tenant"]) -> str:
    """An agent key or tenant slug (or either's UUID), checked before any database."""
    text = non_empty_text(value)
    try:
        if is_uuid(text, canonical=False):
            parse_uuid(text, kind)
        elif kind == "agent":
            AgentRegistry.parse_key(text)
        else:
            AgentRegistry.parse_tenant_slug(text)
    except IdentityError as exc:
        raise ValueError(str(exc)) from None
    return text


_HandlerSpec = Annotated[str, BeforeValidator(_handler_spec)]
_AgentName = Annotated[str, BeforeValidator(lambda value: _name(value, "agent"))]
_TenantName = Annotated[str, BeforeValidator(lambda value: _name(value, "tenant"))]
_Text = Annotated[str, BeforeValidator(non_empty_text)]


def _count(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= _MAX_COUNT:
        raise ValueError(f"must be an integer from 1 to {_MAX_COUNT}, got {shown_value(value)}")
    return value


def _seconds(value: Any) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not 0 < value <= _MAX_SECONDS
    ):
        raise ValueError(
            f"must be a number of seconds above 0, at most {_MAX_SECONDS}, got {shown_value(value)}"
        )
    return float(value)


def _networks(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list | tuple):
        raise ValueError(f"must be a list of IP addresses or networks, got {shown_value(value)}")
    found = tuple(_network(entry) for entry in value)
    for entry, network in zip(value, found, strict=True):
        if not network:
            raise ValueError(
                f"must be a list of IP addresses or networks (like 10.0.0.5 or 10.0.0.0/24),"
                f" got {shown_value(entry)}"
            )
    return found


def _network(entry: Any) -> str:
    """``entry`` as a canonical network (an address is a /32 or /128); ``""`` if it is none."""
    if not isinstance(entry, str):  # ipaddress reads the integer 1 as 0.0.0.1
        return ""
    try:
        return str(ipaddress.ip_network(entry))
    except ValueError:
        return ""


_MAX_COUNT = 100_000
_MAX_SECONDS = 3600


class HttpSection(BaseModel):
    """``[http]``: where ``actorscope serve`` listens, which agent and handler, and its bounds.

    ``agent`` and ``handler`` default to the top-level ones; ``handler = ""``: no messages.
    At most ``max_connections`` connections are open (a new one closes the oldest that runs no
    request, or is answered 503 when all do); a connection has ``header_timeout`` seconds to
    send a complete request head, a request ``body_timeout`` seconds to send its body.
    ``X-Forwarded-For`` / ``X-Forwarded-Proto`` are believed only from ``trusted_proxies``
    (none by default).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    agent: _AgentName = "main"
    handler: Annotated[str, BeforeValidator(_optional_handler)] = ""
    host: _Text = "127.0.0.1"
    port: Port = 8080
    max_connections: Annotated[int, BeforeValidator(_count)] = 100
    header_timeout: Annotated[float, BeforeValidator(_seconds)] = 10.0
    #: The same default as ``actorscope.http.create_app``'s ``body_timeout``.
    body_timeout: Annotated[float, BeforeValidator(_seconds)] = 30.0
    trusted_proxies: Annotated[tuple[str, ...], BeforeValidator(_networks)] = ()

    #: Connections the kernel queues for the server (they hold no descriptor of the process).
    LISTEN_BACKLOG: ClassVar[int] = 128

    def listen(self) -> socket.socket:
        """A listening TCP socket at the section's host and port (what ``actorscope serve``
        serves on); ``OSError`` if it cannot be had."""
        infos = socket.getaddrinfo(self.host, self.port, type=socket.SOCK_STREAM)
        family, kind, proto, _, address = infos[0]
        sock = socket.socket(family, kind, proto)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(address)
            sock.listen(self.LISTEN_BACKLOG)
        except OSError:
            sock.close()
            raise
        sock.setblocking(False)
        return sock


class AuditSection(BaseModel):
    """``[audit]``: how long the running bot keeps the audit trail.

    ``keep = "90d"`` (``d``, ``h``, ``m`` or ``s``; at least a minute): rows older than that are
    deleted, oldest first in small batches, when the bot starts and then every hour (every
    quarter of ``keep`` when that is shorter). Left out, the trail is kept for good.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    keep: Annotated[int, BeforeValidator(parse_age)] | None = None


class IdentitySection(BaseModel):
    """``[identity]``: what linked accounts change for the agent (docs/concepts.md, persons).

    ``links = "dm"``: a linked account's direct scope is its person's (``person:<uuid>``), so
    DM memory, files and sessions follow the person across channels; ``"grants"``: a grant to
    ``person:<uuid>`` covers each linked account, and a deny of either wins. With either, the
    bot answers ``/link`` and ``/unlink`` in direct chats. ``"off"`` (the default): links
    change nothing.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    links: LinkMode = LinkMode.OFF


class ProbeSection(BaseModel):
    """``[probe]``: what ``actorscope probe`` sends besides the writer commands (``commands``),
    and the commands only writers may use (``writer_only``, e.g. ``["/note"]``): one that does
    for anyone else what it does for a writer is a leak, whatever the bot stores."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    commands: tuple[str, ...] = ()
    writer_only: tuple[str, ...] = ()

    @field_validator("commands", "writer_only", mode="before")
    @classmethod
    def _commands(cls, value: Any) -> tuple[str, ...]:
        if not isinstance(value, list | tuple) or not all(
            isinstance(command, str) and command.strip() for command in value
        ):
            raise ValueError(f"must be a list of non-empty strings, got {shown_value(value)}")
        return tuple(command.strip() for command in value)


def _base_dir(value: Any) -> Path:
    # Set by BotConfig.load (the file's directory); a file or variable cannot set it.
    if not isinstance(value, Path):
        raise ValueError("unknown key (paths are relative to the file's directory)")
    return value


class BotConfig(BaseSettings):
    """A validated ``bot.toml``: top-level keys and one model per section.

    Each registered chat platform has a section of its own name, its contract's section model:
    :meth:`load` validates with :meth:`for_platforms`, this model with a key per
    platform registered then, and :meth:`section` reads one (typed:
    ``config.section(TelegramSection)``). Relative ``database`` and
    ``workspace`` paths are resolved against ``base_dir`` (the file's directory).
    ``ACTORSCOPE_<KEY>`` / ``ACTORSCOPE_<SECTION>__<KEY>`` environment variables win over the
    file (see the configuration reference).
    """

    model_config = SettingsConfigDict(
        extra="forbid",
        frozen=True,
        # A default is valid as written (handler = "": not configured); paths say otherwise.
        validate_default=False,
    )

    #: The file's directory: where the handler module is searched first.
    base_dir: SkipJsonSchema[Annotated[Path, BeforeValidator(_base_dir)]] = Field(
        default_factory=Path.cwd, exclude=True
    )
    #: ``module:function``; this file's directory is searched first.
    handler: _HandlerSpec = ""
    #: A file path (made relative to the config file) or a URL such as ``postgresql://...``.
    database: str = Field(default="actorscope.db", validate_default=True)
    #: The file workspace root (relative to the config file).
    workspace: Path = Field(default=Path("workspace"), validate_default=True)
    #: The agent key or UUID (created on first run).
    agent: _AgentName = "main"
    #: The tenant slug or UUID.
    tenant: _TenantName = "default"
    #: Numeric sender ids that run with role owner, on every platform.
    owners: SenderIds = ()
    #: Claim updates in the shared database; ``None``: on for PostgreSQL, off for SQLite.
    shared_dedup: Flag | None = None
    #: Fail closed: a permission check whose grant store fails denies (``PermissionPolicy``).
    strict: Flag = False
    #: The ``[http]`` section (``actorscope serve``), if any.
    http: HttpSection | None = None
    #: The ``[probe]`` section (``actorscope probe``), if any.
    probe: ProbeSection | None = None
    #: The ``[audit]`` section (retention), if any.
    audit: AuditSection | None = None
    #: The ``[identity]`` section (persons and links), if any.
    identity: IdentitySection | None = None

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """The environment wins over the file (whose keys arrive as init arguments)."""
        return _Environment(settings_cls), init_settings

    @model_validator(mode="before")
    @classmethod
    def _http_defaults(cls, data: Any) -> Any:
        if not isinstance(data, Mapping) or not isinstance(data.get("http"), Mapping):
            return data
        top = {key: data[key] for key in ("agent", "handler") if key in data}
        return {**data, "http": {**top, **data["http"]}}

    @field_validator("database", mode="before")
    @classmethod
    def _database(cls, value: Any, info: ValidationInfo) -> str:
        text = non_empty_text(value)
        # A URL names a server (or an explicit sqlite:/// path) and is kept as written.
        base = info.data.get("base_dir", Path.cwd())
        return text if "://" in text else str(base / text)

    @field_validator("workspace", mode="before")
    @classmethod
    def _workspace(cls, value: Any, info: ValidationInfo) -> Path:
        text = value if isinstance(value, Path) else Path(non_empty_text(value))
        return Path(info.data.get("base_dir", Path.cwd())) / text

    @classmethod
    def load(cls, path: str | Path, *, require_bots: bool = True) -> BotConfig:
        """Read and validate a run configuration file; environment overrides applied.

        ``require_bots=False`` (``actorscope serve``) accepts a file with only an ``[http]``
        section, whose handler then stands for the top-level one.
        """
        path = Path(path)
        source = str(path)
        text = read_text_file(path, ConfigError)
        document = parse_toml(text, source, ConfigError)
        model = BotConfig.for_platforms()
        config = _validated(model, document, text, source, path.resolve().parent)
        if document.get("strict") is True and not config.strict:
            # Fail-closed is one-way: a stray variable must not turn it off behind the file.
            raise ConfigError(
                f"environment {ENV_PREFIX}STRICT: cannot turn off strict = true set in {source}"
            )
        overrides = _env_overrides(os.environ, model)
        security_keys = _security_keys(model)
        platforms = set(_section_names(model))  # a whole section
        security = [
            name
            for name in overrides
            if security_keys & set(name[len(ENV_PREFIX) :].lower().split("__"))
            or name[len(ENV_PREFIX) :].lower() in platforms
        ]
        if security:
            logger.warning(
                "%s: the environment overrides security settings: %s", source, ", ".join(security)
            )
        if not require_bots and config.http is None:
            raise ConfigError(f"{source}: no [http] section (host, port, agent, handler)")
        if "handler" not in config.model_fields_set:
            if config.http is None or require_bots:
                raise ConfigError(f"{source}: handler: missing (module:function)")
            config = config.model_copy(update={"handler": config.http.handler})
        if require_bots and not config.sections():
            named = " or ".join(f"[{name}]" for name in _section_names(model))
            raise ConfigError(f"{source}: no enabled {named} section")
        return config

    @classmethod
    def for_platforms(cls) -> type[BotConfig]:
        """This model with a section key for each chat platform registered now, in the
        registry's order (built once per registry state; what :meth:`load`
        validates with, and whose JSON Schema ``actorscope schema config`` prints)."""
        return _with_sections()

    @overload
    def section(self, kind: type[_Section]) -> _Section | None: ...

    @overload
    def section(self, kind: str) -> ChannelSection | None: ...

    def section(self, kind: type[_Section] | str) -> _Section | ChannelSection | None:
        """A chat platform's section, if the file has one: by its model
        (``section(TelegramSection)``, typed as that model) or by the platform's name."""
        model = ChannelSection if isinstance(kind, str) else kind
        name = kind if isinstance(kind, str) else _platform_of(kind)
        found = getattr(self, name, None) if name in _section_names(type(self)) else None
        return found if isinstance(found, model) else None

    def sections(self) -> list[ChannelSection]:
        """The enabled platform sections, in the registry's order (the built-in ones first)."""
        found = (self.section(name) for name in _section_names(type(self)))
        return [section for section in found if section is not None and section.enabled]

    def agent_settings(self, *, agent: str | None = None) -> AgentSettings:
        """What this file gives its agent for the composition root
        (:func:`~actorscope.assembly.assemble`); ``agent``: another agent of its tenant
        (the ``[http]`` section's). Each call makes a new origin signer."""
        return AgentSettings(
            agent=self.agent if agent is None else agent,
            tenant=self.tenant,
            owners=self.owners,
            strict=self.strict,
            workspace=self.workspace,
            shared_dedup=self.shared_dedup,
            links=LinkMode.OFF if self.identity is None else self.identity.links,
        )


_Section = TypeVar("_Section", bound=ChannelSection)


def _platform_of(kind: type[ChannelSection]) -> str:
    """The platform a section model is of (its ``platform`` default)."""
    default = kind.model_fields["platform"].default
    return default if isinstance(default, str) else ""


def _section_names(model: type[BotConfig]) -> tuple[str, ...]:
    """The platform section keys of ``model`` (one :meth:`BotConfig.for_platforms` made)."""
    return tuple(name for name in model.model_fields if name not in BotConfig.model_fields)


def _reserved() -> frozenset[str]:
    """What a platform cannot be named to have a section: a top-level key, or any attribute
    of the model (``section``, ``json``, ``model_config``, ...), which its key would shadow."""
    return frozenset(BotConfig.model_fields) | frozenset(dir(BotConfig))


def _platform_sections() -> dict[str, type[ChannelSection]]:
    """Each registered chat platform's section model, from its contract, by its name."""
    found: dict[str, type[ChannelSection]] = {}
    reserved = _reserved()
    for spec in platform_specs():
        if spec.name in reserved:
            raise ConfigError(
                f"platform {spec.name!r} cannot have a bot.toml section: {spec.name!r} is a "
                "top-level key or an attribute of BotConfig (rename the platform)"
            )
        section = platform(spec.name).section
        named = (
            isinstance(section, type)
            and issubclass(section, ChannelSection)
            and _platform_of(section) == spec.name
        )
        if not named:
            raise ConfigError(
                f"{spec.contract}: its section must be a ChannelSection whose platform is "
                f"{spec.name!r}"
            )
        found[spec.name] = section
    return found


# Built when a file is first loaded (never at import: a broken plugin must not stop an
# unrelated import), again after the registry changed.
@registry_cache(maxsize=1)
def _with_sections() -> type[BotConfig]:
    fields: dict[str, Any] = {
        name: (section | None, None) for name, section in _platform_sections().items()
    }
    return create_model("BotConfig", __base__=BotConfig, __module__=__name__, **fields)


logger = logging.getLogger("actorscope.bots")  # the public name operators filter on

#: Keys that decide who may do what, or where the token goes: an environment override of one
#: is logged at WARNING.
_SECURITY_KEYS = frozenset(
    {"owners", "strict", "allow_from", "dm_policy", "group_policy", "groups", "ignore_bots"}
    | {"links"}
)


def _security_keys(model: type[BotConfig]) -> frozenset[str]:
    """:data:`_SECURITY_KEYS` and, of each platform section of ``model``, where its token
    goes."""
    sections = (_table(model.model_fields[name].annotation) for name in _section_names(model))
    return _SECURITY_KEYS | {key for section in sections for key in section.token_keys}


def _types(annotation: Any) -> tuple[Any, ...]:
    """The types a key of type ``annotation`` takes (``None``, unions, ``Annotated`` unwrapped)."""
    if get_origin(annotation) is Annotated:
        return _types(get_args(annotation)[0])
    if get_origin(annotation) in (Union, types.UnionType):
        return tuple(kind for arg in get_args(annotation) for kind in _types(arg))
    return (annotation,)


def _table(annotation: Any) -> Any:
    """The model, or the ``dict`` type, of a key that is a table; ``None`` if it is a value."""
    for kind in _types(annotation):
        if get_origin(kind) is dict or (isinstance(kind, type) and issubclass(kind, BaseModel)):
            return kind
    return None


def _read(name: str, text: str, annotation: Any) -> Any:
    """Variable ``name``'s ``text`` as its key takes it: a number from its digits, a flag from
    ``true`` or ``false`` in any case, a list or a table from JSON, anything else (a path, a
    name) as the text; what is none of these is left to the key's own error."""
    kinds = _types(annotation)
    word = text.strip()
    if _table(annotation) is not None or any(get_origin(kind) in (tuple, list) for kind in kinds):
        try:
            return json.loads(text)
        except ValueError:
            raise ConfigError(
                f"environment {name}: not JSON (a list or a table is written as JSON, "
                'e.g. ["4242"] or {"port": 8082})'
            ) from None
    if (int in kinds or float in kinds) and _NUMBER.fullmatch(word):
        return json.loads(word)
    if bool in kinds and word.lower() in ("true", "false"):
        return word.lower() == "true"
    return text


def _environment(environ: Mapping[str, str], model: type[BotConfig]) -> dict[str, Any]:
    """The keys ``ACTORSCOPE_<KEY>`` / ``ACTORSCOPE_<SECTION>__<KEY>`` variables set, each read
    as its key takes it (:func:`_read`); a whole section's JSON first, then its keys' own."""
    found: dict[str, Any] = {}
    named = [
        (name.upper()[len(ENV_PREFIX) :].lower().split("__"), name)
        for name in environ
        if name.upper().startswith(ENV_PREFIX)
    ]
    for path, name in sorted(named, key=lambda item: (len(item[0]), item[1])):
        if path[0] not in model.model_fields:
            continue  # not a key: another ACTORSCOPE_ variable (ACTORSCOPE_ORIGIN_KEY, ...)
        annotation: Any = model
        table: Any = found
        for depth, key in enumerate(path):
            kind, where = _table(annotation), f"environment {name.upper()}: "
            if kind is None:
                raise ConfigError(where + ".".join(path[:depth]) + ": not a table")
            if get_origin(kind) is dict:
                annotation = get_args(kind)[1]
            elif key in kind.model_fields:
                annotation = kind.model_fields[key].annotation
            elif depth < len(path) - 1:
                raise ConfigError(where + ".".join(path[: depth + 1]) + ": unknown key")
            else:
                annotation = str  # the model refuses the key, naming this variable
            if depth < len(path) - 1 and isinstance(table, dict):
                table = table.setdefault(key, {})
        if isinstance(table, dict):  # else a section's JSON is no table, and is said to be
            table[path[-1]] = _read(name.upper(), environ[name], annotation)
    return found


class _Environment(PydanticBaseSettingsSource):
    """The ``ACTORSCOPE_`` variables: what :func:`_environment` reads."""

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        """The value the variables give top-level key ``field_name``, if any."""
        return _environment(os.environ, self._model).get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        return _environment(os.environ, self._model)

    @property
    def _model(self) -> type[BotConfig]:
        return cast("type[BotConfig]", self.settings_cls)


def _env_variable(loc: tuple[str | int, ...], environ: Mapping[str, str]) -> str | None:
    """The ``ACTORSCOPE_`` variable that supplied the value at ``loc``, if one did."""
    names = {name.upper() for name in environ}
    for end in range(len(loc), 0, -1):
        name = ENV_PREFIX + "__".join(str(part) for part in loc[:end]).upper()
        if name in names:
            return name
    return None


def _env_overrides(environ: Mapping[str, str], model: type[BotConfig]) -> list[str]:
    """The ``ACTORSCOPE_`` variables that override a key of ``model``, sorted."""
    fields = {name.upper() for name in model.model_fields}
    return sorted(
        name.upper()
        for name in environ
        if name.upper().startswith(ENV_PREFIX)
        and name.upper()[len(ENV_PREFIX) :].split("__")[0] in fields
    )


def _at(source: str, text: str, loc: tuple[str | int, ...]) -> str:
    variable = _env_variable(loc, os.environ)
    if variable is not None:
        return f"environment {variable}"
    line = toml_line(text, loc)
    return source if line is None else f"{source}:{line}"


def _validated(
    model: type[BotConfig], document: dict[str, Any], text: str, source: str, base: Path
) -> BotConfig:
    """``model`` of ``document``; every problem one line of one ConfigError."""
    try:
        # The file's own `base_dir` key (a string) comes last and is refused as unknown.
        return model(**{"base_dir": base, **document})
    except ValidationError as exc:
        found = validation_problems(exc)
        # In the file's order; what has no line (the environment, a missing key) comes last.
        found.sort(key=lambda item: toml_line(text, item[0]) or len(text))
        lines = [f"{_at(source, text, loc)}: {problem}" for loc, problem in found]
        raise ConfigError("\n".join(lines), problems=tuple(lines)) from None


def resolve_token(section: ChannelSection, env: Mapping[str, str], source: str = "") -> str:
    """The token from the environment variable the section names; one clear error if unset."""
    config = section.config
    where = f"{source}: {config.platform}" if source else config.platform
    if not config.token_env:
        raise ConfigError(f"{where}.token_env: missing (the variable holding the token)")
    token = env.get(config.token_env, "").strip()
    if not token:
        raise ConfigError(
            f"{where}: environment variable {config.token_env} is not set (the bot token)"
        )
    problem = platform(config.platform).token_problem(token)
    if problem:  # never echo the token: a near-miss is still a secret
        raise ConfigError(f"{where}: environment variable {config.token_env} {problem}")
    return token


def load_handler(spec: str, search_dir: Path | None = None) -> Handler:
    """Import ``module:function``; a top-level module in ``search_dir`` wins over ``sys.path``."""
    function = load_object(spec, search_dir)
    if not inspect.iscoroutinefunction(function):
        raise ConfigError(f"handler {spec!r} is not an async function")
    return cast(Handler, function)


def load_object(spec: str, search_dir: Path | None = None, *, what: str = "handler") -> Any:
    """Import ``module:attribute`` (as :func:`load_handler` does); one ConfigError naming
    ``what`` when the spec, the module or the attribute is wrong."""
    match = _HANDLER.fullmatch(spec)
    if match is None:
        raise ConfigError(f"{what} must look like module:function, got {spec!r}")
    module_name, attr = match.groups()
    try:
        module = _import(module_name, search_dir, what, spec)
    except ConfigError:
        raise
    except Exception as exc:  # any import-time failure of user code is a config problem
        raise ConfigError(
            f"{what} {spec!r}: importing {module_name} failed: {type(exc).__name__}: {exc}"
        ) from None
    found = getattr(module, attr, None)
    if found is None:
        public = [name for name in dir(module) if not name.startswith("_")]
        close = difflib.get_close_matches(attr, public, n=1)
        hint = f" (it has {close[0]!r})" if close else ""
        raise ConfigError(f"{what} {spec!r}: module {module_name} has no {attr!r}{hint}")
    return found


#: The modules :func:`_import` loaded from a search folder: one of them, imported already, is
#: replaced by the file of the same name in another search folder (a copy of the bot in a
#: test's temporary folder); any other module imported already is never replaced.
_FROM_SEARCH_DIR: weakref.WeakSet[types.ModuleType] = weakref.WeakSet()


def _import(module_name: str, search_dir: Path | None, what: str, spec: str) -> Any:
    """``module_name``, its top-level package found in ``search_dir`` first (one ConfigError
    when a module of that name is imported already from elsewhere)."""
    top = module_name.partition(".")[0]
    local = None
    if search_dir is not None:
        local = importlib.machinery.PathFinder.find_spec(top, [str(search_dir)])
    loaded = sys.modules.get(top)
    origin = local.origin if local is not None and local.has_location else None
    if origin is not None and loaded is not None and not _is_file_of(loaded, origin):
        _refuse_shadowed(loaded, Path(origin), top, what, spec)
        # The bot's module from another search folder: this folder's file wins.
        for name in [n for n in sys.modules if n == top or n.startswith(f"{top}.")]:
            del sys.modules[name]
        loaded = None
    if local is not None and local.loader is not None and loaded is None:
        module = importlib.util.module_from_spec(local)
        sys.modules[top] = module
        try:
            local.loader.exec_module(module)
        except BaseException:
            del sys.modules[top]
            raise
        _FROM_SEARCH_DIR.add(module)
        if top == module_name:
            return module
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and module_name.startswith(exc.name):
            raise ConfigError(f"{what} module {module_name!r} not found") from None
        raise


def _refuse_shadowed(loaded: types.ModuleType, file: Path, top: str, what: str, spec: str) -> None:
    """One ConfigError, unless ``loaded`` is a bot's module :func:`_import` loaded from another
    search folder: replacing a module this process uses already (the CLI's ``rich``, a library
    the bot imports) with the bot's ``file`` would break whatever uses it."""
    if loaded in _FROM_SEARCH_DIR:
        return
    origin = getattr(loaded, "__file__", None) or "Python itself"
    shown = file.parent.name if file.name == "__init__.py" else file.name
    raise ConfigError(
        f"{what} {spec!r}: module {top} is imported already, from {origin}, so {file} "
        f"cannot be loaded under that name: rename {shown} and the module in the {what}'s name"
    )


def _is_file_of(module: types.ModuleType, origin: str) -> bool:
    """Whether ``module`` was loaded from the file ``origin``."""
    file = getattr(module, "__file__", None)
    if not isinstance(file, str):
        return False
    try:
        return os.path.samefile(file, origin)
    except OSError:  # one of them is gone: not the same file
        return False

"""The configuration of ``actorscope run``: one TOML file, tokens from the environment.

::

    database = "actorscope.db"        # relative paths are relative to this file
    agent = "notes"                   # the agent key; created on first run
    tenant = "default"
    handler = "telegram_bot:handle"   # module:function; this file's directory is searched first
    owners = [4242]                   # numeric sender ids, on every platform
    workspace = "workspace"           # files the handler writes, one directory per scope
    shared_dedup = true               # claim updates in the database (default: on PostgreSQL)

    [telegram]                        # any ChannelConfig field, plus token_env and enabled
    token_env = "TELEGRAM_BOT_TOKEN"
    group_policy = "open"
    mode = "polling"                  # or "webhook": see actorscope.channels._telegram_webhook

    [discord]
    token_env = "DISCORD_BOT_TOKEN"
    enabled = true
    shard_count = 2                   # optional: see actorscope.channels._discord_shards
    shard_ids = [0]

    [http]                            # `actorscope serve`: the HTTP API and operator console
    host = "127.0.0.1"
    port = 8080                       # 0: any free port (printed)
    agent = "notes"                   # the agent messages go to (default: the top-level agent)
    handler = "http_bot:handle"       # default: the top-level one; none: no messages

A handler is ``async def handle(request: RunRequest) -> str | OutboundMessage | None``; it runs
with the request's identity bound. Every problem is one :class:`~actorscope.errors.ConfigError`.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import inspect
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from actorscope._input import parse_toml, read_text_file
from actorscope.agents._types import (
    looks_like_uuid,
    parse_agent_key,
    parse_tenant_slug,
    parse_uuid,
)
from actorscope.channels._config import ChannelConfig
from actorscope.channels._discord_shards import SHARD_KEYS, DiscordShards
from actorscope.channels._telegram_webhook import WEBHOOK_KEYS, WebhookConfig
from actorscope.errors import ConfigError, IdentityError
from actorscope.host._runtime import Handler

__all__ = [
    "BotConfig",
    "ChannelSection",
    "HttpSection",
    "load_bot_config",
    "load_handler",
    "load_object",
    "resolve_token",
]

_TOP_KEYS = frozenset(
    {"database", "agent", "tenant", "handler", "owners", "workspace", "shared_dedup"}
)
_PLATFORMS = ("telegram", "discord")
_HTTP_KEYS = frozenset({"host", "port", "agent", "handler"})
_SECTION_KEYS = {
    "telegram": frozenset({"enabled", *ChannelConfig.model_fields, *WEBHOOK_KEYS}),
    "discord": frozenset({"enabled", *ChannelConfig.model_fields, *SHARD_KEYS}),
}
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_HANDLER = re.compile(r"([A-Za-z_][A-Za-z0-9_.]*):([A-Za-z_][A-Za-z0-9_]*)")
#: A Telegram bot token as @BotFather issues it: the bot's numeric id, ':', ~35 URL-safe chars.
TELEGRAM_TOKEN = re.compile(r"[0-9]{1,20}:[A-Za-z0-9_-]{30,64}")


@dataclass(frozen=True, slots=True)
class ChannelSection:
    """One platform section: its admission config, whether to run it, how to connect.

    ``webhook`` is set for a Telegram section in webhook mode; ``shards`` for a sharded
    Discord section.
    """

    config: ChannelConfig
    enabled: bool = True
    webhook: WebhookConfig | None = None
    shards: DiscordShards | None = None


@dataclass(frozen=True, slots=True)
class HttpSection:
    """The ``[http]`` section: where ``actorscope serve`` listens, which agent and handler."""

    agent: str
    handler: str
    host: str = "127.0.0.1"
    port: int = 8080


@dataclass(frozen=True, slots=True)
class BotConfig:
    """A validated ``actorscope run`` configuration (paths already resolved)."""

    handler: str
    base_dir: Path
    #: A file path (made relative to the config file) or a URL such as ``postgresql://...``.
    database: str
    workspace: Path
    agent: str = "main"
    tenant: str = "default"
    owners: tuple[str, ...] = ()
    telegram: ChannelSection | None = None
    discord: ChannelSection | None = None
    #: Claim updates in the shared database; ``None``: on for PostgreSQL, off for SQLite.
    shared_dedup: bool | None = None
    #: The ``[http]`` section (``actorscope serve``), if any.
    http: HttpSection | None = None

    def sections(self) -> list[ChannelSection]:
        """The enabled platform sections, Telegram first."""
        return [s for s in (self.telegram, self.discord) if s is not None and s.enabled]


def _string(document: Mapping[str, Any], key: str, default: str, source: str) -> str:
    value = document.get(key, default)
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{source}: {key} must be a non-empty string, got {value!r}")
    return value


def _name(document: Mapping[str, Any], key: str, default: str, source: str) -> str:
    """``agent`` (a key or UUID) or ``tenant`` (a slug or UUID), checked before any database."""
    value = _string(document, key, default, source)
    try:
        if looks_like_uuid(value):
            parse_uuid(value, key)
        elif key == "agent":
            parse_agent_key(value)
        else:
            parse_tenant_slug(value)
    except IdentityError as exc:
        raise ConfigError(f"{source}: {key}: {exc}") from None
    return value


def _section(document: Mapping[str, Any], platform: str, source: str) -> ChannelSection | None:
    raw = document.get(platform)
    if raw is None:
        return None
    where = f"{source} [{platform}]"
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: must be a table")
    data = dict(raw)
    # A misspelt key is named as such, not reported as a missing one.
    unknown = sorted(str(key) for key in set(data) - _SECTION_KEYS[platform])
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r}")
    enabled = data.pop("enabled", True)
    if not isinstance(enabled, bool):
        raise ConfigError(f"{where}: enabled must be true or false, got {enabled!r}")
    if data.setdefault("platform", platform) != platform:
        raise ConfigError(f"{where}: platform must be {platform!r}, got {data['platform']!r}")
    webhook = WebhookConfig.pop_from(data, where) if platform == "telegram" else None
    shards = DiscordShards.pop_from(data, where) if platform == "discord" else None
    config = ChannelConfig.from_mapping(data, source=where)
    if config.token_env and not _ENV_NAME.fullmatch(config.token_env):
        raise ConfigError(f"{where}: token_env {config.token_env!r} is not a variable name")
    return ChannelSection(config, enabled, webhook, shards)


def _http(document: Mapping[str, Any], source: str) -> HttpSection | None:
    raw = document.get("http")
    if raw is None:
        return None
    where = f"{source} [http]"
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: must be a table")
    unknown = sorted(str(key) for key in set(raw) - _HTTP_KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r}")
    port = raw.get("port", 8080)
    if type(port) is not int or not 0 <= port <= 65535:
        raise ConfigError(f"{where}: port must be an integer from 0 to 65535, got {port!r}")
    top_agent = document.get("agent", "main")
    top_handler = document.get("handler", "")
    handler = raw.get("handler", top_handler)
    if not isinstance(handler, str):
        raise ConfigError(f"{where}: handler must be a string (module:function)")
    # No handler at all: the API answers everything but messages (the console needs none).
    if handler and not _HANDLER.fullmatch(handler):
        raise ConfigError(f"{where}: handler must look like module:function, got {handler!r}")
    return HttpSection(
        agent=_name(raw, "agent", top_agent if isinstance(top_agent, str) else "main", where),
        handler=handler,
        host=_string(raw, "host", "127.0.0.1", where),
        port=port,
    )


def load_bot_config(path: str | Path, *, require_bots: bool = True) -> BotConfig:
    """Read and validate a run configuration file.

    ``require_bots=False`` (``actorscope serve``) accepts a file with only an ``[http]``
    section, whose handler then stands for the top-level one.
    """
    path = Path(path)
    source = str(path)
    document = parse_toml(read_text_file(path, ConfigError), source, ConfigError)
    # [probe] is read by `actorscope probe` (its commands); `run` has no use for it.
    unknown = sorted(set(document) - _TOP_KEYS - set(_PLATFORMS) - {"http", "probe"})
    if unknown:
        raise ConfigError(f"{source}: unknown key {unknown[0]!r}")
    http = _http(document, source)
    if "handler" not in document and (require_bots or http is None):
        raise ConfigError(f"{source}: missing key 'handler' (module:function)")
    handler = (
        _string(document, "handler", "", source)
        if "handler" in document or http is None
        else http.handler
    )
    if (handler or require_bots) and not _HANDLER.fullmatch(handler):
        raise ConfigError(f"{source}: handler must look like module:function, got {handler!r}")
    owners = ChannelConfig.from_mapping(
        {"platform": "telegram", "owners": document.get("owners", [])}, source=source
    ).owners
    shared_dedup = document.get("shared_dedup")
    if shared_dedup is not None and not isinstance(shared_dedup, bool):
        raise ConfigError(f"{source}: shared_dedup must be true or false, got {shared_dedup!r}")
    base = path.resolve().parent
    config = BotConfig(
        handler=handler,
        base_dir=base,
        database=_database(base, _string(document, "database", "actorscope.db", source)),
        workspace=base / _string(document, "workspace", "workspace", source),
        agent=_name(document, "agent", "main", source),
        tenant=_name(document, "tenant", "default", source),
        owners=owners,
        telegram=_section(document, "telegram", source),
        discord=_section(document, "discord", source),
        shared_dedup=shared_dedup,
        http=http,
    )
    if require_bots and not config.sections():
        raise ConfigError(f"{source}: no enabled [telegram] or [discord] section")
    if not require_bots and http is None:
        raise ConfigError(f"{source}: no [http] section (host, port, agent, handler)")
    return config


def resolve_token(section: ChannelSection, env: Mapping[str, str], source: str = "") -> str:
    """The token from the environment variable the section names; one clear error if unset."""
    config = section.config
    where = f"{source} [{config.platform}]" if source else f"[{config.platform}]"
    if not config.token_env:
        raise ConfigError(f"{where}: token_env is not set (the variable holding the token)")
    token = env.get(config.token_env, "").strip()
    if not token:
        raise ConfigError(
            f"{where}: environment variable {config.token_env} is not set (the bot token)"
        )
    if config.platform == "telegram" and TELEGRAM_TOKEN.fullmatch(token) is None:
        # Never echo the token: a near-miss is still a secret.
        raise ConfigError(
            f"{where}: environment variable {config.token_env} does not hold a Telegram bot "
            "token (<bot id>:<secret> as @BotFather gives it, e.g. 123456789:AAH...)"
        )
    return token


def _database(base: Path, value: str) -> str:
    # A URL names a server (or an explicit sqlite:/// path) and is kept as written.
    return value if "://" in value else str(base / value)


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
        module = _import(module_name, search_dir, what)
    except ConfigError:
        raise
    except Exception as exc:  # any import-time failure of user code is a config problem
        raise ConfigError(
            f"{what} {spec!r}: importing {module_name} failed: {type(exc).__name__}: {exc}"
        ) from None
    found = getattr(module, attr, None)
    if found is None:
        raise ConfigError(f"{what} {spec!r}: module {module_name} has no {attr!r}")
    return found


def _import(module_name: str, search_dir: Path | None, what: str) -> Any:
    if search_dir is not None and "." not in module_name and module_name not in sys.modules:
        spec = importlib.machinery.PathFinder.find_spec(module_name, [str(search_dir)])
        if spec is not None and spec.loader is not None:
            module = importlib.util.module_from_spec(spec)
            sys.modules[module_name] = module
            try:
                spec.loader.exec_module(module)
            except BaseException:
                del sys.modules[module_name]
                raise
            return module
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and module_name.startswith(exc.name):
            raise ConfigError(f"{what} module {module_name!r} not found") from None
        raise

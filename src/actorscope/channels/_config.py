"""``ChannelConfig``: who a bot talks to on one platform, loaded from TOML.

::

    platform = "telegram"          # or "discord", or another registered platform
    name = "telegram"              # defaults to the platform; becomes the scope's channel
    token_env = "TELEGRAM_TOKEN"   # the environment variable holding the token
    dm_policy = "open"             # open | allowlist | disabled
    group_policy = "allowlist"
    allow_from = [4242, "5151"]    # numeric sender ids only: usernames change hands
    owners = [4242]
    require_mention = true         # in groups; a reply to the bot counts
    ignore_bots = true             # bots, webhooks, anonymous admins, channel posts

    [groups."-1001234567890"]      # a Telegram chat id, a Discord guild or channel id
    policy = "open"
    require_mention = false

Unknown keys are rejected, and so is any ``allow_from`` or ``owners`` entry that is not a
numeric sender id (an ``@username``, a placeholder such as ``1087968824``, a chat id), or on a
platform of opaque ids (:class:`~actorscope.platforms.IdForm`) not one of its ids.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, ClassVar, Self

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    ValidationError,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from actorscope._input import (
    Flag,
    env_name,
    parse_toml,
    read_text_file,
    shown_value,
    validation_problems,
)
from actorscope.errors import ConfigError, IdentityError
from actorscope.host import RunStep
from actorscope.identity import SenderKind
from actorscope.platforms import IdForm, PlatformSpec, platform_spec, platform_specs

__all__ = [
    "ChannelConfig",
    "ChannelSection",
    "GroupOverride",
    "Policy",
    "SenderIds",
]

_SENDER_ID = re.compile(r"[0-9]{1,32}")
_CHAT_ID = re.compile(r"-?[0-9]{1,32}")


def _platform(value: Any) -> str:
    """A registered platform that has events of its own (a contract)."""
    spec = platform_spec(value) if isinstance(value, str) else None
    if spec is None or not spec.contract:
        known = ", ".join(s.name for s in platform_specs())
        raise ValueError(f"must be one of {known}, got {shown_value(value)}")
    return spec.name


#: Sender ids as a schema shows them: TOML writes them as integers or strings.
_Ids = Annotated[
    tuple[str, ...],
    WithJsonSchema({"type": "array", "items": {"type": ["integer", "string"]}}),
]


class Policy(StrEnum):
    """Who may talk to the bot in a kind of chat."""

    OPEN = "open"
    ALLOWLIST = "allowlist"
    DISABLED = "disabled"


def sender_ids(value: Any, field: str, platform: str = "") -> tuple[str, ...]:
    """``field``'s sender ids, canonical: numeric, or ``platform``'s own when it is a
    platform of opaque ids; a ValueError naming the first bad entry."""
    spec = platform_spec(platform)
    if spec is not None and spec.ids is IdForm.OPAQUE:
        return _opaque_ids(value, field, spec)
    if value is None:
        return ()
    if isinstance(value, (str, int)):
        value = [value]
    if not isinstance(value, (list, tuple)):
        raise ValueError("must be a list of numeric sender ids")
    ids: list[str] = []
    for index, entry in enumerate(value):
        where = f"{field}[{index}] = {entry!r}"
        if isinstance(entry, bool) or not isinstance(entry, (str, int)):
            raise ValueError(f"{where} is not a numeric sender id")
        text = str(entry).strip()
        if text.startswith("@"):
            raise ValueError(
                f"{where} is a username; use the numeric sender id instead, because "
                "usernames change hands"
            )
        if not _SENDER_ID.fullmatch(text):
            raise ValueError(
                f"{where} is not a numeric sender id (usernames change hands, and chat or "
                "scope ids are not senders)"
            )
        canonical = str(int(text))
        if SenderKind.is_placeholder(canonical):
            raise ValueError(f"{where} is a Telegram placeholder, not a person")
        ids.append(canonical)
    return tuple(ids)


def _numeric_ids(value: Any, info: ValidationInfo) -> tuple[str, ...]:
    return sender_ids(value, info.field_name or "ids")


SenderIds = Annotated[_Ids, BeforeValidator(_numeric_ids)]
"""The type of a pydantic field of numeric sender ids (``owners = [4242, "5151"]``): a list of
integers or digit strings (or one), checked as a channel's ``owners`` are (no ``@username``,
no placeholder id, no chat or scope id) and kept as canonical text, a tuple of strings."""


def _opaque_ids(value: Any, field: str, spec: PlatformSpec) -> tuple[str, ...]:
    if value is None:
        return ()
    entries = [value] if isinstance(value, str) else value
    if not isinstance(entries, list | tuple):
        raise ValueError(f"must be a list of {spec.name} sender ids")
    for index, entry in enumerate(entries):
        if not isinstance(entry, str) or not spec.is_person_id(entry):
            raise ValueError(f"{field}[{index}] = {entry!r} is not a {spec.name} sender id")
    return tuple(entries)


def _is_chat_id(spec: PlatformSpec, key: str) -> bool:
    try:
        return spec.chat_id(key) == key
    except IdentityError:
        return False


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class GroupOverride(_Strict):
    """Settings for one group (chat, guild or channel id) that replace the channel's own."""

    policy: Policy | None = None
    allow_from: _Ids | None = None
    require_mention: Flag | None = None

    @field_validator("allow_from", mode="before")
    @classmethod
    def _allow_from(cls, value: Any) -> tuple[str, ...] | None:
        return None if value is None else sender_ids(value, "allow_from")


def _opaque_override(spec: PlatformSpec, key: str, item: Any) -> Any:
    """A group override of a platform of opaque ids: its ``allow_from`` holds that platform's
    sender ids (an override alone knows no platform, so it would take numeric ones only)."""
    if not isinstance(item, Mapping) or item.get("allow_from") is None:
        return item
    ids = sender_ids(item["allow_from"], f"{key}.allow_from", spec.name)
    override = GroupOverride.model_validate({**item, "allow_from": None})
    return override.model_copy(update={"allow_from": ids})


class ChannelConfig(_Strict):
    """One platform's admission settings (the TOML form is in the module docstring).

    ``dm_policy`` and ``group_policy`` are ``open``, ``allowlist`` or ``disabled``; ``groups``
    maps a chat, guild or channel id to the keys ``policy``, ``allow_from`` and
    ``require_mention``, which replace the channel's own there.
    """

    #: A registered platform with events of its own (``telegram``, ``discord``, ...).
    platform: Annotated[str, BeforeValidator(_platform)]
    name: str = ""
    token_env: str = ""
    dm_policy: Policy = Policy.OPEN
    group_policy: Policy = Policy.OPEN
    allow_from: _Ids = ()
    owners: _Ids = ()
    require_mention: Flag = True
    ignore_bots: Flag = True
    groups: dict[str, GroupOverride] = {}

    @field_validator("allow_from", "owners", mode="before")
    @classmethod
    def _ids(cls, value: Any, info: ValidationInfo) -> tuple[str, ...]:
        return sender_ids(value, info.field_name or "ids", info.data.get("platform", ""))

    @field_validator("token_env", mode="before")
    @classmethod
    def _token_env(cls, value: Any) -> str:
        # "" (the default) means not set; resolve_token says so when a token is needed.
        return value if value == "" else env_name(value)

    @field_validator("groups", mode="before")
    @classmethod
    def _group_keys(cls, value: Any, info: ValidationInfo) -> Any:
        spec = platform_spec(info.data.get("platform", ""))
        if spec is not None and spec.ids is IdForm.OPAQUE and isinstance(value, Mapping):
            overrides: dict[str, Any] = {}
            for key, item in value.items():
                if not isinstance(key, str) or not _is_chat_id(spec, key):
                    raise ValueError(f"groups key {key!r} is not a {spec.name} chat id")
                overrides[key] = _opaque_override(spec, key, item)
            return overrides
        if isinstance(value, Mapping):
            for key in value:
                if not isinstance(key, str) or not _CHAT_ID.fullmatch(key):
                    raise ValueError(f"groups key {key!r} is not a numeric chat or guild id")
            return {str(int(key)): item for key, item in value.items()}
        return value

    @model_validator(mode="after")
    def _default_name(self) -> ChannelConfig:
        if not self.name:
            object.__setattr__(self, "name", self.platform)
        elif not re.fullmatch(r"[a-z0-9][a-z0-9_.-]{0,63}", self.name):
            raise ValueError(
                f"name {self.name!r} must be lowercase letters, digits, '_', '.' or '-'"
            )
        return self

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], *, source: str = "channel config") -> Self:
        """Validate ``data``; any problem is one :class:`ConfigError` naming key and reason."""
        try:
            return cls.model_validate(dict(data))
        except ValidationError as exc:
            raise ConfigError(f"{source}: {validation_problems(exc)[0][1]}") from None

    @classmethod
    def from_toml(cls, path: str | Path, *, table: str = "") -> Self:
        """Load from a TOML file: the whole document, or the dotted ``table`` inside it."""
        path = Path(path)
        source = str(path)
        # Read with bounds (a FIFO or /dev/zero neither hangs nor exhausts memory).
        document: Any = parse_toml(read_text_file(path, ConfigError), source, ConfigError)
        for part in filter(None, table.split(".")):
            document = document.get(part) if isinstance(document, dict) else None
            if not isinstance(document, dict):
                raise ConfigError(f"{path}: no table [{table}]")
            source = f"{path} [{table}]"
        return cls.from_mapping(document, source=source)

    def override_for(self, *chat_ids: str) -> GroupOverride | None:
        """The override of the first of ``chat_ids`` that has one (chat, then guild)."""
        for chat_id in chat_ids:
            override = self.groups.get(chat_id)
            if override is not None:
                return override
        return None

    def role_for(self, sender_id: str) -> str:
        """``"owner"`` for a configured owner, else ``""``
        (:meth:`~actorscope.host.RunStep.role_for`)."""
        return RunStep.role_for(sender_id, owners=self.owners)


class ChannelSection(ChannelConfig):
    """A chat platform's ``bot.toml`` section (``[telegram]``, ``[discord]``, ...) for
    ``actorscope run``: the :class:`ChannelConfig` keys, ``enabled``, and the platform's own.

    Each platform's contract names its section model (``Platform.section``): a subclass whose
    ``platform`` is the platform's name (``Literal["telegram"] = "telegram"``), adding its own
    keys and handing them to its runner (:meth:`runner_options`).
    """

    #: The section's keys that say where the bot's token goes (another server's URL): an
    #: environment override of one is logged at WARNING, like the keys of who may do what.
    token_keys: ClassVar[frozenset[str]] = frozenset()
    enabled: Flag = True

    @property
    def config(self) -> ChannelConfig:
        """The admission settings (the section is a :class:`ChannelConfig`)."""
        return self

    def runner_options(self, env: Mapping[str, str], source: str = "") -> dict[str, Any]:
        """The platform runner's own options this section sets (its contract's ``runner``);
        a secret is read from ``env`` now (one clear error naming ``source`` when unset)."""
        return {}

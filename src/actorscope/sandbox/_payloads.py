"""Discord payloads a person's action produces: resolved objects, options, selects, modals.

:class:`Resolver` turns what a person picks (a user, a channel, a role, by name or object) into
the snowflake an interaction carries and the ``resolved`` data Discord sends with it: users with
their guild members (and permissions), partial channels (with the picker's permissions), roles.
:func:`option_values` renders a slash command's options as the synced command declares them
(choices by name or value, numbers and booleans from text); :func:`select_data` and
:func:`modal_submission` build a select's and a modal's submitted data, checked as a Discord
client checks them (min/max values, required inputs, lengths, the offered options).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from actorscope.errors import ConfigError
from actorscope.sandbox._world import JSON, Channel, Guild, Message, Role, User, World

__all__ = [
    "SELECT_TYPES",
    "Resolver",
    "find_component",
    "modal_inputs",
    "modal_submission",
    "option_values",
    "select_data",
    "select_ids",
    "walk_components",
]

# Application command option types.
_STRING, _INTEGER, _BOOLEAN, _USER, _CHANNEL, _ROLE, _MENTIONABLE, _NUMBER = 3, 4, 5, 6, 7, 8, 9, 10
_ATTACHMENT = 11
#: Component types of selects: string, user, role, mentionable, channel.
SELECT_TYPES = frozenset({3, 5, 6, 7, 8})
_TEXT_INPUT, _FILE_UPLOAD, _LABEL = 4, 19, 18


def walk_components(components: Sequence[JSON]) -> Iterator[JSON]:
    """Every component, depth first: rows, containers, sections (and their accessory) and
    labels are walked into."""
    for component in components:
        yield component
        yield from walk_components(component.get("components", []))
        for inner in ("accessory", "component"):
            if isinstance(component.get(inner), dict):
                yield from walk_components([component[inner]])


def find_component(
    components: Sequence[JSON], custom_id: str, kinds: frozenset[int], *, where: str
) -> JSON:
    """The component ``custom_id`` of one of ``kinds``; a ConfigError naming ``where`` (the
    message) when there is none."""
    for component in walk_components(components):
        if component.get("custom_id") == custom_id and component.get("type") in kinds:
            return component
    raise ConfigError(f"{where} has no component {custom_id!r} of that kind")


def select_ids(message: Message) -> list[str]:
    """The custom ids of ``message``'s selects, in order."""
    return [
        str(c["custom_id"])
        for c in walk_components(message.components)
        if c.get("type") in SELECT_TYPES and "custom_id" in c
    ]


def modal_inputs(modal: JSON) -> dict[str, str]:
    """A modal's inputs, by their label (lower case) or, without one, their custom id."""
    found: dict[str, str] = {}
    for top in modal.get("components", []):
        if top.get("type") == _LABEL and isinstance(top.get("component"), dict):
            inner = top["component"]
            if "custom_id" in inner:
                found[str(top.get("label", inner["custom_id"])).lower()] = inner["custom_id"]
        for component in top.get("components", []):
            if "custom_id" in component:
                label = component.get("label", component["custom_id"])
                found[str(label).lower()] = component["custom_id"]
    return found


class Resolver:
    """Resolves what ``picker`` picks in ``channel`` of ``guild`` into ids and resolved data."""

    def __init__(self, world: World, guild: Guild | None, channel: Channel, picker: User) -> None:
        self.world = world
        self.guild = guild
        self.channel = channel
        self.picker = picker
        self.resolved: JSON = {}

    def _add(self, kind: str, key: int, data: JSON) -> str:
        self.resolved.setdefault(kind, {})[str(key)] = data
        return str(key)

    def user(self, value: object) -> str:
        """A user (a name or a ``DiscordWorld.User``): its id; its member too
        when in the guild."""
        user = value if isinstance(value, User) else self.world.user(str(value))
        if self.guild is not None and user.id in self.guild.members:
            member = self.guild.members[user.id].to_json(with_user=False)
            permissions = str(self.guild.permissions_in(self.channel, user.id))
            self._add("members", user.id, member | {"permissions": permissions})
        return self._add("users", user.id, user.to_json())

    def channel_of(self, value: object, kinds: Sequence[int] = ()) -> str:
        """A channel or thread (``#name`` or a :class:`Channel`) of the guild, of ``kinds``."""
        channel = value if isinstance(value, Channel) else self.world.channel(str(value))
        if self.guild is None or channel.guild_id != self.guild.id:
            raise ConfigError(f"#{channel.name} is not a channel of this guild")
        if kinds and int(channel.type) not in kinds:
            raise ConfigError(f"#{channel.name} is not one of the channel types asked for")
        full = channel.to_json()
        partial: JSON = {key: full[key] for key in ("id", "name", "type") if key in full}
        # The permissions are the picker's, in the picked channel.
        partial["permissions"] = str(self.guild.permissions_in(channel, self.picker.id))
        if channel.is_thread:
            partial.update(parent_id=full["parent_id"], thread_metadata=full["thread_metadata"])
        return self._add("channels", channel.id, partial)

    def role(self, value: object) -> str:
        """A role of the guild (a name or a :class:`Role`)."""
        if self.guild is None:
            raise ConfigError("roles are picked in guilds")
        if isinstance(value, Role):
            role = value
        else:
            found = [r for r in self.guild.roles.values() if r.name == str(value)]
            if len(found) != 1:
                raise ConfigError(f"the guild has no single role named {value!r}")
            role = found[0]
        return self._add("roles", role.id, role.to_json())

    def mentionable(self, value: object) -> str:
        """A user or a role: a :class:`Role`, or a role's name, else a user's name."""
        if isinstance(value, Role) or (
            self.guild is not None and any(r.name == value for r in self.guild.roles.values())
        ):
            return self.role(value)
        return self.user(value)


def _choice(spec: JSON, value: object) -> object:
    """``value`` as one of the option's choices: given by name or by value."""
    choices = spec.get("choices") or []
    if not choices:
        return value
    for choice in choices:
        if value in (choice.get("name"), choice.get("value")) or str(value) == str(
            choice.get("value")
        ):
            return choice["value"]
    names = ", ".join(repr(c.get("name")) for c in choices)
    raise ConfigError(f"option {spec['name']} is one of {names}, not {value!r}")


def _typed(spec: JSON, kind: int, value: object, resolver: Resolver) -> object:
    name = spec.get("name", "?")
    if kind == _USER:
        return resolver.user(value)
    if kind == _CHANNEL:
        return resolver.channel_of(value, spec.get("channel_types") or ())
    if kind == _ROLE:
        return resolver.role(value)
    if kind == _MENTIONABLE:
        return resolver.mentionable(value)
    if kind == _ATTACHMENT:
        raise ConfigError(f"option {name}: attachments are not emulated")
    value = _choice(spec, value)
    try:
        if kind == _INTEGER and not isinstance(value, bool):
            number: float = int(str(value))
        elif kind == _NUMBER and not isinstance(value, bool):
            number = float(str(value))
        elif kind == _BOOLEAN:
            if str(value).lower() not in ("true", "false"):
                raise ValueError(value)
            return str(value).lower() == "true"
        else:
            return str(value)
    except ValueError:
        raise ConfigError(f"option {name} must be a {_KIND_NAMES[kind]}, not {value!r}") from None
    low, high = spec.get("min_value"), spec.get("max_value")
    if (low is not None and number < low) or (high is not None and number > high):
        raise ConfigError(f"option {name} must be between {low} and {high}, not {number}")
    return number


_KIND_NAMES = {_INTEGER: "whole number", _NUMBER: "number", _BOOLEAN: "true or false"}


def _guessed_type(value: object) -> int:
    """The option type a value of an unsynced command has."""
    if isinstance(value, User):
        return _USER
    if isinstance(value, Channel):
        return _CHANNEL
    if isinstance(value, Role):
        return _ROLE
    if isinstance(value, bool):
        return _BOOLEAN
    return _INTEGER if isinstance(value, int) else _STRING


def option_values(command: JSON, options: Mapping[str, object], resolver: Resolver) -> list[JSON]:
    """``options`` rendered as the synced ``command`` declares them (unsynced: by their type);
    a missing required option or an unknown one is a ConfigError."""
    specs = {o["name"]: o for o in command.get("options", []) if isinstance(o, dict)}
    if specs:
        unknown = sorted(set(options) - set(specs))
        if unknown:
            raise ConfigError(f"/{command['name']} has no option {unknown[0]!r}")
        missing = [n for n, s in specs.items() if s.get("required") and n not in options]
        if missing:
            raise ConfigError(f"/{command['name']} needs the option {missing[0]!r}")
    rendered = []
    for key, value in options.items():
        spec = specs.get(key, {"name": key})
        kind = int(spec.get("type", _guessed_type(value)))
        rendered.append({"name": key, "type": kind, "value": _typed(spec, kind, value, resolver)})
    return rendered


def select_data(component: JSON, values: Sequence[object], resolver: Resolver) -> JSON:
    """What a select sends when ``values`` are picked (option values for a string select;
    users, roles, channels for the others), within its min and max."""
    kind = int(component["type"])
    low = int(component.get("min_values", 1))
    high = int(component.get("max_values", 1))
    if not low <= len(values) <= high:
        raise ConfigError(f"select {component.get('custom_id')!r} takes {low} to {high} values")
    if kind == 3:
        offered = [str(o.get("value")) for o in component.get("options", [])]
        unknown = [v for v in values if str(v) not in offered]
        if unknown:
            raise ConfigError(f"select has no option {unknown[0]!r} (options: {offered})")
        return {"values": [str(v) for v in values]}
    types = component.get("channel_types") or ()
    picked: list[str] = []
    for value in values:
        if kind == 5:
            picked.append(resolver.user(value))
        elif kind == 6:
            picked.append(resolver.role(value))
        elif kind == 7:
            picked.append(resolver.mentionable(value))
        else:
            picked.append(resolver.channel_of(value, types))
    return {"values": picked}


def _submitted(component: JSON, given: Mapping[str, object], resolver: Resolver) -> JSON:
    """One interactive component of a modal, as submitted."""
    custom_id = str(component.get("custom_id"))
    kind = int(component["type"])
    if kind == _TEXT_INPUT:
        value = str(given.get(custom_id, component.get("value", "")))
        if component.get("required", True) and not value:
            raise ConfigError(f"the modal's input {custom_id!r} is required")
        low, high = component.get("min_length", 0), component.get("max_length", 4000)
        if value and not low <= len(value) <= high:
            raise ConfigError(f"the modal's input {custom_id!r} takes {low}-{high} characters")
        return {"type": kind, "id": component.get("id", 0), "custom_id": custom_id, "value": value}
    if kind in SELECT_TYPES:
        raw = given.get(custom_id, [])
        values: list[object] = list(raw) if isinstance(raw, list | tuple) else [raw]
        if not values and not component.get("required", True):
            picked: JSON = {"values": []}
        else:
            picked = select_data(component, values, resolver)
        return {"type": kind, "id": component.get("id", 0), "custom_id": custom_id, **picked}
    if kind == _FILE_UPLOAD:
        if given.get(custom_id):
            raise ConfigError(f"the modal's upload {custom_id!r}: files are not emulated")
        if component.get("required", True):
            raise ConfigError(f"the modal's upload {custom_id!r} is required (not emulated)")
        return {"type": kind, "id": component.get("id", 0), "custom_id": custom_id, "values": []}
    return {"type": kind, "id": component.get("id", 0)}


def modal_submission(modal: JSON, given: Mapping[str, object], resolver: Resolver) -> JSON:
    """The ``data`` of a modal submit: ``given`` maps custom ids to what the person typed or
    picked; an input left out keeps its prefilled value."""
    known = {
        str(c.get("custom_id"))
        for c in walk_components(modal.get("components", []))
        if "custom_id" in c
    }
    unknown = sorted(set(given) - known)
    if unknown:
        raise ConfigError(f"the modal has no input {unknown[0]!r} (inputs: {sorted(known)})")
    rows: list[JSON] = []
    for top in modal.get("components", []):
        kind = int(top.get("type", 0))
        if kind == 1:
            inner = [_submitted(c, given, resolver) for c in top.get("components", [])]
            rows.append({"type": 1, "id": top.get("id", 0), "components": inner})
        elif kind == _LABEL:
            inner_component = _submitted(top["component"], given, resolver)
            rows.append({"type": _LABEL, "id": top.get("id", 0), "component": inner_component})
        else:
            rows.append(_submitted(top, given, resolver))
    data: JSON = {"custom_id": modal.get("custom_id", ""), "components": rows}
    if resolver.resolved:
        data["resolved"] = resolver.resolved
    return data

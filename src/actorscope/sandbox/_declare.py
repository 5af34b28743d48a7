"""A Discord world declared in the testing kit's scenario vocabulary (``setup.discord``).

::

    users: {carol: 9001, dave: null}        # name -> id (null: a fresh snowflake)
    bots: {deploy-bot: null}                # other bot accounts
    guilds:
      lab:
        id: 81234567890123456               # optional
        owner: carol                        # optional; default: the bot
        channels: {general: 81234567890123457, random: null}
        threads: {design: {parent: general, id: 81234567890123999}}
        roles: {managers: [manage_guild]}   # role -> permission names
        members: {dave: [managers]}         # user -> role names
        webhooks: {ci: general}             # webhook -> channel

Every declared person and bot is a member of every guild (the testing kit's simulator makes
people members when they first act there); ``members`` gives them roles. A mistake raises one
:class:`~actorscope.errors.ConfigError` naming its place (``setup.discord.guilds.lab.owner``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from actorscope.errors import ConfigError
from actorscope.sandbox._world import Channel, Guild, Permission, Role, User, World

__all__ = ["declared_world"]

_ROOT = "setup.discord"
_KEYS = frozenset({"users", "bots", "guilds"})
_GUILD_KEYS = frozenset({"id", "owner", "channels", "threads", "roles", "members", "webhooks"})


def declared_world(
    declaration: Mapping[str, Any], *, bot_name: str = "actorscope-bot", token: str | None = None
) -> World:
    """The :class:`~actorscope.sandbox.DiscordWorld` a scenario's ``setup.discord`` declares."""
    spec = _mapping(declaration, _ROOT, _KEYS)
    world = World(bot_name=bot_name, token=token)
    people: dict[str, User] = {}
    for key, bot in (("users", False), ("bots", True)):
        for name, wanted in _mapping(spec.get(key), f"{_ROOT}.{key}").items():
            if name in people or name == bot_name:
                raise ConfigError(f"{_ROOT}.{key}.{name}: the name is declared twice")
            user_id = _id(wanted, f"{_ROOT}.{key}.{name}")
            people[name] = world.add_user(name, bot=bot, user_id=user_id)
    for name, guild in _mapping(spec.get("guilds"), f"{_ROOT}.guilds").items():
        _guild(world, people, name, guild)
    return world


def _guild(world: World, people: Mapping[str, User], name: str, declared: object) -> Guild:
    path = f"{_ROOT}.guilds.{name}"
    spec = _mapping(declared, path, _GUILD_KEYS)
    owner = (
        world.bot if spec.get("owner") is None else _person(people, spec["owner"], f"{path}.owner")
    )
    guild = world.add_guild(name, owner=owner, guild_id=_id(spec.get("id"), f"{path}.id"))
    channels: dict[str, Channel] = {}
    for channel, wanted in _mapping(spec.get("channels"), f"{path}.channels").items():
        channel_id = _id(wanted, f"{path}.channels.{channel}")
        channels[channel] = world.add_channel(guild, channel, channel_id=channel_id)
    for thread, wanted in _mapping(spec.get("threads"), f"{path}.threads").items():
        where = f"{path}.threads.{thread}"
        thread_spec = _mapping(wanted, where, frozenset({"parent", "id"}))
        parent = _named(channels, thread_spec.get("parent"), f"{where}.parent", "channel")
        thread_id = _id(thread_spec.get("id"), f"{where}.id")
        world.add_thread(parent, thread, owner=owner, thread_id=thread_id)
    roles: dict[str, Role] = {}
    for role, permissions in _mapping(spec.get("roles"), f"{path}.roles").items():
        roles[role] = world.add_role(guild, role, _permissions(permissions, f"{path}.roles.{role}"))
    given = {
        _person(people, member, f"{path}.members").id: tuple(
            _named(roles, role, f"{path}.members.{member}", "role")
            for role in _names(held, f"{path}.members.{member}")
        )
        for member, held in _mapping(spec.get("members"), f"{path}.members").items()
    }
    for user in people.values():
        if user.id != owner.id:
            world.join(guild, user, roles=given.get(user.id, ()))
    guild.members[owner.id].roles = [role.id for role in given.get(owner.id, ())]
    for hook, channel in _mapping(spec.get("webhooks"), f"{path}.webhooks").items():
        world.add_webhook(_named(channels, channel, f"{path}.webhooks.{hook}", "channel"), hook)
    return guild


def _mapping(value: object, path: str, keys: frozenset[str] | None = None) -> dict[str, Any]:
    """A mapping with string keys (``None``: empty); ``keys`` limits the keys."""
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise ConfigError(f"{path} must be a mapping of names")
    unknown = sorted(set(value) - keys) if keys is not None else []
    if unknown:
        raise ConfigError(
            f"{path}: unknown key {unknown[0]!r} (expected: {', '.join(sorted(keys or ()))})"
        )
    return dict(value)


def _id(value: object, path: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(f"{path} must be a positive integer id or null, not {value!r}")
    return value


def _names(value: object, path: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{path} must be a list of names")
    return value


def _named(known: Mapping[str, Any], name: object, path: str, kind: str) -> Any:
    if not isinstance(name, str) or name not in known:
        raise ConfigError(
            f"{path}: unknown {kind} {name!r} (declared: {', '.join(known) or 'none'})"
        )
    return known[name]


def _person(people: Mapping[str, User], name: object, path: str) -> User:
    user: User = _named(people, name, path, "user")
    return user


def _permissions(value: object, path: str) -> int:
    bits = 0
    for name in _names(value, path):
        if name.upper() not in Permission.__members__:
            known = ", ".join(p.lower() for p in Permission.__members__)
            raise ConfigError(f"{path}: unknown permission {name!r} (known: {known})")
        bits |= Permission[name.upper()]
    return bits

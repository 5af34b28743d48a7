"""The platform contract: what a chat platform gives actorscope (docs/design.md, "Adding a
platform").

A platform is one subpackage (``channels/telegram/``, ``channels/discord/``) whose face holds a
:class:`Platform` as ``PLATFORM``, registered once by name
(:func:`actorscope.platforms.register`: its id form, thread word and where this contract
lives). Everything above the identity layer asks :func:`platform` for it: ``actorscope
normalize`` its normaliser, ``actorscope run`` its runner, the testing kit and the probe its
simulator and probe world, ``actorscope run --sandbox`` and ``actorscope sandbox`` its
sandbox. The pipeline, the policy and the run step need nothing else of a platform.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from actorscope.channels._adapter import ChannelAdapter
from actorscope.channels._base import Ingress
from actorscope.channels._config import ChannelSection
from actorscope.channels._pipeline import Pipeline
from actorscope.errors import ConfigError
from actorscope.platforms import PlatformSpec, platform_spec, platform_specs

__all__ = ["Platform", "platform"]


@runtime_checkable
class Platform(Protocol):
    """A chat platform as actorscope asks it.

    ``spec`` is its registration (name, id form, thread word). ``command_prefixes``: the
    characters that make a message's text a writer command (Discord's ``!``; ``""`` when the
    normaliser names commands itself, as Telegram's ``/`` ones). ``event_name`` names its raw
    event in a sentence (``a Telegram Update (update_id)``). ``simulator`` is the
    ``module:attribute`` of its testing-kit simulator (an ``actorscope.testing.Simulator``
    taking an ``AgentEnv``), which drives its emulator; ``""`` when it has none (the kit and
    the probe cannot drive it, and ``actorscope probe`` says so). ``probe_world`` is the
    ``module:attribute`` of its probe world beside its simulator (its probe events and the
    frameworks' bots it serves: the built-in platforms'); ``""``: the events every chat has,
    on its simulator (a platform outside actorscope names ``""``). ``sandbox`` is the
    ``module:attribute`` of its sandbox (an ``actorscope.sandbox.Sandbox``: its emulator on
    127.0.0.1 for ``actorscope run --sandbox`` and ``actorscope sandbox``); ``""`` when it
    has none. All three are strings because they sit above this layer, each naming a public
    home (never another package's ``_`` module). ``section`` is the model of its
    ``bot.toml`` section for ``actorscope run`` (a :class:`ChannelSection` whose ``platform``
    is its name), whose ``runner_options`` its ``runner`` takes.
    """

    @property
    def spec(self) -> PlatformSpec:
        """The platform's registration."""
        ...

    @property
    def command_prefixes(self) -> str:
        """Text prefixes of a writer command typed as a message."""
        ...

    @property
    def event_name(self) -> str:
        """Its raw event, as a sentence names it."""
        ...

    @property
    def simulator(self) -> str:
        """``module:attribute`` of its testing-kit simulator (``""``: none)."""
        ...

    @property
    def probe_world(self) -> str:
        """``module:attribute`` of its probe world (``""``: the one every chat has)."""
        ...

    @property
    def sandbox(self) -> str:
        """``module:attribute`` of its sandbox (``""``: none)."""
        ...

    @property
    def section(self) -> type[ChannelSection]:
        """The model of its ``bot.toml`` section."""
        ...

    def inspect(
        self, event: Mapping[str, Any], *, agent_key: str = "main", channel: str = ""
    ) -> Ingress:
        """Normalise one raw event (the platform's JSON) into an :class:`Ingress`: the
        message with its scope, actor and session key, or why it is ignored. Never raises on
        a platform event (a malformed one is ignored as ``malformed``); ``channel`` is the
        channel name (default: the platform's)."""
        ...

    def recognizes(self, event: Mapping[str, Any]) -> bool:
        """Whether ``event`` is shaped like this platform's raw event."""
        ...

    def token_problem(self, token: str) -> str:
        """Why ``token`` (read from the environment) cannot be this platform's bot token, in
        words that never repeat it; ``""`` when it may be one."""
        ...

    def runner(self, pipeline: Pipeline, *, token: str, **options: Any) -> ChannelAdapter:
        """Its production runner: a transport that feeds each event to ``pipeline`` (the
        channel's, from the composition root) and sends the bot's replies; ``options`` are
        its own (its ``bot.toml`` section's)."""
        ...


#: The members a contract must have, named when one lacks any.
_MEMBERS = tuple(sorted(name for name in dir(Platform) if not name.startswith("_")))


def platform(name: str) -> Platform:
    """The contract of the platform registered as ``name``; :class:`ConfigError` when there
    is none, it has no events of its own (the HTTP API), or its contract cannot be imported
    (naming the platform, the module and why)."""
    spec = platform_spec(name)
    if spec is None or not spec.contract:
        known = ", ".join(sorted(s.name for s in platform_specs()))
        raise ConfigError(f"no chat platform {name!r} (known: {known})")
    module, _, attribute = spec.contract.partition(":")
    try:
        imported = importlib.import_module(module)
    except Exception as exc:  # an installed plugin's import: any failure is its problem
        raise ConfigError(
            f"platform {name!r}: its contract module {module!r} cannot be imported: "
            f"{type(exc).__name__}: {exc}"
        ) from None
    found = getattr(imported, attribute, None)
    if not isinstance(found, Platform) or found.spec != spec:
        missing = [member for member in _MEMBERS if not hasattr(found, member)]
        why = f" (it has no {', '.join(missing)})" if missing else ""
        raise ConfigError(f"{spec.contract} is not the Platform of {name!r}{why}")
    return found

"""``probe()``: which platform's probe world a target runs in, and one probe run of it.

The engine is :mod:`._probe`; each platform's probe world lives beside its simulator and is
found through its contract (``probe_world``, :func:`~actorscope.testing._probe.probe_world`).
This module asks the registry which platforms a handler runs on and asks the worlds'
targets which framework's bot an application or bot is: it names no platform.
"""

from __future__ import annotations

import inspect
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from actorscope.bots import load_object
from actorscope.channels import ChannelConfig
from actorscope.channels import platform as contract_of
from actorscope.errors import ConfigError
from actorscope.host import Handler
from actorscope.messages import RunRequest
from actorscope.permissions import LinkMode
from actorscope.platforms import platform_specs
from actorscope.testing._harness import AgentEnv
from actorscope.testing._probe import (
    _PROBE_DB,
    DEFAULT_DEADLINE,
    AppFactory,
    ProbeReport,
    ProbeRun,
    ProbeTarget,
    _contained,
    probe_world,
)
from actorscope.testing._probe_target import NotTheBot, command_name, described, is_async

__all__ = ["probe"]

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def _load(target: object, search_dir: Path, what: str) -> tuple[object, str]:
    """What ``target`` (``module:attribute`` or the object itself) is, and how to name it."""
    if isinstance(target, str):
        return load_object(target, search_dir, what=what), target
    return target, str(getattr(target, "__name__", what))


def _first_platform() -> str:
    """The platform a handler is probed on first by default: the first registered one (the
    built-in ones come first) whose contract names a simulator and whose probe world can
    run alone."""
    for spec in platform_specs():
        if contract_of(spec.name).simulator and probe_world(spec.name).alone:
            return spec.name
    raise ConfigError("no registered platform has a probe world a handler can be probed in")


def _by_world(
    channels: Sequence[ChannelConfig], first: str
) -> tuple[ChannelConfig | None, list[ChannelConfig], list[str]]:
    """``channels`` by the probe's world that drives each: the ``first`` platform's (the
    base of every run), a phase each for the other platforms with a simulator (those with a
    probe world of their own first); and the platforms with none."""
    base = next((c for c in channels if c.platform == first), None)
    others = [c for c in channels if c.platform != first]
    driven = [c for c in others if contract_of(c.platform).simulator]
    driven.sort(key=lambda c: not contract_of(c.platform).probe_world)
    unprobed = [c.platform for c in others if not contract_of(c.platform).simulator]
    return base, driven, unprobed


def _targets(argument: str) -> list[ProbeTarget]:
    """The targets of every registered platform's probe world that take ``argument``."""
    return [
        target
        for s in platform_specs()
        if contract_of(s.name).probe_world
        for target in probe_world(s.name).targets
        if argument in target.arguments
    ]


def _what(found: object, spec: str, targets: Sequence[ProbeTarget], argument: str) -> str:
    """What ``found`` (named ``spec``) is and what the probe takes instead: a target's own
    words for a thing of its framework (an aiogram Router), else what it is and every form
    the probe takes."""
    for target in targets:
        said = target.describe(found)
        if said is not None:
            return said
    if is_async(found) and _takes_a_request(found):
        named = f'handler = "{spec}", then ' if ":" in spec else ""
        return (
            "an async function, not a function that builds a bot: a handler is probed "
            f"through a bot.toml naming it ({named}actorscope probe bot.toml), or in a test "
            "as actorscope_probe's first argument"
        )
    forms = [t.serves for t in targets] or ["nothing"]
    if argument == "application":
        forms.append("a bot.toml naming an actorscope run handler")
    listed = "; ".join(forms[:-1]) + ("; or " if len(forms) > 1 else "") + forms[-1]
    if is_async(found):  # a handler of the bot's, or an async factory: never called
        return f"an async function, not a function that builds a bot: the probe takes {listed}"
    return f"{described(found)}: the probe takes {listed}"


def _takes_a_request(found: object) -> bool:
    """Whether ``found`` is shaped like an ``actorscope run`` handler: one parameter, the
    :class:`~actorscope.messages.RunRequest` (or unannotated)."""
    if not callable(found):
        return False
    try:
        parameters = list(inspect.signature(found).parameters.values())
    except (TypeError, ValueError):  # no signature to read: not said to be one
        return False
    if len(parameters) != 1 or parameters[0].kind not in _POSITIONAL:
        return False
    annotation = parameters[0].annotation
    if isinstance(annotation, str):
        return annotation.rpartition(".")[2] == RunRequest.__name__
    return annotation is inspect.Parameter.empty or annotation is RunRequest


def _target(found: object, spec: str, argument: str) -> ProbeTarget:
    """The framework whose bot ``found`` is, asked of every registered platform's probe
    world (a fallback last); one ConfigError naming what ``found`` is and what the probe
    takes when a target knows it as something else of its framework (an aiogram Router), it
    is an async function (a handler: never called), or no target recognises it."""
    targets = _targets(argument)
    known = any(target.describe(found) is not None for target in targets)
    if known or is_async(found):
        raise ConfigError(f"{argument} {spec!r} is {_what(found, spec, targets, argument)}")
    ordered = [t for t in targets if not t.fallback] + [t for t in targets if t.fallback]
    for target in ordered:
        if target.recognises(found):
            return target
    raise ConfigError(f"{argument} {spec!r} is {_what(found, spec, targets, argument)}")


async def probe(
    handler: Handler | str | None = None,
    *,
    application: AppFactory | str | None = None,
    bot: Callable[..., Any] | str | None = None,
    search_dir: Path | None = None,
    commands: Sequence[str] = (),
    writer_only: Sequence[str] = (),
    config: ChannelConfig | None = None,
    owners: Sequence[str] = (),
    deadline: float = DEFAULT_DEADLINE,
    agent: str = "main",
    events: Sequence[str] = (),
    platform: str = "",
    links: str = "off",
    channels: Sequence[ChannelConfig] = (),
) -> ProbeReport:
    """Probe ``handler`` (a function or ``module:function``) with every event x command.

    The handler is probed in the probe world of ``platform`` (default: the first registered
    platform whose world can run alone, the built-in ones first), which its
    contract's ``probe_world`` names, with the events every chat has (:data:`CHAT_EVENTS`, on
    its simulator, which must be a :class:`ChatSim`) when it names none. Or, with
    ``application`` (an :data:`AppFactory` or its ``module:function``), the bot a framework's
    function builds or returns (a PTB ``Application`` built against the simulator's builder,
    an aiogram ``Dispatcher``, called with the keyword overrides it takes, or none), served in
    the world of the platform whose probe world recognises it; or, with ``bot`` (a bot, its
    class or a factory, called with ``database``, ``agent``, ``workspace`` and ``owners`` when
    it takes them, or its ``module:attribute``), that bot the same way, against its platform's
    emulator. ``commands`` are added to the writer commands (of a bot with actorscope's gate),
    the commands the bot registers or handles, and those its source and scenario files
    suggest; ``writer_only`` names commands only writers may use (``/note``), besides those
    the bot asks a permission for; ``config`` is the channel configuration the runner admits
    by (default: mention not required). ``events`` limits the run to the events labelled so
    (as in the report). The bot runs in a temporary folder (its working directory
    meanwhile), where everything is written; it is removed before this returns. A
    :class:`ProbeReachError` says the probe does not reach the bot. ``links`` is the agent's
    ``[identity] links`` for an ``actorscope run`` handler (``off``, ``dm`` or ``grants``):
    the bot is probed as it runs, ``/link`` answered by the pipeline.

    ``channels`` (instead of ``config`` and ``platform``) are the channel configurations of
    the platforms a handler runs on (``bot.toml``'s enabled sections, as ``actorscope probe``
    passes them): it is probed on each one whose contract names a simulator, in one run (on
    the default platform always, with the default configuration when none is given here;
    each other platform's events labelled ``<platform>: ...``), and a note names the
    platforms it could not probe.
    """
    if sum(given is not None for given in (handler, application, bot)) != 1:
        raise ConfigError("probe takes a handler, an application or a bot, exactly one")
    # Asked only when needed: a handler probed on one platform loads no other one's world.
    base = platform or _first_platform()
    if handler is None and base != _first_platform():
        raise ConfigError(f"probe on {platform} takes a handler")
    report = ProbeReport([], [], [])
    others: list[ChannelConfig] = []
    if channels:
        if handler is None or config is not None or base != _first_platform():
            raise ConfigError("probe takes channels for a handler, instead of config and platform")
        config, others, unprobed = _by_world(channels, base)
        if unprobed:
            report.notes.append(
                f"not probed: {', '.join(unprobed)} (the platform's contract names no simulator "
                "the probe could drive)"
            )
    declared = frozenset(command_name(c) for c in writer_only)
    with (
        tempfile.TemporaryDirectory(prefix="actorscope-probe-") as tmp,
        _contained(Path(tmp), search_dir) as (folder, search),
    ):
        async with AgentEnv.open(folder / _PROBE_DB, agent_key=agent, links=LinkMode(links)) as env:
            env.roles.update(dict.fromkeys(owners, "owner"))
            run = ProbeRun(env, report, search, commands, declared, owners, deadline, events)
            if handler is not None:
                await run.handler_phases(handler, base, config, others)
                return report
            argument = "bot" if bot is not None else "application"
            found, spec = _load(bot if bot is not None else application, search, argument)
            try:
                await _target(found, spec, argument).probe(found, spec, run, config)
            except NotTheBot as exc:  # said with what the probe takes, never one guess
                what = _what(exc.built, spec, _targets(argument), argument)
                raise ConfigError(f"{argument} {spec!r} returned {what}") from None
    return report

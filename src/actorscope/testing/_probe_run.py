"""``probe()``: which kind of bot a target is, and one probe run of it.

The engine and the Telegram events are in :mod:`._probe`, the discord.py mode in
:mod:`._probe_dpy` (which builds on the engine); this module picks between them, so neither of
those imports the other back.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from actorscope.bots import load_object
from actorscope.channels import ChannelConfig
from actorscope.channels import platform as contract_of
from actorscope.errors import ConfigError
from actorscope.host import Handler
from actorscope.permissions import LinkMode
from actorscope.platforms import BuiltInPlatform
from actorscope.testing._harness import AgentEnv
from actorscope.testing._probe import (
    _PROBE_DB,
    DEFAULT_DEADLINE,
    AppFactory,
    ProbeReport,
    ProbeRun,
    _contained,
)
from actorscope.testing._probe_aiogram import AIOGRAM
from actorscope.testing._probe_dpy import is_bot_factory, probe_bot
from actorscope.testing._probe_target import command_name

__all__ = ["probe"]


def _load(target: object, search_dir: Path, what: str) -> tuple[object, str]:
    """What ``target`` (``module:attribute`` or the object itself) is, and how to name it."""
    if isinstance(target, str):
        return load_object(target, search_dir, what=what), target
    return target, str(getattr(target, "__name__", what))


def _by_world(
    channels: Sequence[ChannelConfig],
) -> tuple[ChannelConfig | None, ChannelConfig | None, list[ChannelConfig], list[str]]:
    """``channels`` by the probe's world that drives each: Telegram's (the base of every run),
    its Discord phase, a chat phase each for the other platforms with a simulator; and the
    platforms with none."""
    telegram = next((c for c in channels if c.platform == BuiltInPlatform.TELEGRAM), None)
    discord = next((c for c in channels if c.platform == BuiltInPlatform.DISCORD), None)
    others = [
        c for c in channels if c.platform not in (BuiltInPlatform.TELEGRAM, BuiltInPlatform.DISCORD)
    ]
    driven = [c for c in others if contract_of(c.platform).simulator]
    unprobed = [c.platform for c in others if not contract_of(c.platform).simulator]
    return telegram, discord, driven, unprobed


async def probe(
    handler: Handler | str | None = None,
    *,
    application: AppFactory | str | None = None,
    bot: Callable[..., Any] | str | None = None,
    search_dir: Path | None = None,
    commands: Sequence[str] = (),
    writer_only: Sequence[str] = (),
    config: ChannelConfig | None = None,
    discord: ChannelConfig | None = None,
    owners: Sequence[str] = (),
    deadline: float = DEFAULT_DEADLINE,
    agent: str = "main",
    events: Sequence[str] = (),
    platform: str = BuiltInPlatform.TELEGRAM.value,
    links: str = "off",
    channels: Sequence[ChannelConfig] = (),
) -> ProbeReport:
    """Probe ``handler`` (a function or ``module:function``) with every event x command.

    Or, with ``application`` (an :data:`AppFactory` or its ``module:function``), the PTB bot it
    builds against the Telegram simulator, the aiogram ``Dispatcher`` a function returns
    (called with the keyword overrides it takes, or none), served there too (or, when it names
    one, a discord.py bot). ``commands``
    are added to the writer commands (of a bot with actorscope's gate), the commands the bot
    registers with ``setMyCommands`` or handles with ``CommandHandler`` s, and those its source
    and scenario files suggest; ``writer_only`` names commands only writers may use (``/note``),
    besides those the bot asks a permission for; ``config`` is the Telegram channel configuration
    the runner admits by (default: mention not required); with ``discord`` (the Discord one) the
    Discord events are sent too, labelled ``discord: ...`` (not with ``application``). Or, with
    ``bot`` (a discord.py bot, its class or a factory, called with ``database``, ``agent``,
    ``workspace`` and ``owners`` when it takes them, or its ``module:attribute``), that bot
    against the Discord emulator. ``events`` limits the run to the events labelled so (as in
    the report). With ``platform`` another registered platform than Telegram, ``handler`` is
    probed on that platform's simulator instead (its contract names it; it must be a
    :class:`ChatSim`), with the events every chat has (:data:`CHAT_EVENTS`). The bot runs in
    a temporary folder (its working directory meanwhile), where everything is written; it is
    removed before this returns. A :class:`ProbeReachError` says the probe does not reach the
    bot. ``links`` is the agent's ``[identity]
    links`` for an ``actorscope run`` handler (``off``, ``dm`` or ``grants``): the bot is probed
    as it runs, ``/link`` answered by the pipeline.

    ``channels`` (instead of ``config``, ``discord`` and ``platform``) are the channel
    configurations of the platforms a handler runs on (``bot.toml``'s enabled sections, as
    ``actorscope probe`` passes them): it is probed on each one whose contract names a
    simulator, in one run (on Telegram always, with the default configuration when none is
    given here; each other platform's events labelled ``<platform>: ...``), and a note names
    the platforms it could not probe.
    """
    if sum(given is not None for given in (handler, application, bot)) != 1:
        raise ConfigError("probe takes a handler, an application or a bot, exactly one")
    if platform != BuiltInPlatform.TELEGRAM and (handler is None or discord is not None):
        raise ConfigError(f"probe on {platform} takes a handler, and no discord configuration")
    report = ProbeReport([], [], [])
    others: list[ChannelConfig] = []
    if channels:
        if (
            handler is None
            or config is not None
            or discord is not None
            or platform != BuiltInPlatform.TELEGRAM
        ):
            raise ConfigError("probe takes channels for a handler, instead of config and discord")
        config, discord, others, unprobed = _by_world(channels)
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
            if handler is not None and platform != BuiltInPlatform.TELEGRAM:
                await run.chat(handler, platform, config)
                return report
            if handler is not None:
                await run.telegram(handler, None, "", config, discord, others)
                return report
            target = bot if bot is not None else application
            found, spec = _load(target, search, "bot" if bot is not None else "application")
            # A dispatcher's build function takes keyword arguments only, as a bot factory.
            if bot is not None or (is_bot_factory(found) and not AIOGRAM.recognises(found)):
                await probe_bot(found, spec, run)
            else:
                await run.telegram(None, found, spec, config, None)
    return report

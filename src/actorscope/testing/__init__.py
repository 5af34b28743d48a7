"""The actorscope testing kit: simulators, expectations, scenario files and the pytest plugin.

:class:`TelegramSim` and :class:`DiscordSim` feed realistic platform events through
python-telegram-bot / discord.py and the production runners (the same ingress pipeline and run
step as ``actorscope run``), run the bot's :class:`Turn` and record every API call;
``should_send`` / ``should_allow`` / ``should_deny`` check what the bot did, in order.
``*.scenario.yaml`` files (:mod:`actorscope.testing.scenario`) describe the same in YAML.
:func:`probe` (``actorscope probe``, the ``actorscope_probe`` fixture) sends hostile senders x
the bot's commands and reports every permission leak. The pytest plugin
(:mod:`actorscope.testing.plugin`) provides the fixtures. A platform's own simulator is a
:class:`Simulator` on an :class:`AgentEnv`, and a :class:`ChatSim` (a person, a room, a
message) for the probe to drive it. The Telegram Bot API emulator lives in
:mod:`actorscope.sandbox`.
"""

from __future__ import annotations

from actorscope.testing._discord_sim import DiscordSim
from actorscope.testing._grants import Grants
from actorscope.testing._harness import AgentEnv, SimulatedEvent, Simulator, Turn
from actorscope.testing._probe import ChatSim, Prober, ProbeReachError, ProbeReport, ProbeStatus
from actorscope.testing._probe_run import probe
from actorscope.testing._telegram_sim import TelegramSim

__all__ = [
    "AgentEnv",
    "ChatSim",
    "DiscordSim",
    "Grants",
    "ProbeReachError",
    "ProbeReport",
    "ProbeStatus",
    "Prober",
    "SimulatedEvent",
    "Simulator",
    "TelegramSim",
    "Turn",
    "probe",
]

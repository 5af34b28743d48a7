"""The actorscope testing kit: simulators, expectations, scenario files and the pytest plugin.

:class:`TelegramSim` and :class:`DiscordSim` feed realistic platform events through
python-telegram-bot / discord.py and the production runners (the same ingress pipeline and run
step as ``actorscope run``), run the bot's :class:`Turn` and record every API call;
``should_send`` / ``should_allow`` / ``should_deny`` check what the bot did, in order.
``*.scenario.yaml`` files (:mod:`actorscope.testing.scenario`) describe the same in YAML. The
pytest plugin (:mod:`actorscope.testing.plugin`) provides the fixtures. The Telegram Bot API
emulator lives in :mod:`actorscope.sandbox`.
"""

from __future__ import annotations

from actorscope.sandbox import (
    ApiResponse,
    BotApiEmulator,
    BotApiServer,
    EmulatorRequest,
    HttpCall,
    RecordedCall,
    make_token,
)
from actorscope.testing.discord_sim import DiscordSim
from actorscope.testing.expect import (
    ExpectationError,
    Expectations,
    Expected,
    Observation,
    ObservationKind,
)
from actorscope.testing.grants import Binder, Grants, open_env
from actorscope.testing.harness import AgentEnv, BotHandler, Event, Simulator, Turn
from actorscope.testing.scenario import (
    LoadedScenario,
    ScenarioFailure,
    StepOutcome,
    load_scenario,
    run_scenario,
)
from actorscope.testing.telegram_sim import TelegramSim

__all__ = [
    "AgentEnv",
    "ApiResponse",
    "Binder",
    "BotApiEmulator",
    "BotApiServer",
    "BotHandler",
    "DiscordSim",
    "EmulatorRequest",
    "Event",
    "ExpectationError",
    "Expectations",
    "Expected",
    "Grants",
    "HttpCall",
    "LoadedScenario",
    "Observation",
    "ObservationKind",
    "RecordedCall",
    "ScenarioFailure",
    "Simulator",
    "StepOutcome",
    "TelegramSim",
    "Turn",
    "load_scenario",
    "make_token",
    "open_env",
    "run_scenario",
]

"""Scenario files: ``*.scenario.yaml`` group-permission tests, validated and played offline.

The models from :class:`Scenario` down are the file's schema (docs/reference/scenario.md).
"""

from actorscope.testing.scenario._loader import LoadedScenario, load_scenario, parse_scenario
from actorscope.testing.scenario._model import (
    AnnounceStep,
    ChainStep,
    DecisionExpect,
    DelegateStep,
    DiscordGuildSpec,
    DiscordSetup,
    DiscordStep,
    Expect,
    GrantSpec,
    HttpStep,
    IdentityExpect,
    ReplyExpect,
    Scenario,
    SessionSendStep,
    Setup,
    Step,
    TeammateStep,
    TelegramChatSpec,
    TelegramSetup,
    TelegramStep,
    ThreadSpec,
    TickerStep,
)
from actorscope.testing.scenario._runner import (
    ScenarioFailure,
    StepOutcome,
    run_scenario,
    run_scenario_in,
)

__all__ = [
    "AnnounceStep",
    "ChainStep",
    "DecisionExpect",
    "DelegateStep",
    "DiscordGuildSpec",
    "DiscordSetup",
    "DiscordStep",
    "Expect",
    "GrantSpec",
    "HttpStep",
    "IdentityExpect",
    "LoadedScenario",
    "ReplyExpect",
    "Scenario",
    "ScenarioFailure",
    "SessionSendStep",
    "Setup",
    "Step",
    "StepOutcome",
    "TeammateStep",
    "TelegramChatSpec",
    "TelegramSetup",
    "TelegramStep",
    "ThreadSpec",
    "TickerStep",
    "load_scenario",
    "parse_scenario",
    "run_scenario",
    "run_scenario_in",
]

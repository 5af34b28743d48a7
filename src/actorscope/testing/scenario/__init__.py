"""Scenario files: ``*.scenario.yaml`` group-permission tests, validated and played offline."""

from actorscope.testing.scenario._items import ScenarioFile, ScenarioItem, is_scenario_file
from actorscope.testing.scenario._loader import LoadedScenario, load_scenario, parse_scenario
from actorscope.testing.scenario._model import Scenario, Step
from actorscope.testing.scenario._runner import (
    ScenarioFailure,
    StepOutcome,
    run_scenario,
    run_scenario_in,
)

__all__ = [
    "LoadedScenario",
    "Scenario",
    "ScenarioFailure",
    "ScenarioFile",
    "ScenarioItem",
    "Step",
    "StepOutcome",
    "is_scenario_file",
    "load_scenario",
    "parse_scenario",
    "run_scenario",
    "run_scenario_in",
]

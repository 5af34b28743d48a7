"""Scenario files: ``*.scenario.yaml`` group-permission tests, validated and played offline.

:meth:`LoadedScenario.load` reads and validates a file (:meth:`LoadedScenario.parse`: text);
:func:`run_scenario` plays it, each step a :class:`StepOutcome`, and raises
:class:`ScenarioFailure` at the first step that did not do what its ``expect`` says. The
file's keys are in docs/reference/scenario.md.
"""

from actorscope.testing.scenario._loader import LoadedScenario
from actorscope.testing.scenario._runner import ScenarioFailure, StepOutcome, run_scenario

__all__ = ["LoadedScenario", "ScenarioFailure", "StepOutcome", "run_scenario"]

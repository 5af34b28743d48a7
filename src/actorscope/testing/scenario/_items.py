"""pytest collection of ``*.scenario.yaml`` files: one test item per file.

A malformed file or a failed expectation is reported as the item's failure, as one message
that starts with ``<file>:<line>:`` (no traceback: the file is the code under test).
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from actorscope.testing._expect import ExpectationError
from actorscope.testing.scenario._loader import LoadedScenario, ScenarioError
from actorscope.testing.scenario._runner import ScenarioFailure, run_scenario

__all__ = ["SCENARIO_SUFFIX", "ScenarioFile", "ScenarioItem", "is_scenario_file"]

SCENARIO_SUFFIX = ".scenario.yaml"


def is_scenario_file(path: Path) -> bool:
    """True iff pytest should collect ``path`` as a scenario."""
    return path.name.endswith(SCENARIO_SUFFIX) and len(path.name) > len(SCENARIO_SUFFIX)


class ScenarioFile(pytest.File):
    """A ``*.scenario.yaml`` file."""

    def collect(self) -> Iterator[pytest.Item]:
        """One item, named after the file."""
        yield ScenarioItem.from_parent(self, name=self.path.name.removesuffix(SCENARIO_SUFFIX))


class ScenarioItem(pytest.Item):
    """Runs one scenario file on a fresh temporary database."""

    def runtest(self) -> None:
        """Load, validate and play the scenario; any problem fails the item."""
        loaded = LoadedScenario.load(self.path)
        with tempfile.TemporaryDirectory(prefix="actorscope-scenario-") as tmp:
            asyncio.run(run_scenario(loaded, Path(tmp) / "scenario.db"))

    def repr_failure(
        self,
        excinfo: pytest.ExceptionInfo[BaseException],
        style: str | None = None,
    ) -> str:
        """The scenario's own message for scenario problems; a traceback for anything else."""
        if isinstance(excinfo.value, ScenarioError | ScenarioFailure | ExpectationError):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int, str]:
        """Where the item comes from."""
        return self.path, 0, f"scenario: {self.name}"

"""Scenario files are validated with line numbers: every problem names file:line and the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from actorscope.testing.scenario import LoadedScenario
from actorscope.testing.scenario._loader import ScenarioError

GOOD = """\
name: ok
setup:
  telegram:
    users: {alice: 4242}
steps:
  - telegram: {from: alice, text: hi}
    action: file_writer
    expect: {decision: {allowed: true, reason: not_group_context}}
"""


def test_good_file_loads_with_lines() -> None:
    """A valid scenario loads, and the line of each step is known."""
    loaded = LoadedScenario.parse(GOOD, Path("ok.scenario.yaml"))
    assert loaded.scenario.steps[0].telegram is not None
    assert loaded.scenario.steps[0].telegram.sender == "alice"
    assert loaded.at("steps", 0) == "ok.scenario.yaml:6"
    assert loaded.line("steps", 0, "expect", "decision", "nothing") == 8


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (GOOD.replace("action: file_writer", "acton: file_writer"), "x.yaml:7: steps[0].acton: "),
        (GOOD.replace("{from: alice, text: hi}", "{from: alice}"), "x.yaml:6: steps[0].telegram"),
        (GOOD.replace("text: hi}", "text: hi"), "x.yaml:"),
        ("steps: []\n", "x.yaml:1: steps: List should have at least 1 item"),
        ("", "x.yaml:1: the file is empty"),
        ("- a\n- b\n", "x.yaml:1: a scenario is a mapping"),
        (GOOD.replace("    users: {alice: 4242}", "    users: {alice: 1, alice: 2}"), "x.yaml:4:"),
        (
            GOOD.replace("  - telegram:", "  - http: {user: u}\n    telegram:"),
            "x.yaml:6: steps[0]: a step has exactly one of",
        ),
        (
            GOOD.replace("    action: file_writer\n", ""),
            "x.yaml:6: steps[0]: expect.decision needs the step's action",
        ),
        (
            GOOD.replace("action: file_writer", "action: bogus"),
            "x.yaml:7: steps[0].action: Input should be 'file_writer'",
        ),
        (
            GOOD.replace("action: file_writer", "action: '*'"),
            "x.yaml:7: steps[0].action: a check asks about one config type",
        ),
        (
            GOOD.replace("steps:", "  grants: [{scope: '*', sender: alice, type: bogus}]\nsteps:"),
            "x.yaml:5: setup.grants[0].type: Input should be 'file_writer'",
        ),
    ],
    ids=[
        "unknown-key",
        "missing-text",
        "bad-yaml",
        "no-steps",
        "empty",
        "not-a-mapping",
        "duplicate-key",
        "two-events",
        "decision-without-action",
        "unknown-action",
        "wildcard-action",
        "unknown-grant-type",
    ],
)
def test_malformed_files_name_file_line_and_problem(text: str, expected: str) -> None:
    """Each malformed file raises one ScenarioError that starts with file:line and says why."""
    with pytest.raises(ScenarioError) as failure:
        LoadedScenario.parse(text, Path("x.yaml"))
    assert str(failure.value).startswith(expected), str(failure.value)


def test_unreadable_file_is_a_scenario_error(tmp_path: Path) -> None:
    """A missing file is reported as a ScenarioError naming it."""
    with pytest.raises(ScenarioError, match="cannot read"):
        LoadedScenario.load(tmp_path / "missing.scenario.yaml")


GRANTED = """\
name: granted
setup:
  telegram:
    users: {alice: 4242}
    chats: {devs: {type: supergroup}}
  grants:
    - {chat: devs, sender: alice}
steps:
  - telegram: {from: alice, text: hi}
"""


def test_a_grant_names_its_sender() -> None:
    """A scenario grant names the actor ``sender`` (the scope's word user is not the key)."""
    (grant,) = LoadedScenario.parse(GRANTED, Path("g.yaml")).scenario.setup.grants
    assert (grant.chat, grant.sender) == ("devs", "alice")
    with pytest.raises(ScenarioError) as failure:
        LoadedScenario.parse(GRANTED.replace("sender: alice", "user: alice"), Path("g.yaml"))
    assert str(failure.value) == "g.yaml:7: setup.grants[0].sender: missing required key"

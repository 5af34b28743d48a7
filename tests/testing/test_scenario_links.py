"""Scenario files declare links (issue 34): ``setup.links`` and ``setup.persons``, and a
grant to ``person:<name>``."""

from __future__ import annotations

from pathlib import Path

import pytest

from actorscope.testing.scenario import LoadedScenario, run_scenario
from actorscope.testing.scenario._loader import ScenarioError

SCENARIO = """\
name: a person's grant covers both of its accounts
setup:
  links: LINKS
  telegram:
    users: {alice: 4242, bob: 4343}
    chats: {devs: {type: supergroup, id: -1001234567890}}
  discord:
    users: {carol: 9001}
    guilds: {lab: {id: 8123, channels: {general: 8124}}}
  persons:
    ann: [telegram:alice, discord:carol]
  grants:
    - {chat: devs, sender: "person:ann"}
    - {guild: lab, sender: "person:ann"}
steps:
  - telegram: {from: alice, chat: devs, text: write}
    action: file_writer
    expect: {decision: {allowed: ALLOWED, reason: REASON}}
  - discord: {from: carol, channel: general, text: write}
    action: file_writer
    expect: {decision: {allowed: ALLOWED, reason: REASON}}
  - telegram: {from: bob, chat: devs, text: write}
    action: file_writer
    expect: {decision: {allowed: false, reason: no_grant}}
"""


@pytest.mark.parametrize(
    ("links", "allowed", "reason"),
    [("grants", "true", "granted"), ("off", "false", "no_grant")],
)
async def test_a_scenario_links_accounts_and_grants_the_person(
    tmp_path: Path, links: str, allowed: str, reason: str
) -> None:
    """With links: grants, ann's grant allows alice (Telegram) and carol (Discord), not bob;
    with links off the same person grant allows nobody."""
    text = SCENARIO.replace("LINKS", links).replace("ALLOWED", allowed).replace("REASON", reason)
    path = tmp_path / "links.scenario.yaml"
    path.write_text(text, encoding="utf-8")
    outcomes = await run_scenario(LoadedScenario.load(path), tmp_path / "s.db")
    assert [o.reason for o in outcomes] == [reason, reason, "no_grant"]


@pytest.mark.parametrize(
    ("old", "new", "problem"),
    [
        (
            "[telegram:alice, discord:carol]",
            "[telegram:zoe]",
            "setup.persons.ann.0: 'telegram:zoe'",
        ),
        ("[telegram:alice, discord:carol]", "[fax:1]", "is not telegram:<user> or discord:<user>"),
        (
            'sender: "person:ann"}\n    - {guild',
            'sender: "person:max"}\n    - {guild',
            "unknown person",
        ),
    ],
)
async def test_a_bad_person_names_its_line(
    tmp_path: Path, old: str, new: str, problem: str
) -> None:
    """An account of no declared user, or a grant to an undeclared person, is one error."""
    text = (
        SCENARIO.replace("LINKS", "grants").replace("ALLOWED", "true").replace("REASON", "granted")
    )
    path = tmp_path / "links.scenario.yaml"
    path.write_text(text.replace(old, new), encoding="utf-8")
    with pytest.raises(ScenarioError, match=problem):
        await run_scenario(LoadedScenario.load(path), tmp_path / "s.db")

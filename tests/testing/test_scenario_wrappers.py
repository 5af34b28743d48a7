"""Scenario steps for delegate, teammate dispatch, session_send and Telegram clicks."""

from __future__ import annotations

from pathlib import Path

import pytest

from actorscope.messages import MetaKey
from actorscope.testing import TelegramSim
from actorscope.testing.scenario import LoadedScenario, run_scenario
from actorscope.testing.scenario._loader import ScenarioError
from actorscope.testing.scenario._model import CHAIN_KINDS

BASE = """\
name: wrappers
setup:
  agents: [helper]
  telegram:
    users: {alice: 4242, bob: 5151}
    chats:
      devs: {type: supergroup, id: -1001234567890, forum: true, topics: {ideas: 7}}
  discord:
    users: {carol: 9001}
    guilds:
      lab: {id: 8123, channels: {general: 8124}, threads: {design: {parent: general, id: 8125}}}
  grants:
    - {chat: devs, sender: alice, type: file_writer}
    - {guild: lab, sender: carol, type: file_writer}
steps:
  - telegram: {from: alice, chat: devs, topic: ideas, text: write}
"""


def _scenario(steps: str) -> str:
    return BASE + steps


@pytest.mark.parametrize(
    ("steps", "expected"),
    [
        (
            "  - delegate_announce: {result: ok, too: helper}\n",
            "x.yaml:17: steps[1].delegate_announce.too: unknown key",
        ),
        (
            "  - teammate_dispatch: {name: r}\n    session_send: {}\n",
            "x.yaml:17: steps[1]: a step has exactly one of",
        ),
        (
            "  - session_send:\n      text: hi\n      topic: ideas\n",
            "x.yaml:18: steps[1].session_send: topic needs chat",
        ),
        (
            "  - session_send: {of: 0}\n",
            "x.yaml:17: steps[1].session_send.of: Input should be greater than or equal to 1",
        ),
        (
            "  - telegram: {kind: click, from: bob, chat: devs}\n",
            "x.yaml:17: steps[1].telegram: a click needs chat and button",
        ),
        (
            "  - telegram: {from: bob, chat: devs, text: hi, button: ok}\n",
            "x.yaml:17: steps[1].telegram: only a click has a button",
        ),
    ],
    ids=["unknown-key", "two-events", "topic-without-chat", "of-zero", "click-no-button", "button"],
)
def test_malformed_wrapper_steps_name_file_line(steps: str, expected: str) -> None:
    """A malformed new step raises one ScenarioError starting with file:line and the key path."""
    with pytest.raises(ScenarioError) as failure:
        LoadedScenario.parse(_scenario(steps), Path("x.yaml"))
    assert str(failure.value).startswith(expected), str(failure.value)


@pytest.mark.parametrize(
    ("steps", "expected"),
    [
        (
            "  - delegate_announce: {to: nobody}\n",
            "x.yaml:17: to: unknown name 'nobody'",
        ),
        (
            "  - session_send: {chat: ops}\n",
            "x.yaml:17: chat: unknown name 'ops'",
        ),
        (
            "  - teammate_dispatch: {of: 3}\n",
            "x.yaml:17: steps[1].teammate_dispatch.of: must name an earlier step (1..1), got 3",
        ),
    ],
    ids=["unknown-agent", "unknown-chat", "later-step"],
)
async def test_bad_names_in_wrapper_steps_fail_at_file_line(
    tmp_path: Path, steps: str, expected: str
) -> None:
    """Names a new step uses are resolved when it runs; a bad one is reported at its line."""
    loaded = LoadedScenario.parse(_scenario(steps), Path("x.yaml"))
    with pytest.raises(ScenarioError) as failure:
        await run_scenario(loaded, tmp_path / "s.db")
    assert str(failure.value).startswith(expected), str(failure.value)


def test_every_chain_kind_is_a_step_key() -> None:
    """Each chain kind parses as a step that continues the previous run by default."""
    for kind in CHAIN_KINDS:
        loaded = LoadedScenario.parse(_scenario(f"  - {kind}: {{}}\n"), Path("x.yaml"))
        step = loaded.scenario.steps[1]
        assert step.kind == kind
        assert step.chain is not None
        assert step.chain.of is None
    assert LoadedScenario.parse(BASE, Path("x.yaml")).scenario.steps[0].chain is None


CHAINS = """\
  - delegate_announce: {to: helper}
    action: file_writer
    expect: {identity: {sender_id: "4242"}, decision: {allowed: true, reason: granted}}
  - teammate_dispatch: {name: reviewer, of: 1}
    action: file_writer
    expect: {identity: {sender_id: "4242"}, decision: {allowed: true, reason: granted}}
  - session_send: {text: hi, of: 1}
    action: file_writer
    reply: done
    expect:
      identity: {sender_id: "4242", session_key: "agent:main:telegram:group:-1001234567890:topic:7"}
      decision: {allowed: true, reason: granted}
      replies: [{text: done, chat: devs, topic: ideas}]
  - discord: {from: carol, channel: general, text: write}
  - session_send: {text: hi, chat: general, topic: design}
    action: file_writer
    expect:
      identity: {user_id: "guild:8123:user:9001", sender_id: "9001", thread_id: "8125"}
      decision: {allowed: true, reason: granted}
  - telegram: {kind: click, from: bob, chat: devs, button: approve}
    action: file_writer
    expect: {identity: {sender_id: "5151"}, decision: {allowed: false, reason: no_grant}}
"""


async def test_chain_steps_run_through_the_wrappers(tmp_path: Path) -> None:
    """Each chain runs as its synthetic sender's carrier, attributed to the human; table rows."""
    loaded = LoadedScenario.parse(_scenario(CHAINS), Path("x.yaml"))
    outcomes = await run_scenario(loaded, tmp_path / "s.db")
    rows = [(o.who, o.actor, o.decision) for o in outcomes]
    assert rows[1:4] == [
        ("delegate of alice", "4242", "allowed"),
        ("teammate of alice", "4242", "allowed"),
        ("session_send of alice", "4242", "allowed"),
    ]
    assert rows[5] == ("session_send of carol", "9001", "allowed")
    assert rows[6] == ("bob clicks approve", "5151", "denied")


async def test_simulator_wrappers_carry_the_synthetic_sender(telegram_sim: TelegramSim) -> None:
    """Each simulator wrapper step is a synthetic carrier whose run is the member who asked."""
    alice = telegram_sim.user("alice")
    devs = telegram_sim.supergroup("devs")
    asked = await telegram_sim.message(alice, "write", devs)
    events = [
        await telegram_sim.delegate_announce(asked, "ok"),
        await telegram_sim.teammate_dispatch(asked, "reviewer", "go"),
        await telegram_sim.session_send(asked, "hi"),
    ]
    senders = [e.message.sender_id for e in events if e.message is not None]
    assert senders[0].startswith("subagent:delegate:")
    assert senders[1:] == ["teammate:reviewer", "session_send_tool"]
    runs = [e.request for e in events if e.request is not None]
    assert [r.metadata[MetaKey.ORIGIN_VIA] for r in runs] == senders
    assert {(r.sender_id, r.user_id) for r in runs} == {
        (str(alice.id), f"group:telegram:{devs.id}")
    }

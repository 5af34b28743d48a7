"""``actorscope probe`` presses the bot's own buttons, and says when there was none to press.

A PTB bot whose ``/deploy`` is gated but whose "confirm" button is not, the same with the
button gated, the same bot in aiogram and in discord.py, and a bot whose answers show no button.
"""

from __future__ import annotations

from pathlib import Path

from actorscope.testing import Prober, ProbeStatus

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CLICKS = ("button click by a non-writer (group)", "button click by a non-writer (forum)")


async def test_ptb_ungated_button_of_a_gated_command_leaks(actorscope_probe: Prober) -> None:
    """A non-writer pressing the real "confirm" button of the writer's /deploy gets
    "deployed": a leak on both click rows, its behaviour the button's edit."""
    report = await actorscope_probe(
        application="probe_ptb_bots:ungated_button", search_dir=FIXTURES
    )
    assert "/deploy" in report.writer_only
    for event in CLICKS:
        case = report.case(event, "/deploy")
        assert case.status is ProbeStatus.LEAK, case
        assert any("deployed" in effect for effect in case.behaviour), case.behaviour
    assert not report.passed


async def test_ptb_gated_button_holds(actorscope_probe: Prober) -> None:
    """With the button's handler gated too, the non-writer's press is refused: held."""
    report = await actorscope_probe(application="probe_ptb_bots:gated_button", search_dir=FIXTURES)
    for event in CLICKS:
        case = report.case(event, "/deploy")
        assert case.status is ProbeStatus.HELD, case
        assert [d["allowed"] for d in case.decisions] == ["false"]
    assert report.passed, [c.problems for c in report.failures]


async def test_no_button_is_not_tested_never_held(actorscope_probe: Prober) -> None:
    """A bot whose answers show no button: the click rows are "not tested", said in a note."""
    report = await actorscope_probe(
        application="probe_ptb_bots:installed_gated", search_dir=FIXTURES
    )
    for event in CLICKS:
        for command in report.commands:
            case = report.case(event, command)
            assert case.status is ProbeStatus.NOT_TESTED, case
            assert case.problems == ["not tested: the bot showed no button"]
    assert any("the bot showed no button" in note for note in report.notes), report.notes
    assert report.passed


async def test_aiogram_ungated_button_of_a_gated_command_leaks(actorscope_probe: Prober) -> None:
    """The aiogram /deploy whose "confirm" callback is not gated leaks on the click rows."""
    report = await actorscope_probe(
        application="probe_aiogram_bots:ungated_button", search_dir=FIXTURES
    )
    for event in CLICKS:
        assert report.case(event, "/deploy").status is ProbeStatus.LEAK
    assert not report.passed


async def test_dpy_ungated_view_button_leaks(actorscope_probe: Prober) -> None:
    """A discord.py !deploy gated with requires whose View button is not: the non-writer's
    press of the real button does what the writer's does, a leak."""
    report = await actorscope_probe(bot="probe_dpy_bots:UngatedButton", search_dir=FIXTURES)
    for event in ("button click by a non-writer (general)", "button click by a non-writer (ideas)"):
        case = report.case(event, "!deploy")
        assert case.status is ProbeStatus.LEAK, case
        assert any("deployed" in effect for effect in case.behaviour), case.behaviour
    assert not report.passed


async def test_dpy_without_a_button_is_not_tested(actorscope_probe: Prober) -> None:
    """A discord.py bot whose answers show no button: its click rows are "not tested"."""
    report = await actorscope_probe(bot="probe_dpy_bots:ScopeNotActor", search_dir=FIXTURES)
    case = report.case("button click by a non-writer (general)", "!note")
    assert case.status is ProbeStatus.NOT_TESTED
    assert case.problems == ["not tested: the bot showed no button"]


async def test_dpy_command_that_raises_is_a_handler_error(actorscope_probe: Prober) -> None:
    """A discord.py !note that raises: every case of it is a handler error, not held."""
    report = await actorscope_probe(bot="probe_dpy_bots:Raises", search_dir=FIXTURES)
    case = report.case("non-writer member (general)", "!note")
    assert case.status is ProbeStatus.ERROR, case
    assert "notes are broken" in case.problems[0]
    assert not report.passed


async def test_dpy_requires_without_the_cog_is_a_handler_error(actorscope_probe: Prober) -> None:
    """A bot using requires without ActorscopeCog: its ConfigError is a handler error."""
    report = await actorscope_probe(bot="probe_dpy_bots:RequiresWithoutCog", search_dir=FIXTURES)
    case = report.case("non-writer member (general)", "!note")
    assert case.status is ProbeStatus.ERROR, case
    assert "ActorscopeCog" in case.problems[0], case.problems
    assert not report.passed

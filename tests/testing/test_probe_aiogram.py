"""``actorscope probe module:build`` for an aiogram bot: a function returning a Dispatcher."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

from actorscope.cli import main
from actorscope.errors import ConfigError
from actorscope.testing import Prober, ProbeStatus
from actorscope.testing._probe_aiogram import AIOGRAM
from actorscope.testing._probe_dpy import is_bot_factory

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
FIXTURES = ROOT / "tests" / "fixtures"
PERSONS = {"non-writer member (group)", "writer of another group (forum)"}


async def test_the_aiogram_notes_bot_probes_clean(actorscope_probe: Prober) -> None:
    """The example, probed as written (its own database name dropped for the probe's): /note is
    judged writer-only without being declared (it asks ``requires``) and holds everywhere."""
    report = await actorscope_probe(
        application="aiogram_notes_bot:build_dispatcher", search_dir=EXAMPLES
    )
    assert report.failures == []
    assert report.passed
    assert report.writer_only == ["/note"]
    assert report.commands == ["/addwriter", "/removewriter", "/writers", "/note"]
    held = report.case("non-writer member (group)", "/note")
    assert held.status is ProbeStatus.HELD
    assert held.refused
    assert [d["reason"] for d in held.decisions] == ["no_grant"]
    anonymous = report.case("anonymous admin (group)", "/note")
    assert anonymous.status is ProbeStatus.HELD
    assert [d["reason"] for d in anonymous.decisions] == ["empty_sender"]


async def test_an_ungated_copy_leaks(actorscope_probe: Prober) -> None:
    """The same bot without ``requires``: a member's /note changes the group's notes."""
    report = await actorscope_probe(
        application="probe_aiogram_bots:ungated", search_dir=FIXTURES, writer_only=["/note"]
    )
    assert not report.passed
    leaking = {case.event for case in report.leaks if case.command == "/note"}
    assert leaking >= PERSONS
    case = report.case("non-writer member (group)", "/note")
    assert case.status is ProbeStatus.LEAK
    assert any("notes.md changed" in problem for problem in case.problems)


async def test_a_plain_dispatcher_shows_who_can_use_each_command(
    actorscope_probe: Prober,
) -> None:
    """Before actorscope: a dispatcher without the gate, built with no arguments, is probed as
    it is; /note (kept in a dict) is open to everyone, and leaks once declared writer-only."""
    report = await actorscope_probe(application="probe_aiogram_bots:plain", search_dir=FIXTURES)
    assert report.passed
    assert report.commands == ["/note"]
    assert report.open_to_everyone == ["/note"]
    declared = await actorscope_probe(
        application="probe_aiogram_bots:plain", search_dir=FIXTURES, writer_only=["/note"]
    )
    assert not declared.passed
    assert {c.event for c in declared.leaks if c.command == "/note"} >= PERSONS


async def test_commands_registered_at_startup_are_probed(actorscope_probe: Prober) -> None:
    """A command the dispatcher registers with setMyCommands at startup is probed, though no
    Command filter names it."""
    report = await actorscope_probe(
        application="probe_aiogram_bots:registered", search_dir=FIXTURES
    )
    assert report.commands == ["/note"]
    assert report.open_to_everyone == ["/note"]


async def test_a_built_dispatcher_is_refused_with_the_fix(actorscope_probe: Prober) -> None:
    """A Dispatcher built already cannot be probed fresh: one error saying what to name."""
    with pytest.raises(ConfigError, match="name a function that returns it"):
        await actorscope_probe(application="probe_aiogram_bots:ALREADY_BUILT", search_dir=FIXTURES)


def test_a_dispatchers_build_function_is_no_discord_bot_factory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Both take keyword arguments only: the aiogram one is told apart (by what it says it
    returns, or, saying nothing, by its module), and a discord.py factory stays discord.py's;
    a PTB build function (it takes the builder) is neither."""
    monkeypatch.syspath_prepend(str(FIXTURES))
    aiogram_bots = importlib.import_module("probe_aiogram_bots")
    dpy_bots = importlib.import_module("probe_dpy_bots")
    ptb_bots = importlib.import_module("probe_ptb_bots")
    for name in ("ungated", "plain", "unannotated"):
        assert AIOGRAM.recognises(getattr(aiogram_bots, name)), name
    assert is_bot_factory(aiogram_bots.plain)  # why the probe asks aiogram first
    factories = [v for v in vars(dpy_bots).values() if callable(v) and is_bot_factory(v)]
    assert factories
    assert not any(AIOGRAM.recognises(factory) for factory in factories)
    assert not AIOGRAM.recognises(ptb_bots.installed_gated)


def test_cli_exit_status_and_reproduction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``actorscope probe aiogram_notes_bot:build_dispatcher`` exits 0; the ungated copy exits
    1 and ``--out`` writes a pytest reproduction naming it."""
    monkeypatch.chdir(EXAMPLES)
    assert main(["probe", "aiogram_notes_bot:build_dispatcher", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["passed"] is True
    monkeypatch.chdir(FIXTURES)
    out = tmp_path / "repro"
    args = ["probe", "probe_aiogram_bots:ungated", "--writer-only", "/note", "--json"]
    assert main([*args, "--out", str(out)]) == 1
    capsys.readouterr()
    written = sorted(out.iterdir())
    assert written
    assert all("probe_aiogram_bots:ungated" in p.read_text() for p in written)

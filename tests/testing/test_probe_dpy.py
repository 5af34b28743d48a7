"""actorscope probe on discord.py bots, run unchanged against the Discord emulator."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from actorscope.cli import main
from actorscope.cli._probe import _close as close_probe_loop
from actorscope.errors import ConfigError
from actorscope.testing import Prober, ProbeStatus

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
FIXTURES = ROOT / "tests" / "fixtures"
#: Seconds a written reproduction may take under pytest in a subprocess.
REPRO_SECONDS = 120.0


def _run_repro(test_file: Path) -> subprocess.CompletedProcess[str]:
    """Run a written reproduction with pytest in a subprocess (bounded, no bytecode written)."""
    return subprocess.run(  # noqa: S603 - this interpreter, on a file the test wrote
        [sys.executable, "-B", "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test_file)],
        cwd=test_file.parent,
        capture_output=True,
        text=True,
        timeout=REPRO_SECONDS,
        check=False,
    )


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_cli_dpy_notes_bot_probes_clean_and_writes_nothing_outside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The discord.py notes bot holds on its synced and text commands; no file outlives it."""
    folder, scratch = tmp_path / "bot", tmp_path / "tmp"
    folder.mkdir()
    scratch.mkdir()
    shutil.copy(EXAMPLES / "dpy_notes_bot.py", folder / "dpy_notes_copy.py")
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))  # where the throwaway folder goes
    monkeypatch.chdir(folder)
    before = _tree(folder)
    assert main(["probe", "dpy_notes_copy:NotesBot", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["failures"] == 0
    assert {"/note", "!note", "/addwriter", "!addwriter", "!writers"} <= set(report["commands"])
    cases = {(case["event"], case["command"]): case for case in report["cases"]}
    for where in ("general", "ideas"):
        held = cases[(f"non-writer member ({where})", "!note")]
        assert [d["reason"] for d in held["decisions"]] == ["no_grant"]
    slash = cases[("slash command by a non-writer (ideas)", "/note")]
    assert [d["reason"] for d in slash["decisions"]] == ["no_grant"]
    assert cases[("slash command by a non-writer (general)", "!help")]["status"] == "n/a"
    dm = cases[("the writer's DM", "!note")]
    assert [d["reason"] for d in dm["decisions"]] == ["not_group_context"]
    assert _tree(folder) == before
    assert list(scratch.iterdir()) == []


def test_cli_dpy_bot_skipping_edits_is_caught_and_its_reproduction_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bot re-running edits unchecked leaks on the edit only; --out writes a failing test."""
    monkeypatch.chdir(FIXTURES)
    out = tmp_path / "repro"
    assert main(["probe", "probe_dpy_bots:SkipsEdits", "--json", "--out", str(out)]) == 1
    report = json.loads(capsys.readouterr().out)
    leaking = {
        (case["event"], case["command"]) for case in report["cases"] if case["status"] == "leak"
    }
    assert leaking == {("edited message (general)", "!note"), ("edited message (ideas)", "!note")}
    written = sorted(out.iterdir())
    assert [p.name for p in written] == ["test_probe_leak_001.py", "test_probe_leak_002.py"]
    result = _run_repro(written[0])
    assert result.returncode == 1, result.stdout[-2000:] + result.stderr[-2000:]
    assert "1 failed" in result.stdout
    assert "notes.md changed" in result.stdout


async def test_dpy_bot_checking_the_scope_is_caught_by_a_non_writer(
    actorscope_probe: Prober,
) -> None:
    """A check asked for the guild's writer instead of the member leaks for the member."""
    events = ["non-writer member (general)", "edited message (general)"]
    report = await actorscope_probe(
        bot="probe_dpy_bots:ScopeNotActor", search_dir=FIXTURES, events=events
    )
    assert report.events == events
    case = report.case("non-writer member (general)", "!note")
    assert case.status is ProbeStatus.LEAK
    assert any("notes.md changed" in problem for problem in case.problems)
    assert report.case("edited message (general)", "!note").status is ProbeStatus.HELD


async def test_commands_after_a_mention_of_the_bot_are_probed(actorscope_probe: Prober) -> None:
    """A bot whose prefix is a mention of it is sent its commands that way, and caught."""
    event = "non-writer member (general)"
    report = await actorscope_probe(
        bot="probe_dpy_bots:MentionedScopeNotActor", search_dir=FIXTURES, events=[event]
    )
    [note] = [c for c in report.commands if c.startswith("<@") and c.endswith("> note")]
    assert report.case(event, note).status is ProbeStatus.LEAK


async def test_dpy_bot_factory_function_and_what_is_refused(actorscope_probe: Prober) -> None:
    """A keyword-only factory is probed, and a bot built already too (adopted onto the probe's
    database); a bad one and one failing to start are each one ConfigError."""
    found = await actorscope_probe(
        bot="probe_dpy_bots:build_skips_edits",
        search_dir=FIXTURES,
        events=["edited message (ideas)"],
    )
    assert found.case("edited message (ideas)", "!note").status is ProbeStatus.LEAK
    built = await actorscope_probe(
        bot="probe_dpy_bots:ALREADY_BUILT", search_dir=FIXTURES, events=["edited message (ideas)"]
    )
    assert built.case("edited message (ideas)", "!note").status is ProbeStatus.LEAK  # adopted
    with pytest.raises(ConfigError) as refused:
        await actorscope_probe(bot=lambda **_: "not a bot")
    assert str(refused.value) == (
        "bot '<lambda>' returned a string: the probe takes a discord.py bot, its class or a "
        "function building one"
    )
    with pytest.raises(ConfigError, match=r"did not start: FileNotFoundError: settings\.json"):
        await actorscope_probe(bot="probe_dpy_bots:FailsToStart", search_dir=FIXTURES)
    with pytest.raises(ConfigError, match="a handler, an application or a bot, exactly one"):
        await actorscope_probe("bot:handle", bot="probe_dpy_bots:SkipsEdits")


async def test_hanging_dpy_command_is_reported_at_its_deadline(actorscope_probe: Prober) -> None:
    """A command that never answers is reported hung at the deadline; the rest are skipped."""
    report = await actorscope_probe(
        bot="probe_dpy_bots:Hangs",
        search_dir=FIXTURES,
        commands=["!note x"],
        deadline=1.0,
        events=["non-writer member (general)"],
    )
    first = report.case("non-writer member (general)", "!note x")
    assert first.status is ProbeStatus.HUNG
    assert "the handler hangs" in first.problems[0]
    assert {c.status for c in report.cases[1:]} == {ProbeStatus.SKIPPED}


async def test_ptb_reproduction_is_a_test_that_fails_on_the_broken_bot(
    tmp_path: Path, actorscope_probe: Prober
) -> None:
    """For a PTB application --out's reproduction is a pytest file; it fails while it leaks."""
    event = "non-writer member (group)"
    report = await actorscope_probe(
        application="probe_ptb_bots:no_check", search_dir=FIXTURES, events=[event]
    )
    assert report.case(event, "/note").status is ProbeStatus.LEAK
    [written] = report.write_repros(
        tmp_path / "repro", application="probe_ptb_bots:no_check", search_dir=FIXTURES
    )
    result = _run_repro(written)
    assert result.returncode == 1, result.stdout[-2000:] + result.stderr[-2000:]
    assert "1 failed" in result.stdout
    assert "notes.md changed" in result.stdout


def test_the_probes_loop_closes_with_no_task_left_pending() -> None:
    """The tasks a bot leaves running (a discord.ui.View's timeout) are cancelled and finished
    before the probe closes its loop: Python reports no "Task was destroyed but it is
    pending!" after the matrix."""
    loop = asyncio.new_event_loop()
    leftover = loop.create_task(asyncio.sleep(3600), name="View timeout")
    close_probe_loop(loop)
    assert leftover.cancelled()
    assert loop.is_closed()

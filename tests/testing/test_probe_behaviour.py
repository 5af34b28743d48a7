"""``actorscope probe`` judges what the bot does, proves its reach, and never passes silently.

The notes bot before actorscope (a plain PTB application keeping notes in a dict), with
``install()`` but ``/note`` ungated, and gated; bots that keep notes in a file or a SQLite
database of their own; a build function that drops the probe's keyword arguments; a handler
whose commands nobody declared; a bot split into two modules.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from actorscope.cli import main
from actorscope.errors import ConfigError
from actorscope.testing import Prober, ProbeReachError, ProbeStatus
from actorscope.testing.scenario import LoadedScenario, ScenarioFailure, run_scenario

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
#: Seconds a written reproduction may take under pytest in a subprocess.
REPRO_SECONDS = 120.0
PERSONS = {"non-writer member (group)", "writer of another group (forum)"}


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.fixture
def bot_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder with the probe's fixture bots, the working directory of the test; the probe's
    temporary folders go to ``tmp_path / "scratch"`` (empty after every probe)."""
    folder, scratch = tmp_path / "bot", tmp_path / "scratch"
    folder.mkdir()
    scratch.mkdir()
    for name in ("probe_ptb_bots.py", "probe_bots.py", "probe_dpy_bots.py", "probe_blind_bot.py"):
        shutil.copy(FIXTURES / name, folder / name.replace("probe_", "copied_"))
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    monkeypatch.chdir(folder)
    return folder


def _cli_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    status = main(["probe", *args, "--json"])
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    return status, report


def _leaking(report: dict[str, Any]) -> set[tuple[str, str]]:
    return {(c["event"], c["command"]) for c in report["cases"] if c["status"] == "leak"}


def test_plain_ptb_bot_keeping_notes_in_a_dict_is_caught_when_note_is_writer_only(
    bot_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before actorscope: /note (a dict) is open to everyone (exit 0, said so); with
    --writer-only /note every sender who got "saved" is a leak (exit 1), and nothing is
    written outside the probe's folder."""
    before = _tree(bot_folder)
    status, report = _cli_json(capsys, "copied_ptb_bots:plain")
    assert status == 0
    assert report["open_to_everyone"] == ["/note"]
    assert report["commands"] == ["/note"]  # a plain bot has no writer commands
    cases = {(c["event"], c["command"]): c for c in report["cases"]}
    open_case = cases[("non-writer member (group)", "/note")]
    assert open_case["status"] == "open"
    assert 'sendMessage {"text": "saved"}' in open_case["behaviour"]
    status, report = _cli_json(capsys, "copied_ptb_bots:plain", "--writer-only", "/note")
    assert status == 1
    assert {event for event, command in _leaking(report) if command == "/note"} >= PERSONS
    assert report["writer_only"] == ["/note"]
    assert _tree(bot_folder) == before
    assert list(Path(tempfile.gettempdir()).iterdir()) == []


def test_cli_prints_the_open_to_everyone_summary(
    bot_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The matrix marks open cases ●, and a line under it names the command open to everyone."""
    assert main(["probe", "copied_ptb_bots:plain"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "open to everyone: /note" in out
    assert "● open (as for the writer)" in out
    assert "│ non-writer member (group) │ ● │" in out


async def test_installed_but_ungated_dict_note_is_caught(actorscope_probe: Prober) -> None:
    """With install() but /note left without requires, the dict-kept note leaks to a member."""
    report = await actorscope_probe(
        application="probe_ptb_bots:installed_ungated", search_dir=FIXTURES, writer_only=["/note"]
    )
    case = report.case("non-writer member (group)", "/note")
    assert case.status is ProbeStatus.LEAK
    assert "did for this sender what it does for the writer" in case.problems[0]
    assert case.behaviour_only
    assert not report.passed


async def test_gated_dict_note_probes_clean(actorscope_probe: Prober) -> None:
    """With requires, /note is judged writer-only without being declared, and holds."""
    report = await actorscope_probe(
        application="probe_ptb_bots:installed_gated", search_dir=FIXTURES
    )
    assert report.failures == []
    assert report.passed
    assert report.writer_only == ["/note"]
    held = report.case("non-writer member (group)", "/note")
    assert held.status is ProbeStatus.HELD
    assert held.refused
    assert [d["reason"] for d in held.decisions] == ["no_grant"]


@pytest.mark.parametrize(
    ("bot", "effect"),
    [
        ("copied_ptb_bots:plain_file_notes", "file notes.txt written"),
        ("copied_ptb_bots:plain_sqlite_notes", "sqlite notes.sqlite:notes: rows added"),
    ],
)
def test_notes_in_the_bots_own_file_or_database_are_caught_and_stay_in_the_probe_folder(
    bot_folder: Path, capsys: pytest.CaptureFixture[str], bot: str, effect: str
) -> None:
    """A silent /note writing a relative file or SQLite database: the write is the behaviour
    compared, and it lands in the probe's folder, never beside the bot."""
    before = _tree(bot_folder)
    status, report = _cli_json(capsys, bot, "--writer-only", "/note")
    assert status == 1
    cases = [c for c in report["cases"] if c["status"] == "leak"]
    assert cases
    assert all(effect in c["problems"][0] for c in cases)
    assert _tree(bot_folder) == before
    assert list(Path(tempfile.gettempdir()).iterdir()) == []


def test_dropped_overrides_are_adopted_and_write_nothing_outside(
    bot_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 26 defect 3: a build function dropping the probe's database= no longer runs its
    gate on its own notes.db (20 audit rows there and "0 leak(s)"): the gate is adopted onto
    the probe's database, the seeded writer reaches it, the missing check is found, and no
    notes.db appears beside the bot."""
    before = _tree(bot_folder)
    status, report = _cli_json(capsys, "copied_ptb_bots:drops_overrides")
    assert status == 1
    case = next(
        c
        for c in report["cases"]
        if c["event"] == "non-writer member (group)" and c["command"] == "/note"
    )
    assert case["status"] == "leak"
    assert any("notes.md changed" in problem for problem in case["problems"])
    assert _tree(bot_folder) == before
    assert list(Path(tempfile.gettempdir()).iterdir()) == []


def test_a_gate_the_probe_cannot_reach_stops_it_before_any_case(
    bot_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The positive control: a handler before the gate answers the seeded writer's /writers;
    the probe stops with exit 2 and one line instead of reporting a clean matrix."""
    before = _tree(bot_folder)
    assert main(["probe", "copied_ptb_bots:shadowed"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1
    assert (
        "the seeded writer is not a writer of the probe's group for application "
        "'copied_ptb_bots:shadowed': its /writers answered 'hello'"
    ) in captured.err
    assert _tree(bot_folder) == before
    assert list(Path(tempfile.gettempdir()).iterdir()) == []


def test_run_handler_writing_files_keeps_them_in_the_probe_folder(
    bot_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run handler appending to a relative notes.txt: caught for writer-only /note, which it
    never declared (inferred from its source), and nothing written beside its bot.toml."""
    (bot_folder / "bot.toml").write_text(
        'database = "bot.db"\nhandler = "copied_bots:file_notes"\n[telegram]\ntoken_env = "T"\n',
        "utf-8",
    )
    before = _tree(bot_folder)
    status, report = _cli_json(capsys, "bot.toml", "--writer-only", "/note")
    assert status == 1
    assert ("non-writer member (group)", "/note") in _leaking(report)
    notes = report["notes"]
    assert any("knows no command" in note and "/note" in note for note in notes)
    assert _tree(bot_folder) == before
    assert list(Path(tempfile.gettempdir()).iterdir()) == []


def test_dpy_bot_writing_files_is_caught_and_keeps_them_in_the_probe_folder(
    bot_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A plain discord.py bot appending !note to a relative file: caught for a writer-only
    !note; the file stays in the probe's folder."""
    before = _tree(bot_folder)
    status, report = _cli_json(capsys, "copied_dpy_bots:FileNotes", "--writer-only", "!note")
    assert status == 1
    assert ("non-writer member (general)", "!note") in _leaking(report)
    assert _tree(bot_folder) == before
    assert list(Path(tempfile.gettempdir()).iterdir()) == []


async def test_plain_dpy_bots_show_who_can_use_each_command(actorscope_probe: Prober) -> None:
    """A plain commands.Bot (its class, or built at import) is probed as it is: !note is open
    to everyone, and a leak once it is declared writer-only; with the Cog, still a leak."""
    events = ["non-writer member (general)", "another bot (general)"]
    for bot in ("probe_dpy_bots:PlainNotes", "probe_dpy_bots:plain_bot"):
        before = await actorscope_probe(bot=bot, search_dir=FIXTURES, events=events)
        assert "!note" in before.open_to_everyone
        assert before.case("non-writer member (general)", "!note").status is ProbeStatus.OPEN
        assert "/writers" not in before.commands
    declared = await actorscope_probe(
        bot="probe_dpy_bots:PlainNotes", search_dir=FIXTURES, events=events, writer_only=["!note"]
    )
    assert declared.case("non-writer member (general)", "!note").status is ProbeStatus.LEAK
    with pytest.raises(ConfigError, match="closed already"):
        await actorscope_probe(bot="probe_dpy_bots:plain_bot", search_dir=FIXTURES)
    ungated = await actorscope_probe(
        bot="probe_dpy_bots:UngatedDictNotes",
        search_dir=FIXTURES,
        events=events,
        writer_only=["!note"],
    )
    assert ungated.case("non-writer member (general)", "!note").status is ProbeStatus.LEAK
    assert "!writers" in ungated.commands


async def test_handler_with_no_declared_commands_tries_its_sources_commands(
    actorscope_probe: Prober,
) -> None:
    """No [probe] commands: the probe says so and tries /note from the handler's source,
    where the scope-for-actor mistake leaks."""
    report = await actorscope_probe("probe_bots:scope_not_actor", search_dir=FIXTURES)
    assert "/note" in report.commands
    assert report.case("non-writer member (group)", "/note").status is ProbeStatus.LEAK
    assert any("knows no command of handler" in note for note in report.notes)


def test_handler_whose_commands_are_unknown_is_not_a_clean_pass(
    bot_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Only the writer commands probed: no leak, but exit 1 and a line saying so."""
    (bot_folder / "bot.toml").write_text(
        'database = "bot.db"\nhandler = "copied_blind_bot:handle"\n[telegram]\ntoken_env = "T"\n',
        "utf-8",
    )
    assert main(["probe", "bot.toml"]) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert "0 leak(s)" in out
    assert (
        "✗ not tested: the probe knows no command of handler 'copied_blind_bot:handle': only "
        "the writer commands were probed; name them with --command (or [probe] commands)"
    ) in out


async def test_commands_from_scenario_files_are_tried(
    tmp_path: Path, actorscope_probe: Prober
) -> None:
    """A step text of a scenario file serving the handler names a command the probe tries."""
    shutil.copy(FIXTURES / "probe_blind_bot.py", tmp_path / "scenario_blind_bot.py")
    (tmp_path / "bot.scenario.yaml").write_text(
        "name: x\nsetup:\n  handler: scenario_blind_bot:handle\nsteps:\n"
        "  - telegram: {from: bob, text: /count words}\n",
        "utf-8",
    )
    report = await actorscope_probe(
        "scenario_blind_bot:handle", search_dir=tmp_path, events=["non-writer member (group)"]
    )
    assert "/count" in report.commands
    assert report.untested == []


def test_bot_split_into_two_modules_probes(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A module importing its sibling imports as with python -m from its folder."""
    monkeypatch.chdir(FIXTURES / "split_bot")
    status, report = _cli_json(capsys, "split_notes_app:build")
    assert status == 0
    assert report["open_to_everyone"] == ["/note"]


async def test_writer_refused_by_the_bot_stops_the_probe(actorscope_probe: Prober) -> None:
    """The positive control: a seeded writer the bot refuses means the probe does not reach
    its grants; the probe stops instead of reporting."""
    with pytest.raises(ProbeReachError, match="the seeded writer was refused /note"):
        await actorscope_probe(
            "probe_bots:refuses_everyone", search_dir=FIXTURES, commands=["/note probe"]
        )


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


@pytest.mark.parametrize(
    ("kind", "spec"),
    [("application", "probe_ptb_bots:installed_ungated"), ("handler", "probe_bots:dict_notes")],
)
async def test_behaviour_leak_reproduction_fails_while_the_leak_is_there(
    tmp_path: Path, actorscope_probe: Prober, kind: str, spec: str
) -> None:
    """--out for a behaviour leak is a pytest file (a handler's too: a scenario step cannot
    judge behaviour) that fails while the bot still leaks."""
    event = "non-writer member (group)"
    command = "/note" if kind == "application" else "/note probe"
    handler, application = (spec, None) if kind == "handler" else (None, spec)
    report = await actorscope_probe(
        handler,
        application=application,
        search_dir=FIXTURES,
        commands=[command],
        writer_only=["/note"],
        events=[event],
    )
    assert report.case(event, command).status is ProbeStatus.LEAK
    written = report.write_repros(
        tmp_path / "repro", handler=handler, application=application, search_dir=FIXTURES
    )
    assert [p.name for p in written] == ["test_probe_leak_001.py"]
    assert "writer_only=['/note']" in written[0].read_text("utf-8")
    result = _run_repro(written[0])
    assert result.returncode == 1, result.stdout[-2000:] + result.stderr[-2000:]
    assert "1 failed" in result.stdout
    assert "did for this sender what it does for the writer" in result.stdout


def _guide_block(first_line: str) -> str:
    """The probe guide's python block that starts with ``first_line``."""
    text = (ROOT / "docs" / "guides" / "probe.md").read_text("utf-8")
    for match in re.finditer(r"```python\n(.*?)```", text, re.DOTALL):
        if match.group(1).startswith(first_line):
            return match.group(1)
    raise AssertionError(f"the probe guide has no block starting {first_line!r}")


def test_the_guides_before_and_after_of_the_notes_bot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The guide's notes bot, verbatim: before actorscope /note is open to everyone (13 leaks
    once declared writer-only); after, it is judged writer-only and holds, and the gate's
    notes.db is never created."""
    guide = (ROOT / "docs" / "guides" / "probe.md").read_text("utf-8")
    for name in ("notes_before", "notes_after"):
        (tmp_path / f"{name}.py").write_text(_guide_block(f"# {name}.py"), "utf-8")
    monkeypatch.chdir(tmp_path)
    status, before = _cli_json(capsys, "notes_before:build")
    assert (status, before["open_to_everyone"]) == (0, ["/note"])
    assert before["summary"] in guide
    status, declared = _cli_json(capsys, "notes_before:build", "--writer-only", "/note")
    assert status == 1
    assert declared["summary"] in guide
    status, after = _cli_json(capsys, "notes_after:build")
    assert (status, after["passed"], after["writer_only"]) == (0, True, ["/note"])
    assert after["summary"] in guide
    assert not (tmp_path / "notes.db").exists()


async def test_scenario_probe_of_a_handler_it_cannot_reach_fails(tmp_path: Path) -> None:
    """probe: true on a handler whose commands the probe cannot know fails the file, saying
    what was not tested, instead of passing on the writer commands alone."""
    shutil.copy(FIXTURES / "probe_blind_bot.py", tmp_path / "scenario_probed_blind.py")
    path = tmp_path / "blind.scenario.yaml"
    path.write_text(
        "name: blind\nsetup:\n  handler: scenario_probed_blind:handle\n  probe: true\n"
        "  telegram:\n    users: {bob: 5}\n"
        "steps:\n  - telegram: {from: bob, text: hello}\n",
        "utf-8",
    )
    with pytest.raises(ScenarioFailure, match=r"setup.probe: not tested: the probe knows no"):
        await run_scenario(LoadedScenario.load(path), tmp_path / "s.db")

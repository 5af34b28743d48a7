"""``actorscope probe``: the notes bot probes clean; each broken variant is caught by its event."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from actorscope.channels import ChannelConfig, IgnoreReason, Ingress
from actorscope.channels._pipeline import Pipeline
from actorscope.cli import main
from actorscope.errors import ConfigError
from actorscope.identity import Identity, SenderKind
from actorscope.permissions import LinkOutcome, LinkStore, Reason
from actorscope.testing import AgentEnv, Prober, ProbeReachError, ProbeStatus, probe
from actorscope.testing.scenario import LoadedScenario, ScenarioFailure, run_scenario
from actorscope.testing.scenario._loader import ScenarioError

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
FIXTURES = ROOT / "tests" / "fixtures"
NOTE = ["/note probe"]


def _leaking_events(report_events: set[str]) -> set[str]:
    """The event names without their ``(group)`` / ``(forum)`` suffix."""
    return {event.rsplit(" (", 1)[0] for event in report_events}


async def test_notes_bot_probes_clean(actorscope_probe: Prober) -> None:
    """The notes bot holds against every probe event x command, and its denials are recorded."""
    report = await actorscope_probe("telegram_bot:handle", search_dir=EXAMPLES, commands=NOTE)
    assert report.leaks == []
    denied = report.case("non-writer member (group)", "/note probe")
    assert denied.status is ProbeStatus.HELD
    assert [d["reason"] for d in denied.decisions] == ["no_grant"]
    assert any(row["reason"] == "no_grant" for row in denied.audit)
    assert (
        report.case("anonymous admin (group)", "/note probe").status is ProbeStatus.NOT_APPLICABLE
    )
    dm = report.case("the writer's DM", "/note probe")
    assert [d["reason"] for d in dm.decisions] == ["not_group_context"]


@pytest.mark.parametrize(
    ("variant", "events"),
    [
        ("trusts_text_sender", {"text naming the writer's sender_id"}),
        ("skips_edits", {"edited message"}),
        ("allows_empty_sender", {"message with no sender"}),
    ],
)
async def test_broken_variant_is_caught_by_its_event(
    actorscope_probe: Prober, variant: str, events: set[str]
) -> None:
    """Each broken notes bot leaks exactly under the event that exposes its mistake."""
    report = await actorscope_probe(f"probe_bots:{variant}", search_dir=FIXTURES, commands=NOTE)
    leaks = {case.event for case in report.leaks}
    assert _leaking_events(leaks) == events
    assert leaks == {f"{event} ({where})" for event in events for where in ("group", "forum")}
    assert all(case.command == "/note probe" for case in report.leaks)
    assert all(any("notes.md changed" in p for p in case.problems) for case in report.leaks)


async def test_scope_instead_of_actor_is_caught_by_a_non_writer(actorscope_probe: Prober) -> None:
    """A bot asking the policy as the scope's writer leaks to a plain non-writer member."""
    report = await actorscope_probe(
        "probe_bots:scope_not_actor", search_dir=FIXTURES, commands=NOTE
    )
    case = report.case("non-writer member (group)", "/note probe")
    assert case.status is ProbeStatus.LEAK
    assert "allowed file_writer as the writer" in case.problems[0]
    assert report.case("the writer's DM", "/note probe").status is ProbeStatus.HELD


async def test_reply_with_another_scopes_content_is_a_leak(actorscope_probe: Prober) -> None:
    """A reply carrying notes planted in another group's scope is reported as a leak."""
    report = await actorscope_probe(
        "probe_bots:leaks_other_scope", search_dir=FIXTURES, commands=NOTE
    )
    case = report.case("non-writer member (group)", "/note probe")
    assert case.status is ProbeStatus.LEAK
    assert any("carries content of chat" in p for p in case.problems)


async def test_hanging_handler_is_reported_not_waited_on(actorscope_probe: Prober) -> None:
    """A handler that never answers is reported hung at its deadline; the rest are skipped."""
    report = await actorscope_probe(
        "probe_bots:hangs", search_dir=FIXTURES, commands=NOTE, deadline=0.5
    )
    first = report.case("non-writer member (group)", "/note probe")
    assert first.status is ProbeStatus.HUNG
    assert "the handler hangs" in first.problems[0]
    assert {c.status for c in report.cases[1:]} == {ProbeStatus.SKIPPED}
    assert report.leaks == []
    assert len(report.failures) == len(report.cases)
    assert report.summary().startswith("0 leak(s), 1 hung, 0 error(s),")


def _bot_dir(tmp_path: Path, handler: str) -> Path:
    """A copy of examples/bot.toml whose handler is ``handler`` (bot modules beside it)."""
    folder = tmp_path / "bot"
    folder.mkdir()
    shutil.copy(EXAMPLES / "telegram_bot.py", folder)
    shutil.copy(FIXTURES / "probe_bots.py", folder)
    toml = (EXAMPLES / "bot.toml").read_text("utf-8")
    (folder / "bot.toml").write_text(toml.replace("telegram_bot:handle", handler), "utf-8")
    return folder


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_cli_clean_matrix_and_nothing_written_beside_the_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`actorscope probe bot.toml`: a clean matrix, exit 0, its folder left as it was."""
    folder = _bot_dir(tmp_path, "telegram_bot:handle")
    before = _tree(folder)
    assert main(["probe", str(folder / "bot.toml")]) == 0
    out = capsys.readouterr().out
    assert "/note probe" in out
    assert "non-writer member (forum)" in out
    assert "0 leak(s), 0 hung, 0 error(s), 0 skipped in" in out
    rows_and_findings = [line for line in out.splitlines() if "│" in line or line[:1] == "✗"]
    assert not [line for line in rows_and_findings if "✗" in line]
    assert "✓ held  ✗ leak  ⌛ hung" in out  # the legend
    assert _tree(folder) == before


def test_cli_reports_a_handler_that_swallows_cancellation_and_exits(tmp_path: Path) -> None:
    """A handler that never stops, even when cancelled: reported hung, exit 1, no hang."""
    folder = _bot_dir(tmp_path, "probe_bots:stubborn")
    result = subprocess.run(
        [sys.executable, "-m", "actorscope", "probe", "bot.toml", "--deadline", "0.5"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 1, result.stderr[-2000:]
    said = " ".join(result.stdout.split())  # rich may fold the long lines
    assert "no answer within 0.5 s: the handler hangs" in said
    assert "0 leak(s), 1 hung" in said


def test_cli_leak_exits_1_with_json_and_a_reproduction(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A leak: exit 1, --json names the event, --out DIR gets a scenario that reproduces it."""
    folder = _bot_dir(tmp_path, "probe_bots:scope_not_actor")
    out_dir = tmp_path / "repro"
    assert main(["probe", str(folder / "bot.toml"), "--json", "--out", str(out_dir)]) == 1
    report = json.loads(capsys.readouterr().out)
    leaking = {case["event"] for case in report["cases"] if case["status"] == "leak"}
    assert "non-writer member (group)" in leaking
    scenario = out_dir / "probe-leak-001.scenario.yaml"
    loaded = LoadedScenario.load(scenario)
    assert loaded.scenario.setup.handler == "probe_bots:scope_not_actor"


async def test_reproduction_scenario_fails_as_the_probe_did(
    tmp_path: Path, actorscope_probe: Prober
) -> None:
    """The scenario written for a non-writer's leak fails when played (the leak reproduces)."""
    report = await actorscope_probe(
        "probe_bots:scope_not_actor", search_dir=FIXTURES, commands=NOTE
    )
    written = report.write_repros(tmp_path / "repro", handler="probe_bots:scope_not_actor")
    first = LoadedScenario.load(written[0])
    assert first.scenario.steps, "a non-writer's message is replayable as a step"
    with pytest.raises(ScenarioFailure):
        await run_scenario(first, tmp_path / "replay.db")


def test_cli_bad_probe_section_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A malformed [probe] section exits 2 with one line naming it."""
    folder = _bot_dir(tmp_path, "telegram_bot:handle")
    config = folder / "bot.toml"
    config.write_text(
        config.read_text("utf-8").replace('commands = ["/note probe"]', "commands = 3"), "utf-8"
    )
    assert main(["probe", str(config)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "probe.commands: must be a list of non-empty strings, got 3" in err


def test_guide_probe_example_passes_in_a_fresh_project(pytester: pytest.Pytester) -> None:
    """The probe guide's actorscope_probe example, verbatim, passes beside the notes bot."""
    text = (ROOT / "docs" / "guides" / "probe.md").read_text("utf-8")
    match = re.search(r"```python\n(.*?)```", text, re.DOTALL)
    assert match is not None, "the probe guide has no python example"
    pytester.makepyfile(test_probe_readme=match.group(1))
    (pytester.path / "bot.py").write_text((EXAMPLES / "telegram_bot.py").read_text("utf-8"))
    result = pytester.runpytest_subprocess("-W", "error", "-p", "no:cacheprovider", timeout=120)
    result.assert_outcomes(passed=1)


async def test_cron_job_added_for_a_non_writer_is_a_leak(actorscope_probe: Prober) -> None:
    """A bot that schedules for anyone leaks: the cron_jobs change is named in the problem."""
    report = await actorscope_probe(
        "probe_bots:schedules_unchecked", search_dir=FIXTURES, commands=["/remind stand-up"]
    )
    case = report.case("non-writer member (group)", "/remind stand-up")
    assert case.status is ProbeStatus.LEAK
    assert any(p.startswith("cron_jobs row changed") for p in case.problems)
    assert (
        report.case("anonymous admin (group)", "/remind stand-up").status
        is ProbeStatus.NOT_APPLICABLE
    )


async def test_discord_phase_probes_clean_and_catches_a_discord_only_mistake(
    actorscope_probe: Prober,
) -> None:
    """With a Discord config the Discord events run too; a Discord-only skip is caught there."""
    discord = ChannelConfig(platform="discord", require_mention=True)
    clean = await actorscope_probe(
        "telegram_bot:handle", search_dir=EXAMPLES, commands=NOTE, channels=[discord]
    )
    assert clean.failures == []
    held = clean.case("discord: non-writer member (ideas)", "/note probe")
    assert [d["reason"] for d in held.decisions] == ["no_grant"]
    assert (
        clean.case("discord: webhook (general)", "/note probe").status is ProbeStatus.NOT_APPLICABLE
    )
    broken = await actorscope_probe(
        "probe_bots:trusts_discord", search_dir=FIXTURES, commands=NOTE, channels=[discord]
    )
    leaks = {case.event for case in broken.leaks}
    assert "discord: non-writer member (general)" in leaks
    assert all(event.startswith("discord: ") for event in leaks)


async def test_ptb_notes_bot_probes_clean(actorscope_probe: Prober) -> None:
    """The PTB notes bot (built by the probe against its emulator) holds everywhere."""
    report = await actorscope_probe(
        application="ptb_notes_bot:build_application", search_dir=EXAMPLES, commands=NOTE
    )
    assert report.failures == []
    denied = report.case("non-writer member (group)", "/note probe")
    assert [d["reason"] for d in denied.decisions] == ["no_grant"]


async def test_ptb_bot_without_check_is_caught_on_its_registered_command(
    actorscope_probe: Prober,
) -> None:
    """A PTB bot missing its check leaks on /note, which the probe took from setMyCommands."""
    report = await actorscope_probe(application="probe_ptb_bots:no_check", search_dir=FIXTURES)
    assert "/note" in report.commands
    case = report.case("non-writer member (group)", "/note")
    assert case.status is ProbeStatus.LEAK
    assert any("notes.md changed" in p for p in case.problems)


async def test_probe_takes_a_handler_or_an_application(actorscope_probe: Prober) -> None:
    """Neither or both of handler and application is one clear ConfigError."""
    with pytest.raises(ConfigError, match="exactly one"):
        await actorscope_probe()
    with pytest.raises(ConfigError, match="Application already built"):
        await actorscope_probe(application="probe_ptb_bots:ALREADY_BUILT", search_dir=FIXTURES)
    with pytest.raises(ConfigError, match="building it failed: ZeroDivisionError"):
        await actorscope_probe(application=lambda builder: 1 / 0)
    with pytest.raises(ConfigError) as refused:  # a PTB handler: never called
        await actorscope_probe(application="probe_ptb_bots:note", search_dir=FIXTURES)
    assert str(refused.value).startswith(
        "application 'probe_ptb_bots:note' is an async function, not a function that builds a "
        "bot: the probe takes a function returning an aiogram Dispatcher; "
    )


async def test_probe_refuses_an_application_built_from_another_builder(
    actorscope_probe: Prober,
) -> None:
    """A build function that ignores the probe's builder (its bot would call Telegram) is out
    of reach: one error naming the builder, before any request leaves."""
    with pytest.raises(ProbeReachError, match="not built from the simulator's ApplicationBuilder"):
        await actorscope_probe(application="probe_ptb_bots:own_builder", search_dir=FIXTURES)


def test_cli_probes_a_ptb_application_by_module_function(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`actorscope probe module:function`: the PTB notes bot clean, the unchecked one exit 1
    with a pytest file per leak in --out."""
    monkeypatch.chdir(EXAMPLES)
    assert main(["probe", "ptb_notes_bot:build_application", "--command", "/note x"]) == 0
    assert "0 leak(s), 0 hung, 0 error(s), 0 skipped in" in capsys.readouterr().out
    monkeypatch.chdir(FIXTURES)
    out = tmp_path / "repro"
    assert main(["probe", "probe_ptb_bots:no_check", "--json", "--out", str(out)]) == 1
    report = json.loads(capsys.readouterr().out)
    assert "/note" in report["commands"]
    assert report["leaks"] > 0
    assert len(list(out.glob("test_probe_leak_*.py"))) == report["leaks"]
    assert main(["probe", "absent_bot_module:build"]) == 2
    assert "application module 'absent_bot_module' not found" in capsys.readouterr().err


def _probe_scenario(folder: Path, handler: str, probe: bool = True) -> Path:
    """A scenario serving ``handler`` whose one step a non-writer's /note is denied in."""
    path = folder / "probed.scenario.yaml"
    setup = (
        f"setup:\n  handler: {handler}\n"
        + ("  probe: true\n" if probe else "")
        + "  telegram:\n    users: {bob: 5}\n    chats: {devs: {type: supergroup, id: -1009}}\n"
    )
    steps = (
        "steps:\n  - telegram: {from: bob, chat: devs, text: /note probe}\n"
        "    expect: {decision: {allowed: false}}\n"
    )
    path.write_text(f"name: probed\n{setup}{steps}", "utf-8")
    return path


async def test_scenario_probe_true_holds_for_the_notes_bot(tmp_path: Path) -> None:
    """probe: true with the notes bot: the steps pass and the probe finds nothing."""
    folder = _bot_dir(tmp_path, "telegram_bot:handle")
    loaded = LoadedScenario.load(_probe_scenario(folder, "telegram_bot:handle"))
    await run_scenario(loaded, tmp_path / "s.db")


async def test_scenario_probe_true_fails_on_a_leak(tmp_path: Path) -> None:
    """probe: true fails a scenario whose steps pass when the probe finds a leak, naming it."""
    folder = _bot_dir(tmp_path, "probe_bots:allows_empty_sender")
    path = _probe_scenario(folder, "probe_bots:allows_empty_sender")
    with pytest.raises(ScenarioFailure, match=r"probed.scenario.yaml:4: setup.probe: 2 leak") as e:
        await run_scenario(LoadedScenario.load(path), tmp_path / "s.db")
    assert "message with no sender" in str(e.value)
    unprobed = _probe_scenario(folder, "probe_bots:allows_empty_sender", probe=False)
    await run_scenario(LoadedScenario.load(unprobed), tmp_path / "t.db")  # the steps alone pass


def test_scenario_probe_needs_a_handler(tmp_path: Path) -> None:
    """probe: true without setup.handler is one clear ScenarioError at its line."""
    path = tmp_path / "x.scenario.yaml"
    text = "name: x\nsetup:\n  probe: true\nsteps:\n  - telegram: {from: bob, text: hi}\n"
    path.write_text(text, "utf-8")
    with pytest.raises(ScenarioError, match=r"x.scenario.yaml:3: setup.probe: probe: true needs"):
        LoadedScenario.load(path)


@pytest.mark.parametrize("links", ["dm", "grants"])
def test_cli_probes_the_notes_bot_with_links_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], links: str
) -> None:
    """`actorscope probe bot.toml` with [identity] links on: the bot runs with its links mode
    (the pipeline answers /link) and the matrix is clean."""
    folder = _bot_dir(tmp_path, "telegram_bot:handle")
    config = folder / "bot.toml"
    config.write_text(config.read_text("utf-8") + f'\n[identity]\nlinks = "{links}"\n', "utf-8")
    seen: list[str] = []

    opened = AgentEnv.open

    def recording(cls: type[AgentEnv], *args: Any, **kwargs: Any) -> Any:
        seen.append(str(kwargs.get("links")))
        return opened(*args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(AgentEnv, "open", classmethod(recording))
        assert main(["probe", str(config)]) == 0
    assert seen == [links]
    assert "0 leak(s), 0 hung, 0 error(s), 0 skipped in" in capsys.readouterr().out


LINK_EVENTS = (
    "link code replayed by a third account (group)",
    "link code replayed by a third account (forum)",
    "link code sent in a group, then tried (group)",
    "link code sent in a group, then tried (forum)",
    "link codes guessed (group)",
    "link codes guessed (forum)",
    "the writer's other account after an unlink (group)",
    "the writer's other account after an unlink (forum)",
    "look-alike account of the writer (group)",
    "look-alike account of the writer (forum)",
    "link attempt by a non-person",
)


@pytest.mark.parametrize("links", ["dm", "grants"])
async def test_hostile_link_events_hold_on_the_notes_bot(links: str) -> None:
    """With links on, the probe also tries to get the member into the writer's person (a
    replayed code, a code sent in a group, guesses), a look-alike of the writer and a
    non-person into any person, and the writer's other account after an unlink: on the notes
    bot every one holds, and a note says what the link events leave out."""
    report = await probe("telegram_bot:handle", search_dir=EXAMPLES, commands=NOTE, links=links)
    for event in LINK_EVENTS:
        case = report.case(event, "/note probe")
        assert case.status is ProbeStatus.HELD, (event, case.problems)
    look_alike = report.case("look-alike account of the writer (group)", "/note probe")
    assert [d["reason"] for d in look_alike.decisions] == ["no_grant"]
    assert not report.failures
    assert any("link across platforms" in note for note in report.notes), report.notes


async def test_the_link_events_prove_the_writers_own_link_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The positive control: where a proven link is not made (every redeem refused), the
    probe stops with ProbeReachError instead of reporting the link events held."""

    async def refuses(
        self: LinkStore, code: str, identity: Identity, tenant_id: str, **_: Any
    ) -> LinkOutcome:
        return LinkOutcome(False, Reason.UNKNOWN_CODE, account=str(identity.account))

    monkeypatch.setattr(LinkStore, "redeem", refuses)
    with pytest.raises(ProbeReachError, match="could not link their own two accounts"):
        await probe("telegram_bot:handle", search_dir=EXAMPLES, commands=NOTE, links="dm")


async def test_a_redeem_that_merges_into_the_senders_person_is_a_leak(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A negative control for the look-alike: were an account of a person that sends another
    account's code to pull that account into its person, the look-alike (whose code the
    writer's second account was tricked into sending) joins the writer's person and gets the
    person's grant: a leak."""
    redeem = LinkStore.redeem

    async def merging(
        self: LinkStore, code: str, identity: Identity, tenant_id: str, **kwargs: Any
    ) -> LinkOutcome:
        issuer = await self.db.fetchone(
            "SELECT account FROM link_codes WHERE digest = ? AND used_at IS NULL",
            (hashlib.sha256(f"{tenant_id}:{code.replace('-', '')}".encode()).hexdigest(),),
        )
        outcome = await redeem(self, code, identity, tenant_id, **kwargs)
        if outcome.reason is not Reason.LINKED_ELSEWHERE or issuer is None:
            return outcome
        made = await self.add([issuer["account"], outcome.account], by="bug", tenant=tenant_id)
        return LinkOutcome(True, Reason.LINKED, account=outcome.account, person=made[0].person)

    monkeypatch.setattr(LinkStore, "redeem", merging)
    event = "look-alike account of the writer (group)"
    report = await probe(
        "telegram_bot:handle", search_dir=EXAMPLES, commands=NOTE, links="grants", events=[event]
    )
    case = report.case(event, "/note probe")
    assert case.status is ProbeStatus.LEAK, case.problems
    assert any(p.startswith("telegram:42420 was linked to person:") for p in case.problems)
    assert any(p.startswith("allowed file_writer for sender '42420'") for p in case.problems)


async def test_a_redeem_that_links_any_sender_is_a_leak(monkeypatch: pytest.MonkeyPatch) -> None:
    """A negative control for non-persons: a redeem that links whoever sent the code (no
    person, no direct chat checked) links the other bot that sent the writer's code into the
    writer's person, and the probe reports it as a leak."""

    async def unchecked(
        self: LinkStore, code: str, identity: Identity, tenant_id: str, **_: Any
    ) -> LinkOutcome:
        issuer = await self.db.fetchone(
            "SELECT account FROM link_codes WHERE digest = ? AND used_at IS NULL",
            (hashlib.sha256(f"{tenant_id}:{code.replace('-', '')}".encode()).hexdigest(),),
        )
        sender = f"telegram:{identity.sender_id or identity.chat_id}"
        if issuer is None:
            return LinkOutcome(False, Reason.UNKNOWN_CODE, account=sender)
        made = await self.add([issuer["account"], sender], by="bug", tenant=tenant_id)
        return LinkOutcome(True, Reason.LINKED, account=sender, person=made[0].person)

    monkeypatch.setattr(LinkStore, "redeem", unchecked)
    event = "link attempt by a non-person"
    report = await probe(
        "telegram_bot:handle", search_dir=EXAMPLES, commands=NOTE, links="grants", events=[event]
    )
    case = report.case(event, "/note probe")
    assert case.status is ProbeStatus.LEAK, case.problems
    assert case.problems[0].startswith("telegram:7171 was linked to person:")
    assert case.problems[0].endswith(", the writer's person")


async def test_a_non_person_dropped_before_actorscope_is_not_tested(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Where the app drops the other bot's messages before actorscope sees them, the link
    store is never reached: the non-person case says so (not tested, with a note), never
    held; on the notes bot (no such drop) the same case holds, the code burnt."""
    event = "link attempt by a non-person"
    held = await probe(
        "telegram_bot:handle", search_dir=EXAMPLES, commands=NOTE, links="grants", events=[event]
    )
    assert held.case(event, "/note probe").status is ProbeStatus.HELD
    process = Pipeline.process

    async def drops_bots(self: Pipeline, ingress: Ingress, **kwargs: Any) -> Ingress:
        message = ingress.message
        if message is not None and message.sender_kind is SenderKind.BOT:
            return Ingress(None, IgnoreReason.BOT_SENDER)  # what an app's own filter does
        return await process(self, ingress, **kwargs)

    monkeypatch.setattr(Pipeline, "process", drops_bots)
    report = await probe(
        "telegram_bot:handle", search_dir=EXAMPLES, commands=NOTE, links="grants", events=[event]
    )
    case = report.case(event, "/note probe")
    assert case.status is ProbeStatus.NOT_TESTED, case.problems
    assert "the link store was not reached" in case.problems[0]
    assert any("the link store was not reached" in note for note in report.notes)
    assert not report.failures


async def test_a_careless_redeem_is_a_leak(monkeypatch: pytest.MonkeyPatch) -> None:
    """A negative control: were a used code still to link, the replayed code would put the
    member in the writer's person, and the probe reports it as a leak."""

    async def careless(
        self: LinkStore, code: str, identity: Identity, tenant_id: str, **_: Any
    ) -> LinkOutcome:
        account = identity.account
        assert account is not None
        made = await self.add([str(account), "telegram:4242"], by="bug", tenant=tenant_id)
        return LinkOutcome(True, Reason.LINKED, account=str(account), person=made[0].person)

    monkeypatch.setattr(LinkStore, "redeem", careless)
    report = await probe(
        "telegram_bot:handle",
        search_dir=EXAMPLES,
        commands=NOTE,
        links="grants",
        events=["link code replayed by a third account (group)"],
    )
    case = report.case("link code replayed by a third account (group)", "/note probe")
    assert case.status is ProbeStatus.LEAK, case.problems

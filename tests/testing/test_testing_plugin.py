"""The pytest plugin, run with pytester: fixtures, scenario collection, and failure messages."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from actorscope.testing.plugin import KIT_FIXTURES

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "scenarios"
TESTING_GUIDE = ROOT / "docs" / "guides" / "testing.md"
INI = """\
[pytest]
asyncio_mode = auto
asyncio_default_fixture_loop_scope = function
"""

FIXTURE_TEST = '''
from actorscope.context import current_identity


async def test_all_fixtures(actorscope_db, actorscope_agent, actorscope_grants, actorscope_bind,
                            telegram_sim, discord_sim):
    """Every fixture of the plugin is available and wired to the same agent."""
    row = await actorscope_db.fetchone("SELECT agent_key FROM agents WHERE id = ?",
                                       (actorscope_agent.id,))
    assert row["agent_key"] == "main"
    await actorscope_grants.allow("group:telegram:-100123", "4242")
    assert [g.sender_id for g in await actorscope_grants.list()] == ["4242"]
    with actorscope_bind(sender="4242", scope="group:telegram:-100123") as identity:
        assert current_identity() == identity
    assert telegram_sim.env.agent.id == discord_sim.env.agent.id == actorscope_agent.id
'''

FAILING_SIM_TEST = '''\
async def test_denied_member(telegram_sim):
    """A wrong expectation: bob has no grant."""
    bob = telegram_sim.user("bob")
    devs = telegram_sim.supergroup("devs")

    @telegram_sim.handler
    async def bot(turn):
        await turn.check("file_writer")

    await telegram_sim.message(bob, "hello", devs)
    telegram_sim.should_allow("file_writer", reason="granted")
    await telegram_sim.message(bob, "write", devs)


async def test_unused_expectation(telegram_sim):
    """Declared, but no event follows."""
    telegram_sim.should_send(text="hello")
'''

SYNC_TEST = '''\
def test_sync_test_uses_the_fixtures(actorscope_grants, actorscope_bind, actorscope_agent):
    """A plain (sync) test may request the kit's fixtures."""
    assert actorscope_grants is not None and actorscope_bind is not None
    assert actorscope_agent.key == "main"
'''


def _line_of(source: str, needle: str) -> int:
    """The 1-based line of ``source`` that contains ``needle`` (exactly one does)."""
    lines = [number for number, line in enumerate(source.splitlines(), 1) if needle in line]
    assert len(lines) == 1, (needle, lines)
    return lines[0]


#: What marks a python block of the testing guide as a whole test module pytest runs.
TEST_MODULE = (
    "<!-- fragment: a test module; pytest runs it (tests/testing/test_testing_plugin.py) -->"
)


def _guide_test_modules() -> list[str]:
    """The testing guide's python blocks that are whole test modules, verbatim, in order."""
    text = TESTING_GUIDE.read_text(encoding="utf-8")
    return re.findall(re.escape(TEST_MODULE) + r"\n```python\n(.*?)```", text, re.DOTALL)


def _guide_testing_example() -> str:
    """The python example of the testing guide's first section, verbatim."""
    text = TESTING_GUIDE.read_text(encoding="utf-8")
    section = text[text.index("## Testing group permissions") :]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match is not None, "the testing guide's first section has no python example"
    assert match.group(1) in _guide_test_modules()
    return match.group(1)


GOOD_SCENARIO = """\
name: a writer and a non-writer
setup:
  telegram:
    users: {alice: 4242, bob: 5151}
    chats: {devs: {type: supergroup, id: -1001234567890}}
  grants: [{chat: devs, sender: alice}]
steps:
  - telegram: {from: alice, chat: devs, text: write}
    action: file_writer
    reply: ok
    expect:
      decision: {allowed: true, reason: granted}
      replies: [{text: ok, chat: devs}]
  - telegram: {from: bob, chat: devs, text: write}
    action: file_writer
    expect: {decision: {allowed: false, reason: no_grant}}
"""


@pytest.fixture
def inner(pytester: pytest.Pytester) -> pytest.Pytester:
    """A pytester directory configured like a user's project (asyncio auto mode)."""
    pytester.makeini(INI)
    return pytester


def test_guide_example_passes_in_a_fresh_project(pytester: pytest.Pytester) -> None:
    """The testing guide's example (docs/guides/testing.md), alone in a project with no pytest
    configuration, passes with warnings as errors (no asyncio_mode, no loop-scope warning)."""
    pytester.makepyfile(test_guide=_guide_testing_example())
    assert sorted(path.name for path in pytester.path.iterdir()) == ["test_guide.py"]
    result = pytester.runpytest_subprocess("-W", "error", "-p", "no:cacheprovider", timeout=120)
    result.assert_outcomes(passed=1)
    assert "configfile:" not in result.stdout.str()
    assert "Warning" not in result.stdout.str() + result.stderr.str()


@pytest.mark.parametrize("number", range(len(_guide_test_modules())))
def test_every_test_module_of_the_guide_passes(pytester: pytest.Pytester, number: int) -> None:
    """Each test module the testing guide shows passes as is, with warnings as errors."""
    assert len(_guide_test_modules()) >= 2  # the first section's and the clicks'
    source = _guide_test_modules()[number]
    pytester.makepyfile(test_guide=source)
    result = pytester.runpytest_subprocess("-W", "error", "-p", "no:cacheprovider", timeout=120)
    result.assert_outcomes(passed=len(re.findall(r"^(?:async )?def test_", source, re.MULTILINE)))


def test_fixtures_and_items_work_without_configuration(pytester: pytest.Pytester) -> None:
    """With no configuration and warnings as errors, every fixture works in async and sync
    tests, and scenario files run."""
    pytester.makepyfile(test_fixtures=FIXTURE_TEST, test_sync=SYNC_TEST)
    pytester.makefile(".scenario.yaml", writer=GOOD_SCENARIO)
    result = pytester.runpytest_subprocess("-W", "error", "-p", "no:cacheprovider", timeout=120)
    result.assert_outcomes(passed=3)
    assert "configfile:" not in result.stdout.str()
    assert "Warning" not in result.stdout.str() + result.stderr.str()


def test_every_kit_fixture_is_prefixed_but_the_simulators(pytester: pytest.Pytester) -> None:
    """`pytest --fixtures` lists only actorscope_* names (and the two sims) from the plugin."""
    result = pytester.runpytest("--fixtures", "-p", "no:cacheprovider")
    assert result.ret == 0
    section = re.split(
        r"-+ fixtures defined from actorscope\.testing\.\S+ -+\n", result.stdout.str()
    )
    assert len(section) == 2, result.stdout.str()
    listed = set(re.findall(r"^(\w+)(?: \[[^]]*\])? -- ", section[1].split("\n---")[0], re.M))
    assert listed == KIT_FIXTURES
    assert {name for name in listed if not name.startswith("actorscope_")} == {
        "discord_sim",
        "telegram_sim",
    }


def test_without_pytest_asyncio_pytest_starts_and_the_kit_stays_out(
    pytester: pytest.Pytester,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """pytest + actorscope without the testing extra: the run starts, the kit loads nothing."""
    shadow = tmp_path_factory.mktemp("no-pytest-asyncio")
    (shadow / "pytest_asyncio").mkdir()
    (shadow / "pytest_asyncio" / "__init__.py").write_text(
        'raise ModuleNotFoundError("No module named \'pytest_asyncio\'", name="pytest_asyncio")\n'
    )
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(filter(None, [str(shadow), os.environ.get("PYTHONPATH")]))
    )
    pytester.makepyfile(
        test_plain='''
def test_plain():
    """A test of a project that uses no kit fixture."""


def test_kit(actorscope_db):
    """The kit's fixtures are not there without the extra."""
'''
    )
    # -p no:asyncio: pytest-asyncio's own entry point would fail to load under the shadow.
    result = pytester.runpytest_subprocess("-p", "no:asyncio", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*fixture 'actorscope_db' not found*"])


def test_project_setting_of_the_fixture_loop_scope_wins(pytester: pytest.Pytester) -> None:
    """The kit only defaults asyncio_default_fixture_loop_scope; a project's value is kept."""
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = module\n")
    pytester.makepyfile(
        test_scope='''
def test_scope(pytestconfig):
    """The project's value is what pytest-asyncio reads."""
    assert pytestconfig.getini("asyncio_default_fixture_loop_scope") == "module"
'''
    )
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_failed_expectation_names_the_step_and_the_users_line(pytester: pytest.Pytester) -> None:
    """A wrong should_allow fails with the step, the declaring line and the field diff; the
    traceback ends at the test's own line, with none of the kit's frames."""
    pytester.makepyfile(test_sim=FAILING_SIM_TEST)
    result = pytester.runpytest("-p", "no:cacheprovider", "-k", "denied")
    result.assert_outcomes(failed=1)
    declared = _line_of(FAILING_SIM_TEST, "should_allow(")
    event = _line_of(FAILING_SIM_TEST, '"write", devs)')
    result.stdout.fnmatch_lines(
        [
            '>       await telegram_sim.message(bob, "write", devs)',
            "E       *ExpectationError: expectations not met for "
            "step 2 (telegram message by @bob in devs):",
            "E       ! #1 expected should_allow(action='file_writer', reason='granted')"
            f" (declared at test_sim.py:{declared})",
            "*allowed: expected 'true', got 'false'",
            "*reason: expected 'granted', got 'no_grant'",
            "",
            f"test_sim.py:{event}: ExpectationError",
        ]
    )
    output = result.stdout.str()
    for internal in ("telegram_sim.py", "harness.py", "expect.py", "def message("):
        assert internal not in output


SERVE_TYPO_TEST = '''\
async def test_typo(telegram_sim):
    """A misspelt handler."""
    telegram_sim.serve("telegram_bot:handel")
'''


def test_a_misspelt_handler_fails_at_the_tests_line(pytester: pytest.Pytester) -> None:
    """`telegram_sim.serve("telegram_bot:handel")`: the ConfigError names the handler and what
    is missing, and its traceback ends at the test's own line, with none of the kit's frames
    (the loader's, the harness')."""
    shutil.copy(ROOT / "examples" / "telegram_bot.py", pytester.path)
    pytester.makepyfile(test_serve=SERVE_TYPO_TEST)
    result = pytester.runpytest_subprocess("-W", "error", "-p", "no:cacheprovider", timeout=120)
    result.assert_outcomes(failed=1)
    line = _line_of(SERVE_TYPO_TEST, "serve(")
    result.stdout.fnmatch_lines(
        [
            '>       telegram_sim.serve("telegram_bot:handel")',
            "E       actorscope.errors.ConfigError: handler 'telegram_bot:handel': module "
            "telegram_bot has no 'handel' (it has 'handle')",
            "",
            f"test_serve.py:{line}: ConfigError",
        ]
    )
    output = result.stdout.str()
    for internal in ("_config.py", "harness.py", "def serve(", "def load_object("):
        assert internal not in output


def test_unused_expectation_names_its_declaring_line(pytester: pytest.Pytester) -> None:
    """An expectation no event met errors at teardown with the line that declared it, and
    only that message (no traceback through the plugin)."""
    pytester.makepyfile(test_sim=FAILING_SIM_TEST)
    result = pytester.runpytest("-p", "no:cacheprovider", "-k", "unused")
    result.assert_outcomes(passed=1, errors=1)
    declared = _line_of(FAILING_SIM_TEST, 'should_send(text="hello")')
    result.stdout.fnmatch_lines(
        [
            "*ERROR at teardown of test_unused_expectation*",
            "expectations declared but no event followed:",
            f"  should_send(text='hello') (declared at test_sim.py:{declared})",
        ]
    )
    assert "plugin.py" not in result.stdout.str()


def test_scenario_files_pass_or_fail_with_file_line_and_diff(inner: pytest.Pytester) -> None:
    """Each *.scenario.yaml is one item: a correct one passes; a wrong decision or reply, or a
    turn that never ran, fails with file:line of the step and what differs, no traceback."""
    inner.makefile(".scenario.yaml", writer=GOOD_SCENARIO)
    inner.makefile(
        ".scenario.yaml", wrong=GOOD_SCENARIO.replace("reason: no_grant", "reason: granted")
    )
    inner.makefile(
        ".scenario.yaml", reply=GOOD_SCENARIO.replace("[{text: ok, chat: devs}]", "[{text: OK}]")
    )
    inner.makefile(
        ".scenario.yaml",
        gated=GOOD_SCENARIO.replace("setup:\n", "setup:\n  require_mention: true\n"),
    )
    result = inner.runpytest("-p", "no:cacheprovider", "-v")
    result.assert_outcomes(passed=1, failed=3)
    result.stdout.fnmatch_lines(
        ["*gated.scenario.yaml:9: step 1 (*): was ignored (not_mentioned), so the bot never acted"]
    )
    result.stdout.fnmatch_lines(["*writer.scenario.yaml::writer PASSED*"])
    result.stdout.fnmatch_lines(
        [
            "*reply.scenario.yaml:8: step 1 (telegram message by @alice in devs): replies differ:",
            "*text: expected 'OK', got 'ok'",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*wrong.scenario.yaml:14: step 2 (telegram message by @bob in devs): decision differs:",
            "*! #1 expected should_deny(reason='granted')",
            "*reason: expected 'granted', got 'no_grant'",
        ]
    )
    assert "Traceback" not in result.stdout.str()


MALFORMED = {
    "unknown_key": (
        GOOD_SCENARIO.replace("    action: file_writer\n    reply", "    acton: x\n    reply"),
        "*unknown_key.scenario.yaml:9: steps?0?.acton: unknown key",
    ),
    "unknown_user": (
        GOOD_SCENARIO.replace("{from: bob, chat: devs", "{from: carol, chat: devs"),
        "*unknown_user.scenario.yaml:14: from: unknown name 'carol'",
    ),
    "unknown_chat": (
        GOOD_SCENARIO.replace("[{chat: devs, sender: alice}]", "[{chat: ops, sender: alice}]"),
        "*unknown_chat.scenario.yaml:6: setup.grants.0.chat: unknown Telegram chat 'ops'",
    ),
    "bad_yaml": (
        GOOD_SCENARIO.replace("text: write}\n    action", "text: write\n    action", 1),
        "*bad_yaml.scenario.yaml:9: not valid YAML:*",
    ),
}


def test_malformed_scenarios_fail_with_file_line(inner: pytest.Pytester) -> None:
    """A malformed scenario fails as a test, with file:line and what is wrong, no traceback."""
    for name, (text, _) in MALFORMED.items():
        inner.makefile(".scenario.yaml", **{name: text})
    result = inner.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=len(MALFORMED))
    for _, line in MALFORMED.values():
        result.stdout.fnmatch_lines([line])
    assert "Traceback" not in result.stdout.str()


def test_example_scenarios_pass(inner: pytest.Pytester) -> None:
    """Every scenario in examples/scenarios passes (the identity table, the sub-agent write,
    the notes bot run by its own handler, copied beside it as in a bot's project)."""
    files = sorted(EXAMPLES.glob("*.scenario.yaml"))
    names = {path.name for path in files}
    assert {
        "subagent_write.scenario.yaml",
        "telegram_identity.scenario.yaml",
        "notes_bot.scenario.yaml",
    } <= names
    for path in files:
        shutil.copy(path, inner.path / path.name)
    shutil.copy(EXAMPLES.parent / "telegram_bot.py", inner.path / "telegram_bot.py")
    result = inner.runpytest("-p", "no:cacheprovider", "-v")
    result.assert_outcomes(passed=len(files))


def _guide_fragment(marker: str) -> str:
    """The python block of the testing guide that follows the fragment comment ``marker``."""
    text = TESTING_GUIDE.read_text(encoding="utf-8")
    section = text[text.index(marker) :]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match is not None, f"no python block after {marker!r}"
    return match.group(1)


@pytest.mark.parametrize(
    ("example", "marker"),
    [
        ("ptb_notes_bot.py", "beside examples/ptb_notes_bot.py"),
        ("aiogram_notes_bot.py", "beside examples/aiogram_notes_bot.py"),
        ("dpy_notes_bot.py", "beside examples/dpy_notes_bot.py"),
    ],
)
def test_the_guides_bot_tests_pass_and_write_no_bot_file(
    pytester: pytest.Pytester, example: str, marker: str
) -> None:
    """The guide's two-line test of a real bot (PTB, aiogram, discord.py), beside the example in a
    project with no pytest configuration, passes on the test's grant and creates no notes.db."""
    pytester.makepyfile(test_bot=_guide_fragment(marker))
    shutil.copy(ROOT / "examples" / example, pytester.path / example)
    result = pytester.runpytest_subprocess("-W", "error", "-p", "no:cacheprovider", timeout=120)
    result.assert_outcomes(passed=1)
    assert not (pytester.path / "notes.db").exists()
    assert sorted(p.name for p in pytester.path.iterdir() if p.suffix == ".db") == []


OWN_ASYNC_FIXTURES = '''\
import pytest


@pytest.fixture
async def devs(telegram_sim, actorscope_grants):
    """The project's own async fixture: a group where alice writes."""
    chat = telegram_sim.supergroup("devs")
    await actorscope_grants.allow(f"group:telegram:{chat.id}", telegram_sim.user("alice"))
    return chat


@pytest.fixture
async def bot(telegram_sim):
    """An async generator fixture: the bot answers, and is told when the test is over."""

    @telegram_sim.handler
    async def answer(turn):
        decision = await turn.check("file_writer")
        await turn.reply("ok" if decision.allowed else "no")

    yield answer
    await telegram_sim.env.db.settle_audit()


async def test_writer(telegram_sim, devs, bot):
    telegram_sim.should_allow("file_writer", reason="granted")
    telegram_sim.should_send(text="ok", chat=devs)
    await telegram_sim.message("alice", "write", devs)


async def test_member(telegram_sim, devs, bot):
    telegram_sim.should_deny("file_writer", reason="no_grant")
    telegram_sim.should_send(text="no", chat=devs)
    await telegram_sim.message(telegram_sim.user("bob"), "write", devs)
'''


def test_a_projects_own_async_fixtures_work_without_configuration(
    pytester: pytest.Pytester,
) -> None:
    """In a project with no pytest configuration (pytest-asyncio's strict mode), the
    project's own ``async def`` fixtures (coroutine and generator) that kit tests request run
    on the test's loop; warnings as errors stay quiet."""
    pytester.makepyfile(test_own=OWN_ASYNC_FIXTURES)
    result = pytester.runpytest_subprocess("-W", "error", "-p", "no:cacheprovider", timeout=120)
    result.assert_outcomes(passed=2)
    assert "configfile:" not in result.stdout.str()


WIDE_FIXTURE = """\
import pytest

made = []


@pytest.fixture(scope="{scope}")
async def wide():
    made.append(1)
    yield len(made)


async def test_one(telegram_sim, wide):
    assert wide == 1


async def test_two(telegram_sim, wide):
    assert wide == 1
"""


@pytest.mark.parametrize("scope", ["module", "session"])
def test_a_wider_async_fixture_stops_the_run_once_with_advice_that_works(
    pytester: pytest.Pytester, scope: str
) -> None:
    """A module- or session-scoped async ``@pytest.fixture`` cannot share the tests' loops:
    the run stops once, with one line naming the fixture and the decorator to use, not an
    error per test; written as it says, the fixture runs once and both tests pass."""
    source = WIDE_FIXTURE.format(scope=scope)
    pytester.makepyfile(test_wide=source)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=120)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    output = result.stdout.str() + result.stderr.str()
    assert f"fixture 'wide' is an async @pytest.fixture with scope='{scope}'" in output
    assert "AssertionError" not in output
    assert "asyncio_mode" not in output
    advice = re.search(r"decorate it with (@pytest_asyncio\.fixture\(.*?\))", output)
    assert advice is not None, output
    assert advice[1] == f"@pytest_asyncio.fixture(scope='{scope}', loop_scope='{scope}')"
    followed = "import pytest_asyncio\n" + source.replace(
        f'@pytest.fixture(scope="{scope}")', advice[1]
    )
    assert followed.count("@pytest_asyncio.fixture(") == 1
    pytester.makepyfile(test_wide=followed)
    result = pytester.runpytest_subprocess("-W", "error", "-p", "no:cacheprovider", timeout=120)
    result.assert_outcomes(passed=2)

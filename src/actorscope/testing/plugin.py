"""The actorscope pytest plugin (``pytest11`` entry point ``actorscope``).

Fixtures, each on a fresh temporary database:

* ``actorscope_env`` - the :class:`~actorscope.testing.AgentEnv` the others share;
* ``actorscope_db`` - the migrated :class:`~actorscope.store.Database` (default tenant, agent
  ``main``); ``actorscope_agent`` - that agent;
* ``actorscope_grants`` - :class:`~actorscope.testing.Grants` bound to the agent;
* ``actorscope_bind`` - run code as an identity:
  ``with actorscope_bind(sender=alice, scope=GROUP): ...``;
* ``telegram_sim`` / ``discord_sim`` - the simulators, started and stopped around the test;
  expectations declared but never used by an event fail at teardown, naming the line
  that declared them;
* ``actorscope_probe`` - :func:`~actorscope.testing.probe`, as ``actorscope probe``
  runs it: ``report = await actorscope_probe("bot:handle", commands=["/note x"])`` and
  ``assert not report.leaks`` (it makes its own throwaway database and workspace).

Every fixture name is prefixed ``actorscope_`` (the simulators excepted): the plugin loads in
every pytest run of an environment with the kit, so it takes no generic name from a project.

It also collects ``*.scenario.yaml`` files as tests.

It works in a project with no pytest configuration: an ``async def`` test that requests one of
these fixtures runs on pytest-asyncio's loop without ``asyncio_mode = auto`` (the kit marks it
``asyncio``), the project's own function-scoped ``async def`` fixtures that such a test
requests run there too (as if decorated ``@pytest_asyncio.fixture``; a wider-scoped one is
declared ``@pytest_asyncio.fixture(scope=..., loop_scope=...)``), and pytest-asyncio's
``asyncio_default_fixture_loop_scope`` defaults to ``function`` (a project's own setting wins).
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Generator
from pathlib import Path

import pytest
import pytest_asyncio

from actorscope.agents import Agent
from actorscope.store import Database
from actorscope.testing._discord_sim import DiscordSim
from actorscope.testing._grants import Binder, Grants
from actorscope.testing._harness import AgentEnv, Simulator
from actorscope.testing._probe import Prober
from actorscope.testing._probe_run import probe
from actorscope.testing._telegram_sim import TelegramSim
from actorscope.testing.scenario._items import ScenarioFile, is_scenario_file

__all__ = [
    "actorscope_agent",
    "actorscope_bind",
    "actorscope_db",
    "actorscope_env",
    "actorscope_grants",
    "actorscope_probe",
    "discord_sim",
    "telegram_sim",
]

#: The fixtures this plugin provides: an ``async def`` test requesting one runs on asyncio.
KIT_FIXTURES = frozenset(
    (
        "actorscope_env",
        "actorscope_db",
        "actorscope_agent",
        "actorscope_grants",
        "actorscope_bind",
        "telegram_sim",
        "discord_sim",
        "actorscope_probe",
    )
)
#: What pytest-asyncio will default the loop scope of async fixtures to (pytest-asyncio#924).
_FIXTURE_LOOP_SCOPE = "function"


def pytest_load_initial_conftests(
    early_config: pytest.Config, parser: pytest.Parser, args: list[str]
) -> None:
    """Default pytest-asyncio's ``asyncio_default_fixture_loop_scope`` to ``function``.

    Left unset, pytest-asyncio warns (``PytestDeprecationWarning``) in every project that
    installs the kit, an error under ``-W error``. The kit's async fixtures are all
    function-scoped, and ``function`` is the default pytest-asyncio announces, so the kit
    registers the option again with that default; a value in the project's configuration or
    ``-o`` still wins. This runs after every plugin's ``pytest_addoption`` and before any
    ``pytest_configure``, whatever order the plugins were loaded in.
    """
    parser.addini(
        "asyncio_default_fixture_loop_scope",
        help="default scope of the asyncio event loop used to execute async fixtures",
        type="string",
        default=_FIXTURE_LOOP_SCOPE,
    )


@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_pycollect_makeitem(
    collector: pytest.Module | pytest.Class, name: str, obj: object
) -> Generator[None, object, object]:
    """Mark ``async def`` tests that use the kit's fixtures ``asyncio`` (strict mode runs only
    marked ones). Innermost wrapper: pytest-asyncio turns marked items into its own next."""
    result = yield
    items = result if isinstance(result, list) else [result]
    for item in items:
        if (
            isinstance(item, pytest.Function)
            and inspect.iscoroutinefunction(item.obj)
            and KIT_FIXTURES.intersection(item.fixturenames)
            and item.get_closest_marker("asyncio") is None
        ):
            item.add_marker(pytest.mark.asyncio)
    return result


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_fixture_setup(
    fixturedef: pytest.FixtureDef[object], request: pytest.FixtureRequest
) -> Generator[None, object, object]:
    """Run a project's own function-scoped ``async def`` ``@pytest.fixture`` on
    pytest-asyncio's loop when a test the kit runs on asyncio requests it, in strict mode (a
    project with no pytest configuration): as if it were decorated ``@pytest_asyncio.fixture``.

    Outermost wrapper: pytest-asyncio's own setup, next, then takes it as an asyncio fixture.
    (A wider-scoped one is left to :func:`pytest_fixture_setup_wider_scope`.)
    """
    func = fixturedef.func
    if (
        fixturedef.scope == "function"
        and (inspect.iscoroutinefunction(func) or inspect.isasyncgenfunction(func))
        and _a_kit_test_in_strict_mode(request)
        and request.node.get_closest_marker("asyncio") is not None  # a sync test: pytest says
    ):
        # pytest-asyncio's own decorator marks the function as one of its fixtures (what
        # writing @pytest_asyncio.fixture does); the definition it returns is not needed.
        pytest_asyncio.fixture(func)
    return (yield)


@pytest.hookimpl(specname="pytest_fixture_setup", wrapper=True, trylast=True)
def pytest_fixture_setup_wider_scope(
    fixturedef: pytest.FixtureDef[object], request: pytest.FixtureRequest
) -> Generator[None, object, object]:
    """``pytest_fixture_setup``, innermost wrapper: stop the run once, with one line saying
    what to write, when a kit test requests an ``async def`` fixture scoped wider than the
    test that no plugin took (a plain ``@pytest.fixture`` in strict mode), instead of an error
    per test. It cannot share the test's loop; pytest-asyncio runs the ones it takes (written
    ``@pytest_asyncio.fixture``) through a plain function it puts in their place around the
    inner wrappers, so a definition still ``async`` here is not one of its."""
    func = fixturedef.func
    if (
        fixturedef.scope != "function"
        and (inspect.iscoroutinefunction(func) or inspect.isasyncgenfunction(func))
        and _a_kit_test_in_strict_mode(request)
    ):
        scope = fixturedef.scope
        pytest.exit(
            f"fixture {fixturedef.argname!r} is an async @pytest.fixture with "
            f"scope={scope!r}, which cannot run on the tests' event loop: decorate it with "
            f"@pytest_asyncio.fixture(scope={scope!r}, loop_scope={scope!r})",
            returncode=pytest.ExitCode.USAGE_ERROR,
        )
    return (yield)


def _a_kit_test_in_strict_mode(request: pytest.FixtureRequest) -> bool:
    """pytest-asyncio runs in strict mode and the requesting test uses the kit's fixtures (the
    test's fixtures, also when a wider-scoped fixture asks)."""
    return _asyncio_mode(request.config) == "strict" and bool(
        KIT_FIXTURES.intersection(request.fixturenames)
    )


def _asyncio_mode(config: pytest.Config) -> str:
    """pytest-asyncio's mode: its command-line option, else its ini setting."""
    mode = config.getoption("asyncio_mode", None)
    return str(mode if mode is not None else config.getini("asyncio_mode"))


def pytest_collect_file(parent: pytest.Collector, file_path: Path) -> pytest.Collector | None:
    """Collect ``*.scenario.yaml`` files."""
    if is_scenario_file(file_path):
        return ScenarioFile.from_parent(parent, path=file_path)
    return None


@pytest_asyncio.fixture
async def actorscope_env(tmp_path: Path) -> AsyncIterator[AgentEnv]:
    """A migrated temporary database with agent ``main``, its grants, policy and signer."""
    async with AgentEnv.open(tmp_path / "actorscope.db") as env:
        yield env


@pytest.fixture
def actorscope_db(actorscope_env: AgentEnv) -> Database:
    """The test's database (default tenant, agent ``main``)."""
    return actorscope_env.db


@pytest.fixture
def actorscope_agent(actorscope_env: AgentEnv) -> Agent:
    """The agent ``main`` the simulated bot runs as."""
    return actorscope_env.agent


@pytest.fixture
def actorscope_grants(actorscope_env: AgentEnv) -> Grants:
    """Grant / deny / revoke helpers bound to agent ``main``."""
    return Grants(actorscope_env.store, actorscope_env.agent)


@pytest.fixture
def actorscope_bind(actorscope_env: AgentEnv) -> Binder:
    """``with actorscope_bind(sender=..., scope=..., role=...):`` runs the block as that
    identity."""
    return Binder(actorscope_env.agent)


@pytest_asyncio.fixture
async def telegram_sim(actorscope_env: AgentEnv) -> AsyncIterator[TelegramSim]:
    """A Telegram world with a PTB bot for agent ``main`` (mention not required)."""
    async with TelegramSim(actorscope_env) as sim:
        yield sim
        _fail_if_unused(sim)


@pytest_asyncio.fixture
async def discord_sim(actorscope_env: AgentEnv) -> AsyncIterator[DiscordSim]:
    """A Discord world replayed through discord.py for agent ``main`` (mention not required)."""
    async with DiscordSim(actorscope_env) as sim:
        yield sim
        _fail_if_unused(sim)


@pytest.fixture
def actorscope_probe() -> Prober:
    """``await actorscope_probe(handler, commands=[...])``: the probe's :class:`ProbeReport`."""
    return probe


def _fail_if_unused(sim: Simulator) -> None:
    """Fail the test, with only the message, when an expectation was declared and not met."""
    __tracebackhide__ = True
    problem = sim.expect.pop_unused()
    if problem:
        pytest.fail(problem, pytrace=False)

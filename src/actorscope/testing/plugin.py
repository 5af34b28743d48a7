"""The actorscope pytest plugin (``pytest11`` entry point ``actorscope``).

Fixtures, each on a fresh temporary database:

* ``actorscope_env`` - the :class:`~actorscope.testing.harness.AgentEnv` the others share;
* ``actorscope_db`` - the migrated :class:`~actorscope.store.Database` (default tenant, agent
  ``main``); ``actorscope_agent`` - that agent;
* ``grants`` - :class:`~actorscope.testing.grants.Grants` bound to the agent;
* ``bind`` - run code as an identity: ``with bind(sender=alice, scope=GROUP): ...``;
* ``telegram_sim`` / ``discord_sim`` - the simulators, started and stopped around the test;
  expectations declared but never used by an event fail at teardown.

It also collects ``*.scenario.yaml`` files as tests.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from actorscope.agents import Agent
from actorscope.store import Database
from actorscope.testing.discord_sim import DiscordSim
from actorscope.testing.grants import Binder, Grants, open_env
from actorscope.testing.harness import AgentEnv
from actorscope.testing.scenario.items import ScenarioFile, is_scenario_file
from actorscope.testing.telegram_sim import TelegramSim

__all__ = [
    "actorscope_agent",
    "actorscope_db",
    "actorscope_env",
    "bind",
    "discord_sim",
    "grants",
    "pytest_collect_file",
    "telegram_sim",
]


def pytest_collect_file(parent: pytest.Collector, file_path: Path) -> pytest.Collector | None:
    """Collect ``*.scenario.yaml`` files."""
    if is_scenario_file(file_path):
        return ScenarioFile.from_parent(parent, path=file_path)
    return None


@pytest_asyncio.fixture
async def actorscope_env(tmp_path: Path) -> AsyncIterator[AgentEnv]:
    """A migrated temporary database with agent ``main``, its grants, policy and signer."""
    async with open_env(tmp_path / "actorscope.db") as env:
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
def grants(actorscope_env: AgentEnv) -> Grants:
    """Grant / deny / revoke helpers bound to agent ``main``."""
    return Grants(actorscope_env.store, actorscope_env.agent)


@pytest.fixture
def bind(actorscope_env: AgentEnv) -> Binder:
    """``with bind(sender=..., scope=..., role=...):`` runs the block as that identity."""
    return Binder(actorscope_env.agent)


@pytest_asyncio.fixture
async def telegram_sim(actorscope_env: AgentEnv) -> AsyncIterator[TelegramSim]:
    """A Telegram world with a PTB bot for agent ``main`` (mention not required)."""
    async with TelegramSim(actorscope_env) as sim:
        yield sim
        sim.expect.verify_done()


@pytest_asyncio.fixture
async def discord_sim(actorscope_env: AgentEnv) -> AsyncIterator[DiscordSim]:
    """A Discord world replayed through discord.py for agent ``main`` (mention not required)."""
    async with DiscordSim(actorscope_env) as sim:
        yield sim
        sim.expect.verify_done()

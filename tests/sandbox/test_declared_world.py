"""A Discord world declared in the scenario vocabulary (``setup.discord``) for the emulator."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests._wiring import channel_pipeline
from tests.sandbox.conftest import BOUND

from actorscope.agents import AgentRegistry
from actorscope.channels._config import ChannelConfig
from actorscope.channels.discord._runner import DiscordRunner, silence_voice_warnings
from actorscope.errors import ConfigError
from actorscope.host import MessageBus
from actorscope.sandbox import DiscordEmulator, DiscordWorld, discord_pointed_at
from actorscope.sandbox._world import Permission as DiscordPermission
from actorscope.store import Database

SCENARIO = Path(__file__).resolve().parents[2] / "examples/scenarios/discord_identity.scenario.yaml"
ROLES = {
    "users": {"alice": None, "dave": 9002},
    "bots": {"deploy-bot": None},
    "guilds": {
        "lab": {
            "owner": "alice",
            "channels": {"general": None},
            "threads": {"design": {"parent": "general"}},
            "roles": {"managers": ["manage_guild", "manage_roles"]},
            "members": {"dave": ["managers"]},
            "webhooks": {"ci": "general"},
        }
    },
}


def test_roles_members_threads_and_webhooks_are_declared() -> None:
    """dave holds the declared Manage Server role; all are members; the thread and hook exist."""
    world = DiscordWorld.declared(ROLES)
    lab = world.guild("lab")
    dave, bot = world.user("dave"), world.user("deploy-bot")
    assert dave.id == 9002
    assert bot.bot
    assert lab.base_permissions(dave.id) & DiscordPermission.MANAGE_GUILD
    assert not lab.base_permissions(bot.id) & DiscordPermission.MANAGE_GUILD
    assert {world.bot.id, dave.id, bot.id, world.user("alice").id} == set(lab.members)
    assert world.channel("design").parent_id == world.channel("general").id
    assert world.webhook("ci").channel_id == world.channel("general").id


@pytest.mark.parametrize(
    ("declaration", "message"),
    [
        ({"guilds": {"lab": {"owner": "zed"}}}, "setup.discord.guilds.lab.owner: unknown user"),
        ({"users": {"a": 5, "b": 5}}, "the Discord id 5 is used twice"),
        ({"users": {"a": "5"}}, "setup.discord.users.a must be a positive integer id"),
        ({"users": {"a": True}}, "setup.discord.users.a must be a positive integer id"),
        ({"people": {}}, "setup.discord: unknown key 'people'"),
        ({"guilds": ["lab"]}, "setup.discord.guilds must be a mapping of names"),
        (
            {"guilds": {"lab": {"roles": {"r": ["fly"]}}}},
            "setup.discord.guilds.lab.roles.r: unknown permission 'fly'",
        ),
        (
            {"guilds": {"lab": {"threads": {"t": {"parent": "nope"}}}}},
            "setup.discord.guilds.lab.threads.t.parent: unknown channel 'nope'",
        ),
        (
            {"users": {"d": None}, "guilds": {"lab": {"members": {"d": ["ghost"]}}}},
            "setup.discord.guilds.lab.members.d: unknown role 'ghost'",
        ),
    ],
)
def test_a_bad_declaration_is_one_error_naming_its_place(
    declaration: dict[str, Any], message: str
) -> None:
    """Each mistake is one ConfigError that names where it is."""
    with pytest.raises(ConfigError) as caught:
        DiscordWorld.declared(declaration)
    assert str(caught.value).startswith(message)


async def test_a_scenario_world_gives_the_runner_the_scenarios_identities(tmp_path: Path) -> None:
    """The identity scenario's setup.discord, served: carol and dave get its scopes and chats."""
    setup = yaml.safe_load(SCENARIO.read_text())["setup"]["discord"]
    silence_voice_warnings()
    async with (
        DiscordEmulator(DiscordWorld.declared(setup), wait_timeout=BOUND) as emu,
        Database.open(tmp_path / "t.db") as db,
    ):
        agent = await AgentRegistry(db).create("main")
        bus = MessageBus()
        config = ChannelConfig(platform="discord", require_mention=False)
        runner = DiscordRunner(
            channel_pipeline(db, config, bus=bus, agent=agent),
            token=emu.world.token,
            sync_commands=False,
        )
        with discord_pointed_at(emu):
            await runner.start()
            try:
                await emu.wait_connected()
                await emu.say("carol", "general", "write notes.md")
                carol = await asyncio.wait_for(bus.get(), BOUND)
                await emu.say("dave", "design", "write design.md")
                dave = await asyncio.wait_for(bus.get(), BOUND)
            finally:
                await runner.stop()
    assert (carol.user_id, carol.sender_id) == ("guild:81234567890123456:user:9001", "9001")
    assert (dave.user_id, dave.sender_id) == ("guild:81234567890123456:user:9002", "9002")
    assert carol.chat_id == "81234567890123457"

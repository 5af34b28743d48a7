"""Discord sharding: shard settings validated, and an AutoShardedClient built from them."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import discord
import pytest
from tests._wiring import channel_pipeline

from actorscope.bots import BotConfig, run_bots
from actorscope.channels._config import ChannelConfig
from actorscope.channels._shared_dedup import SharedDedup
from actorscope.channels.discord import DiscordSection
from actorscope.channels.discord._runner import DiscordRunner, RunnerClient, ShardedRunnerClient
from actorscope.channels.discord._shards import DiscordShards
from actorscope.cli import main
from actorscope.errors import ConfigError
from actorscope.store import Database

GOOD = """
handler = "mybot:handle"
database = "bot.db"
[discord]
token_env = "AS_TEST_DISCORD_TOKEN"
shard_count = 4
shard_ids = [0, 2]
"""


def write_config(tmp_path: Path, text: str) -> Path:
    """A run config and its handler module in ``tmp_path``."""
    (tmp_path / "mybot.py").write_text("async def handle(request):\n    return None\n")
    path = tmp_path / "bot.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("count", "ids", "message"),
    [
        (0, None, "shard_count must be an integer from 1"),
        (-1, None, "shard_count must be an integer from 1"),
        (True, None, "shard_count must be an integer"),
        (2.0, None, "shard_count must be an integer"),
        (100_000, None, "shard_count must be an integer from 1 to 65536"),
        (2, (), "shard_ids must name at least one shard"),
        (2, (2,), "shard_ids entry 2 is not a shard of shard_count = 2 (0 to 1)"),
        (2, (-1,), "shard_ids entry -1 is not a shard"),
        (2, (True,), "shard_ids entry True is not a shard"),
        (2, ("0",), "shard_ids entry '0' is not a shard"),
        (3, (1, 1), "shard_ids lists a shard twice"),
    ],
)
def test_bad_shards_are_config_errors(count: Any, ids: Any, message: str) -> None:
    """Count at least 1, ids unique and within 0..count-1: anything else is a ConfigError."""
    with pytest.raises(ConfigError) as caught:
        DiscordShards(count, ids)
    assert message in str(caught.value)


def test_good_shards_give_client_options() -> None:
    """A count alone runs every shard; ids pick some."""
    assert DiscordShards(1).client_options() == {"shard_count": 1, "shard_ids": None}
    picked = DiscordShards(4, (3, 0))
    assert picked.client_options() == {"shard_count": 4, "shard_ids": [3, 0]}


async def test_sharded_runner_builds_an_auto_sharded_client(tmp_path: Path) -> None:
    """With shards the runner's client is an AutoShardedClient of those shards; never connects."""
    async with Database.open(tmp_path / "t.db") as db:
        common: dict[str, Any] = {"token": "unused", "sync_commands": False}
        pipeline = channel_pipeline(db, ChannelConfig(platform="discord"))
        sharded = DiscordRunner(pipeline, shards=DiscordShards(4, (0, 2)), **common)
        everything = DiscordRunner(pipeline, shards=DiscordShards(3), **common)
        plain = DiscordRunner(pipeline, **common)
        try:
            client = sharded.client
            assert isinstance(client, discord.AutoShardedClient)
            assert isinstance(client, ShardedRunnerClient)
            assert (client.shard_ids, client.shard_count) == ([0, 2], 4)
            assert client.runner is sharded  # events still reach the runner
            assert client.intents.message_content
            assert not client.is_ready()
            assert client.shards == {}  # nothing launched: no gateway connection
            every = everything.client
            assert isinstance(every, discord.AutoShardedClient)
            assert (every.shard_ids, every.shard_count) == (None, 3)
            assert type(plain.client) is RunnerClient
            assert not isinstance(plain.client, discord.AutoShardedClient)
            assert plain.client.shard_count is None
        finally:
            for runner in (sharded, everything, plain):
                await runner.client.close()


async def test_sharded_client_closes_before_and_after_a_failed_login(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sharded client closes cleanly when it never logged in and after a refused login."""

    async def refuse(token: str) -> None:
        raise discord.LoginFailure("Improper token has been passed.")

    async with Database.open(tmp_path / "t.db") as db:
        pipeline = channel_pipeline(db, ChannelConfig(platform="discord"))
        runner = DiscordRunner(
            pipeline,
            token="unused",  # noqa: S106 - never logs in
            sync_commands=False,
            shards=DiscordShards(2),
        )
        never = ShardedRunnerClient(runner, sync_commands=False, shards=DiscordShards(2))
        await never.close()
        refused = runner.client
        monkeypatch.setattr(refused.http, "static_login", refuse)  # no network in tests
        with pytest.raises(discord.LoginFailure):
            await refused.login("unused")
        await refused.close()
        assert refused.is_closed()


def test_shard_section_is_parsed(tmp_path: Path) -> None:
    """shard_count / shard_ids in [discord] become the section's shards; absent means none."""
    config = BotConfig.load(write_config(tmp_path, GOOD))
    discord = config.section("discord")
    assert isinstance(discord, DiscordSection)
    assert discord.shards == DiscordShards(4, (0, 2))
    assert config.shared_dedup is None
    plain = "shared_dedup = true\n" + GOOD.split("shard_count")[0]
    config = BotConfig.load(write_config(tmp_path, plain))
    discord = config.section("discord")
    assert isinstance(discord, DiscordSection)
    assert discord.shards is None
    assert config.shared_dedup is True


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("shard_count = 4\n", ""), "discord.shard_ids: needs shard_count"),
        (("shard_count = 4", "shard_count = 0"), "discord.shard_count: must be an integer from 1"),
        (("shard_count = 4", 'shard_count = "4"'), "discord.shard_count: must be an integer"),
        (("[0, 2]", "[0, 4]"), "discord.shard_ids: entry 4 is not a shard of shard_count = 4"),
        (("[0, 2]", "[2, 2]"), "discord.shard_ids: lists a shard twice"),
        (("[0, 2]", "[]"), "discord.shard_ids: must name at least one shard"),
        (("[0, 2]", "2"), "discord.shard_ids: must be a list of integers"),
        (("shard_ids", "shard_id"), "discord.shard_id: unknown key"),
        (("shard_count = 4", 'shard_count = 4\nmode = "webhook"'), "discord.mode: unknown key"),
        (
            ('database = "bot.db"', 'shared_dedup = "yes"'),
            "shared_dedup: must be true or false, got 'yes'",
        ),
    ],
)
def test_shard_config_errors_exit_2_with_one_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    change: tuple[str, str],
    message: str,
) -> None:
    """Each bad shard setting is one stderr line naming it, exit 2, and no database."""
    monkeypatch.setenv("AS_TEST_DISCORD_TOKEN", "token")
    monkeypatch.delitem(sys.modules, "mybot", raising=False)
    old, new = change
    assert old in GOOD
    status = main(["run", str(write_config(tmp_path, GOOD.replace(old, new, 1)))])
    err = capsys.readouterr().err
    assert status == 2
    assert err.count("\n") == 1, err
    assert err.startswith("actorscope: error: ")
    assert message in err
    assert not (tmp_path / "bot.db").exists()


@pytest.mark.parametrize(("flag", "shared"), [("", False), ("shared_dedup = true\n", True)])
async def test_run_bots_hands_shards_and_shared_dedup_to_the_runner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flag: str, shared: bool
) -> None:
    """run_bots builds the Discord runner with the configured shards; shared dedup as set."""
    started: list[DiscordRunner] = []

    async def start(self: DiscordRunner) -> None:
        started.append(self)  # instead of logging in: no network

    async def stop(self: DiscordRunner) -> None:
        await self.client.close()

    monkeypatch.setattr(DiscordRunner, "start", start)
    monkeypatch.setattr(DiscordRunner, "stop", stop)
    monkeypatch.delitem(sys.modules, "mybot", raising=False)
    config = BotConfig.load(write_config(tmp_path, flag + GOOD))
    stop_event = asyncio.Event()

    def out(line: str) -> None:
        if line.startswith("running agent"):
            stop_event.set()

    async with asyncio.timeout(10):
        await run_bots(
            config,
            env={"AS_TEST_DISCORD_TOKEN": "token"},
            out=out,
            stop=stop_event,
            handle_signals=False,
        )
    (runner,) = started
    assert isinstance(runner.client, discord.AutoShardedClient)
    assert (runner.client.shard_ids, runner.client.shard_count) == ([0, 2], 4)
    assert isinstance(runner.shared_dedup, SharedDedup) is shared

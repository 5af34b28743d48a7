"""``run_bots(config, assembly=...)``: the bots run on the caller's assembly (what
``actorscope serve`` shares with its API), on the database the caller keeps open."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from tests._wait import wait_until

from actorscope.assembly import assemble
from actorscope.bots import BotConfig, run_bots
from actorscope.errors import ConfigError
from actorscope.sandbox import BotApiEmulator, BotApiServer
from actorscope.store import Database

MODULE = "run_bots_assembly_bot"


def _config(tmp_path: Path, base_url: str) -> BotConfig:
    """A file whose one Telegram bot polls ``base_url``; its handler records its services."""
    (tmp_path / f"{MODULE}.py").write_text(
        "from actorscope.bots import BotServices\n"
        "SEEN = []\n"
        "async def handle(request):\n"
        "    SEEN.append(BotServices.current())\n"
        "    return 'pong'\n"
    )
    path = tmp_path / "bot.toml"
    path.write_text(
        f'database = "bot.db"\nhandler = "{MODULE}:handle"\n'
        f'[telegram]\ntoken_env = "AS_TEST_TOKEN"\nbase_url = "{base_url}"\n'
    )
    config = BotConfig.load(path)
    assert Path(config.database).parent == tmp_path
    return config


async def test_the_bots_run_on_the_callers_assembly_and_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The handler's services are the given assembly's; the database stays open after."""
    monkeypatch.delitem(sys.modules, MODULE, raising=False)
    emu = BotApiEmulator()
    emu.state.add_user("Alice", username="alice")
    stop = asyncio.Event()
    async with BotApiServer(emu) as server:
        config = _config(tmp_path, server.base_url)
        async with Database.open(config.database) as db:
            assembly = await assemble(db, config.agent_settings())
            env = {"AS_TEST_TOKEN": emu.token}
            task = asyncio.create_task(
                run_bots(
                    config,
                    env=env,
                    out=lambda _: None,
                    stop=stop,
                    handle_signals=False,
                    assembly=assembly,
                )
            )
            try:
                await asyncio.wait_for(emu.queue.first_poll(), 10)
                emu.user_message("alice", "ping")
                await wait_until(lambda: bool(emu.sent_messages()), 10)
            finally:
                stop.set()
                await asyncio.wait_for(task, 10)
            row = await db.fetchone("SELECT 1 AS one")
            assert row is not None
            assert row["one"] == 1
    (services,) = sys.modules[MODULE].SEEN
    assert (services.grants is assembly.grants, services.policy is assembly.policy) == (True, True)
    assert [m["text"] for m in emu.sent_messages()] == ["pong"]


async def test_an_assembly_of_another_agent_is_one_config_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """run_bots refuses an assembly that is not the file's agent, naming both."""
    monkeypatch.delitem(sys.modules, MODULE, raising=False)
    config = _config(tmp_path, "http://127.0.0.1:9/bot")
    async with Database.open(config.database) as db:
        other = await assemble(db, config.agent_settings(agent="other"))
        with pytest.raises(ConfigError, match=r"assembly is agent 'other'.*agent 'main'"):
            await run_bots(
                config,
                env={"AS_TEST_TOKEN": BotApiEmulator().token},
                out=lambda _: None,
                handle_signals=False,
                assembly=other,
            )

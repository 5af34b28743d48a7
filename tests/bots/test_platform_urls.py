"""``[telegram] base_url`` and ``[discord] api_url`` / ``gateway_url``: another server, or a
proxy, in front of the platform; plain http/ws only on this host (the token goes there)."""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path

import discord.http
import pytest
from discord.gateway import DiscordWebSocket
from tests._wait import wait_until
from tests._wiring import channel_pipeline

from actorscope.bots import BotConfig, run_bots
from actorscope.channels._config import ChannelConfig
from actorscope.channels.discord import DiscordSection
from actorscope.channels.discord._runner import DiscordRunner
from actorscope.channels.telegram import TelegramSection
from actorscope.errors import ConfigError
from actorscope.sandbox import BotApiEmulator, BotApiServer, DiscordEmulator
from actorscope.store import Database

HANDLER = 'handler = "mybot:handle"\n'


def write(tmp_path: Path, text: str) -> Path:
    """``bot.toml`` (and the handler ``mybot.py``, which answers "pong") in ``tmp_path``."""
    (tmp_path / "mybot.py").write_text("async def handle(request):\n    return 'pong'\n")
    path = tmp_path / "bot.toml"
    path.write_text(HANDLER + text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("section", "expected"),
    [
        pytest.param(
            '[telegram]\nbase_url = "http://api.example.org/bot"\n',
            "http:// is for a server on this host (127.0.0.1, ::1, localhost)",
            id="plain-http-elsewhere",
        ),
        pytest.param(
            '[telegram]\nbase_url = "ftp://127.0.0.1/bot"\n',
            "telegram.base_url: must be a https:// URL, got 'ftp://127.0.0.1/bot'",
            id="not-http",
        ),
        pytest.param(
            '[telegram]\nbase_url = "https://api.example.org/bot?x=1"\n',
            "must be a https:// URL with a host and no query",
            id="query",
        ),
        pytest.param(
            '[discord]\napi_url = "http://127.0.0.1:9/api/v10"\n',
            "discord: api_url needs gateway_url (the proxy serves both)",
            id="api-without-gateway",
        ),
        pytest.param(
            '[discord]\ngateway_url = "ws://gateway.example.org/"\n'
            'api_url = "https://discord.example.org/api/v10"\n',
            "discord.gateway_url: ws:// is for a server on this host",
            id="plain-ws-elsewhere",
        ),
    ],
)
def test_bad_urls_are_one_line_each(tmp_path: Path, section: str, expected: str) -> None:
    """A URL the token must not go to, or a half-configured proxy, is refused with its key."""
    with pytest.raises(ConfigError) as caught:
        BotConfig.load(write(tmp_path, section))
    assert expected in str(caught.value)
    assert len(str(caught.value).splitlines()) == 1


def test_good_urls_are_kept_without_a_trailing_slash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """https / wss anywhere, http / ws on loopback; an override from the environment says so."""
    path = write(
        tmp_path,
        '[telegram]\nbase_url = "http://127.0.0.1:8081/bot/"\n'
        '[discord]\napi_url = "https://proxy.example.org/api/v10"\n'
        'gateway_url = "wss://proxy.example.org/gateway"\n',
    )
    config = BotConfig.load(path)
    telegram, discord = config.section("telegram"), config.section("discord")
    assert isinstance(telegram, TelegramSection)
    assert telegram.base_url == "http://127.0.0.1:8081/bot"
    assert isinstance(discord, DiscordSection)
    assert discord.gateway_url == "wss://proxy.example.org/gateway"
    monkeypatch.setenv("ACTORSCOPE_TELEGRAM__BASE_URL", "http://[::1]:8081/bot")
    with caplog.at_level(logging.WARNING, logger="actorscope.bots"):
        overridden = BotConfig.load(path)
    telegram = overridden.section("telegram")
    assert isinstance(telegram, TelegramSection)
    assert telegram.base_url == "http://[::1]:8081/bot"
    assert "the environment overrides security settings: ACTORSCOPE_TELEGRAM__BASE_URL" in (
        caplog.text
    )


async def test_run_bots_talks_to_the_configured_bot_api_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With base_url the runner polls and replies through that server (here the emulator)."""
    emu = BotApiEmulator()
    emu.state.add_user("Alice", username="alice")
    monkeypatch.delitem(sys.modules, "mybot", raising=False)
    async with BotApiServer(emu) as server:
        text = (
            f'database = "bot.db"\n[telegram]\ntoken_env = "AS_TEST_TOKEN"\n'
            f'base_url = "{server.base_url}"\n'
        )
        config = BotConfig.load(write(tmp_path, text))
        stop = asyncio.Event()
        task = asyncio.create_task(
            run_bots(
                config, env={"AS_TEST_TOKEN": emu.token}, out=lambda _: None, stop=stop,
                handle_signals=False,
            )
        )  # fmt: skip
        try:
            await asyncio.wait_for(emu.queue.first_poll(), 10)
            emu.user_message("alice", "ping")
            await wait_until(lambda: bool(emu.sent_messages()), 10)
        finally:
            stop.set()
            await asyncio.wait_for(task, 10)
    assert [m["text"] for m in emu.sent_messages()] == ["pong"]


async def test_a_discord_runner_with_a_proxy_connects_through_it_and_puts_it_back(
    tmp_path: Path,
) -> None:
    """api_url / gateway_url send the runner's REST calls and gateway session to the proxy (the
    emulator here) for as long as it runs; a second proxy in one process is refused."""
    default_api, default_gateway = discord.http.Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY
    async with DiscordEmulator(wait_timeout=10) as emu, Database.open(tmp_path / "t.db") as db:
        runner = DiscordRunner(
            channel_pipeline(db, ChannelConfig(platform="discord")),
            token=emu.world.token,
            api_url=emu.api_url,
            gateway_url=emu.gateway_url,
        )
        await runner.start()
        try:
            await emu.wait_connected()
            other = DiscordRunner(
                channel_pipeline(db, ChannelConfig(platform="discord")),
                token=emu.world.token,
                api_url="http://127.0.0.1:9/api/v10",
                gateway_url="ws://127.0.0.1:9/gateway",
            )
            with pytest.raises(ConfigError, match="one Discord proxy per process"):
                await other.start()
        finally:
            await runner.stop()
        with pytest.raises(ConfigError, match="needs both api_url and gateway_url"):
            DiscordRunner(
                channel_pipeline(db, ChannelConfig(platform="discord")),
                token=emu.world.token,
                api_url=emu.api_url,
            )
    assert default_api == discord.http.Route.BASE
    assert default_gateway == DiscordWebSocket.DEFAULT_GATEWAY

"""Against a real uvicorn on 127.0.0.1: the API over sockets, concurrent messages (none lost or
duplicated), and ``actorscope serve`` (its [http] section, its address, a busy port)."""

from __future__ import annotations

import asyncio
import collections
import socket
import sys
from pathlib import Path

import httpx
import pytest
from tests._wait import wait_until
from tests.http.conftest import bearer, serving

from actorscope.agents import Agent
from actorscope.bots import BotConfig
from actorscope.cli import main
from actorscope.errors import ConfigError
from actorscope.http import ApiKeyStore, create_app
from actorscope.http._serve import serve, url_of
from actorscope.messages import RunRequest
from actorscope.sandbox import BotApiEmulator, BotApiServer
from actorscope.store import Database

LOAD = 60


async def test_the_api_over_a_real_socket(live_server: str, keys: dict[str, str]) -> None:
    """whoami, a message, 401, 404 and a 413 announced by Content-Length, over TCP."""
    async with httpx.AsyncClient(base_url=live_server, timeout=10) as http:
        assert (await http.get("/v1/whoami", headers=bearer(keys["owner"]))).status_code == 200
        sent = await http.post(
            "/v1/agents/main/messages", json={"content": "hi"}, headers=bearer(keys["member"])
        )
        assert sent.json()["reply"].endswith("content=hi")
        assert (await http.get("/v1/whoami")).status_code == 401
        assert (await http.get("/v1/none", headers=bearer(keys["owner"]))).status_code == 404
        big = await http.post(
            "/v1/agents/main/messages",
            content=b"{" + b" " * 70_000 + b"}",
            headers={**bearer(keys["owner"]), "Content-Type": "application/json"},
        )
        assert big.status_code == 413
        assert big.headers["content-type"] == "application/problem+json"


@pytest.mark.sqlite_only("the subject is loopback concurrency; the API on both: test_http_api.py")
async def test_concurrent_messages_are_neither_lost_nor_duplicated(
    db: Database, agent: Agent, tmp_path: Path
) -> None:
    """LOAD concurrent POSTs on loopback: each runs the handler once and gets its own reply."""
    seen: collections.Counter[str] = collections.Counter()

    async def handler(request: RunRequest) -> str:
        seen[request.content] += 1
        await asyncio.sleep(0)
        return f"echo {request.content}"

    key = (await ApiKeyStore(db).add(tenant="default", user_id="load", role="member")).key
    app = create_app(db, handler=handler)
    limits = httpx.Limits(max_connections=LOAD)
    async with (
        serving(app) as url,
        httpx.AsyncClient(base_url=url, timeout=30, limits=limits) as http,
    ):
        responses = await asyncio.gather(
            *(
                http.post(
                    "/v1/agents/main/messages", json={"content": f"m{i}"}, headers=bearer(key)
                )
                for i in range(LOAD)
            )
        )
    assert [r.status_code for r in responses] == [200] * LOAD
    assert sorted(r.json()["reply"] for r in responses) == sorted(f"echo m{i}" for i in range(LOAD))
    assert seen == collections.Counter(f"m{i}" for i in range(LOAD))


def _config(tmp_path: Path, port: int, module: str) -> Path:
    (tmp_path / f"{module}.py").write_text(
        "async def handle(request):\n    return f'pong {request.user_id} {request.content}'\n"
    )
    path = tmp_path / "bot.toml"
    path.write_text(
        'database = "bot.db"\n\n[http]\nhost = "127.0.0.1"\n'
        f'port = {port}\nagent = "main"\nhandler = "{module}:handle"\n'
    )
    return path


async def test_serve_runs_the_configured_handler_and_prints_its_address(tmp_path: Path) -> None:
    """serve() with an [http]-only file: prints the address; a message reaches the handler."""
    config = BotConfig.load(_config(tmp_path, 0, "http_serve_bot_a"), require_bots=False)
    assert config.http is not None
    sock = config.http.listen()
    lines: list[str] = []
    stop = asyncio.Event()
    running = asyncio.create_task(
        serve(config, sock, out=lines.append, stop=stop, handle_signals=False)
    )
    try:
        await wait_until(lambda: bool(lines) or running.done(), 10)
        host, port = sock.getsockname()[:2]
        assert f"http://{host}:{port}/console" in lines[0]
        async with Database.open(str(tmp_path / "bot.db"), create=False) as db:
            key = (await ApiKeyStore(db).add(tenant="default", user_id="ann", role="member")).key
        async with httpx.AsyncClient(base_url=f"http://{host}:{port}", timeout=10) as http:
            answer = await http.post(
                "/v1/agents/main/messages", json={"content": "ping"}, headers=bearer(key)
            )
            assert answer.json()["reply"] == "pong ann ping"
    finally:
        stop.set()
        await asyncio.wait({running}, timeout=10)
        sock.close()
    assert running.exception() is None
    assert lines[-1] == "stopped"


async def test_serve_with_bots_runs_them_on_its_own_assembly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """serve() with a bot section: the API's messages and the bot's updates run on one
    assembly (one agent, grant store and policy), not on a second one run_bots made."""
    module = "http_serve_shared_bot"
    (tmp_path / f"{module}.py").write_text(
        "from actorscope.bots import BotServices\n"
        "SEEN = []\n"
        "async def handle(request):\n"
        "    SEEN.append((request.channel, BotServices.current()))\n"
        "    return 'pong'\n"
    )
    monkeypatch.delitem(sys.modules, module, raising=False)
    emu = BotApiEmulator()
    emu.state.add_user("Alice", username="alice")
    lines: list[str] = []
    stop = asyncio.Event()
    async with BotApiServer(emu) as server:
        path = tmp_path / "bot.toml"
        path.write_text(
            f'database = "bot.db"\nhandler = "{module}:handle"\n'
            f'[telegram]\ntoken_env = "AS_TEST_TOKEN"\nbase_url = "{server.base_url}"\n'
            '[http]\nhost = "127.0.0.1"\nport = 0\n'
        )
        config = BotConfig.load(path, require_bots=False)
        assert config.http is not None
        sock = config.http.listen()
        env = {"AS_TEST_TOKEN": emu.token}
        running = asyncio.create_task(
            serve(config, sock, out=lines.append, stop=stop, handle_signals=False, env=env)
        )
        try:
            await asyncio.wait_for(emu.queue.first_poll(), 10)
            emu.user_message("alice", "ping")
            await wait_until(lambda: bool(emu.sent_messages()), 10)
            async with Database.open(str(tmp_path / "bot.db"), create=False) as db:
                added = await ApiKeyStore(db).add(tenant="default", user_id="ann", role="member")
            async with httpx.AsyncClient(base_url=url_of(sock), timeout=10) as http:
                answer = await http.post(
                    "/v1/agents/main/messages", json={"content": "hi"}, headers=bearer(added.key)
                )
            assert answer.json()["reply"] == "pong"
        finally:
            stop.set()
            await asyncio.wait({running}, timeout=10)
            sock.close()
    assert running.exception() is None
    seen = sys.modules[module].SEEN
    assert [channel for channel, _ in seen] == ["telegram", "http"]
    (_, bot), (_, api) = seen
    assert bot.agent == api.agent
    assert (bot.grants is api.grants, bot.policy is api.policy) == (True, True)


def test_serve_on_a_busy_port_is_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A port already taken: exit 2 and 'cannot listen on 127.0.0.1:<port>'."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        assert main(["serve", str(_config(tmp_path, port, "http_serve_bot_b"))]) == 2
    err = capsys.readouterr().err
    assert f"cannot listen on 127.0.0.1:{port}" in err
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ("port = 70000", "http.port: must be an integer from 0 to 65535, got 70000"),
        ("bogus = 1", "http.bogus: unknown key"),
        ('handler = "nope"', "http.handler: must look like module:function"),
        ('agent = "bad key!"', "agent"),
    ],
)
def test_bad_http_sections_are_one_clear_error(tmp_path: Path, section: str, message: str) -> None:
    """Each bad [http] value is a ConfigError naming the section and the key."""
    path = tmp_path / "bot.toml"
    path.write_text(f'handler = "m:f"\n\n[http]\n{section}\n')
    with pytest.raises(ConfigError, match="http") as info:
        BotConfig.load(path, require_bots=False)
    assert message in str(info.value)


def test_serve_needs_an_http_section(tmp_path: Path) -> None:
    """A file without [http] is refused by serve with one line, with or without a handler."""
    path = tmp_path / "bot.toml"
    for text in ('handler = "m:f"\n', 'database = "bot.db"\n'):
        path.write_text(text)
        with pytest.raises(ConfigError, match=r"no \[http\] section"):
            BotConfig.load(path, require_bots=False)


def test_the_console_example_serves_the_demo_database_without_a_handler() -> None:
    """examples/console.toml: [http] only, no handler; `actorscope run` still needs one."""
    example = Path(__file__).parents[2] / "examples" / "console.toml"
    config = BotConfig.load(example, require_bots=False)
    assert config.http is not None
    assert (config.http.handler, config.http.agent, config.http.port) == ("", "demo", 8080)
    assert config.database.endswith("actorscope-demo.db")
    with pytest.raises(ConfigError, match="handler"):
        BotConfig.load(example)

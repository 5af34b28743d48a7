"""Slow and many connections against ``actorscope serve`` (issue 26, defect 2): request heads
and bodies are bounded in time, connections in number, and ``/healthz`` and the bots keep
answering while hundreds of loopback clients trickle header lines."""

from __future__ import annotations

import asyncio
import os
import resource
import sys
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from tests._wait import wait_until
from tests.http.conftest import serving
from tests.sandbox.conftest import BOUND

from actorscope.agents import AgentRegistry
from actorscope.bots import BotConfig, HttpSection
from actorscope.channels.discord._runner import silence_voice_warnings
from actorscope.errors import ConfigError
from actorscope.http import ApiKeyStore, create_app
from actorscope.http._guard import BODY_TIMEOUT
from actorscope.http._serve import descriptors_needed, serve
from actorscope.messages import RunRequest
from actorscope.sandbox import DiscordEmulator, discord_pointed_at
from actorscope.store import Database

#: Loopback clients trickling a request head.
SLOW_CLIENTS = 300
#: Seconds between two header lines of a trickling client.
TICK = 0.25
#: Header lines a trickling client sends at most (so it ends on its own: TICK * LINES s).
LINES = 120
#: Seconds a closed slow client waits before it connects again (a slow-loris pace).
AGAIN = 1.0

HANDLER = "async def handle(request):\n    return f'pong {request.content}'\n"


@dataclass
class Trickler:
    """One slow client: what the server sent each time it closed the connection."""

    answers: list[bytes] = field(default_factory=list)
    connected: bool = False


@dataclass
class Load:
    """Many slow clients, each trickling a request head until the server closes its connection
    (or LINES run out), then connecting again AGAIN seconds later when ``reconnect``."""

    port: int
    reconnect: bool
    clients: list[Trickler] = field(default_factory=list)
    tasks: list[asyncio.Task[None]] = field(default_factory=list)

    @property
    def open(self) -> int:
        """Clients connected (or connecting) that the server has not closed yet."""
        return sum(not client.answers or client.connected for client in self.clients)

    @property
    def closed(self) -> int:
        """Connections the server closed, over all clients."""
        return sum(len(client.answers) for client in self.clients)

    def start(self, count: int) -> None:
        """Start ``count`` more slow clients."""
        for _ in range(count):
            client = Trickler()
            self.clients.append(client)
            self.tasks.append(asyncio.create_task(self._run(client)))

    async def _run(self, client: Trickler) -> None:
        for _ in range(LINES):  # connections, each bounded: the whole client is bounded
            if not await self._trickle(client) or not self.reconnect:
                return
            await asyncio.sleep(AGAIN)  # the attack's pace, not a wait for a result

    async def _trickle(self, client: Trickler) -> bool:
        """One connection; True if the server closed it."""
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        except OSError:  # the listening queue was full: the server did not take it
            client.answers.append(b"")
            return True
        client.connected = True
        answered = asyncio.create_task(reader.read())  # until the server closes
        try:
            writer.write(b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n")
            for line in range(LINES):
                await asyncio.wait({answered}, timeout=TICK)
                if answered.done():
                    break
                writer.write(f"x-slow-{line}: {'y' * 20}\r\n".encode())
            else:
                return False  # never closed
            client.answers.append(answered.result() if answered.exception() is None else b"")
        except OSError:  # reset by the server while writing
            client.answers.append(b"")
        finally:
            client.connected = False
            answered.cancel()
            writer.close()
        return True

    async def stop(self) -> None:
        """End every slow client (bounded)."""
        for task in self.tasks:
            task.cancel()
        await asyncio.wait(self.tasks, timeout=BOUND)


@asynccontextmanager
async def _slow_clients(port: int, count: int, *, reconnect: bool = False) -> AsyncIterator[Load]:
    load = Load(port, reconnect)
    load.start(count)
    try:
        yield load
    finally:
        await load.stop()


async def _healthy(url: str) -> None:
    """/healthz answers 200 on a fresh connection within BOUND seconds."""
    async with httpx.AsyncClient(base_url=url, timeout=BOUND) as http:
        answer = await http.get("/healthz")
    assert answer.status_code == 200


@asynccontextmanager
async def _served(
    tmp_path: Path, http: str, discord: bool = False, env: Mapping[str, str] | None = None
) -> AsyncIterator[str]:
    """serve() of a file with [http] (and [discord]) on a free loopback port; its base URL."""
    (tmp_path / "slow_bot.py").write_text(HANDLER)
    text = f'database = "{tmp_path / "bot.db"}"\nhandler = "slow_bot:handle"\n\n'
    text += f'[http]\nhost = "127.0.0.1"\nport = 0\n{http}\n'
    if discord:
        text += '\n[discord]\ntoken_env = "SLOW_DISCORD_TOKEN"\n'
    path = tmp_path / "bot.toml"
    path.write_text(text)
    config = BotConfig.load(path, require_bots=False)
    assert config.http is not None
    sock = config.http.listen()
    lines: list[str] = []
    stop = asyncio.Event()
    task = asyncio.create_task(
        serve(config, sock, out=lines.append, stop=stop, handle_signals=False, env=env)
    )
    try:
        await wait_until(lambda: any("HTTP API on" in line for line in lines) or task.done(), 10)
        host, port = sock.getsockname()[:2]
        yield f"http://{host}:{port}"
    finally:
        stop.set()
        await asyncio.wait({task}, timeout=BOUND)
        sock.close()
    assert task.exception() is None


async def test_slow_clients_yield_to_new_ones_and_the_bot_keeps_answering(tmp_path: Path) -> None:
    """300 clients trickling one header line each TICK and connecting again when closed,
    against the default max_connections (100) and a header timeout longer than the test: slow
    clients are closed (with a 408) to make room for new ones; /healthz answers throughout
    and the Discord bot in the same process replies."""
    silence_voice_warnings()
    async with DiscordEmulator(wait_timeout=BOUND) as emu:
        with discord_pointed_at(emu):
            env = {"SLOW_DISCORD_TOKEN": emu.world.token}
            bounds = "header_timeout = 600"
            async with _served(tmp_path, bounds, discord=True, env=env) as url:
                await emu.wait_connected()
                port = int(url.rsplit(":", 1)[1])
                async with _slow_clients(port, SLOW_CLIENTS, reconnect=True) as load:
                    await wait_until(lambda: load.closed >= SLOW_CLIENTS, 30)
                    for _ in range(3):
                        await _healthy(url)
                        sent = await emu.say(
                            "carol", "general", f"<@{emu.world.bot.id}> still there?"
                        )
                        reply = await emu.wait_for_bot_message(channel="general", after=sent.id)
                        assert reply.content == "pong still there?"
                    answers = [a for c in load.clients for a in c.answers if a]
    assert answers
    assert all(a.startswith(b"HTTP/1.1 408 Request Timeout\r\n") for a in answers)


async def test_a_request_head_that_does_not_arrive_in_time_is_408(tmp_path: Path) -> None:
    """header_timeout = 2: every trickling client is answered 408 (a problem document) and
    closed; a connection that sends nothing is closed silently; /healthz still answers."""
    async with _served(tmp_path, "header_timeout = 2") as url:
        port = int(url.rsplit(":", 1)[1])
        async with _slow_clients(port, 40) as load:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            silent = await asyncio.wait_for(reader.read(), BOUND)
            writer.close()
            await wait_until(lambda: load.open == 0, BOUND)
            await _healthy(url)
    assert silent == b""
    for client in load.clients:
        (answer,) = client.answers
        assert answer.startswith(b"HTTP/1.1 408 Request Timeout\r\n")
        assert b"application/problem+json" in answer
        assert answer.endswith(b'"detail": "the request head did not arrive in time"}')


@pytest.mark.sqlite_only("the subject is the server's connection gate, not the dialect")
async def test_a_complete_head_waiting_for_a_busy_server_is_not_timed_out(db: Database) -> None:
    """A head that arrived whole is the server's to run, however late: a loop blocked past
    header_timeout (the server busy) answers it 200, not 408 (``make bench``'s 200 clients)."""
    app = create_app(db)
    async with serving(app, HttpSection(header_timeout=0.3)) as url:
        port = int(url.rsplit(":", 1)[1])
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        head = b"GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n"
        writer.write(head)
        first = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), BOUND)
        await asyncio.wait_for(reader.readexactly(len(b'{"status":"ok"}')), BOUND)
        await asyncio.sleep(0.1)  # the server finishes the first request: its deadline runs
        writer.write(head)  # sent at once: the kernel holds it for the server
        time.sleep(0.6)  # noqa: ASYNC251 - the server's loop is busy past header_timeout
        second = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), BOUND)
        writer.close()
    assert first.startswith(b"HTTP/1.1 200 ")
    assert second.startswith(b"HTTP/1.1 200 "), second


@pytest.mark.sqlite_only("the subject is the server's body timeout, not the dialect")
async def test_a_body_that_does_not_arrive_in_time_is_408(db: Database) -> None:
    """A POST announcing 100 bytes that sends 10 is answered 408 after body_timeout."""
    app = create_app(db, body_timeout=0.5)
    async with serving(app) as url:
        port = int(url.rsplit(":", 1)[1])
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(
            b"POST /v1/agents/main/messages HTTP/1.1\r\nhost: x\r\n"
            b'content-type: application/json\r\ncontent-length: 100\r\n\r\n{"content"'
        )
        answer = await asyncio.wait_for(reader.read(), BOUND)
        writer.close()
    assert answer.startswith(b"HTTP/1.1 408 ")
    assert b"the request body did not arrive within 0.5 seconds" in answer


async def test_a_full_gate_of_running_requests_answers_503(tmp_path: Path) -> None:
    """max_connections = 2, both running a request: a third connection is answered 503 and
    closed at once; when they finish, new connections are served again."""
    release = asyncio.Event()
    started: list[str] = []

    async def handler(request: RunRequest) -> str:
        started.append("one")
        await release.wait()
        return "done"

    async with Database.open(tmp_path / "t.db") as db:
        await AgentRegistry(db).create("main")
        key = (await ApiKeyStore(db).add(tenant="default", user_id="u", role="member")).key
        app = create_app(db, handler=handler)
        async with serving(app, HttpSection(max_connections=2)) as url:
            async with httpx.AsyncClient(base_url=url, timeout=BOUND) as http:
                busy = [
                    asyncio.create_task(
                        http.post(
                            "/v1/agents/main/messages",
                            json={"content": "hold"},
                            headers={"Authorization": f"Bearer {key}"},
                        )
                    )
                    for _ in range(2)
                ]
                await wait_until(lambda: len(started) == 2, BOUND)
                port = int(url.rsplit(":", 1)[1])
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                full = await asyncio.wait_for(reader.read(), BOUND)
                writer.close()
                release.set()
                assert [r.status_code for r in await asyncio.gather(*busy)] == [200, 200]
            await _healthy(url)
    assert full.startswith(b"HTTP/1.1 503 Service Unavailable\r\n")
    assert b"connection limit" in full


#: ``actorscope serve bot.toml`` in a process that may open 256 files (it lowers its own limit:
#: a preexec_fn is not safe in a test process with threads).
LIMITED_SERVE = """\
import resource, sys
resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
from actorscope.cli import main
sys.exit(main(["serve", "bot.toml"]))
"""


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_NOFILE of a child process")
async def test_serve_with_256_descriptors_survives_300_slow_clients(tmp_path: Path) -> None:
    """The reported case: `actorscope serve` (defaults) in a process that may open 256 files,
    300 loopback clients trickling header lines: /healthz keeps answering."""
    (tmp_path / "slow_bot.py").write_text(HANDLER)
    (tmp_path / "bot.toml").write_text(
        'database = "bot.db"\nhandler = "slow_bot:handle"\n\n[http]\nport = 0\n'
    )

    env = {k: v for k, v in os.environ.items() if not k.endswith("_TOKEN")}
    # A file, not a pipe: a server whose stderr nobody reads would block on a full pipe.
    errors = (tmp_path / "stderr.txt").open("wb")
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        LIMITED_SERVE,
        cwd=tmp_path,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=errors,
    )
    try:
        assert proc.stdout is not None
        first = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode()
        assert first.startswith("HTTP API on http://127.0.0.1:")
        url = first.split()[3].removesuffix("/v1")
        port = int(url.rsplit(":", 1)[1])
        async with _slow_clients(port, SLOW_CLIENTS, reconnect=True) as load:
            await wait_until(lambda: load.closed >= SLOW_CLIENTS, 30)
            for _ in range(3):
                await _healthy(url)
    finally:
        proc.terminate()
        await asyncio.wait_for(proc.wait(), 30)
        errors.close()
    err = (tmp_path / "stderr.txt").read_text()
    assert "Traceback" not in err, err


def test_a_connection_limit_beyond_the_open_file_limit_is_one_error(tmp_path: Path) -> None:
    """max_connections that the process's open-file limit cannot hold is refused by serve in
    one line naming the key and ulimit -n; the defaults fit a 256-file process."""
    allowed = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if allowed == resource.RLIM_INFINITY or allowed >= 100_000:
        pytest.skip("no open-file limit below what max_connections may say")
    path = tmp_path / "bot.toml"
    path.write_text(f'handler = "m:f"\n\n[http]\nmax_connections = {allowed}\n')
    config = BotConfig.load(path, require_bots=False)
    with (
        HttpSection(port=0).listen() as sock,
        pytest.raises(ConfigError, match=r"http.max_connections = \d+ needs about \d+ open files"),
    ):
        asyncio.run(serve(config, sock, source="bot.toml"))
    assert descriptors_needed(HttpSection()) <= 256


def test_the_sections_body_timeout_is_create_apps() -> None:
    """[http] body_timeout and create_app's body_timeout have one default."""
    assert HttpSection().body_timeout == BODY_TIMEOUT

"""Telegram webhook mode: two workers behind one URL over real loopback HTTP, and its config."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from telegram import Update
from tests._wait import wait_until
from tests._wiring import channel_pipeline

from actorscope.bots import BotConfig, run_bots
from actorscope.channels._config import ChannelConfig
from actorscope.channels._shared_dedup import SharedDedup
from actorscope.channels.telegram import TelegramSection
from actorscope.channels.telegram import _platform as telegram_platform
from actorscope.channels.telegram._runner import ALLOWED_UPDATES, TelegramRunner
from actorscope.channels.telegram._webhook import (
    SECRET_HEADER,
    Fed,
    Webhook,
    WebhookConfig,
    WebhookServer,
)
from actorscope.cli import main
from actorscope.errors import ConfigError
from actorscope.host import Host, MessageBus, Reply, RunStep
from actorscope.messages import RunRequest
from actorscope.propagation import OriginSigner
from actorscope.sandbox import BotApiEmulator
from actorscope.store import Database

SECRET = "s3cret_Token-1"  # noqa: S105 - a test secret
URL = "https://bots.example.com/tg"
JSON = dict[str, Any]


@dataclass
class Worker:
    """One webhook runner and the bus it publishes to."""

    runner: TelegramRunner
    bus: MessageBus

    @property
    def url(self) -> str:
        """Where this worker receives updates."""
        server = self.runner.webhook_server
        assert server is not None
        return server.local_url


def webhook(set_webhook: bool | None = None) -> Webhook:
    """Loopback webhook settings on a free port."""
    return Webhook(URL, SECRET, port=0, path="/tg", set_webhook=set_webhook)


def make_runner(
    emu: BotApiEmulator, db: Database, bus: MessageBus, hook: Webhook, *, shared: bool = True
) -> TelegramRunner:
    """A webhook-mode runner on ``db``, calling the emulator's Bot API in memory."""
    config = ChannelConfig(platform="telegram")
    shared_dedup = SharedDedup(db) if shared else None
    return TelegramRunner(
        channel_pipeline(db, config, bus=bus, shared_dedup=shared_dedup),
        token=emu.token,
        request=emu.request(),
        webhook=hook,
    )


@pytest.fixture
def emu() -> BotApiEmulator:
    """An emulator with one user, alice."""
    emu = BotApiEmulator()
    emu.state.add_user("Alice", username="alice")
    return emu


@asynccontextmanager
async def start_workers(emu: BotApiEmulator, target: str) -> AsyncIterator[list[Worker]]:
    """Two started webhook workers of one bot on two handles of the database at ``target``."""
    async with Database.open(target) as first, Database.open(target) as second:
        started: list[Worker] = []
        try:
            for db in (first, second):
                bus = MessageBus()
                worker = Worker(make_runner(emu, db, bus, webhook()), bus)
                started.append(worker)
                await worker.runner.start()
            yield started
        finally:
            for worker in started:
                await worker.runner.stop()


@pytest.fixture
async def workers(emu: BotApiEmulator, tmp_path: Path) -> AsyncIterator[list[Worker]]:
    """Two started webhook workers sharing an SQLite file."""
    async with start_workers(emu, str(tmp_path / "shared.db")) as started:
        yield started


def update(emu: BotApiEmulator, text: str) -> JSON:
    """An update: alice writes ``text`` to the bot in private."""
    made = emu.user_message("alice", text)
    assert made is not None
    return made


async def post(
    url: str, body: bytes | JSON, secret: str | None = SECRET, method: str = "POST"
) -> int:
    """Send one request to a webhook receiver; its HTTP status."""
    headers = {} if secret is None else {SECRET_HEADER: secret}
    kwargs: dict[str, Any] = {"json": body} if isinstance(body, dict) else {"data": body}
    timeout = aiohttp.ClientTimeout(total=5)
    async with (
        aiohttp.ClientSession(timeout=timeout) as session,
        session.request(method, url, headers=headers, **kwargs) as response,
    ):
        return response.status


async def drain_until(bus: MessageBus, content: str) -> list[str]:
    """Every message's content up to and including ``content`` (5 s at most).

    A runner handles its updates one at a time, in order, so once a marker sent last is on
    the bus every update sent to that runner before it has been handled.
    """
    seen: list[str] = []
    async with asyncio.timeout(5):
        while content not in seen:
            seen.append((await bus.get()).content)
            bus.task_done()
    return seen


async def test_duplicate_across_two_webhook_workers_is_handled_once(
    emu: BotApiEmulator, db_target: str
) -> None:
    """The same update POSTed to both workers reaches one bus; each answers 200 (per backend)."""
    async with start_workers(emu, db_target) as workers:
        await post_duplicate_and_markers(workers, emu)


async def post_duplicate_and_markers(workers: list[Worker], emu: BotApiEmulator) -> None:
    """POST one update to every worker, then a marker each; the update is handled once."""
    duplicate = update(emu, "hello")
    assert [await post(worker.url, duplicate) for worker in workers] == [200, 200]
    for n, worker in enumerate(workers):
        assert await post(worker.url, update(emu, f"marker {n}")) == 200
    handled = [await drain_until(w.bus, f"marker {n}") for n, w in enumerate(workers)]
    assert [seen[-1] for seen in handled] == ["marker 0", "marker 1"]
    assert sorted(content for seen in handled for content in seen[:-1]) == ["hello"]
    assert all(worker.bus.qsize() == 0 for worker in workers)


async def test_a_webhook_update_runs_its_turn_in_the_requests_task(
    emu: BotApiEmulator, tmp_path: Path
) -> None:
    """Under a running host with a free turn slot, an update a webhook request delivers runs
    its turn in that request's task and is answered once it is over; a polled one (handed in
    one after another) goes to a host worker through the bus."""
    tasks: list[str] = []

    async def turn(request: RunRequest) -> Reply:
        task = asyncio.current_task()
        tasks.append(task.get_name() if task is not None else "")
        return "pong"

    async with Database.open(tmp_path / "t.db") as db:
        bus = MessageBus()
        runner = TelegramRunner(
            channel_pipeline(db, ChannelConfig(platform="telegram"), bus=bus, run_here=True),
            token=emu.token,
            request=emu.request(),
            webhook=webhook(),
        )
        step = RunStep(turn, signer=OriginSigner(), senders={runner.name: runner})
        host = Host(step, bus=bus)
        await runner.start()
        try:
            async with host:
                assert await post(runner_url(runner), update(emu, "ping")) == 200
                assert [m["text"] for m in emu.sent_messages()] == ["pong"]
                await runner.handle_update(Update.de_json(update(emu, "polled"), runner.bot))
                await wait_until(lambda: len(emu.sent_messages()) == 2)
        finally:
            await runner.stop()
    assert tasks[0]
    assert not tasks[0].startswith("actorscope-host-")
    assert tasks[1].startswith("actorscope-host-")


def runner_url(runner: TelegramRunner) -> str:
    """Where a started webhook runner receives updates."""
    assert runner.webhook_server is not None
    return runner.webhook_server.local_url


async def test_only_one_worker_sets_the_webhook(workers: list[Worker], emu: BotApiEmulator) -> None:
    """With set_webhook left out, the shared claim elects one worker to call setWebhook."""
    (call,) = emu.calls_to("setWebhook")
    assert call.params["url"] == URL
    assert call.params["secret_token"] == SECRET
    assert call.params["allowed_updates"] == list(ALLOWED_UPDATES)
    assert emu.webhook["url"] == URL
    assert not emu.calls_to("getUpdates")


@pytest.mark.parametrize(
    ("body", "secret", "status"),
    [
        (b"{}", None, 403),
        (b"{}", "wrong", 403),
        (b"{}", SECRET + "x", 403),
        (b"{not json", SECRET, 400),
        (b"\xff\xfe", SECRET, 400),
        (b"[1, 2]", SECRET, 400),
        (b'{"message": {}}', SECRET, 400),
        (b'{"update_id": "7"}', SECRET, 400),
        (b'{"update_id": 7, "message": "text"}', SECRET, 400),
    ],
)
async def test_bad_requests_are_rejected_and_never_handled(
    workers: list[Worker], emu: BotApiEmulator, body: bytes, secret: str | None, status: int
) -> None:
    """No or a wrong secret: 403; not JSON, not an object, not an update: 400; none handled."""
    worker = workers[0]
    assert await post(worker.url, body, secret) == status
    real = update(emu, "real")
    assert await post(worker.url, real, secret) == (200 if secret == SECRET else 403)
    if secret == SECRET:
        assert await drain_until(worker.bus, "real") == ["real"]
    assert worker.bus.qsize() == 0


async def test_secret_is_checked_before_anything_else(
    workers: list[Worker], emu: BotApiEmulator
) -> None:
    """A valid update with a wrong secret is refused; GET and other paths are not endpoints."""
    worker = workers[0]
    assert await post(worker.url, update(emu, "sneaky"), "nope") == 403
    assert await post(worker.url, b"", SECRET, method="GET") == 405
    assert await post(worker.url.replace("/tg", "/other"), update(emu, "x"), SECRET) == 404
    assert await post(worker.url, update(emu, "ok"), SECRET) == 200
    assert await drain_until(worker.bus, "ok") == ["ok"]


@pytest.mark.parametrize(
    ("flag", "shared", "calls"),
    [(True, True, 2), (False, False, 0), (None, False, 2), (None, True, 1)],
)
async def test_set_webhook_flag_and_election(
    emu: BotApiEmulator, tmp_path: Path, flag: bool | None, shared: bool, calls: int
) -> None:
    """set_webhook true / false is obeyed by every worker; left out, the store elects one."""
    async with Database.open(tmp_path / "t.db") as db:
        for _ in range(2):  # two workers, one after the other, on one database
            runner = make_runner(emu, db, MessageBus(), webhook(flag), shared=shared)
            try:
                await runner.start()
            finally:
                await runner.stop()
    assert len(emu.calls_to("setWebhook")) == calls


async def accept(data: object) -> Fed:
    """A feed that takes everything."""
    return Fed.ACCEPTED


async def test_busy_port_is_a_config_error(emu: BotApiEmulator, tmp_path: Path) -> None:
    """A second receiver on a port already taken fails with one clear ConfigError."""
    feed = accept

    async with WebhookServer(webhook(), feed) as server:
        taken = Webhook(URL, SECRET, port=server.port, path="/tg")
        with pytest.raises(ConfigError, match=f"cannot listen on 127.0.0.1:{server.port}"):
            await WebhookServer(taken, feed).start()


async def test_emulator_set_webhook_blocks_polling_until_deleted(emu: BotApiEmulator) -> None:
    """The emulator's setWebhook: https only, a valid secret; getUpdates is 409 meanwhile."""
    http = await emu.call("setWebhook", {"url": "http://example.com/x"})
    assert (http.status, http.body["description"]) == (
        400,
        "Bad Request: bad webhook: An HTTPS URL must be provided for webhook",
    )
    bad = await emu.call("setWebhook", {"url": URL, "secret_token": "no spaces"})
    assert bad.status == 400
    assert (await emu.call("setWebhook", {"url": URL, "secret_token": SECRET})).ok
    assert emu.webhook == {"url": URL, "secret_token": SECRET, "allowed_updates": None}
    assert (await emu.call("getWebhookInfo")).body["result"]["url"] == URL
    assert (await emu.call("getUpdates")).status == 409
    assert (await emu.call("deleteWebhook")).ok
    assert emu.webhook == {}
    assert (await emu.call("getUpdates")).body == {"ok": True, "result": []}


async def test_busy_answers_503_so_telegram_retries(emu: BotApiEmulator, tmp_path: Path) -> None:
    """A feed that is busy makes the receiver answer 503; max_queued below 1 is refused.

    (How many updates a runner holds at once: tests/channels/test_claim_leases.py.)
    """
    async with Database.open(tmp_path / "t.db") as db:
        with pytest.raises(ConfigError, match="max_queued must be at least 1"):
            TelegramRunner(
                channel_pipeline(db, ChannelConfig(platform="telegram")),
                token=emu.token,
                max_queued=0,
            )

    async def busy(data: object) -> Fed:
        return Fed.BUSY

    async with WebhookServer(webhook(), busy) as server:
        assert await post(server.local_url, update(emu, "three")) == 503


def test_webhook_repr_hides_the_secret() -> None:
    """The resolved settings never print the secret token."""
    assert SECRET not in repr(webhook())


GOOD = """
handler = "mybot:handle"
database = "bot.db"
[telegram]
token_env = "AS_TEST_TELEGRAM_TOKEN"
mode = "webhook"
webhook_url = "https://bots.example.com/tg/hook"
secret_token_env = "AS_TEST_WEBHOOK_SECRET"
port = 8081
"""


def write_config(tmp_path: Path, text: str) -> Path:
    """A run config and its handler module in ``tmp_path``."""
    (tmp_path / "mybot.py").write_text("async def handle(request):\n    return None\n")
    path = tmp_path / "bot.toml"
    path.write_text(text)
    return path


def test_webhook_section_is_parsed_with_defaults(tmp_path: Path) -> None:
    """mode = webhook: listen defaults to loopback, path to the URL's; explicit values win."""
    telegram = BotConfig.load(write_config(tmp_path, GOOD)).section("telegram")
    assert isinstance(telegram, TelegramSection)
    assert telegram.webhook == WebhookConfig(
        url="https://bots.example.com/tg/hook",
        secret_token_env="AS_TEST_WEBHOOK_SECRET",  # noqa: S106 - a variable name
        port=8081,
        listen="127.0.0.1",
        path="/tg/hook",
        set_webhook=None,
    )
    extra = GOOD + 'listen = "0.0.0.0"\npath = "/in"\nset_webhook = false\n'
    hook = BotConfig.load(write_config(tmp_path, extra)).section("telegram")
    assert isinstance(hook, TelegramSection)
    assert hook.webhook is not None
    assert (hook.webhook.listen, hook.webhook.path, hook.webhook.set_webhook) == (
        "0.0.0.0",  # noqa: S104 - what the config says, only compared
        "/in",
        False,
    )
    polling = GOOD.split("mode")[0]
    section = BotConfig.load(write_config(tmp_path, polling)).section("telegram")
    assert isinstance(section, TelegramSection)
    assert section.webhook is None


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            ('mode = "webhook"', 'mode = "push"'),
            "telegram.mode: Input should be 'polling' or 'webhook', got 'push'",
        ),
        (('mode = "webhook"', 'mode = "polling"'), 'telegram: webhook_url needs mode = "webhook"'),
        (("webhook_url", "webhook_uri"), "telegram.webhook_uri: unknown key"),
        (
            ('webhook_url = "https://bots.example.com/tg/hook"\n', ""),
            'telegram: mode = "webhook" needs webhook_url',
        ),
        (("https://bots", "http://bots"), "telegram.webhook_url: must be an https:// URL"),
        (
            ('secret_token_env = "AS_TEST_WEBHOOK_SECRET"\n', ""),
            'telegram: mode = "webhook" needs secret_token_env',
        ),
        (
            ('"AS_TEST_WEBHOOK_SECRET"', '"1BAD NAME"'),
            "telegram.secret_token_env: '1BAD NAME' is not a variable name",
        ),
        (("port = 8081\n", ""), 'telegram: mode = "webhook" needs port'),
        (
            ("port = 8081", "port = 70000"),
            "telegram.port: must be an integer from 0 to 65535, got 70000",
        ),
        (("port = 8081", 'port = "8081"'), "telegram.port: must be an integer"),
        (("port = 8081", 'port = 8081\npath = "no-slash"'), "telegram.path: must start with '/'"),
        (
            ("port = 8081", 'port = 8081\nlisten = "bad host!"'),
            "telegram.listen: must be an IP address",
        ),
        (
            ("port = 8081", 'port = 8081\nset_webhook = "yes"'),
            "telegram.set_webhook: must be true or false",
        ),
        (("port = 8081", "port = 8081\nshard_count = 2"), "telegram.shard_count: unknown key"),
    ],
)
def test_webhook_config_errors_exit_2_with_one_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    change: tuple[str, str],
    message: str,
) -> None:
    """Each bad webhook setting is one stderr line naming it, exit 2, and no database."""
    monkeypatch.setenv("AS_TEST_TELEGRAM_TOKEN", "123456789:" + "A" * 35)
    monkeypatch.setenv("AS_TEST_WEBHOOK_SECRET", SECRET)
    monkeypatch.delitem(sys.modules, "mybot", raising=False)
    old, new = change
    assert old in GOOD
    status = main(["run", str(write_config(tmp_path, GOOD.replace(old, new, 1)))])
    err = capsys.readouterr().err
    assert status == 2
    assert err.count("\n") == 1, err
    assert err.startswith("actorscope: error: ")
    assert "telegram" in err
    assert message in err
    assert not (tmp_path / "bot.db").exists()


@pytest.mark.parametrize(
    ("secret", "message"),
    [
        (None, "environment variable AS_TEST_WEBHOOK_SECRET is not set"),
        ("   ", "environment variable AS_TEST_WEBHOOK_SECRET is not set"),
        ("has space", "must be 1-256 characters A-Z, a-z, 0-9, _ or -"),
        ("x" * 257, "must be 1-256 characters"),
    ],
)
def test_missing_or_bad_secret_exits_2_before_the_database(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    secret: str | None,
    message: str,
) -> None:
    """The secret comes from the environment; unset or malformed is exit 2, nothing started."""
    monkeypatch.setenv("AS_TEST_TELEGRAM_TOKEN", "123456789:" + "A" * 35)
    if secret is None:
        monkeypatch.delenv("AS_TEST_WEBHOOK_SECRET", raising=False)
    else:
        monkeypatch.setenv("AS_TEST_WEBHOOK_SECRET", secret)
    monkeypatch.delitem(sys.modules, "mybot", raising=False)
    status = main(["run", str(write_config(tmp_path, GOOD))])
    err = capsys.readouterr().err
    assert status == 2
    assert err.count("\n") == 1, err
    assert message in err
    assert "x" * 20 not in err  # the secret itself is never echoed
    assert not (tmp_path / "bot.db").exists()


async def test_sandbox_polls_the_emulator_without_the_webhook_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--sandbox ignores webhook mode (it polls the emulator) and needs no secret."""
    monkeypatch.delitem(sys.modules, "mybot", raising=False)
    config = BotConfig.load(write_config(tmp_path, GOOD))
    stop = asyncio.Event()
    printed: list[str] = []

    def out(line: str) -> None:
        printed.append(line)
        if line.startswith("running agent"):
            stop.set()

    async with asyncio.timeout(20):
        await run_bots(config, sandbox=True, env={}, out=out, stop=stop, handle_signals=False)
    assert "webhook:  not used in --sandbox (the emulator is polled)" in printed
    assert not any("webhook receiver" in line for line in printed)
    assert printed[-1] == "stopped"


async def test_run_bots_in_webhook_mode_end_to_end(
    emu: BotApiEmulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """run_bots with mode = webhook: sets the webhook, receives over HTTP, the handler replies."""

    class EmulatedRunner(TelegramRunner):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, request=emu.request(), **kwargs)

    # actorscope run builds the runner through the platform contract: it builds this one.
    monkeypatch.setattr(telegram_platform, "TelegramRunner", EmulatedRunner)
    monkeypatch.delitem(sys.modules, "mybot", raising=False)
    path = write_config(tmp_path, GOOD.replace("port = 8081", "port = 0"))
    (tmp_path / "mybot.py").write_text("async def handle(request):\n    return 'pong'\n")
    env = {"AS_TEST_TELEGRAM_TOKEN": emu.token, "AS_TEST_WEBHOOK_SECRET": SECRET}
    stop = asyncio.Event()
    receivers: list[str] = []

    def out(line: str) -> None:
        if "webhook receiver on" in line:
            receivers.append(line.rsplit(" ", 1)[1])

    config = BotConfig.load(path)
    task = asyncio.create_task(run_bots(config, env=env, out=out, stop=stop, handle_signals=False))
    try:
        await wait_until(lambda: bool(receivers), 10)  # run_bots prints it while starting
        (receiver,) = receivers
        assert receiver.startswith("http://127.0.0.1:")
        assert receiver.endswith("/tg/hook")
        assert await post(receiver, update(emu, "ping"), "wrong") == 403
        assert await post(receiver, update(emu, "ping")) == 200
        await wait_until(lambda: bool(emu.sent_messages()), 10)  # the host replies in its task
    finally:
        stop.set()
        await asyncio.wait_for(task, 10)
    assert [message["text"] for message in emu.sent_messages()] == ["pong"]
    (call,) = emu.calls_to("setWebhook")  # SQLite: no shared store, this worker sets it
    assert call.params["url"] == "https://bots.example.com/tg/hook"
    assert not emu.calls_to("getUpdates")

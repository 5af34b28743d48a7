"""``actorscope serve`` on an SQLite database another process holds the write lock of (issue
26, "not yet tried"): nothing hangs, nothing answers 500 or logs a traceback, reads and
decisions go on (decided from the grants, in strict and fail-open mode alike: the reads do not
fail), writes get a 503 problem document within the busy timeout, and all recovers after."""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
from tests._sqlite_lock import sqlite_locked
from tests._wait import wait_until
from tests.http.conftest import bearer

from actorscope.agents import AgentRegistry
from actorscope.bots import BotConfig
from actorscope.http import ApiKeyStore
from actorscope.http._serve import serve
from actorscope.permissions import AuditLog, GrantStore
from actorscope.store import Database

GROUP = "group:telegram:-100200"
#: The store's busy timeout (Database.open's default, which serve uses): how long a write waits.
BUSY = 5.0
#: How long any locked request may take: one busy timeout, and a margin for a loaded machine.
BOUNDED = BUSY + 3.0

HANDLER = """\
from actorscope.bots import BotServices
from actorscope.identity import Identity, PeerKind


async def handle(request):
    services = BotServices.current()
    reasons = []
    for sender in ("41", "42"):
        member = Identity(
            user_id="group:telegram:-100200", sender_id=sender, peer_kind=PeerKind.GROUP,
            tenant_id=services.agent.tenant_id, agent_id=services.agent.id,
        )
        reasons.append(str((await services.policy.check_file_writer(member)).reason))
    return " ".join(reasons)
"""


@asynccontextmanager
async def _served(tmp_path: Path, strict: bool) -> AsyncIterator[str]:
    module = f"locked_bot_{'strict' if strict else 'open'}"
    (tmp_path / f"{module}.py").write_text(HANDLER)
    path = tmp_path / "bot.toml"
    path.write_text(
        f'database = "bot.db"\nstrict = {str(strict).lower()}\nhandler = "{module}:handle"\n\n'
        '[http]\nhost = "127.0.0.1"\nport = 0\n'
    )
    config = BotConfig.load(path, require_bots=False)
    assert config.http is not None
    sock = config.http.listen()
    lines: list[str] = []
    stop = asyncio.Event()
    task = asyncio.create_task(
        serve(config, sock, out=lines.append, stop=stop, handle_signals=False)
    )
    try:
        await wait_until(lambda: bool(lines) or task.done(), 10)
        host, port = sock.getsockname()[:2]
        yield f"http://{host}:{port}"
    finally:
        stop.set()
        await asyncio.wait({task}, timeout=20)
        sock.close()
    assert task.exception() is None


@pytest.mark.parametrize("strict", [False, True], ids=["fail-open", "strict"])
async def test_serve_under_a_held_write_lock(
    tmp_path: Path, strict: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """While another process holds the write lock: /healthz, /readyz, whoami, listings and the
    messages' decisions answer at once (41 granted, 42 no_grant: never a store_error reason);
    three grant writes at once each get a 503 problem within one busy timeout; no 500, no
    ERROR or traceback logged. After: writes work and the queued denials are in the audit."""
    db_path = tmp_path / "bot.db"
    async with Database.open(db_path) as db:
        agent = await AgentRegistry(db).create("main")
        await GrantStore(db).grant(
            agent_id=agent.id, scope=GROUP, config_type="file_writer", sender_id="41"
        )
        keys = ApiKeyStore(db)
        owner = bearer((await keys.add(tenant="default", user_id="ops", role="owner")).key)
        member = bearer((await keys.add(tenant="default", user_id="m", role="member")).key)
    caplog.set_level(logging.WARNING)
    grant = {"agent": "main", "scope": GROUP, "config_type": "cron"}
    async with (
        _served(tmp_path, strict) as url,
        httpx.AsyncClient(base_url=url, timeout=60) as http,
    ):

        async def timed(method: str, path: str, **kwargs: object) -> tuple[httpx.Response, float]:
            started = time.monotonic()
            answer = await http.request(method, path, **kwargs)  # type: ignore[arg-type]
            return answer, time.monotonic() - started

        async with sqlite_locked(db_path):
            answers = await asyncio.gather(
                timed("GET", "/healthz"),
                timed("GET", "/readyz"),
                timed("GET", "/v1/whoami", headers=owner),
                timed("GET", "/v1/grants", headers=owner),
                timed("POST", "/v1/agents/main/messages", json={"content": "x"}, headers=member),
                *(
                    timed("POST", "/v1/grants", json={**grant, "sender_id": s}, headers=owner)
                    for s in ("43", "44", "45")
                ),
            )
        statuses = [answer.status_code for answer, _ in answers]
        assert statuses == [200, 200, 200, 200, 200, 503, 503, 503]
        assert all(seconds < BOUNDED for _, seconds in answers), [s for _, s in answers]
        assert answers[4][0].json()["reply"] == "granted no_grant"
        for refused, _ in answers[5:]:
            assert refused.headers["content-type"] == "application/problem+json"
            assert refused.headers["retry-after"] == "5"
            assert "the database cannot answer now" in refused.json()["detail"]
        after = await http.post("/v1/grants", json={**grant, "sender_id": "43"}, headers=owner)
        assert after.status_code == 201
    async with Database.open(db_path) as db:
        denials = await AuditLog(db).list(action="check.deny")
        assert [(e.sender_id, e.reason) for e in denials] == [("42", "no_grant")]
        assert [g.sender_id for g in await GrantStore(db).list(config_type="cron")] == ["43"]
    bad = [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert not bad, [r.getMessage() for r in bad]


async def test_serve_on_a_database_locked_before_it_starts_is_one_error_line(
    tmp_path: Path,
) -> None:
    """A database another process holds in exclusive locking mode: `actorscope serve` exits 2
    with one line naming the database and the lock, within the busy timeout."""
    async with Database.open(tmp_path / "bot.db"):
        pass  # an up-to-date database, as `actorscope migrate` leaves it
    (tmp_path / "bot.toml").write_text('database = "bot.db"\n\n[http]\nport = 0\n')
    async with sqlite_locked(tmp_path / "bot.db", exclusive=True):
        started = time.monotonic()
        served = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "actorscope",
            "serve",
            "bot.toml",
            cwd=tmp_path,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(served.communicate(), 30)
        assert time.monotonic() - started < BOUNDED + 5  # and the interpreter's start
    assert served.returncode == 2
    assert out == b""
    assert err.count(b"\n") == 1
    assert b"cannot open database" in err
    assert b"database is locked" in err

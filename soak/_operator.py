"""The operator: ``actorscope serve`` in its own process, driven over the HTTP API.

An API key is made with ``actorscope keys add`` (the CLI, as an operator would); grants are
added and removed with ``POST`` / ``DELETE /v1/grants``. Every change is kept with the time
the request was sent and the time its answer came back: the commit lies in between. A change
whose request failed (the store was restarting) is kept too, as uncertain, and tried again.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import aiohttp

__all__ = ["Change", "Operator", "make_key"]

_START_TIMEOUT = 60.0
_READY = "HTTP API on "


@dataclass(frozen=True, slots=True)
class Change:
    """One grant change the operator asked for, and what the API answered."""

    action: str  # "grant" | "revoke"
    scope: str
    sender_id: str
    sent: float
    answered: float
    status: int  # the HTTP status; 0 when the request itself failed

    @property
    def ok(self) -> bool:
        """The API says it is done (a revoke of a grant already gone is a 404)."""
        return 200 <= self.status < 300


async def make_key(database: str, env: Mapping[str, str]) -> str:
    """An operator API key made by ``actorscope keys add`` (printed once, as JSON), on the
    soak's fresh database (``--create``: it has no tables yet)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "actorscope",
        "keys",
        "add",
        "--db",
        database,
        "--tenant",
        "default",
        "--user",
        "soak-operator",
        "--role",
        "operator",
        "--create",
        "--json",
        env=dict(env),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), _START_TIMEOUT)
    if process.returncode != 0:
        raise RuntimeError(f"actorscope keys add failed: {err.decode(errors='replace').strip()}")
    return str(json.loads(out)["key"])


class Operator:
    """Runs ``actorscope serve CONFIG`` and changes grants through its API."""

    def __init__(self, config: Path, env: Mapping[str, str], log: Path, agent: str) -> None:
        self._config = config
        self._env = dict(env)
        self._log = log
        self._agent = agent
        self._process: asyncio.subprocess.Process | None = None
        self._session: aiohttp.ClientSession | None = None
        self._base = ""
        self._key = ""
        self.changes: list[Change] = []

    @property
    def base(self) -> str:
        """``http://127.0.0.1:<port>`` of the API."""
        return self._base

    @property
    def session(self) -> aiohttp.ClientSession:
        """The client, with the operator's key."""
        assert self._session is not None
        return self._session

    async def start(self, key: str) -> None:
        """Start the server and wait until it answers."""
        self._key = key
        with self._log.open("wb") as sink:
            self._process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "actorscope",
                "serve",
                str(self._config),
                env=self._env,
                stdout=asyncio.subprocess.PIPE,
                stderr=sink,
            )
        assert self._process.stdout is not None
        line = b""
        async with asyncio.timeout(_START_TIMEOUT):
            while _READY not in line.decode(errors="replace"):
                line = await self._process.stdout.readline()
                if not line:
                    raise RuntimeError(f"actorscope serve ended early (see {self._log})")
        text = line.decode().split(_READY, 1)[1].split()[0]
        self._base = text.removesuffix("/v1")
        self._session = aiohttp.ClientSession(
            headers={"Authorization": f"Bearer {self._key}"},
            timeout=aiohttp.ClientTimeout(total=10),
        )
        # Keep reading its stdout, so the pipe never fills.
        asyncio.get_running_loop().create_task(self._drain())

    async def _drain(self) -> None:
        assert self._process is not None
        assert self._process.stdout is not None
        while await self._process.stdout.readline():
            pass

    async def stop(self) -> None:
        """SIGTERM the server (bounded) and close the client."""
        if self._session is not None:
            await self._session.close()
        if self._process is not None and self._process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self._process.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self._process.wait(), 15)
            except TimeoutError:
                self._process.kill()
                await self._process.wait()

    async def change(self, action: str, scope: str, sender_id: str) -> Change:
        """Grant (``file_writer``, allow) or revoke; the change as answered."""
        assert self._session is not None
        sent = time.time()
        url = f"{self._base}/v1/grants"
        grant = {
            "agent": self._agent,
            "scope": scope,
            "sender_id": sender_id,
            "config_type": "file_writer",
        }
        try:
            if action == "grant":
                async with self._session.post(url, json=grant) as response:
                    await response.read()
                    status = response.status
            else:
                async with self._session.delete(url, params=grant) as response:
                    await response.read()
                    status = response.status
        except (aiohttp.ClientError, OSError, TimeoutError):
            status = 0
        change = Change(action, scope, sender_id, sent, time.time(), status)
        self.changes.append(change)
        return change

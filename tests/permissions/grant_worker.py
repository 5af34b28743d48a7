"""A bot worker stand-in for the multi-process PostgreSQL tests (run as a script, not collected).

``python grant_worker.py URL AGENT_ID`` opens the database, then answers one JSON command per
stdin line with one JSON line on stdout, until ``{"op": "quit"}`` or end of input. Every wait
inside a command is bounded by the ``timeout`` it carries.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from actorscope.identity import Identity, PeerKind
from actorscope.permissions import GrantStore, PermissionPolicy
from actorscope.store import Database

# Run as a script: the repository root on the path, for the tests' own helpers.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.permissions._feed_ticks import FeedTicks

SCOPE = "group:telegram:-100777"


class Worker:
    """One process's store and policy over the shared database."""

    def __init__(self, db: Database, agent_id: str, patch: pytest.MonkeyPatch) -> None:
        self.db = db
        self.agent_id = agent_id
        self.ticks = FeedTicks(db, patch)
        self.store = GrantStore(db)
        self.policy = PermissionPolicy(self.store)

    def member(self, user: str) -> Identity:
        """The group member ``user`` acting for the agent in SCOPE."""
        return Identity(
            user_id=SCOPE, sender_id=user, peer_kind=PeerKind.GROUP, agent_id=self.agent_id
        )

    def key(self, user: str) -> dict[str, Any]:
        """The grant key of ``user`` (file_writer in SCOPE)."""
        return {
            "agent_id": self.agent_id,
            "scope": SCOPE,
            "config_type": "file_writer",
            "sender_id": user,
        }

    async def allowed(self, user: str) -> bool:
        """One check of ``user``."""
        return (await self.policy.check_file_writer(self.member(user))).allowed

    async def handle(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """Run one command."""
        op = cmd["op"]
        if op == "grant":
            await self.store.grant(**self.key(cmd["user"]))
            return {"ok": True}
        if op == "revoke":
            return {"ok": await self.store.revoke(**self.key(cmd["user"]))}
        if op == "check":
            decision = await self.policy.check_file_writer(self.member(cmd["user"]))
            return {"allowed": decision.allowed, "reason": str(decision.reason), **self.state()}
        if op == "until":
            return await self.until(cmd["user"], bool(cmd["allowed"]), float(cmd["timeout"]))
        if op == "storm":
            return await self.storm(cmd)
        if op == "verify":
            return await self.verify(cmd["expected"], float(cmd["timeout"]))
        raise ValueError(f"unknown op {op!r}")

    def state(self) -> dict[str, Any]:
        """What this worker's cache and feed look like (``within_bound``: its feed's ticks come
        often enough for the freshness bound)."""
        return {
            "cached": len(self.store.cache),
            "listening": self.db.listening,
            "within_bound": self.ticks.within_bound,
        }

    async def until(self, user: str, allowed: bool, within: float) -> dict[str, Any]:
        """Check ``user`` until the answer is ``allowed`` (or the timeout passes); ``ticks``:
        how many ticks of the change feed it took to hear a change made before the command."""
        start = time.perf_counter()
        mark = self.ticks.mark()
        checks = 0
        while time.perf_counter() - start < within:
            checks += 1
            if await self.allowed(user) is allowed:
                return {
                    "reached": True,
                    "checks": checks,
                    "seconds": time.perf_counter() - start,
                    "ticks": self.ticks.ticks_to_hear(mark),
                }
            await asyncio.sleep(0.001)
        return {"reached": False, "checks": checks, "seconds": time.perf_counter() - start}

    async def storm(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """Concurrent checks of ``check_users`` with concurrent grants and revokes."""
        users: list[str] = cmd["check_users"]

        async def change(op: str, user: str) -> bool:
            if op == "grant":
                await self.store.grant(**self.key(user))
                return True
            return await self.store.revoke(**self.key(user))

        checks = [self.allowed(users[i % len(users)]) for i in range(int(cmd["checks"]))]
        changes = [change("grant", u) for u in cmd["grant"]]
        changes += [change("revoke", u) for u in cmd["revoke"]]
        results = await asyncio.wait_for(
            asyncio.gather(*checks, *changes), timeout=float(cmd["timeout"])
        )
        return {"checks": len(checks), "changed": sum(bool(r) for r in results[len(checks) :])}

    async def verify(self, expected: dict[str, bool], within: float) -> dict[str, Any]:
        """Check every user until all answers match ``expected`` (or the timeout passes)."""
        start = time.perf_counter()
        rounds = 0
        wrong: list[str] = []
        while time.perf_counter() - start < within:
            rounds += 1
            answers = await asyncio.gather(*(self.allowed(u) for u in expected))
            wrong = [u for u, a in zip(expected, answers, strict=True) if a is not expected[u]]
            if not wrong:
                break
            await asyncio.sleep(0.01)
        return {"wrong": wrong, "rounds": rounds, **self.state()}


async def main(url: str, agent_id: str) -> None:
    """Serve commands until told to quit."""
    async with Database.open(url) as db:
        with pytest.MonkeyPatch.context() as patch:
            await serve(Worker(db, agent_id, patch))


async def serve(worker: Worker) -> None:
    """Answer the commands on stdin until told to quit (or the input ends)."""
    print(json.dumps({"ready": True, **worker.state()}), flush=True)
    while True:
        line = await asyncio.to_thread(sys.stdin.readline)
        if not line:
            return
        cmd = json.loads(line)
        if cmd["op"] == "quit":
            return
        try:
            reply = await worker.handle(cmd)
        except Exception as exc:  # report to the test, which fails with it
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))

"""Agent resolution: the cached fast paths against a plain indexed SELECT on the same database."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from actorscope.agents import AgentRegistry
from actorscope.store import Database
from bench._timing import aper_call, report


async def _run() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        async with Database.open(Path(tmp) / "bench.db") as db:
            registry = AgentRegistry(db)
            for i in range(200):
                await registry.create(f"agent-{i}")
            bot = await registry.create("bot")
            uncached = AgentRegistry(db, cache_ttl=0)

            async def select() -> object:
                return await db.fetchone(
                    "SELECT * FROM agents WHERE agent_key = ? AND tenant_id = ? "
                    "AND deleted_at IS NULL",
                    ("bot", bot.tenant_id),
                )

            async def resolve_cached() -> object:
                return await registry.resolve("bot")

            async def resolve_uuid_cached() -> object:
                return await registry.resolve(bot.id)

            async def resolve_uncached() -> object:
                return await uncached.resolve("bot")

            base = await aper_call(select, number=500)
            report(
                "AgentRegistry.resolve(key), cached",
                await aper_call(resolve_cached),
                base,
                "one indexed SELECT",
                "< 0.5",
            )
            report(
                "AgentRegistry.resolve(uuid), cached",
                await aper_call(resolve_uuid_cached),
                base,
                "one indexed SELECT",
                "< 0.5",
            )
            report(
                "AgentRegistry.resolve(key), no cache",
                await aper_call(resolve_uncached, number=500),
                base,
                "one indexed SELECT",
                "~2: a tenant and an agent read",
            )


def main() -> None:
    """Print the cost of cached and uncached agent resolution vs a bare SELECT."""
    asyncio.run(_run())

"""Peers on the same Telegram stream: NoneBot2 and aiogram 3 beside bare PTB and ours.

Every side answers every person's message of the stream (``bench/_sides.py``) over the same
thin stub transport, driven offline through its library's own entry points, and all sides
alternate in one process with a garbage collection before each timed side. Each line is a
side's throughput over bare PTB's (median, min-max); ours with a permission check (PTB with
``install()`` + ``requires``) must be ahead of NoneBot2 with a ``Permission`` (issue 33).

* NoneBot2 + its Telegram adapter, a dict-lookup ``Permission`` (``bench/_nonebot.py``);
* aiogram 3, a ``Router`` with a dict-lookup filter, and the same bot with actorscope's gate
  (``install()`` + ``requires``) beside it (``bench/_aiogram.py``).

A peer whose library is not installed here is named, not measured (``pip install -e
'.[bench,aiogram]'``).
"""

from __future__ import annotations

import asyncio
import importlib.util
import tempfile
from pathlib import Path

from actorscope.store import Database
from bench._sides import (
    Side,
    alternate,
    bare_ptb,
    members,
    ratio_line,
    telegram_payloads,
    telegram_runner,
    versions,
)
from bench._streams import telegram_stream
from bench.integrations import PTB_AGENT, everyone_writes, ptb_gate

#: The agent of the aiogram gate's side (``bench/_aiogram.py``; named here, where aiogram may
#: be missing).
AIOGRAM_AGENT = "aiogram-gate"

__all__ = ["main", "run"]

UPDATES = 3_000
RUNS = 5


def _installed(module: str) -> bool:
    """True when ``module`` can be imported (its parent packages too)."""
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a parent package is missing
        return False


def peer_sides(members_: dict[int, bool], db: Database) -> tuple[list[Side], list[str]]:
    """The peer sides whose libraries are installed (a gate's on ``db``), and a line for each
    that is not."""
    sides: list[Side] = []
    missing: list[str] = []
    if _installed("nonebot.adapters.telegram"):
        from bench._nonebot import nonebot_side

        sides.append(nonebot_side(members_))
    else:
        missing.append("NoneBot2: not installed here (pip install -e '.[bench]')")
    if _installed("aiogram"):
        from bench._aiogram import aiogram_sides

        sides.extend(aiogram_sides(members_, db, AIOGRAM_AGENT))
    else:
        missing.append("aiogram: not installed here (pip install -e '.[aiogram]')")
    return sides, missing


async def run(updates: int = UPDATES, runs: int = RUNS) -> None:
    """Print each installed peer's line and ours over ``updates`` updates, ``runs`` runs."""
    print(
        versions(
            "python-telegram-bot",
            "pydantic",
            "nonebot2",
            "nonebot-adapter-telegram",
            "aiogram",
        )
    )
    payloads = telegram_payloads(telegram_stream(2 * updates), updates)
    with tempfile.TemporaryDirectory() as tmp:
        async with Database.open(Path(tmp) / "bench.db") as db:
            await everyone_writes(db, PTB_AGENT)
            await everyone_writes(db, AIOGRAM_AGENT)
            peers, missing = peer_sides(members(payloads), db)
            ours = [telegram_runner(db), ptb_gate(db)]
            result = await alternate([bare_ptb, *ours, *peers], payloads, runs)
    base = bare_ptb.label
    for side in [*ours, *peers]:
        ratio_line(result, side.label, base, f"{side.label} / {base}, stub", None)
    aiogram = [peer.label for peer in peers if peer.label.startswith("aiogram")]
    if len(aiogram) == 2:  # bare, then with the gate (``aiogram_sides``)
        bare, gated = aiogram
        ratio_line(result, gated, bare, f"aiogram with actorscope's gate / {bare}", None)
    for peer in peers:
        if peer.label.startswith("NoneBot2"):
            ratio_line(
                result,
                ours[1].label,
                peer.label,
                f"PTB + actorscope gate / {peer.label} (ahead)",
                1.0,
            )
    for line in missing:
        print(line)


def main() -> None:
    """Print the peer lines."""
    asyncio.run(run())

"""Retention of the audit trail: ``AuditLog.prune`` and ``[audit] keep`` in a running bot
(``actorscope audit prune``: tests/cli/test_audit_prune.py)."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from tests._wait import wait_until

from actorscope.agents import AgentRegistry
from actorscope.bots import BotConfig, run_bots
from actorscope.bots._app import keep_audit
from actorscope.errors import ConfigError
from actorscope.permissions import AuditEntry, AuditLog
from actorscope.permissions._audit import AuditAction
from actorscope.store import Database

DAY = 86_400.0


async def rows(db: Database, *ages: float) -> list[AuditEntry]:
    """One check.deny row per age (seconds ago), then the whole log, oldest first."""
    log = AuditLog(db)
    for n, age in enumerate(ages):
        entry = AuditEntry(
            action=AuditAction.CHECK_DENY,
            sender_id=str(n),
            scope="group:telegram:-100",
            reason="no_grant",
            created_at=Database.utc_at(time.time() - age),
        )
        await log.write(entry)
    return list(reversed(await log.list(limit=1000)))


async def test_prune_deletes_older_rows_in_batches_and_exports_them_first(
    db: Database,
) -> None:
    """Rows before the cut-off go, oldest first, a batch a transaction, each handed to the
    export before its batch is deleted; newer rows stay."""
    everything = await rows(db, 5 * DAY, 4 * DAY, 3 * DAY, 2 * DAY, 60)
    exported: list[list[str]] = []

    def export(entries: Sequence[AuditEntry]) -> None:
        exported.append([e.sender_id for e in entries])

    pruned = await AuditLog(db).prune(Database.utc_at(time.time() - DAY), batch=3, export=export)
    assert pruned == 4
    assert exported == [["0", "1", "2"], ["3"]]
    left = await AuditLog(db).list()
    assert [e.sender_id for e in left] == ["4"]
    assert [e.id for e in everything][-1] == left[0].id
    assert await AuditLog(db).prune(Database.utc_at(time.time() - DAY)) == 0
    with pytest.raises(ConfigError, match="batch must be at least 1"):
        await AuditLog(db).prune("2000-01-01", batch=0)


async def test_an_export_that_fails_deletes_nothing(db: Database) -> None:
    """When writing the export fails, the batch stays: nothing is gone unexported."""
    await rows(db, 3 * DAY, 2 * DAY)

    def broken(entries: Sequence[AuditEntry]) -> None:
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        await AuditLog(db).prune(Database.utc_at(time.time() - DAY), export=broken)
    assert len(await AuditLog(db).list()) == 2


async def test_keep_audit_prunes_at_once_and_then_again(db: Database) -> None:
    """What [audit] keep runs: rows older than keep go when it starts, and later ones too."""
    await rows(db, 3 * DAY, 60)
    task = asyncio.create_task(keep_audit(db, DAY, interval=0.05))
    try:

        async def one_left() -> bool:
            return len(await AuditLog(db).list()) == 1

        await wait_until(one_left, 10)
        await rows(db, 2 * DAY)  # written after the first prune: the next round takes it
        await wait_until(one_left, 10)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


@pytest.mark.parametrize(
    ("keep", "problem"),
    [
        ('"90 days"', "audit.keep: must be an age such as 90d, 12h or 30m, got '90 days'"),
        ('"30s"', "audit.keep: must be at least 60 seconds, got '30s'"),
        ("90", "audit.keep: must be an age such as 90d, 12h or 30m, got 90"),
    ],
)
def test_a_bad_keep_is_one_line(tmp_path: Path, keep: str, problem: str) -> None:
    """keep is an age of at least a minute, written as text with its unit."""
    path = tmp_path / "bot.toml"
    path.write_text(
        f'handler = "mybot:handle"\n[telegram]\ntoken_env = "T"\n[audit]\nkeep = {keep}\n'
    )
    with pytest.raises(ConfigError) as caught:
        BotConfig.load(path)
    assert str(caught.value) == f"{path}:5: {problem}"


async def test_a_running_bot_applies_keep(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """actorscope run with [audit] keep = "1d" deletes the rows older than a day on start."""
    async with Database.open(tmp_path / "bot.db") as db:
        await AgentRegistry(db).ensure("main")
        await rows(db, 3 * DAY, 60)
    (tmp_path / "mybot.py").write_text("async def handle(request):\n    return None\n")
    path = tmp_path / "bot.toml"
    path.write_text(
        'database = "bot.db"\nhandler = "mybot:handle"\n[telegram]\n[audit]\nkeep = "1d"\n'
    )
    monkeypatch.delitem(sys.modules, "mybot", raising=False)
    config = BotConfig.load(path)
    assert config.audit is not None
    assert config.audit.keep == DAY
    stop = asyncio.Event()
    task = asyncio.create_task(
        run_bots(config, sandbox=True, out=lambda _: None, stop=stop, handle_signals=False)
    )
    try:
        async with Database.open(tmp_path / "bot.db") as db:
            left: list[AuditEntry] = []

            async def pruned() -> bool:
                left[:] = await AuditLog(db).list()
                return len(left) == 1

            await wait_until(pruned, 20)
    finally:
        stop.set()
        await asyncio.wait_for(task, 20)
    assert [e.sender_id for e in left] == ["1"]

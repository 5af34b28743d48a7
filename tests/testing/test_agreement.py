"""The paths agree: ``actorscope run --sandbox`` and ``telegram_sim``; ``actorscope run``, PTB
and aiogram.

One event sequence (a refused message, ``/addwriter`` as a reply, an allowed message, a
redelivered update) goes through ``actorscope run`` in sandbox mode (the TelegramRunner polling
the Bot API emulator over loopback, the host, the user's handler) and through the
``telegram_sim`` fixture serving the same handler. Both must send the same messages, ignore
the same update, and leave the same audit rows: a path that skipped a stage (the writer
command, dedup) would differ. The same holds across frameworks: the sequence through the
``actorscope run`` path, a PTB application and an aiogram dispatcher (each with ``install()``)
gives the same outcomes, replies and audit rows.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

from aiogram import Dispatcher, F, Router
from aiogram.types import Message
from telegram import Update
from telegram.ext import ContextTypes, MessageHandler, filters
from tests._wait import wait_until

from actorscope.bots import BotConfig, BotServices, run_bots
from actorscope.channels import ChannelConfig, Outcome
from actorscope.integrations import aiogram, ptb
from actorscope.messages import RunRequest
from actorscope.sandbox._telegram.console import TelegramConsole
from actorscope.store import Database
from actorscope.testing import AgentEnv, TelegramSim

HANDLER = """
from actorscope.bots import BotServices
from actorscope.messages import RunRequest


async def handle(request: RunRequest) -> str:
    decision = await BotServices.current().policy.check_file_writer()
    return f"{request.content}: {'ok' if decision.allowed else 'no'} ({decision.reason})"
"""
CONFIG = """
handler = "agreebot:handle"
database = "bot.db"
agent = "main"
[telegram]
token_env = "AS_AGREEMENT_UNUSED_TOKEN"
group_policy = "open"
require_mention = false
"""
# In the order things happened: a denial's row carries its check's time but is group-committed,
# so a grant change made meanwhile may take a lower id (production) or not (the kit settles).
AUDIT = (
    "SELECT sender_id, actor, scope, config_type, action, permission, reason FROM audit_log"
    " ORDER BY created_at, id"
)
_UPDATE = re.compile(r"-> update \d+: message \(message (\d+)\)")


def bot_lines(printed: list[str]) -> list[str]:
    """What the bot sent, as the sandbox prompt shows it."""
    return [line for line in printed if line.startswith("[bot ")]


async def until(printed: list[str], start: int, seen: Callable[[str], bool]) -> str:
    """Wait (10 s at most) for a printed line after ``start`` that ``seen`` accepts."""
    await wait_until(lambda: any(seen(line) for line in printed[start:]), 10)
    return next(line for line in printed[start:] if seen(line))


async def sandbox_session(printed: list[str]) -> AsyncIterator[str]:
    """The sequence typed at the sandbox prompt, each step waiting for the bot's answer."""
    start = len(printed)
    yield "/as bob @devs hello"
    await until(printed, start, lambda line: "hello: no" in line)
    said = next(m for line in printed[start:] if (m := _UPDATE.search(line)))
    start = len(printed)
    yield "/as alice @devs"
    yield f"/reply {said.group(1)} /addwriter"
    await until(printed, start, lambda line: "as a writer" in line)
    start = len(printed)
    yield "/as bob @devs write"
    await until(printed, start, lambda line: "write: ok" in line)
    start = len(printed)
    yield "/again"
    await until(printed, start, lambda line: "ignored by the bot" in line)


async def test_sandbox_and_telegram_sim_agree(tmp_path: Path, telegram_sim: TelegramSim) -> None:
    """Same replies, same ignored duplicate, same audit rows through production and the sim."""
    (tmp_path / "agreebot.py").write_text(HANDLER)
    (tmp_path / "bot.toml").write_text(CONFIG)
    config = BotConfig.load(tmp_path / "bot.toml")
    printed: list[str] = []
    await run_bots(
        config,
        sandbox=True,
        out=printed.append,
        lines=sandbox_session(printed),
        handle_signals=False,
    )
    assert any(line.endswith("ignored by the bot: duplicate") for line in printed)
    async with Database.open(config.database) as db:
        production_audit = await db.fetchall(AUDIT)

    # The same world, the same handler by the same string (services bound as `actorscope run`
    # binds them).
    section = config.section("telegram")
    assert section is not None
    telegram_sim.config = section.config
    telegram_sim.emu.populate()
    shown: list[str] = []
    TelegramConsole(telegram_sim.emu, shown.append)
    env = telegram_sim.env
    telegram_sim.serve(config.handler, search_dir=config.base_dir)
    state = telegram_sim.emu.state
    alice, bob, devs = state.user("@alice"), state.user("@bob"), state.chat("@devs")
    said = await telegram_sim.message(bob, "hello", devs)
    command = await telegram_sim.message(
        alice, "/addwriter", devs, reply_to=said.payload["message"]["message_id"]
    )
    wrote = await telegram_sim.message(bob, "write", devs)
    again = await telegram_sim.redeliver(wrote)
    assert [e.outcome for e in (said, command, wrote, again)] == [
        Outcome.ADMITTED,
        Outcome.WRITER_COMMAND,
        Outcome.ADMITTED,
        Outcome.DUPLICATE,
    ]
    simulated_audit = await env.db.fetchall(AUDIT)
    # The sim saw the handler's own decisions: those its replies report in both runs.
    decided = [
        (d.fields["allowed"], d.fields["reason"])
        for event in (said, command, wrote, again)
        for d in event.decisions
    ]
    assert decided == [("false", "no_grant"), ("true", "granted")]

    assert bot_lines(shown) == bot_lines(printed)
    assert len(bot_lines(shown)) == 3
    assert [tuple(row) for row in simulated_audit] == [tuple(row) for row in production_audit]
    assert simulated_audit


async def _answer(content: str) -> str:
    """What every path's bot says: the ``actorscope run`` handler's reply, from its services."""
    decision = await BotServices.current().policy.check_file_writer()
    return f"{content}: {'ok' if decision.allowed else 'no'} ({decision.reason})"


async def _serve_ptb(sim: TelegramSim, config: ChannelConfig) -> None:
    """A PTB application with install() whose text handler answers as ``_answer``."""
    app = sim.application_builder().build()
    ptb.install(app, database="unused.db", config=config)

    @ptb.bound
    async def text(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.effective_message is not None
        prepared = ptb.gate(context).prepared(update)
        assert prepared is not None
        content = prepared.request.content
        await update.effective_message.reply_text(await _answer(content))

    app.add_handler(MessageHandler(filters.TEXT & ~filters.COMMAND, text))
    await sim.serve_application(app)


async def _serve_aiogram(sim: TelegramSim, config: ChannelConfig) -> None:
    """An aiogram dispatcher with install() whose text handler answers as ``_answer``."""
    dp = Dispatcher()
    aiogram.install(dp, database="unused.db", config=config)
    router = Router(name="agree")

    @router.message(F.text, ~F.text.startswith("/"))
    async def text(message: Message, run_request: RunRequest) -> None:
        await message.reply(await _answer(run_request.content))

    dp.include_router(router)
    await sim.serve_dispatcher(dp)


async def _run_path(sim: TelegramSim, config: ChannelConfig, base: Path) -> None:
    """The ``actorscope run`` path: the production runner and run step, the handler by name."""
    sim.config = config
    sim.serve("agreebot:handle", search_dir=base)


#: What a path made of the sequence: each event's outcome, what the bot sent, the audit rows.
Seen = tuple[list[Outcome | None], list[str], list[tuple[Any, ...]]]


async def _sequence(sim: TelegramSim) -> Seen:
    """The event sequence; what became of each event, what the bot sent, the audit rows."""
    state = sim.emu.state
    alice, bob, devs = state.user("@alice"), state.user("@bob"), state.chat("@devs")
    said = await sim.message(bob, "hello", devs)
    command = await sim.message(
        alice, "/addwriter", devs, reply_to=said.payload["message"]["message_id"]
    )
    wrote = await sim.message(bob, "write", devs)
    again = await sim.redeliver(wrote)
    listed = await sim.message(bob, "/writers", devs)
    events = (said, command, wrote, again, listed)
    sent = [m["text"] for m in sim.emu.sent_messages()]
    rows = [tuple(row) for row in await sim.env.db.fetchall(AUDIT)]
    return [e.outcome for e in events], sent, rows


async def test_aiogram_ptb_and_actorscope_run_agree(tmp_path: Path) -> None:
    """One event sequence through ``actorscope run``'s path, a PTB application with install()
    and an aiogram dispatcher with install(), each in its own world: the same outcomes, the
    same replies (each carrying its decision) and the same audit rows."""
    (tmp_path / "agreebot.py").write_text(HANDLER)
    (tmp_path / "bot.toml").write_text(CONFIG)
    bot = BotConfig.load(tmp_path / "bot.toml")
    section = bot.section("telegram")
    assert section is not None
    config = section.config
    seen: dict[str, Seen] = {}
    paths: tuple[tuple[str, Callable[[TelegramSim], Awaitable[None]]], ...] = (
        ("run", lambda sim: _run_path(sim, config, tmp_path)),
        ("ptb", lambda sim: _serve_ptb(sim, config)),
        ("aiogram", lambda sim: _serve_aiogram(sim, config)),
    )
    for name, serve in paths:
        (tmp_path / name).mkdir()
        async with AgentEnv.open(tmp_path / name / "actorscope.db") as env, TelegramSim(env) as sim:
            sim.emu.populate()
            await serve(sim)
            seen[name] = await _sequence(sim)
    outcomes, sent, rows = seen["run"]
    assert outcomes == [
        Outcome.ADMITTED,
        Outcome.WRITER_COMMAND,
        Outcome.ADMITTED,
        Outcome.DUPLICATE,
        Outcome.WRITER_COMMAND,
    ]
    assert sent[0] == "hello: no (no_grant)"
    assert sent[1].startswith("added @bob (")
    assert sent[2] == "write: ok (granted)"
    assert sent[3].startswith("writers: @bob (")
    assert len(sent) == 4
    assert [(row[3], row[4], row[6]) for row in rows] == [
        ("file_writer", "check.deny", "no_grant"),
        ("file_writer", "grant.add", ""),
    ]
    assert seen["ptb"] == seen["run"]
    assert seen["aiogram"] == seen["run"]

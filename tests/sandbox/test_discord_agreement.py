"""The simulator and production agree on Discord: ``actorscope run --sandbox`` and ``discord_sim``.

One event sequence (a refused message, ``!addwriter`` by the guild's owner, an allowed message,
the ``/writers`` slash command, a webhook's post) goes through ``actorscope run`` in sandbox
mode (the DiscordRunner on a gateway session with the Discord emulator over loopback, the host,
the user's handler) and through the ``discord_sim`` fixture (the same runner on its own
emulator, the testing kit's run step) serving the same handler in a world with the same ids.
Both must send the same replies, see the same decisions, ignore the same event and leave the
same audit rows.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from pathlib import Path

from actorscope.bots import BotConfig, run_bots
from actorscope.channels import IgnoreReason, Outcome
from actorscope.sandbox._world import sandbox_world
from actorscope.store import Database
from actorscope.testing import DiscordSim

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
[discord]
token_env = "AS_AGREEMENT_UNUSED_DISCORD_TOKEN"
require_mention = false
"""
# In the order things happened: a denial's row carries its check's time but is group-committed,
# so a grant change made meanwhile may take a lower id (production) or not (the kit settles).
AUDIT = (
    "SELECT sender_id, actor, scope, config_type, action, permission, reason FROM audit_log"
    " ORDER BY created_at, id"
)
_BOT_LINE = re.compile(r"^\[bot -> #(\S+) msg \d+\] (.*)$", re.DOTALL)


def bot_replies(printed: list[str]) -> list[tuple[str, str]]:
    """What the Discord bot sent, as the sandbox prompt shows it: (channel, text)."""
    return [(m.group(1), m.group(2)) for line in printed if (m := _BOT_LINE.match(line))]


class Printed:
    """What ``run_bots`` printed, and a way to wait for a line."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._more = asyncio.Event()

    def out(self, line: str) -> None:
        """``run_bots``'s output."""
        self.lines.append(line)
        self._more.set()

    async def until(self, start: int, text: str) -> None:
        """Wait (10 s at most) for a line printed after ``start`` that contains ``text``."""
        async with asyncio.timeout(10):
            while not any(text in line for line in self.lines[start:]):
                self._more.clear()
                await self._more.wait()


async def sandbox_session(printed: Printed) -> AsyncIterator[str]:
    """The sequence typed at the prompt, each step waiting for the bot's answer."""
    yield "/discord"
    for who, line, answer in (
        ("bob", "hello", "hello: no"),
        ("alice", "!addwriter @bob", "as a writer"),
        ("bob", "write", "write: ok"),
        ("bob", "/slash writers", "writers: "),
    ):
        start = len(printed.lines)
        yield f"/as {who} @general"
        yield line
        await printed.until(start, answer)
    start = len(printed.lines)
    yield "/webhook ci hi"
    await printed.until(start, "ignored by the bot")


async def test_sandbox_and_discord_sim_agree(tmp_path: Path, discord_sim: DiscordSim) -> None:
    """Same replies, decisions, ignored webhook and audit rows through production and the sim."""
    (tmp_path / "agreebot.py").write_text(HANDLER)
    (tmp_path / "bot.toml").write_text(CONFIG)
    config = BotConfig.load(tmp_path / "bot.toml")
    printed = Printed()
    await run_bots(
        config,
        sandbox=True,
        out=printed.out,
        lines=sandbox_session(printed),
        handle_signals=False,
    )
    assert any(line.endswith("ignored by the bot: nonperson_sender") for line in printed.lines)
    async with Database.open(config.database) as db:
        production_audit = await db.fetchall(AUDIT)

    # The same world with the same ids (sandbox_world() numbers its snowflakes alike each
    # time), the same handler by the same string.
    world = sandbox_world()
    assert f"discord bot: {world.bot.username} (id {world.bot.id})" in printed.lines
    section = config.section("discord")
    assert section is not None
    discord_sim.config = section.config
    discord_sim.serve(config.handler, search_dir=config.base_dir)
    alice, bob = (discord_sim.user(n, user_id=world.user(n).id) for n in ("alice", "bob"))
    guild = world.guild()
    lab = discord_sim.guild(guild.name, guild_id=guild.id, owner=alice)
    general = discord_sim.channel(lab, "general", channel_id=world.channel("general").id)
    said = await discord_sim.message(bob, "hello", general)
    command = await discord_sim.message(alice, f"!addwriter <@{bob.id}>", general, mentions=[bob])
    wrote = await discord_sim.message(bob, "write", general)
    listed = await discord_sim.slash(bob, "writers", general)
    hooked = await discord_sim.webhook(general, "hi", name="ci")
    events = (said, command, wrote, listed, hooked)
    assert [e.outcome for e in events] == [
        Outcome.ADMITTED,
        Outcome.WRITER_COMMAND,
        Outcome.ADMITTED,
        Outcome.WRITER_COMMAND,
        Outcome.IGNORED,
    ]
    assert hooked.ignored is IgnoreReason.NONPERSON_SENDER
    simulated_audit = await discord_sim.env.db.fetchall(AUDIT)
    decided = [(d.fields["allowed"], d.fields["reason"]) for e in events for d in e.decisions]
    assert decided == [("false", "no_grant"), ("true", "granted")]

    sent = [("general", str(o.fields["text"])) for e in events for o in e.sent]
    assert sent == bot_replies(printed.lines)
    assert len(sent) == 4
    assert [tuple(row) for row in simulated_audit] == [tuple(row) for row in production_audit]
    assert simulated_audit

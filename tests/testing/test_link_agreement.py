"""The paths agree on links (issue 34): ``actorscope run``, the PTB integration with the
discord.py Cog, and the kit's simulators.

One script: Alice asks for a link code in her Telegram DM and Carol (the same human) sends it
from her Discord DM; an operator grants ``file_writer`` to the person in two Telegram groups
and the Discord guild and denies Alice's Telegram account in one of the groups; each account
writes where it may; Carol unlinks; each writes again. It goes through ``actorscope run``
(``run_bots`` with the Telegram and Discord emulators, typed at the sandbox prompt), a PTB
application with ``install(links="grants")`` beside a discord.py bot with
``ActorscopeCog(links="grants")``, and the kit's two simulators serving the ``actorscope run``
handler. Each gives the same decisions: allowed or denied, the reason, and the person (the
first person seen is ``P1``).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol

from discord.ext import commands
from telegram import Update
from telegram.ext import ContextTypes, MessageHandler, filters
from tests._wait import wait_until

from actorscope.bots import BotConfig, BotServices, run_bots
from actorscope.channels.discord import bot_intents
from actorscope.integrations import ptb
from actorscope.integrations.discord_ext import ActorscopeCog, bound, services
from actorscope.permissions import GrantStore, LinkMode, LinkStore
from actorscope.store import Database
from actorscope.testing import AgentEnv, DiscordSim, SimulatedEvent, TelegramSim

HANDLER = """
from actorscope.bots import BotServices
from actorscope.messages import RunRequest


async def handle(request: RunRequest) -> str:
    if request.content.endswith("where"):
        return f"scope {request.user_id}"
    decision = await BotServices.current().policy.check_file_writer()
    verdict = "ok" if decision.allowed else "no"
    return f"{request.content}: {verdict} ({decision.reason}) {decision.person or '-'}"
"""
CONFIG = """
handler = "linkbot:handle"
database = "bot.db"
agent = "main"
[identity]
links = "grants"
[telegram]
token_env = "AS_LINK_AGREEMENT_UNUSED_TOKEN"
group_policy = "open"
require_mention = false
[discord]
token_env = "AS_LINK_AGREEMENT_UNUSED_DISCORD_TOKEN"
require_mention = false
"""
CODE = re.compile(r"your link code is ([A-Z0-9]{5}-[A-Z0-9]{5})")
VERDICT = re.compile(r"^(\S+): (ok|no) \((\w+)\) (\S+)$")
_BOT_LINE = re.compile(r"^\[bot -> [^\]]+\] (.*)$", re.DOTALL)


class Driver(Protocol):
    """One path: who says what where, and the database an operator changes."""

    db: Database

    async def telegram(self, who: str, text: str, chat: str | None = None) -> str:
        """``who`` (alice) writes ``text`` in Telegram ``chat`` (``None``: the DM); the reply."""
        ...

    async def discord(self, who: str, text: str, channel: str | None = None) -> str:
        """``who`` (carol) writes ``text`` in Discord ``channel`` (``None``: the DM); the reply."""
        ...


async def script(path: Driver) -> list[tuple[str, ...]]:
    """The link script through ``path``: each step's outcome, persons numbered."""
    code = CODE.search(await path.telegram("alice", "/link"))
    assert code is not None
    linked = await path.discord("carol", f"!link {code.group(1)}")
    assert linked.startswith("linked: discord:"), linked
    devs = (await path.telegram("alice", "where", "devs")).removeprefix("scope ")
    ops = (await path.telegram("alice", "where", "ops")).removeprefix("scope ")
    member = (await path.discord("carol", "!where", "general")).removeprefix("scope ")
    guild = member.rsplit(":user:", 1)[0] + ":*"
    (link,) = [x for x in await LinkStore(path.db).links() if x.account.startswith("telegram:")]
    grants = GrantStore(path.db)
    for scope in (devs, ops, guild):
        await grants.grant(
            agent_id="main", scope=scope, config_type="file_writer", sender_id=link.person
        )
    await grants.grant(
        agent_id="main",
        scope=ops,
        config_type="file_writer",
        sender_id=link.account.removeprefix("telegram:"),
        permission="deny",
    )
    said = [
        await path.telegram("alice", "write", "devs"),
        await path.telegram("alice", "write", "ops"),
        await path.discord("carol", "!write", "general"),
        (await path.discord("carol", "!unlink")).split(":")[0],
        await path.telegram("alice", "write", "devs"),
        await path.telegram("alice", "write", "ops"),
        await path.discord("carol", "!write", "general"),
    ]
    persons: dict[str, str] = {}
    steps: list[tuple[str, ...]] = []
    for reply in said:
        verdict = VERDICT.match(reply)
        if verdict is None:
            steps.append((reply,))
            continue
        content, allowed, reason, person = verdict.groups()
        if person != "-":
            person = persons.setdefault(person, f"P{len(persons) + 1}")
        steps.append((content, allowed, reason, person))
    return steps


EXPECTED = [
    ("write", "ok", "granted", "P1"),
    ("write", "no", "denied_by_grant", "P1"),
    ("!write", "ok", "granted", "P1"),
    ("unlinked",),
    ("write", "no", "no_grant", "-"),
    ("write", "no", "denied_by_grant", "-"),
    ("!write", "no", "no_grant", "-"),
]


# -- actorscope run ------------------------------------------------------------------------------


class Prompt:
    """``run_bots`` at the sandbox prompt: a line typed, the bot's one answer awaited."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.printed: list[str] = []
        self.typed: asyncio.Queue[str | None] = asyncio.Queue()

    async def lines(self) -> AsyncIterator[str]:
        """What is typed at the prompt, until the script is done."""
        while (line := await self.typed.get()) is not None:
            yield line

    async def _answer(self, *lines: str) -> str:
        start = len(self.printed)
        for line in lines:
            await self.typed.put(line)
        await wait_until(lambda: any(_BOT_LINE.match(x) for x in self.printed[start:]), 10)
        found = next(m for x in self.printed[start:] if (m := _BOT_LINE.match(x)))
        return found.group(1)

    async def telegram(self, who: str, text: str, chat: str | None = None) -> str:
        """Typed at the Telegram prompt."""
        return await self._answer(f"/as {who}{f' @{chat}' if chat else ''} {text}")

    async def discord(self, who: str, text: str, channel: str | None = None) -> str:
        """Typed at the Discord prompt."""
        return await self._answer(f"/discord /as {who}{f' @{channel}' if channel else ''} {text}")


async def _through_run(folder: Path) -> list[tuple[str, ...]]:
    config = BotConfig.load(folder / "bot.toml")
    async with Database.open(config.database) as operator:
        prompt = Prompt(operator)
        running = asyncio.create_task(
            run_bots(
                config,
                sandbox=True,
                out=prompt.printed.append,
                lines=prompt.lines(),
                handle_signals=False,
            )
        )
        try:
            await wait_until(lambda: any("discord bot:" in x for x in prompt.printed), 10)
            steps = await script(prompt)
        finally:
            await prompt.typed.put(None)
            await asyncio.wait_for(running, 10)
    return steps


# -- the kit and the integrations ----------------------------------------------------------------


class Sims:
    """The kit's two simulators on one database, whatever serves them."""

    def __init__(self, telegram: TelegramSim, discord: DiscordSim) -> None:
        self.tg, self.dc = telegram, discord
        self.db = telegram.env.db
        telegram.user("alice")
        telegram.supergroup("devs")
        telegram.group("ops")
        discord.user("carol")
        self.general = discord.channel(discord.guild("lab"), "general")

    async def telegram(self, who: str, text: str, chat: str | None = None) -> str:
        """Through the Telegram simulator."""
        return _one(await self.tg.message(who, text, chat))

    async def discord(self, who: str, text: str, channel: str | None = None) -> str:
        """Through the Discord simulator."""
        if channel is None:
            return _one(await self.dc.dm(who, text))
        return _one(await self.dc.message(who, text, self.general))


def _one(event: SimulatedEvent) -> str:
    (sent,) = [seen.fields["text"] for seen in event.sent]
    return str(sent)


async def _serve_run_handler(tg: TelegramSim, dc: DiscordSim, base: Path) -> None:
    """The kit: each simulator serves the ``actorscope run`` handler by name."""
    tg.serve("linkbot:handle", search_dir=base)
    dc.serve("linkbot:handle", search_dir=base)


async def _answer(content: str) -> str:
    """What the integrations' handlers say: the ``actorscope run`` handler's reply."""
    decision = await BotServices.current().policy.check_file_writer()
    verdict = "ok" if decision.allowed else "no"
    return f"{content}: {verdict} ({decision.reason}) {decision.person or '-'}"


class CogBot(commands.Bot):
    """A discord.py bot with ``ActorscopeCog(links="grants")``, ``!where`` and ``!write``."""

    def __init__(self, workspace: Path) -> None:
        super().__init__(command_prefix="!", intents=bot_intents())
        self.cog = ActorscopeCog(self, database="unused.db", workspace=workspace, links="grants")

    async def setup_hook(self) -> None:
        """Add the Cog and the two commands."""
        await self.add_cog(self.cog)

        @self.command(name="where")
        async def where(ctx: commands.Context[Any]) -> None:
            async with bound(ctx) as who:
                await ctx.reply(f"scope {who.user_id}", mention_author=False)

        @self.command(name="write")
        async def write(ctx: commands.Context[Any]) -> None:
            async with bound(ctx):
                decision = await services(ctx).policy.check_file_writer()
            verdict = "ok" if decision.allowed else "no"
            person = decision.person or "-"
            text = f"{ctx.message.content}: {verdict} ({decision.reason}) {person}"
            await ctx.reply(text, mention_author=False)


async def _serve_integrations(tg: TelegramSim, dc: DiscordSim, base: Path) -> None:
    """A PTB application with install(links="grants") and the discord.py Cog bot."""
    assert tg.config is not None
    app = tg.application_builder().build()
    ptb.install(app, database="unused.db", config=tg.config, links="grants")

    @ptb.bound
    async def text(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.effective_message is not None
        prepared = ptb.gate(context).prepared(update)
        assert prepared is not None
        request = prepared.request
        if request.content == "where":
            await update.effective_message.reply_text(f"scope {request.user_id}")
        else:
            await update.effective_message.reply_text(await _answer(request.content))

    app.add_handler(MessageHandler(filters.TEXT & ~filters.COMMAND, text))
    await tg.serve_application(app)
    await dc.serve_bot(CogBot(base / "workspace"))


Serve = Callable[[TelegramSim, DiscordSim, Path], Awaitable[None]]


async def _through_sims(tmp_path: Path, name: str, serve: Serve) -> list[tuple[str, ...]]:
    (tmp_path / "linkbot.py").write_text(HANDLER)
    (tmp_path / "bot.toml").write_text(CONFIG)
    bot = BotConfig.load(tmp_path / "bot.toml")
    telegram, discord = bot.section("telegram"), bot.section("discord")
    assert telegram is not None
    assert discord is not None
    folder = tmp_path / name
    folder.mkdir()
    async with (
        AgentEnv.open(folder / "actorscope.db", links=LinkMode.GRANTS) as env,
        TelegramSim(env, config=telegram.config) as tg,
        DiscordSim(env, config=discord.config) as dc,
    ):
        sims = Sims(tg, dc)
        await serve(tg, dc, tmp_path)
        return await script(sims)


async def test_run_the_integrations_and_the_kit_agree_on_links(tmp_path: Path) -> None:
    """The same link script through ``actorscope run``, PTB with the discord.py Cog, and the
    kit's simulators: the same decisions (allowed, reason, person) at every step."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "linkbot.py").write_text(HANDLER)
    (run / "bot.toml").write_text(CONFIG)
    seen = {
        "run": await _through_run(run),
        "integrations": await _through_sims(tmp_path, "integrations", _serve_integrations),
        "kit": await _through_sims(tmp_path, "kit", _serve_run_handler),
    }
    assert seen["run"] == EXPECTED
    assert seen["integrations"] == seen["run"]
    assert seen["kit"] == seen["run"]

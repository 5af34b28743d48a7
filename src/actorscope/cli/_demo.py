"""``actorscope demo``: a scripted group conversation through the real adapters, offline.

First the identity table (scope vs actor for sample events), then a conversation played by the
testing kit's simulators: Telegram through python-telegram-bot and the Bot API emulator,
Discord through discord.py's gateway parsers, a sub-agent announce through propagation, and a
permission check per turn on an embedded SQLite database (``--db``), which stays so that
``actorscope audit --db ...`` shows the denials afterwards. The script is
``demo.scenario.yaml`` next to this module; its expectations are checked as it plays.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from actorscope.agents import AgentRegistry
from actorscope.cli._app import app, console_for_tables
from actorscope.identity import (
    DISCORD,
    TELEGRAM,
    Identity,
    PeerKind,
    SenderKind,
    discord_identity,
    discord_nonperson_identity,
    http_identity,
    session_key,
    system_identity,
    telegram_identity,
)
from actorscope.permissions import GrantStore, PermissionPolicy
from actorscope.propagation import OriginSigner
from actorscope.store import Database

if TYPE_CHECKING:  # the test kit loads the platform libraries: imported where it plays
    from actorscope.testing.scenario import StepOutcome

__all__ = [
    "DEMO_AGENT",
    "SAMPLES",
    "Sample",
    "conversation_table",
    "demo",
    "identity_table",
    "play_demo",
]

#: The agent the demo's conversation runs as; re-created fresh on every run.
DEMO_AGENT = "demo"
DEFAULT_DB = Path("actorscope.db")


@dataclass(frozen=True, slots=True)
class Sample:
    """A built-in sample event: what happened, its identity and session key."""

    context: str
    identity: Identity
    session: str


def _samples() -> tuple[Sample, ...]:
    alice, bob, carol = 4242, 5151, 9001
    group, forum = -4100200300, -1001234567890
    guild, general, thread = 81234567890123456, 81234567890123457, 81234567890123999

    def tg(identity: Identity, chat: int, topic: int | None = None) -> str:
        return session_key("main", TELEGRAM, identity.peer_kind, chat, topic_id=topic)

    def dc(identity: Identity, chat: int, thread_id: int | None = None) -> str:
        return session_key("main", DISCORD, identity.peer_kind, chat, thread_id=thread_id)

    tg_dm = telegram_identity(alice, "private", alice)
    tg_group = telegram_identity(group, "group", alice)
    tg_topic = telegram_identity(forum, "supergroup", bob)
    tg_anon = telegram_identity(forum, "supergroup", 1087968824)
    tg_post = telegram_identity(-1009876543210, "channel", None, sender_kind=SenderKind.CHANNEL)
    dm_channel = 81234567890120001  # a DM channel has its own snowflake, not the user's
    dc_dm = discord_identity(carol, chat_id=dm_channel)
    dc_guild = discord_identity(carol, chat_id=general, guild_id=guild)
    dc_hook = discord_nonperson_identity(
        777888, chat_id=general, guild_id=guild, sender_kind=SenderKind.WEBHOOK
    )
    http = http_identity("api-user-17")
    ticker = system_identity(tg_group.user_id, channel=tg_group.channel)
    ticker_origin = system_identity(tg_group.user_id, str(alice), channel=tg_group.channel)
    return (
        Sample("Telegram private chat (alice)", tg_dm, tg(tg_dm, alice)),
        Sample("Telegram group (alice)", tg_group, tg(tg_group, group)),
        Sample("Telegram forum topic 7 (bob)", tg_topic, tg(tg_topic, forum, 7)),
        Sample("Telegram anonymous admin", tg_anon, tg(tg_anon, forum)),
        Sample("Telegram channel post", tg_post, tg(tg_post, -1009876543210)),
        Sample("Discord DM (carol)", dc_dm, dc(dc_dm, dm_channel)),
        Sample("Discord guild channel (carol)", dc_guild, dc(dc_guild, general)),
        Sample("Discord thread (carol)", dc_guild, dc(dc_guild, general, thread)),
        Sample("Discord webhook", dc_hook, dc(dc_hook, general)),
        Sample("HTTP API", http, ""),
        Sample("Ticker in the group, no origin", ticker, ""),
        Sample("Ticker with alice's propagated origin", ticker_origin, ""),
    )


SAMPLES: tuple[Sample, ...] = _samples()


def identity_table(samples: tuple[Sample, ...] = SAMPLES) -> Table:
    """A rich table of scope, actor and session key for each sample."""
    table = Table(title="actorscope: scope (user_id) vs actor (sender_id)")
    table.add_column("context", overflow="fold")
    # Ids never wrap: a scope cut in two is easy to misread and impossible to copy.
    for column in ("user_id (scope)", "sender_id (actor)", "actor_id", "kind", "peer"):
        table.add_column(column, no_wrap=True)
    table.add_column("session key", no_wrap=True)
    for sample in samples:
        identity = sample.identity
        cells = (
            sample.context,
            identity.user_id or '""',
            identity.sender_id or '""',
            identity.actor_id or '""',
            identity.sender_kind.value,
            PeerKind(identity.peer_kind).value,
            sample.session or "-",
        )
        # Text(), not str: ids like ":thread:" must never be read as rich markup or emoji codes.
        table.add_row(*(Text(cell) for cell in cells))
    return table


def conversation_table(outcomes: list[StepOutcome]) -> Table:
    """A rich table of the conversation: who did what where, and the permission decision."""
    table = Table(title="actorscope demo: a group conversation, checked turn by turn")
    for column in ("#", "platform", "chat", "who"):
        table.add_column(column)
    for column in ("scope", "actor"):
        table.add_column(column, no_wrap=True)
    for column in ("action", "decision", "reason"):
        table.add_column(column)
    for o in outcomes:
        decision = Text(o.decision, style="green" if o.decision == "allowed" else "red")
        cells = (str(o.index), o.platform, o.chat, o.who, o.scope or '""', o.actor or '""')
        table.add_row(*(Text(c) for c in cells), Text(o.action), decision, Text(o.reason))
    return table


async def play_demo(db_path: Path) -> list[StepOutcome]:
    """Play the demo conversation on ``db_path`` with a fresh agent ``demo``."""
    from actorscope.testing.harness import AgentEnv
    from actorscope.testing.scenario import parse_scenario, run_scenario_in

    script = resources.files("actorscope.cli").joinpath("demo.scenario.yaml")
    loaded = parse_scenario(script.read_text(encoding="utf-8"), Path("demo.scenario.yaml"))
    async with Database.open(db_path) as db:
        registry = AgentRegistry(db)
        if any(agent.key == DEMO_AGENT for agent in await registry.list()):
            await registry.remove(DEMO_AGENT, purge=True)  # its grants go with it
        agent = await registry.create(DEMO_AGENT, display_name="actorscope demo")
        store = GrantStore(db)
        env = AgentEnv(db, agent, store, PermissionPolicy(store), OriginSigner())
        return await run_scenario_in(loaded, env)


@app.command("demo")
def demo(
    db: Annotated[
        Path, typer.Option("--db", help="Database for the demo (its agent is re-created).")
    ] = DEFAULT_DB,
    identities: Annotated[
        bool, typer.Option("--identities/--no-identities", help="Print the identity table first.")
    ] = True,
) -> None:
    """Play a scripted group conversation offline and print each turn's permission decision."""
    outcomes = asyncio.run(play_demo(db))  # first: a bad --db must print nothing but the error
    console = console_for_tables()
    if identities:
        console.print(identity_table())
    console.print(conversation_table(outcomes))
    denied = sum(o.decision == "denied" for o in outcomes)
    Console(emoji=False, highlight=False).print(
        Text(f"This run's {denied} denials are in the audit log: actorscope audit --db {db}")
    )

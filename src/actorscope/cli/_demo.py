"""``actorscope demo``: a scripted group conversation through the real adapters, offline.

First the identity table (scope vs actor for sample events), then a conversation played by the
testing kit's simulators: Telegram through python-telegram-bot and the Bot API emulator,
Discord through discord.py and the Discord emulator, a sub-agent announce through propagation, and a
permission check per turn on an embedded SQLite database (``--db``, by default its own
``actorscope-demo.db``), which stays so that ``actorscope audit --db ...`` shows the denials
afterwards. The script is ``demo.scenario.yaml`` next to this module; its expectations are
checked as it plays.

The demo only ever re-creates its own agent (key ``demo``, display name
:data:`DEMO_DISPLAY_NAME`). A database that holds any other agent is refused unless
``--reset`` says to play there anyway (other agents are never touched); an agent ``demo``
the demo did not create is refused even then.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table
from rich.text import Text

from actorscope.agents import Agent, AgentRegistry
from actorscope.cli._common import console_for_tables, require_testing_extra
from actorscope.errors import ConflictError
from actorscope.identity import Identity, PeerKind, SenderKind, session_key
from actorscope.permissions import AuditAction
from actorscope.platforms import BuiltInPlatform
from actorscope.store import Database

if TYPE_CHECKING:  # the test kit loads the platform libraries: imported where it plays
    from actorscope.testing.scenario import StepOutcome

__all__ = [
    "DEFAULT_DEMO_DB",
    "DEMO_AGENT",
    "DEMO_DISPLAY_NAME",
    "SAMPLES",
    "DemoRun",
    "Sample",
    "conversation_table",
    "demo",
    "identity_table",
    "play_demo",
]

#: The agent the demo's conversation runs as (and its identity table's session keys name);
#: re-created fresh on every run.
DEMO_AGENT = "demo"
#: How the demo recognises the agent it created: it changes no agent without this name.
DEMO_DISPLAY_NAME = "actorscope demo"
#: The demo's own database: not ``actorscope.db``, which the other commands use.
DEFAULT_DEMO_DB = Path("actorscope-demo.db")
#: The most audit rows the demo counts (its script writes a handful).
_MAX_AUDIT_ROWS = 10_000


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
        return session_key(
            DEMO_AGENT, BuiltInPlatform.TELEGRAM, identity.peer_kind, chat, topic_id=topic
        )

    def dc(identity: Identity, chat: int, thread_id: int | None = None) -> str:
        return session_key(
            DEMO_AGENT, BuiltInPlatform.DISCORD, identity.peer_kind, chat, thread_id=thread_id
        )

    tg_dm = Identity.chat("telegram", alice, alice, group=False)
    tg_group = Identity.chat("telegram", group, alice, group=True)
    tg_topic = Identity.chat("telegram", forum, bob, group=True)
    tg_anon = Identity.chat("telegram", forum, 1087968824, group=True)
    tg_post = Identity.chat(
        "telegram", -1009876543210, None, group=True, sender_kind=SenderKind.CHANNEL
    )
    dm_channel = 81234567890120001  # a DM channel has its own snowflake, not the user's
    dc_dm = Identity.chat("discord", dm_channel, carol, group=False)
    dc_guild = Identity.chat("discord", general, carol, group=True, guild_id=guild)
    dc_hook = Identity.chat(
        "discord", general, 777888, group=True, guild_id=guild, sender_kind=SenderKind.WEBHOOK
    )
    http = Identity.http("api-user-17")
    ticker = Identity.system(tg_group.user_id, channel=tg_group.channel)
    ticker_origin = Identity.system(tg_group.user_id, str(alice), channel=tg_group.channel)
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


@dataclass(frozen=True, slots=True)
class DemoRun:
    """What one demo run did: its turns, and the denials it left in the audit log."""

    outcomes: list[StepOutcome]
    audited_denials: int


async def _fresh_demo_agent(registry: AgentRegistry, db_path: Path, reset: bool) -> Agent:
    """Re-create the demo's own agent; refuse a database whose agents the demo did not make."""
    tenants = {tenant.id: tenant.slug for tenant in await registry.tenants()}
    agents = await registry.list()
    home = Database.DEFAULT_TENANT_SLUG  # where the demo creates its agent
    named = [a for a in agents if a.key == DEMO_AGENT and tenants[a.tenant_id] == home]
    if any(agent.display_name != DEMO_DISPLAY_NAME for agent in named):
        raise ConflictError(
            f"{str(db_path)!r} has an agent {DEMO_AGENT!r} the demo did not create; "
            "the demo changes no agent of yours: give it another --db"
        )
    others = [agent for agent in agents if agent not in named]
    if others and not reset:
        names = ", ".join(AgentRegistry.label(a.key, tenants[a.tenant_id]) for a in others[:3])
        more = f" and {len(others) - 3} more" if len(others) > 3 else ""
        raise ConflictError(
            f"{str(db_path)!r} holds other agents ({names}{more}); the demo plays in its own "
            "database: leave out --db, or add --reset to play there anyway (your agents stay)"
        )
    if named:
        await registry.remove(DEMO_AGENT, purge=True)  # the demo's own; its grants go with it
    return await registry.create(DEMO_AGENT, display_name=DEMO_DISPLAY_NAME)


async def play_demo(db_path: Path, *, reset: bool = False) -> DemoRun:
    """Play the demo conversation on ``db_path`` with a fresh agent ``demo``.

    Refuses (:class:`~actorscope.errors.ConflictError`) a database holding agents the demo
    did not create, unless ``reset``; those agents are never changed.
    """
    from actorscope.testing import AgentEnv
    from actorscope.testing.scenario import LoadedScenario, run_scenario

    script = resources.files("actorscope.cli").joinpath("demo.scenario.yaml")
    loaded = LoadedScenario.parse(script.read_text(encoding="utf-8"), Path("demo.scenario.yaml"))
    async with Database.open(db_path) as db:
        agent = await _fresh_demo_agent(AgentRegistry(db), db_path, reset)
        # The demo's bot writes no file: its workspace beside the database stays unmade.
        env = await AgentEnv.assemble(
            db, agent=agent.id, tenant=agent.tenant_id, workspace=db_path.parent / "workspace"
        )
        outcomes = await run_scenario(loaded, env)
        entries = await env.store.audit.list(agent_id=agent.id, limit=_MAX_AUDIT_ROWS)
    denials = sum(entry.action == AuditAction.CHECK_DENY for entry in entries)
    return DemoRun(outcomes, denials)


def demo(
    db: Annotated[
        Path,
        typer.Option(
            "--db", metavar="FILE", help="The demo's own database (its agent is re-created)."
        ),
    ] = DEFAULT_DEMO_DB,
    identities: Annotated[
        bool, typer.Option("--identities/--no-identities", help="Print the identity table first.")
    ] = True,
    reset: Annotated[
        bool,
        typer.Option(
            "--reset", help="Play in a --db that holds other agents too (they stay unchanged)."
        ),
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the turns and the audit count as JSON.")
    ] = False,
) -> None:
    """Play a scripted group conversation offline and print each turn's permission decision."""
    require_testing_extra("demo")
    # First: a bad --db must print nothing but the error.
    played = asyncio.run(play_demo(db, reset=reset))
    denied = played.audited_denials
    if as_json:
        turns = [dataclasses.asdict(outcome) for outcome in played.outcomes]
        typer.echo(json.dumps({"db": str(db), "turns": turns, "audited_denials": denied}))
        return
    console = console_for_tables()
    if identities:
        console.print(identity_table())
    console.print(conversation_table(played.outcomes))
    # One unwrapped line: the command in it is meant to be copied.
    typer.echo(
        f"This run's {denied} denials are in the audit log: "
        f"actorscope audit --db {db} --agent {DEMO_AGENT}"
    )

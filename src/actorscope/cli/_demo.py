"""``actorscope demo``: the identity table, computed by the library, offline."""

from __future__ import annotations

from dataclasses import dataclass

from rich.table import Table
from rich.text import Text

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

__all__ = ["SAMPLES", "Sample", "identity_table"]


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
    dc_dm = discord_identity(carol, chat_id=carol + 1)
    dc_guild = discord_identity(carol, chat_id=general, guild_id=guild)
    dc_hook = discord_nonperson_identity(
        777888, chat_id=general, guild_id=guild, sender_kind=SenderKind.WEBHOOK
    )
    http = http_identity("api-user-17")
    ticker = system_identity(tg_group.user_id, "ticker:daily-digest")
    return (
        Sample("Telegram private chat (alice)", tg_dm, tg(tg_dm, alice)),
        Sample("Telegram group (alice)", tg_group, tg(tg_group, group)),
        Sample("Telegram forum topic 7 (bob)", tg_topic, tg(tg_topic, forum, 7)),
        Sample("Telegram anonymous admin", tg_anon, tg(tg_anon, forum)),
        Sample("Telegram channel post", tg_post, tg(tg_post, -1009876543210)),
        Sample("Discord DM (carol)", dc_dm, dc(dc_dm, carol + 1)),
        Sample("Discord guild channel (carol)", dc_guild, dc(dc_guild, general)),
        Sample("Discord thread (carol)", dc_guild, dc(dc_guild, general, thread)),
        Sample("Discord webhook", dc_hook, dc(dc_hook, general)),
        Sample("HTTP API", http, ""),
        Sample("Ticker in the group", ticker, ""),
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


@app.command("demo")
def demo() -> None:
    """Print the identity table for built-in sample events (offline)."""
    console_for_tables().print(identity_table())

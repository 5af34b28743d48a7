"""Links through the pipeline (issue 34): ``/link`` proven across Telegram and Discord in the
kit's simulators, what ``links = "dm"`` changes (DM files follow the person, and only while
linked), and what ``links = "grants"`` changes; on both store dialects."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from actorscope.agents import Agent
from actorscope.channels import ChannelConfig, IgnoreReason
from actorscope.channels._link_commands import describe_link, link_request
from actorscope.identity import Identity
from actorscope.permissions import LinkMode, LinkOutcome, LinkStore, Reason
from actorscope.store import Database
from actorscope.testing import DiscordSim, TelegramSim, Turn
from actorscope.testing._harness import AgentEnv, SimulatedEvent
from actorscope.tools import Toolbox, ToolRegistry, builtin_tools

CODE = re.compile(r"your link code is ([A-Z0-9]{5}-[A-Z0-9]{5})")


def replies(event: SimulatedEvent) -> list[str]:
    """The texts the bot sent for one event."""
    return [seen.fields["text"] for seen in event.sent]


def code_of(event: SimulatedEvent) -> str:
    """The link code the bot answered with."""
    (text,) = replies(event)
    found = CODE.search(text)
    assert found is not None, text
    return found.group(1)


def notes_bot(env: AgentEnv) -> tuple[ToolRegistry, object]:
    """A bot that keeps one note per conversation: ``note X`` writes it, ``read`` reads it."""
    tools = builtin_tools(
        Toolbox.create(
            env.db, policy=env.policy, workspace_root=env.workspace.root, default_agent=env.agent
        )
    )

    async def handler(turn: Turn) -> None:
        if turn.text.startswith("note "):
            result = await tools.call("workspace_write", {"path": "n.md", "content": turn.text[5:]})
            await turn.reply("error" if result.is_error else "noted")
        elif turn.text == "read":
            result = await tools.call("workspace_read", {"path": "n.md"})
            await turn.reply("nothing" if result.is_error else str(result.payload["content"]))
        else:
            await turn.reply(f"scope {turn.identity.user_id} session {turn.request.session_key}")

    return tools, handler


async def _env(db: Database, tmp_path: Path, mode: LinkMode) -> AgentEnv:
    return await AgentEnv.assemble(db, workspace=tmp_path / "ws", links=mode)


@pytest.fixture
async def sims(db: Database, tmp_path: Path) -> AsyncIterator[tuple[TelegramSim, DiscordSim]]:
    """A Telegram and a Discord simulator on one agent with ``links = "dm"``, both serving the
    notes bot; user ``ann`` on each."""
    env = await _env(db, tmp_path, LinkMode.DM)
    _, handler = notes_bot(env)
    async with TelegramSim(env) as tg, DiscordSim(env) as dc:
        tg.handler(handler)  # type: ignore[arg-type]
        dc.handler(handler)  # type: ignore[arg-type]
        tg.user("ann")
        dc.user("ann")
        yield tg, dc


async def test_dm_files_follow_a_proven_link_and_stop_at_unlink(
    sims: tuple[TelegramSim, DiscordSim],
) -> None:
    """A note written in Ann's Telegram DM is not read from her Discord DM before the link, is
    after /link on Telegram and /link CODE on Discord, and is not after /unlink."""
    tg, dc = sims
    assert replies(await tg.message("ann", "note before")) == ["noted"]
    assert replies(await dc.dm("ann", "read")) == ["nothing"]
    code = code_of(await tg.message("ann", "/link"))
    linked = await dc.dm("ann", f"!link {code}")
    assert replies(linked) == [
        f"linked: discord:{dc.user('ann').id} is now one person with the account that asked"
    ]
    assert replies(await tg.message("ann", "note shared")) == ["noted"]
    assert replies(await dc.dm("ann", "read")) == ["shared"]
    (on_dc,) = replies(await dc.dm("ann", "where"))
    (on_tg,) = replies(await tg.message("ann", "where"))
    person = on_dc.split()[1]
    assert person.startswith("person:")
    assert on_dc == on_tg == f"scope {person} session agent:main:person:direct:{person[7:]}"
    assert replies(await dc.dm("ann", "!unlink")) == ["unlinked: your accounts are separate again"]
    assert replies(await dc.dm("ann", "read")) == ["nothing"]
    assert replies(await tg.message("ann", "read")) == ["before"]


async def test_group_scopes_never_change(sims: tuple[TelegramSim, DiscordSim]) -> None:
    """A linked account in a group keeps the group's scope."""
    tg, dc = sims
    code = code_of(await tg.message("ann", "/link"))
    await dc.dm("ann", f"!link {code}")
    tg.supergroup("team")
    (scope,) = replies(await tg.message("ann", "where", "team"))
    assert scope.startswith(f"scope group:telegram:{tg.chat_id('team')} session ")


async def test_a_code_in_a_group_is_refused_burnt_and_never_issued(
    sims: tuple[TelegramSim, DiscordSim],
) -> None:
    """/link in a group gets no code; a code sent in a group is refused and cannot be used
    afterwards; no answer in the group holds a code."""
    tg, dc = sims
    tg.supergroup("team")
    asked = await tg.message("ann", "/link", "team")
    assert replies(asked) == [
        "refused (group_context): link codes work only in a direct chat with the bot; "
        "a code sent here is burnt"
    ]
    code = code_of(await tg.message("ann", "/link"))
    sent = await tg.message("ann", f"/link {code}", "team")
    assert code not in " ".join(replies(sent))
    assert replies(sent)[0].startswith("refused (group_context)")
    later = await dc.dm("ann", f"!link {code}")
    assert replies(later) == [
        "refused (used_code): that code was used already; ask for a new one with /link"
    ]


async def test_every_refusal_is_answered_with_its_reason(
    sims: tuple[TelegramSim, DiscordSim],
) -> None:
    """A replayed code, a code from a third account, one's own code and a guessed code are
    refused in the chat with their reasons; /unlink when not linked too."""
    tg, dc = sims
    tg.user("eve")
    code = code_of(await tg.message("ann", "/link"))
    own = await tg.message("ann", f"/link {code}")
    assert replies(own)[0].startswith("refused (same_account)")
    assert replies(await dc.dm("ann", f"!link {code}"))[0].startswith("refused (used_code)")
    code = code_of(await tg.message("ann", "/link"))
    assert replies(await dc.dm("ann", f"!link {code}"))[0].startswith("linked")
    third = await tg.message("eve", f"/link {code}")
    assert replies(third)[0].startswith("refused (used_code)")
    guessed = await tg.message("eve", "/link AAAAA-BBBBB")
    assert replies(guessed)[0].startswith("refused (unknown_code)")
    assert replies(await tg.message("eve", "/unlink"))[0].startswith("refused (not_linked)")


async def test_links_off_leaves_link_to_the_bot(db: Database, tmp_path: Path) -> None:
    """Without [identity] links, /link is the bot's own command: the pipeline answers nothing."""
    env = await _env(db, tmp_path, LinkMode.OFF)
    _, handler = notes_bot(env)
    async with TelegramSim(env) as tg:
        tg.handler(handler)  # type: ignore[arg-type]
        tg.user("ann")
        (answer,) = replies(await tg.message("ann", "/link"))
        assert answer.startswith(f"scope {tg.user('ann').id} session ")


async def test_a_person_grant_covers_both_accounts_and_a_deny_on_one_wins(
    db: Database, agent: Agent, tmp_path: Path
) -> None:
    """links = "grants": a file_writer grant to person:<id> in a guild and a group allows each
    linked account; a deny on the Telegram account denies it there, and says which account
    acted and which person; the audit row keeps the sender and adds the person."""
    env = await _env(db, tmp_path, LinkMode.GRANTS)
    decisions: list[object] = []

    async def handler(turn: Turn) -> None:
        decision = await turn.check("file_writer")
        decisions.append(decision)
        await turn.reply(
            f"{decision.allowed} {decision.reason} {decision.account} {decision.person}"
        )

    async with TelegramSim(env) as tg, DiscordSim(env) as dc:
        tg.handler(handler)
        dc.handler(handler)
        ann_tg, ann_dc = tg.user("ann"), dc.user("ann")
        tg.supergroup("team")
        dc.guild("hub")
        dc.channel("hub", "general")
        group = f"group:telegram:{tg.chat_id('team')}"
        guild = f"guild:{dc.find_guild('hub').id}:*"
        (before,) = replies(await tg.message("ann", "try", "team"))
        assert before.startswith("False no_grant telegram:")
        made = await LinkStore(db).add([f"telegram:{ann_tg.id}", f"discord:{ann_dc.id}"], by="ops")
        person = made[0].person
        for scope in (group, guild):
            await env.store.grant(
                agent_id=env.agent.id, scope=scope, config_type="file_writer", sender_id=person
            )
        (on_tg,) = replies(await tg.message("ann", "try", "team"))
        assert on_tg == f"True granted telegram:{ann_tg.id} {person}"
        (on_dc,) = replies(await dc.message("ann", "try", "general"))
        assert on_dc == f"True granted discord:{ann_dc.id} {person}"
        await env.store.grant(
            agent_id=env.agent.id,
            scope=group,
            config_type="file_writer",
            sender_id=str(ann_tg.id),
            permission="deny",
        )
        (denied,) = replies(await tg.message("ann", "try", "team"))
        assert denied == f"False denied_by_grant telegram:{ann_tg.id} {person}"
        (still,) = replies(await dc.message("ann", "try", "general"))
        assert still.startswith("True granted")
        await db.settle_audit()
        row = await db.fetchone(
            "SELECT sender_id, detail FROM audit_log WHERE action = 'check.deny' "
            "AND reason = 'denied_by_grant'"
        )
        assert row is not None
        assert row["sender_id"] == str(ann_tg.id)
        assert person in row["detail"]
        await LinkStore(db).remove(f"discord:{ann_dc.id}", by="ops")
        (after,) = replies(await dc.message("ann", "try", "general"))
        assert after == f"False no_grant discord:{ann_dc.id} "


async def test_the_kit_links_accounts_like_an_operator(
    sims: tuple[TelegramSim, DiscordSim], db: Database
) -> None:
    """telegram_sim.link("ann", discord_sim.account("ann")) makes one person (audited as the
    kit); unlink separates them again."""
    tg, dc = sims
    person = await tg.link("ann", dc.account("ann"))
    assert person.startswith("person:")
    assert replies(await dc.dm("ann", "note from discord")) == ["noted"]
    assert replies(await tg.message("ann", "read")) == ["from discord"]
    assert await dc.unlink("ann")
    assert not await dc.unlink("ann")
    assert replies(await dc.dm("ann", "read")) == ["nothing"]
    row = await db.fetchone("SELECT actor FROM audit_log WHERE action = 'link.add'")
    assert row is not None
    assert row["actor"] == "kit"


async def test_a_subagent_started_from_a_linked_account_is_judged_for_the_person(
    db: Database, tmp_path: Path
) -> None:
    """links = "grants": a sub-agent spawned from Ann's Discord account in a guild announces;
    its run is Ann's account (the signed origin) and is judged with her person's grant; after
    an unlink the same kind of run is judged for the account alone."""
    env = await _env(db, tmp_path, LinkMode.GRANTS)

    async def handler(turn: Turn) -> None:
        decision = await turn.check("file_writer")
        await turn.reply(f"{decision.allowed} {decision.reason} {decision.person}")

    async with TelegramSim(env) as tg, DiscordSim(env) as dc:
        dc.handler(handler)
        tg.user("ann")
        ann = dc.user("ann")
        dc.guild("hub")
        dc.channel("hub", "general")
        person = await dc.link("ann", tg.account("ann"))
        await env.store.grant(
            agent_id=env.agent.id,
            scope=f"guild:{dc.find_guild('hub').id}:*",
            config_type="file_writer",
            sender_id=person,
        )
        parent = await dc.message("ann", "start", "general")
        announced = await dc.subagent_announce(parent, "done")
        assert announced.request is not None
        assert (announced.request.sender_id, announced.request.propagated) == (str(ann.id), True)
        assert replies(announced) == [f"True granted {person}"]
        await dc.unlink("ann")
        again = await dc.subagent_announce(await dc.message("ann", "start", "general"), "done")
        assert replies(again) == ["False no_grant "]


@pytest.mark.parametrize("ignore_bots", [True, False])
async def test_a_code_shown_by_a_non_person_in_a_group_is_burnt(
    db: Database, tmp_path: Path, ignore_bots: bool
) -> None:
    """An anonymous admin posting a live code in a group burns it, whether the bot ignores
    non-persons (the default: the code still reaches the pipeline, the sender is refused
    after) or lets them through; Bob cannot use it afterwards."""
    env = await _env(db, tmp_path, LinkMode.DM)
    config = ChannelConfig(platform="telegram", require_mention=False, ignore_bots=ignore_bots)
    async with TelegramSim(env, config=config) as tg:
        tg.user("ann")
        tg.user("bob")
        tg.supergroup("team")
        code = code_of(await tg.message("ann", "/link"))
        shown = await tg.anonymous_admin("team", f"/link {code}")
        if ignore_bots:
            assert replies(shown) == []  # refused as a non-person, after the burn
        else:
            assert replies(shown)[0].startswith("refused (group_context)")
        later = await tg.message("bob", f"/link {code}")
        assert replies(later)[0].startswith("refused (used_code)")


async def exposed_rows(db: Database) -> list[tuple[str, str]]:
    """The (issuer, shower) of each audit row of a code burnt for being shown in a group."""
    await db.settle_audit()
    rows = await db.fetchall(
        "SELECT sender_id, actor FROM audit_log WHERE action = 'link.code' "
        "AND reason = 'exposed_in_group' ORDER BY id"
    )
    return [(str(row["sender_id"]), str(row["actor"])) for row in rows]


async def test_a_code_pasted_in_a_group_is_burnt_without_an_answer(
    sims: tuple[TelegramSim, DiscordSim], db: Database
) -> None:
    """A live code pasted as plain text in a Telegram group or a Discord channel (no /link)
    is burnt and audited; the chat gets only the bot's own answer to the message, and the
    code no longer links."""
    tg, dc = sims
    tg.user("bob")
    team = tg.supergroup("team")
    general = dc.channel(dc.guild("lab"), "general")
    first = code_of(await tg.message("ann", "/link"))
    pasted = await tg.message("ann", f"my code is {first}, do not tell", team)
    (answer,) = replies(pasted)
    assert answer.startswith(f"scope group:telegram:{team.id} session ")
    assert replies(await tg.message("bob", f"/link {first}"))[0].startswith("refused (used_code)")
    second = code_of(await dc.dm("ann", "!link"))
    shown = await dc.message("ann", f"try {second}", general)
    assert [text.split()[0] for text in replies(shown)] == ["scope"]
    assert replies(await tg.message("ann", f"/link {second}"))[0].startswith("refused (used_")
    assert await exposed_rows(db) == [
        (tg.account("ann"), tg.account("ann")),
        (dc.account("ann"), dc.account("ann")),
    ]


async def test_a_code_pasted_in_a_group_that_is_not_admitted_is_burnt(
    db: Database, tmp_path: Path
) -> None:
    """Groups refused by the bot's policy still burn a code shown there, without an answer."""
    env = await _env(db, tmp_path, LinkMode.GRANTS)
    config = ChannelConfig(platform="telegram", group_policy="disabled")
    async with TelegramSim(env, config=config) as tg:
        tg.handler(notes_bot(env)[1])  # type: ignore[arg-type]
        tg.user("ann")
        tg.user("bob")
        tg.supergroup("team")
        code = code_of(await tg.message("ann", "/link"))
        shown = await tg.message("ann", f"{code}", "team")
        assert (shown.ignored, replies(shown)) == (IgnoreReason.GROUP_DISABLED, [])
        assert replies(await tg.message("bob", f"/link {code}"))[0].startswith("refused (used_")


async def test_a_guessed_code_in_a_group_that_is_not_admitted_leaves_no_row(
    db: Database, tmp_path: Path
) -> None:
    """/link with no live code, in a group the bot refuses, from a person or an anonymous
    admin, writes no audit row; a live code sent there is still burnt (one link.refused)."""
    env = await _env(db, tmp_path, LinkMode.GRANTS)
    config = ChannelConfig(platform="telegram", group_policy="disabled")
    async with TelegramSim(env, config=config) as tg:
        tg.user("ann")
        tg.user("bob")
        tg.supergroup("team")
        for text in ("/link ABCDE-FGHJK", "/link not a code", "/link x"):
            assert replies(await tg.message("bob", text, "team")) == []
            assert replies(await tg.anonymous_admin("team", text)) == []
        await db.settle_audit()
        assert await db.fetchall("SELECT id FROM audit_log WHERE action = 'link.refused'") == []
        code = code_of(await tg.message("ann", "/link"))
        await tg.message("bob", f"/link {code}", "team")
        await db.settle_audit()
        rows = await db.fetchall("SELECT reason FROM audit_log WHERE action = 'link.refused'")
        assert [row["reason"] for row in rows] == ["group_context"]


@pytest.mark.parametrize("links", [LinkMode.GRANTS, LinkMode.OFF])
async def test_a_code_in_another_bots_command_is_burnt(
    db: Database, tmp_path: Path, links: LinkMode
) -> None:
    """A live code in a Telegram group's command for another bot (ignored as not for this
    bot) is burnt while links are on, unanswered; with links off it is left alone."""
    env = await _env(db, tmp_path, links)
    async with TelegramSim(env) as tg:
        tg.handler(notes_bot(env)[1])  # type: ignore[arg-type]
        ann = tg.user("ann")
        tg.supergroup("team")
        if links is LinkMode.OFF:  # no /link then: a code issued as the store would
            store = LinkStore(db)
            dm = Identity.chat("telegram", ann.id, ann.id, group=False)
            code = (await store.issue_code(dm, await store.tenant_id())).code
        else:
            code = code_of(await tg.message("ann", "/link"))
        shown = await tg.message("ann", f"/start@other_bot {code.lower()}", "team")
        assert (shown.ignored, replies(shown)) == (IgnoreReason.NOT_FOR_THIS_BOT, [])
        burnt = [(tg.account("ann"), tg.account("ann"))] if links is LinkMode.GRANTS else []
        assert await exposed_rows(db) == burnt
        unused = await db.fetchall("SELECT digest FROM link_codes WHERE used_at IS NULL")
        assert len(unused) == (0 if burnt else 1)


async def test_only_text_shaped_like_a_code_costs_a_lookup(
    sims: tuple[TelegramSim, DiscordSim], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Group text without a code-shaped token (ordinary words: no digit) never reaches the
    link store; a code-shaped token does (once), and one that is no live code burns nothing;
    DMs are never looked at."""
    tg, _ = sims
    team = tg.supergroup("team")
    looked: list[tuple[str, ...]] = []
    burn = LinkStore.burn_exposed

    async def counting(self: LinkStore, codes: Any, *args: Any, **kwargs: Any) -> list[str]:
        looked.append(tuple(codes))
        return await burn(self, codes, *args, **kwargs)

    monkeypatch.setattr(LinkStore, "burn_exposed", counting)
    await tg.message("ann", "hello - a text with a dash", team)
    await tg.message("ann", "understand the bug report", team)  # code letters, no digit
    await tg.message("ann", "ABCD2-FGHJK in my DM")
    assert looked == []
    await tg.message("ann", "ABCD2-FGHJK", team)
    assert looked == [("ABCD2-FGHJK",)]


@pytest.mark.parametrize(
    ("named", "text", "argument"),
    [
        ("link", "/link@notes_bot ABCDE-FGHJK", "ABCDE-FGHJK"),
        ("link", "?link ABCDE-FGHJK", "ABCDE-FGHJK"),
        ("link", "! link ABCDE-FGHJK", "ABCDE-FGHJK"),
        ("link", "<@99> link ABCDE-FGHJK", "ABCDE-FGHJK"),
        ("link", "$link", ""),
        ("unlink", "?unlink", ""),
        ("", "!link ABCDE-FGHJK", "ABCDE-FGHJK"),
    ],
)
def test_a_named_link_command_keeps_its_code_whatever_the_prefix(
    named: str, text: str, argument: str
) -> None:
    """A link command a normaliser or framework named keeps the code after its name, whatever
    prefix (a discord.py bot's own, a mention) came first."""
    request = link_request(named, text, "!")
    assert request is not None
    assert request.command.value == (named or "link")
    assert request.argument == argument


@pytest.mark.parametrize(
    ("text", "prefix", "argument"),
    [
        ("link link ABCDE-FGHJK", "link ", "ABCDE-FGHJK"),
        ("link  link", "link ", ""),
        ("Link LINK abcde fghjk", "Link ", "abcde fghjk"),
        ("bot link ABCDE-FGHJK", "bot ", "ABCDE-FGHJK"),
        ("/link say link ABCDE-FGHJK", "", "say link ABCDE-FGHJK"),
        ("<@99> link link", "", "link"),
    ],
)
def test_a_named_link_command_is_read_after_the_prefix_matched(
    text: str, prefix: str, argument: str
) -> None:
    """The argument starts after the prefix the framework matched (discord.py's ctx.prefix,
    any string) and the name, never after a later word of the same name."""
    request = link_request("link", text, "!", prefix=prefix)
    assert request is not None
    assert request.argument == argument


def test_an_unnamed_link_command_needs_a_known_prefix() -> None:
    """Without a name, only a listed prefix makes a link command."""
    assert link_request("", "/link ABCDE-FGHJK", "!") is None
    assert link_request("", "link ABCDE-FGHJK", "!") is None
    assert link_request("note", "/note x", "/") is None


def test_the_code_message_names_the_command_of_each_platform() -> None:
    """The issued code's message says how to send it from Telegram and from Discord."""
    issued = LinkOutcome(
        True, Reason.CODE_ISSUED, code="25HJ4-CZNVE", expires_at="2026-01-01T11:30:00Z"
    )
    assert describe_link(issued) == (
        "your link code is 25HJ4-CZNVE (once, until 11:30 UTC): from your other account, in a"
        " direct chat with this bot, send /link 25HJ4-CZNVE (!link 25HJ4-CZNVE on Discord)"
    )

"""Persons and links (issue 34): both link paths on both store dialects, and every refusal.

A link is made by an operator (``LinkStore.add``) or proven by the person with a one-time code
(``issue_code`` in a direct chat on account A, ``redeem`` from account B in a direct chat).
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from tests._wait import wait_until
from tests.permissions._feed_ticks import FeedTicks

from actorscope.agents import Agent, AgentRegistry
from actorscope.errors import ConflictError, GrantError, IdentityError, NotFoundError
from actorscope.identity import Identity, PeerKind, SenderKind
from actorscope.permissions import GrantStore, LinkStore, PermissionPolicy, Reason
from actorscope.permissions._links import (
    CODE_LIFETIME,
    CODE_LIMIT,
    RATE_WINDOW,
    REFUSAL_LIMIT,
    _new_code,
)
from actorscope.store import Database
from actorscope.tools._storage import storage_scope

TG = Identity.chat("telegram", 42, 42, group=False)  # telegram:42 in its DM
DC = Identity.chat(
    "discord", 5550001, 990000000000000001, group=False
)  # discord:990000000000000001 in a DM
THIRD = Identity.chat("telegram", 43, 43, group=False)
TG_IN_GROUP = Identity.chat("telegram", -100200, 42, group=True)
DC_IN_GUILD = Identity.chat(
    "discord", 5550002, 990000000000000001, group=True, guild_id=81234567890123456
)


@pytest.fixture
async def links(db: Database, agent: Agent) -> LinkStore:
    """A link store over the test database (the default tenant has agent ``main``)."""
    return LinkStore(db)


@pytest.fixture
async def tenant(links: LinkStore) -> str:
    """The default tenant's UUID."""
    return await links.tenant_id()


async def audit_rows(db: Database, action: str) -> list[dict[str, Any]]:
    """The audit rows of ``action``, oldest first."""
    await db.settle_audit()
    rows = await db.fetchall(
        "SELECT sender_id, actor, scope, reason, detail FROM audit_log WHERE action = ? "
        "ORDER BY id",
        (action,),
    )
    return [
        {**dict(zip(row.keys(), row, strict=True)), "detail": json.loads(row["detail"])}
        for row in rows
    ]


async def test_operator_links_two_accounts_into_one_person(links: LinkStore, db: Database) -> None:
    """add() puts both accounts under one new person and audits each link with who made it."""
    made = await links.add(["telegram:42", "discord:990000000000000001"], by="alice")
    assert {link.account for link in made} == {"telegram:42", "discord:990000000000000001"}
    assert len({link.person_id for link in made}) == 1
    person = made[0].person
    assert person.startswith("person:")
    tenant = await links.tenant_id()
    assert await links.person_of("telegram:42", tenant) == made[0].person_id
    rows = await audit_rows(db, "link.add")
    assert [(r["sender_id"], r["actor"], r["scope"], r["detail"]["via"]) for r in rows] == [
        ("telegram:42", "alice", person, "operator"),
        ("discord:990000000000000001", "alice", person, "operator"),
    ]


async def test_operator_joins_the_person_an_account_has(links: LinkStore) -> None:
    """A new account named with a linked one joins that person, and person= names it too."""
    first = await links.add(["telegram:42"], by="ops")
    joined = await links.add(["telegram:42", "http:alice"], by="ops")
    assert {link.person_id for link in joined} == {first[0].person_id}
    again = await links.add(["discord:990000000000000001"], person=first[0].person, by="ops")
    assert len(again) == 3


@pytest.mark.parametrize(
    ("account", "why"),
    [
        ("telegram:777000", "not a person"),  # Telegram's service account
        ("telegram:1087968824", "not a person"),  # anonymous admin
        ("telegram:042", "not a telegram person id"),  # look-alike: leading zero
        ("telegram:42\u200b", "not a telegram person id"),  # look-alike: zero-width space
        ("telegram:\uff14\uff12", "not a telegram person id"),  # full-width digits
        ("discord:-5", "not a discord person id"),
        ("http:subagent:x", "not an HTTP person id"),  # a synthetic id cannot be an account
        ("telegram:", "not a telegram person id"),  # empty
        ("fax:42", "of a known platform"),
        ("42", "of a known platform"),
    ],
)
async def test_operator_never_links_a_non_person(links: LinkStore, account: str, why: str) -> None:
    """Non-person, empty, synthetic, look-alike and unknown-platform accounts are refused."""
    with pytest.raises(IdentityError, match=why):
        await links.add([account, "telegram:43"], by="ops")
    assert await links.links() == []


async def test_an_account_belongs_to_at_most_one_person(links: LinkStore) -> None:
    """Linking accounts of two persons together, or to a third, is a conflict; nothing moves."""
    first = await links.add(["telegram:42", "telegram:43"], by="ops")
    second = await links.add(["telegram:44"], by="ops")
    with pytest.raises(ConflictError, match="at most one person"):
        await links.add(["telegram:43", "telegram:44"], by="ops")
    with pytest.raises(ConflictError, match="at most one person"):
        await links.add(["telegram:42"], person=second[0].person, by="ops")
    tenant = await links.tenant_id()
    assert await links.person_of("telegram:43", tenant) == first[0].person_id
    assert await links.person_of("telegram:44", tenant) == second[0].person_id


async def test_operator_person_must_exist_in_the_tenant(links: LinkStore, db: Database) -> None:
    """person= names a person of the tenant; another tenant's person is not found."""
    theirs = await AgentRegistry(db).create_tenant("other")
    made = await links.add(["telegram:42"], by="ops", tenant=theirs.slug)
    with pytest.raises(NotFoundError, match="no person"):
        await links.add(["telegram:43"], person=made[0].person, by="ops")
    with pytest.raises(IdentityError, match="person:<uuid>"):
        await links.add(["telegram:43"], person="person:nope", by="ops")


async def test_persons_are_tenant_scoped(links: LinkStore, db: Database) -> None:
    """The same account may belong to one person in each tenant; neither sees the other's."""
    other = await AgentRegistry(db).create_tenant("other")
    mine = await links.add(["telegram:42"], by="ops")
    theirs = await links.add(["telegram:42"], by="ops", tenant="other")
    assert mine[0].person_id != theirs[0].person_id
    assert await links.person_of("telegram:42", other.id) == theirs[0].person_id
    assert [link.account for link in await links.links(tenant_id=other.id)] == ["telegram:42"]


async def test_operator_unlink_is_audited_and_drops_an_empty_person(
    links: LinkStore, db: Database
) -> None:
    """remove() unlinks one account (audited as who did it); the last one takes the person."""
    made = await links.add(["telegram:42", "telegram:43"], by="ops")
    removed = await links.remove("telegram:42", by="bob")
    assert removed is not None
    assert removed.person_id == made[0].person_id
    assert await links.remove("telegram:42", by="bob") is None
    await links.remove("telegram:43", by="bob")
    assert await db.fetchall("SELECT id FROM persons") == []
    rows = await audit_rows(db, "link.remove")
    assert [(r["sender_id"], r["actor"]) for r in rows] == [
        ("telegram:42", "bob"),
        ("telegram:43", "bob"),
    ]


async def test_proven_link_in_direct_chats(links: LinkStore, tenant: str, db: Database) -> None:
    """A code from telegram:42's DM sent back from a Discord DM links both to one person."""
    issued = await links.issue_code(TG, tenant)
    assert issued.ok
    assert issued.reason is Reason.CODE_ISSUED
    assert len(issued.code) == 11
    linked = await links.redeem(issued.code.lower(), DC, tenant)
    assert linked.ok
    assert linked.reason is Reason.LINKED
    assert linked.account == "discord:990000000000000001"
    person = linked.person.removeprefix("person:")
    assert await links.person_of("telegram:42", tenant) == person
    assert await links.person_of("discord:990000000000000001", tenant) == person
    rows = await audit_rows(db, "link.add")
    assert {(r["sender_id"], r["actor"], r["detail"]["via"]) for r in rows} == {
        ("telegram:42", "discord:990000000000000001", "code"),
        ("discord:990000000000000001", "discord:990000000000000001", "code"),
    }


async def test_codes_are_stored_hashed_and_never_audited(
    links: LinkStore, tenant: str, db: Database
) -> None:
    """Neither the code table nor the audit trail holds the code itself."""
    issued = await links.issue_code(TG, tenant)
    await db.settle_audit()
    bare = issued.code.replace("-", "")
    for table in ("link_codes", "audit_log"):
        for row in await db.fetchall(f"SELECT * FROM {table}"):
            text = " ".join(str(value) for value in row)
            assert issued.code not in text
            assert bare not in text


async def test_a_replayed_code_is_refused(links: LinkStore, tenant: str) -> None:
    """A code links once: sent again (from a third account too) it is used_code."""
    issued = await links.issue_code(TG, tenant)
    assert (await links.redeem(issued.code, DC, tenant)).ok
    replay = await links.redeem(issued.code, THIRD, tenant)
    assert (replay.ok, replay.reason) == (False, Reason.USED_CODE)
    assert await links.person_of("telegram:43", tenant) is None


async def test_a_code_sent_in_a_group_is_refused_and_burnt(
    links: LinkStore, tenant: str, db: Database
) -> None:
    """In a group the code is refused (group_context) and burnt: a later DM gets used_code."""
    issued = await links.issue_code(TG, tenant)
    refused = await links.redeem(issued.code, DC_IN_GUILD, tenant)
    assert (refused.ok, refused.reason) == (False, Reason.GROUP_CONTEXT)
    later = await links.redeem(issued.code, DC, tenant)
    assert (later.ok, later.reason) == (False, Reason.USED_CODE)
    rows = await audit_rows(db, "link.refused")
    assert rows[0]["detail"] == {"burnt": "telegram:42"}


@pytest.mark.parametrize("sent", ["ABCDE-FGHJK", "anything at all", "used", "expired"], ids=str)
async def test_a_group_link_without_a_live_code_writes_nothing(
    links: LinkStore, tenant: str, db: Database, monkeypatch: pytest.MonkeyPatch, sent: str
) -> None:
    """/link x in a group with no live code x is group_context after one read: no write
    transaction is opened and no audit row is left (anyone, in any group, can send it)."""
    if sent == "used":
        issued = await links.issue_code(TG, tenant)
        assert (await links.redeem(issued.code, DC, tenant)).ok
        sent = issued.code
    elif sent == "expired":
        sent = (await links.issue_code(TG, tenant, now=time.time() - CODE_LIFETIME - 1)).code
    await db.settle_audit()
    (before,) = await db.fetchall("SELECT COUNT(*) AS n FROM audit_log")

    def no_transaction() -> Any:
        raise AssertionError("a write transaction was opened")

    monkeypatch.setattr(db, "transaction", no_transaction)
    for who in (DC_IN_GUILD, TG_IN_GROUP):
        refused = await links.redeem(sent, who, tenant)
        assert (refused.ok, refused.reason) == (False, Reason.GROUP_CONTEXT)
    monkeypatch.undo()
    await db.settle_audit()
    (after,) = await db.fetchall("SELECT COUNT(*) AS n FROM audit_log")
    assert after["n"] == before["n"]


async def test_codes_are_never_issued_in_groups(links: LinkStore, tenant: str) -> None:
    """Asking for a code in a group is refused; no code exists afterwards."""
    refused = await links.issue_code(TG_IN_GROUP, tenant)
    assert (refused.ok, refused.reason, refused.code) == (False, Reason.GROUP_CONTEXT, "")
    assert await links.db.fetchall("SELECT digest FROM link_codes") == []


async def test_an_expired_code_is_refused(links: LinkStore, tenant: str) -> None:
    """A code sent after its lifetime is expired_code, and used up."""
    issued = await links.issue_code(TG, tenant, now=1_000_000.0)
    late = await links.redeem(issued.code, DC, tenant, now=1_000_000.0 + CODE_LIFETIME + 1)
    assert (late.ok, late.reason) == (False, Reason.EXPIRED_CODE)


@pytest.mark.parametrize(
    "who",
    [
        Identity(
            user_id="group:telegram:-1",
            sender_id="",
            channel="telegram",
            peer_kind=PeerKind.GROUP,
            sender_kind=SenderKind.ANONYMOUS_ADMIN,
        ),
        Identity.system("42", "subagent:task-1", channel="telegram"),
        Identity(user_id="777000", sender_id="777000", channel="telegram"),
        Identity(user_id="042", sender_id="042", channel="telegram"),
        Identity(user_id="42\u200b", sender_id="42\u200b", channel="telegram"),
        Identity(user_id="", sender_id="", channel="telegram"),
        Identity(user_id="42", sender_id="42", channel="fax"),
    ],
    ids=[
        "anonymous-admin",
        "synthetic",
        "placeholder",
        "leading-zero",
        "zero-width",
        "empty",
        "unknown-platform",
    ],
)
async def test_a_non_person_can_neither_ask_nor_send_a_code(
    links: LinkStore, tenant: str, who: Identity
) -> None:
    """Every non-person is refused not_a_person on both steps, and links nothing."""
    asked = await links.issue_code(who, tenant)
    assert (asked.ok, asked.reason, asked.code) == (False, Reason.NOT_A_PERSON, "")
    issued = await links.issue_code(TG, tenant)
    sent = await links.redeem(issued.code, who, tenant)
    # In a group the code is refused (and burnt) for being there, whoever sent it.
    expected = Reason.GROUP_CONTEXT if who.is_group else Reason.NOT_A_PERSON
    assert (sent.ok, sent.reason) == (False, expected)
    assert await links.links() == []


async def test_unknown_empty_and_own_codes_are_refused(links: LinkStore, tenant: str) -> None:
    """A guessed code is unknown_code, no code is no_code, one's own code is same_account."""
    unknown = await links.redeem("ABCDE-FGHJK", DC, tenant)
    assert unknown.reason is Reason.UNKNOWN_CODE
    assert (await links.redeem("  ", DC, tenant)).reason is Reason.NO_CODE
    issued = await links.issue_code(TG, tenant)
    assert (await links.redeem(issued.code, TG, tenant)).reason is Reason.SAME_ACCOUNT


async def test_an_account_of_another_person_is_not_taken(links: LinkStore, tenant: str) -> None:
    """A code from a person's account, sent from another person's account, is linked_elsewhere;
    between two accounts of one person it is already_linked."""
    await links.add(["discord:990000000000000001", "telegram:43"], by="ops")
    issued = await links.issue_code(TG, tenant)
    taken = await links.redeem(issued.code, DC, tenant)
    assert (taken.ok, taken.reason) == (False, Reason.LINKED_ELSEWHERE)
    assert await links.person_of("telegram:42", tenant) is None
    mine = await links.issue_code(THIRD, tenant)
    same = await links.redeem(mine.code, DC, tenant)
    assert (same.ok, same.reason) == (False, Reason.ALREADY_LINKED)


async def test_issuing_is_rate_limited_and_one_code_lives(links: LinkStore, tenant: str) -> None:
    """A new code burns the previous one; past CODE_LIMIT per window the account is refused."""
    codes = [await links.issue_code(TG, tenant, now=2_000_000.0 + i) for i in range(CODE_LIMIT)]
    assert all(outcome.ok for outcome in codes)
    limited = await links.issue_code(TG, tenant, now=2_000_010.0)
    assert (limited.ok, limited.reason) == (False, Reason.RATE_LIMITED)
    old = await links.redeem(codes[0].code, DC, tenant, now=2_000_020.0)
    assert old.reason is Reason.USED_CODE
    assert (await links.redeem(codes[-1].code, DC, tenant, now=2_000_021.0)).ok


async def test_guessing_locks_the_guesser_out(links: LinkStore, tenant: str) -> None:
    """After REFUSAL_LIMIT refused codes an account is refused even the right code."""
    for _ in range(REFUSAL_LIMIT):
        assert (await links.redeem("ZZZZZ-ZZZZZ", DC, tenant)).reason is Reason.UNKNOWN_CODE
    issued = await links.issue_code(TG, tenant)
    locked = await links.redeem(issued.code, DC, tenant)
    assert (locked.ok, locked.reason) == (False, Reason.RATE_LIMITED)


async def test_the_person_unlinks_from_any_account(
    links: LinkStore, tenant: str, db: Database
) -> None:
    """/unlink from either account dissolves the person; a second one is not_linked."""
    issued = await links.issue_code(TG, tenant)
    await links.redeem(issued.code, DC, tenant)
    done = await links.unlink_person(DC, tenant)
    assert (done.ok, done.reason) == (True, Reason.UNLINKED)
    assert await links.links() == []
    again = await links.unlink_person(TG, tenant)
    assert (again.ok, again.reason) == (False, Reason.NOT_LINKED)
    assert (await links.unlink_person(TG_IN_GROUP, tenant)).reason is Reason.GROUP_CONTEXT
    rows = await audit_rows(db, "link.remove")
    assert {(r["sender_id"], r["actor"]) for r in rows} == {
        ("telegram:42", "discord:990000000000000001"),
        ("discord:990000000000000001", "discord:990000000000000001"),
    }


async def test_an_http_user_links_like_any_account(links: LinkStore, tenant: str) -> None:
    """An HTTP caller's account is its user (http:alice), and it can prove a link too."""
    issued = await links.issue_code(Identity.http("alice"), tenant)
    assert issued.account == "http:alice"
    assert (await links.redeem(issued.code, TG, tenant)).ok


async def test_a_link_change_reaches_another_process_within_a_second(
    db_target: str,
    db: Database,
    agent: Agent,
    links: LinkStore,
    tenant: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Linking and unlinking through one database object empties another's decision cache
    (its change feed: SQLite's epoch poll, PostgreSQL's NOTIFY) within the freshness bound:
    by the feed's first tick after the change (tests/permissions/_feed_ticks.py)."""
    async with Database.open(db_target) as theirs:
        ticks = FeedTicks(theirs, monkeypatch)
        assert ticks.within_bound
        store = GrantStore(theirs)
        member = Identity(
            user_id="group:telegram:-100200",
            sender_id="42",
            channel="telegram",
            peer_kind=PeerKind.GROUP,
            agent_id=agent.id,
        )
        await store.grant(
            agent_id=agent.id, scope=member.user_id, config_type="file_writer", sender_id="42"
        )
        policy = PermissionPolicy(store)
        for change in ("link", "unlink"):
            assert (await policy.check_file_writer(member)).allowed
            await wait_until(lambda: len(store.cache) == 1, 2.0)  # cached, feed live
            if change == "link":
                await links.add(["telegram:42", "telegram:43"], by="ops")
            else:
                await links.remove("telegram:42", by="ops")
            committed = ticks.mark()
            await wait_until(lambda: len(store.cache) == 0, 10.0)  # bounds a hang only
            assert ticks.ticks_to_hear(committed) <= 1


async def test_a_link_change_empties_this_process_caches_at_once(
    db: Database, agent: Agent, links: LinkStore
) -> None:
    """A change through a LinkStore tells every cache on the same database object at once."""
    store = GrantStore(db)
    generation = await store.cache_generation(agent.id)
    assert store.cache.put((agent.id, "k"), "v", generation)
    await links.add(["telegram:42"], by="ops")
    assert len(store.cache) == 0


async def test_a_person_is_a_grantee(store: GrantStore, agent: Agent, links: LinkStore) -> None:
    """A grant may name person:<uuid>; anything else after person: is refused."""
    made = await links.add(["telegram:42"], by="ops")
    grant = await store.grant(
        agent_id=agent.id,
        scope="group:telegram:-100200",
        config_type="cron",
        sender_id=made[0].person,
    )
    assert grant.sender_id == made[0].person
    with pytest.raises(GrantError, match="person:<uuid>"):
        await store.grant(agent_id=agent.id, scope="*", config_type="cron", sender_id="person:42")


async def test_a_grant_to_an_unknown_person_is_refused(
    store: GrantStore, agent: Agent, links: LinkStore
) -> None:
    """A grant to a person no link made (or an unlink removed) is a GrantError naming it."""
    made = await links.add(["telegram:42"], by="ops")
    await links.remove("telegram:42", by="ops")
    gone = made[0].person
    with pytest.raises(GrantError, match=f"no person {gone} in the agent's tenant"):
        await store.grant(agent_id=agent.id, scope="*", config_type="cron", sender_id=gone)
    assert await store.list(agent_id=agent.id) == []


def test_only_a_link_gives_a_person_scope() -> None:
    """No HTTP user can borrow a person's scope; a person's files are one key on every channel."""
    with pytest.raises(IdentityError, match="person's scope"):
        Identity.http("person:0b5e3a4e-55a4-4c63-9a3c-2b6f1d0c9a11")
    scope = "person:0b5e3a4e-55a4-4c63-9a3c-2b6f1d0c9a11"
    keys = {
        storage_scope(Identity(user_id=scope, sender_id="42", channel=c))
        for c in ("telegram", "discord", "http")
    }
    assert keys == {scope}


async def test_an_unlink_is_seen_by_another_process_within_a_second(
    db_target: str,
    db: Database,
    agent: Agent,
    links: LinkStore,
    store: GrantStore,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """links = "grants": another process allows telegram:42 through its person's grant (and
    caches it); after an unlink here its checks deny within the freshness bound: from the
    feed's first tick after the unlink (tests/permissions/_feed_ticks.py)."""
    made = await links.add(["telegram:42", "discord:990000000000000001"], by="ops")
    scope = "group:telegram:-100200"
    await store.grant(
        agent_id=agent.id, scope=scope, config_type="file_writer", sender_id=made[0].person
    )
    member = Identity(
        user_id=scope,
        sender_id="42",
        channel="telegram",
        peer_kind=PeerKind.GROUP,
        agent_id=agent.id,
    )
    async with Database.open(db_target) as theirs:
        ticks = FeedTicks(theirs, monkeypatch)
        assert ticks.within_bound
        policy = PermissionPolicy(GrantStore(theirs), links=LinkStore(theirs))
        first = await policy.check_file_writer(member)
        assert (first.allowed, first.account, first.person) == (True, "telegram:42", made[0].person)
        await wait_until(lambda: len(policy.store.cache) == 1, 2.0)  # cached, feed live
        await links.remove("telegram:42", by="ops")
        unlinked = ticks.mark()

        async def denied() -> bool:
            return not (await policy.check_file_writer(member)).allowed

        await wait_until(denied, 10.0)  # the decision itself is the marker; bounds a hang only
        assert ticks.ticks_to_hear(unlinked) <= 1
        after = await policy.check_file_writer(member)
        assert (after.reason, after.person) == (Reason.NO_GRANT, "")


async def test_a_non_person_burns_a_code_it_shows_in_a_group(
    links: LinkStore, tenant: str, db: Database
) -> None:
    """redeem() in a group by an anonymous admin burns the code (audited with the sender)."""
    issued = await links.issue_code(TG, tenant)
    admin = Identity(
        user_id="group:telegram:-100200",
        sender_id="",
        channel="telegram",
        peer_kind=PeerKind.GROUP,
        sender_kind=SenderKind.ANONYMOUS_ADMIN,
    )
    refused = await links.redeem(issued.code, admin, tenant)
    assert (refused.ok, refused.reason, refused.account) == (False, Reason.GROUP_CONTEXT, "")
    assert (await links.redeem(issued.code, DC, tenant)).reason is Reason.USED_CODE
    rows = await audit_rows(db, "link.refused")
    assert rows[0]["detail"]["burnt"] == "telegram:42"


async def test_old_link_codes_are_pruned_by_the_next_code(
    links: LinkStore, tenant: str, db: Database
) -> None:
    """A code issued after the rate window deletes every older code row, of any account."""
    await links.issue_code(TG, tenant, now=3_000_000.0)
    await links.issue_code(DC, tenant, now=3_000_001.0)
    await links.issue_code(THIRD, tenant, now=3_000_000.0 + RATE_WINDOW + 2)
    rows = await db.fetchall("SELECT account FROM link_codes ORDER BY account")
    assert [row["account"] for row in rows] == ["telegram:43"]


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("my code is 25HJ4-CZNVE, use it", ("25HJ4-CZNVE",)),
        ("(25HJ4-CZNVE) and 25HJ4-CZNVE again", ("25HJ4-CZNVE",)),
        ("X25HJ4-CZNVE or 25HJ4-CZNVE7", ()),
        ("25hj4-cznve", ("25hj4-cznve",)),  # redeem() takes it in lowercase too
        ("25HJ4 CZNVE", ("25HJ4 CZNVE",)),  # and spaced
        ("25HJ4CZNVE!", ("25HJ4CZNVE",)),  # and run together
        ("25hj4-cznve and 25HJ4 CZNVE", ("25hj4-cznve",)),  # one code, however shown
        ("2 5 h j 4 - c z n v e", ("2 5 h j 4 - c z n v e",)),
        ("seven 25HJ4-CZNVE", ("25HJ4-CZNVE", "seven 25HJ4")),  # overlapping tokens
        ("25HI4-CZNVE", ()),  # I is not in the alphabet
        ("25HJ4, CZNVE", ()),  # a comma is no separator redeem() skips
        ("short: 25HJ4-CZNV", ()),
        ("understand the bug report, then answer", ()),  # ordinary words hold no digit
        ("ABCDE-FGHJK", ()),  # no issued code is all letters
        ("23456-78923", ()),  # nor all digits
    ],
)
def test_codes_in_finds_every_form_redeem_takes(text: str, found: tuple[str, ...]) -> None:
    """codes_in() takes every token redeem() would take for a code: ten characters of the
    alphabet in either case, whitespace and dashes between them, not inside a longer word."""
    assert LinkStore.codes_in(text) == found


def test_every_issued_code_holds_a_digit_and_a_letter() -> None:
    """Issued codes hold at least one digit and one letter, so codes_in() may skip text
    without a digit: every one of many codes is found again by codes_in()."""
    codes = [_new_code() for _ in range(3000)]
    assert all(LinkStore.codes_in(f"code: {code}") == (code,) for code in codes)
    assert len(set(codes)) == len(codes)


def test_codes_in_looks_up_a_bounded_number_of_tokens() -> None:
    """A text full of code-shaped tokens yields at most sixteen of them, those of the issued
    shape first, so decoys before a code shown as issued cannot push it out."""
    text = " ".join(f"AAAAA-{n:05d}".replace("0", "A").replace("1", "B") for n in range(100))
    assert len(LinkStore.codes_in(text)) == 16
    decoys = " ".join(f"{n:010d}".replace("0", "A").replace("1", "B") for n in range(40))
    assert "25HJ4-CZNVE" in LinkStore.codes_in(f"{decoys} then 25HJ4-CZNVE")


@pytest.mark.parametrize("shown", ["lower", "spaced"])
async def test_a_live_code_shown_in_any_form_redeem_takes_is_burnt(
    links: LinkStore, tenant: str, shown: str
) -> None:
    """A live code shown in a group in lowercase, or spaced, is found and burnt."""
    code = (await links.issue_code(TG, tenant)).code
    text = code.lower() if shown == "lower" else code.replace("-", " ")
    found = LinkStore.codes_in(f"here: {text}")
    assert await links.burn_exposed(found, DC_IN_GUILD, tenant) == ["telegram:42"]
    assert (await links.redeem(code, DC, tenant)).reason is Reason.USED_CODE


async def test_a_live_code_shown_in_a_group_is_burnt_and_audited(
    links: LinkStore, tenant: str, db: Database
) -> None:
    """burn_exposed() uses up a live code shown in a group (audited as link.code with reason
    exposed_in_group, the issuer as sender_id and the shower as actor): it no longer links."""
    issued = await links.issue_code(TG, tenant)
    shown = LinkStore.codes_in(f"here is my code: {issued.code} (don't tell)")
    assert await links.burn_exposed(shown, DC_IN_GUILD, tenant) == ["telegram:42"]
    later = await links.redeem(issued.code, DC, tenant)
    assert (later.ok, later.reason) == (False, Reason.USED_CODE)
    (row,) = [r for r in await audit_rows(db, "link.code") if r["reason"] == "exposed_in_group"]
    assert (row["sender_id"], row["actor"], row["scope"]) == (
        "telegram:42",
        "discord:990000000000000001",
        "",
    )
    assert row["detail"] == {"channel": "discord", "chat": "5550002"}
    assert await links.burn_exposed(shown, DC_IN_GUILD, tenant) == []


async def test_only_live_codes_are_burnt(links: LinkStore, tenant: str, db: Database) -> None:
    """A used, an expired or an unknown code-shaped token burns nothing and writes no row;
    a non-person showing a live code burns it, named in the row's detail."""
    used = await links.issue_code(TG, tenant)
    assert (await links.redeem(used.code, DC, tenant)).ok
    expired = await links.issue_code(THIRD, tenant, now=time.time() - CODE_LIFETIME - 1)
    tokens = (used.code, expired.code, "AAAAA-BBBBB")
    assert await links.burn_exposed(tokens, TG_IN_GROUP, tenant) == []
    rows = [r for r in await audit_rows(db, "link.code") if r["reason"] == "exposed_in_group"]
    assert rows == []
    live = await links.issue_code(Identity.chat("telegram", 44, 44, group=False), tenant)
    admin = Identity(
        user_id="group:telegram:-100200",
        sender_id="",
        channel="telegram",
        chat_id="-100200",
        peer_kind=PeerKind.GROUP,
        sender_kind=SenderKind.ANONYMOUS_ADMIN,
    )
    assert await links.burn_exposed((live.code,), admin, tenant) == ["telegram:44"]
    (row,) = [r for r in await audit_rows(db, "link.code") if r["reason"] == "exposed_in_group"]
    assert (row["actor"], row["detail"]) == (
        "",
        {"channel": "telegram", "chat": "-100200", "sender": ""},
    )

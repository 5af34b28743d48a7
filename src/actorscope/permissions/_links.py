"""Persons and links: one human's channel accounts, linked only with proof, audited, revocable.

A *person* is a tenant-scoped UUID owning channel accounts (``telegram:42``,
``discord:1234``, ``http:alice``: :class:`~actorscope.platforms.Account`); an account belongs to
at most one person of its tenant. A link is made in one of two ways, and no other:

- **Proven by the person** (:meth:`LinkStore.issue_code`, :meth:`LinkStore.redeem`): in a direct
  chat account A asks for a code (random, from :mod:`secrets`; :data:`CODE_LIFETIME` seconds;
  single-use; at most :data:`CODE_LIMIT` per account per :data:`RATE_WINDOW`; stored as its
  SHA-256, never as itself), and the same human sends it from account B in a direct chat.
  A code sent in a group is refused and burnt; codes are never issued in groups, and a live
  code shown in a group's plain text is burnt too (:meth:`LinkStore.burn_exposed`). A code
  guessed wrong counts against the sender: :data:`REFUSAL_LIMIT` refusals per window, then
  every redemption from that account is refused for the rest of it.
- **Made by an operator** (:meth:`LinkStore.add`: the CLI, the HTTP API), with who made it.

Non-persons (empty, synthetic, placeholder and look-alike senders, a channel of no registered
platform) are never linked. Every link, unlink, issued code and refused attempt is an audit row
(``link.*``: ``sender_id`` the account, ``actor`` who made the change, ``scope`` the person),
written in the change's transaction. A change moves the grant epoch and NOTIFYs every agent's
caches (the store's triggers), so another process sees an unlink within the freshness bound.
"""

from __future__ import annotations

import hashlib
import logging
import re
import secrets
import time
import uuid
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from enum import StrEnum

from actorscope._input import parse_uuid
from actorscope.agents import AgentRegistry
from actorscope.errors import ConflictError, IdentityError, NotFoundError
from actorscope.identity import Identity, PeerKind, Scope, SenderKind
from actorscope.permissions._audit import AuditAction, AuditEntry, AuditLog
from actorscope.permissions._reasons import Reason
from actorscope.permissions._scopes import ANY
from actorscope.platforms import Account
from actorscope.store import Database, Row, Transaction

__all__ = [
    "CODE_LIFETIME",
    "CODE_LIMIT",
    "RATE_WINDOW",
    "REFUSAL_LIMIT",
    "Link",
    "LinkMode",
    "LinkOutcome",
    "LinkStore",
    "LinkVia",
    "parse_account",
    "parse_person",
]

#: Seconds a link code lives.
CODE_LIFETIME = 600.0
#: Seconds over which the per-account limits count.
RATE_WINDOW = 600.0
#: Codes one account may be issued per :data:`RATE_WINDOW`.
CODE_LIMIT = 3
#: Refused redemptions one account may make per :data:`RATE_WINDOW` before it is locked out.
REFUSAL_LIMIT = 5

# No 0/O, 1/I/L: a code is read from one screen and typed into another.
_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
_CODE_CHARS = 10  # 31^10 ~ 8e14 codes; with the limits above, guessing one is hopeless
_CHARS = _ALPHABET + _ALPHABET.lower()  # redeem() takes a code in either case
_DIGITS = "23456789"
_LETTERS = _ALPHABET.removesuffix(_DIGITS)
#: A digit a code may hold: a text without one shows no code issued since codes hold one.
_A_DIGIT = re.compile(f"[{_DIGITS}]")
#: A token of text that redeem() would take for a code: ten characters of the alphabet in
#: either case, whitespace and dashes anywhere between them (``AB2CD-EF3GH``, ``ab2cd ef3gh``,
#: ``AB2CDEF3GH``), not inside a longer run of letters and digits. A lookahead, so tokens may
#: overlap: ``send AB2CD-EF3GH`` holds ``send AB2CD`` and the code itself.
_SHOWN = re.compile(
    rf"(?<![A-Za-z0-9])(?=((?:[{_CHARS}][\s-]*+){{{_CODE_CHARS - 1}}}[{_CHARS}])(?![A-Za-z0-9]))"
)
#: The issued shape (five, a dash, five), looked up first when a text holds many tokens.
_ISSUED_SHAPE = re.compile(rf"[{_CHARS}]{{5}}-[{_CHARS}]{{5}}")
#: The code-shaped tokens of one message that are looked up (a person shows one code).
_SHOWN_LIMIT = 16
_log = logging.getLogger("actorscope.permissions")
_COLUMNS = "tenant_id, account, person_id, via, linked_by, created_at"


class LinkMode(StrEnum):
    """What links change for an agent (``[identity] links``); nothing unless it opts in."""

    #: Links change nothing; ``/link`` and ``/unlink`` are the bot's own commands.
    OFF = "off"
    #: A linked account's direct scope is its person's (``person:<uuid>``): DM memory, files
    #: and sessions follow the person across channels. Group scopes never change.
    DM = "dm"
    #: A grant to ``person:<uuid>`` covers each linked account; a deny of either wins.
    GRANTS = "grants"


class LinkVia(StrEnum):
    """How a link was made."""

    CODE = "code"  # proven by the person with a link code
    OPERATOR = "operator"  # made by an operator (CLI, HTTP API)


@dataclass(frozen=True, slots=True)
class Link:
    """One account of one person: who linked it, how and when."""

    tenant_id: str
    account: str
    person_id: str
    via: str
    linked_by: str
    created_at: str

    @property
    def person(self) -> str:
        """The person as a scope and grantee: ``person:<id>``."""
        return str(Scope.person(self.person_id))

    def as_dict(self) -> dict[str, str]:
        """The link as plain JSON-ready data."""
        return {
            "tenant_id": self.tenant_id,
            "account": self.account,
            "person": self.person,
            "person_id": self.person_id,
            "via": self.via,
            "linked_by": self.linked_by,
            "created_at": self.created_at,
        }


@dataclass(frozen=True, slots=True)
class LinkOutcome:
    """What a person's link request (a code asked for or sent, an unlink) came to.

    ``ok`` and ``reason`` always; ``account`` the acting account (``""`` for no person);
    ``person`` (``person:<id>``) once one is involved; ``code`` and ``expires_at`` only for a
    code just issued (the only time the code exists outside the person's chat).
    """

    ok: bool
    reason: Reason
    account: str = ""
    person: str = ""
    code: str = ""
    expires_at: str = ""


def _link(row: Row) -> Link:
    return Link(
        tenant_id=row["tenant_id"],
        account=row["account"],
        person_id=row["person_id"],
        via=row["via"],
        linked_by=row["linked_by"],
        created_at=row["created_at"],
    )


def parse_account(text: object) -> Account:
    """An account an operator may link: ``<platform>:<id>`` of a registered platform, a person
    id there, never a synthetic or placeholder id; :class:`IdentityError` naming what is wrong.
    """
    if not isinstance(text, str):
        raise IdentityError(f"an account is <platform>:<id>, got {text!r}")
    account = Account.parse(text)
    if SenderKind.is_placeholder(account.id) or SenderKind.is_synthetic(account.id):
        raise IdentityError(f"{text!r} is not a person; it can never be linked")
    return account


def parse_person(text: object) -> str:
    """A person's UUID from ``person:<uuid>`` or the bare UUID; :class:`IdentityError` else."""
    if not isinstance(text, str):
        raise IdentityError(f"a person is person:<uuid>, got {text!r}")
    bare = text.removeprefix(Scope.PERSON_PREFIX)
    try:
        return parse_uuid(bare, "person id")
    except IdentityError:
        raise IdentityError(f"a person is person:<uuid>, got {text!r}") from None


def _normal_code(code: str) -> str:
    return "".join(code.split()).replace("-", "").upper()


def _digest(tenant_id: str, code: str) -> str:
    return hashlib.sha256(f"{tenant_id}:{_normal_code(code)}".encode()).hexdigest()


async def _use_up(tx: Transaction, digest: str, at: float) -> str | None:
    """Mark the code ``digest`` used at ``at`` if it is not yet: the account it was issued
    to, or None when it was used meanwhile."""
    row = await tx.fetchone(
        "SELECT account FROM link_codes WHERE digest = ? AND used_at IS NULL", (digest,)
    )
    if row is None:
        return None
    await tx.execute(
        "UPDATE link_codes SET used_at = ? WHERE digest = ?", (Database.utc_at(at), digest)
    )
    return str(row["account"])


def _new_code() -> str:
    """Ten characters of the alphabet, at least one a digit and one a letter: words of a
    group's ordinary text (no digit) then never look like a code (:meth:`LinkStore.codes_in`)."""
    raw = [secrets.choice(_ALPHABET) for _ in range(_CODE_CHARS)]
    digit, letter = secrets.SystemRandom().sample(range(_CODE_CHARS), 2)
    if not any(char in _DIGITS for char in raw):
        raw[digit] = secrets.choice(_DIGITS)
    if not any(char in _LETTERS for char in raw):
        raw[letter] = secrets.choice(_LETTERS)
    return f"{''.join(raw[:5])}-{''.join(raw[5:])}"


class LinkStore:
    """Persons and their accounts on one database (every tenant's; methods name theirs)."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.audit = AuditLog(db)
        self._agents = AgentRegistry(db)

    #: An account an operator may link (see :func:`parse_account`).
    parse_account = staticmethod(parse_account)
    #: A person's UUID from ``person:<uuid>`` (see :func:`parse_person`).
    parse_person = staticmethod(parse_person)

    async def tenant_id(self, tenant: str = Database.DEFAULT_TENANT_SLUG) -> str:
        """The UUID of ``tenant`` (a slug or UUID); ``NotFoundError`` otherwise."""
        return (await self._agents.tenant(tenant)).id

    # -- reading ---------------------------------------------------------------------------

    async def person_of(self, account: Account | str, tenant_id: str) -> str | None:
        """The UUID of the person ``account`` belongs to in the tenant, or ``None``."""
        row = await self.db.fetchone(
            "SELECT person_id FROM person_accounts WHERE tenant_id = ? AND account = ?",
            (tenant_id, str(account)),
        )
        return None if row is None else str(row["person_id"])

    async def person_of_agent_account(self, account: Account, agent_id: str) -> str | None:
        """The person ``account`` belongs to in the tenant of agent ``agent_id``, or ``None``
        (one read: what a check asks on its cold path)."""
        row = await self.db.lookup(
            "SELECT person_id FROM person_accounts WHERE account = ? AND tenant_id = "
            "(SELECT tenant_id FROM agents WHERE id = ?)",
            (str(account), agent_id),
        )
        return str(row[0]["person_id"]) if row else None

    async def direct_scope(self, identity: Identity, tenant_id: str) -> str | None:
        """The person's scope (``person:<uuid>``) for a linked account in a direct chat, else
        ``None`` (a group, a non-person, an account linked to nobody)."""
        if _in_group(identity):
            return None
        account = identity.account
        if account is None:
            return None
        person = await self.person_of(account, tenant_id)
        return None if person is None else str(Scope.person(person))

    async def links(
        self,
        *,
        tenant_id: str | None = None,
        person_id: str | None = None,
        account: str | None = None,
    ) -> list[Link]:
        """Links matching every filter given, ordered by tenant, person and account."""
        where: list[str] = []
        params: list[str] = []
        if tenant_id is not None:
            where.append("tenant_id = ?")
            params.append(parse_uuid(tenant_id, "tenant id"))
        if person_id is not None:
            where.append("person_id = ?")
            params.append(parse_person(person_id))
        if account is not None:
            where.append("account = ?")
            params.append(str(parse_account(account)))
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        rows = await self.db.fetchall(
            f"SELECT {_COLUMNS} FROM person_accounts{clause} "
            "ORDER BY tenant_id, person_id, account",
            params,
        )
        return [_link(row) for row in rows]

    # -- operators -------------------------------------------------------------------------

    async def add(
        self,
        accounts: Sequence[str],
        *,
        person: str | None = None,
        by: str = "",
        tenant: str = Database.DEFAULT_TENANT_SLUG,
    ) -> list[Link]:
        """Link ``accounts`` to one person, as an operator (audited as ``by``).

        With ``person`` (``person:<uuid>`` of the tenant) they join it; otherwise they join the
        person one of them belongs to already, or a new person. An account of another person
        is a :class:`ConflictError` (unlink it first), an account named twice an
        :class:`IdentityError`; nothing is written then. Returns every
        link of the person afterwards.
        """
        parsed = [parse_account(text) for text in accounts]
        if not parsed:
            raise IdentityError("name at least one account to link (<platform>:<id>)")
        named = [str(account) for account in parsed]
        if twice := next((name for name in named if named.count(name) > 1), None):
            raise IdentityError(f"{twice} is named twice: name each account to link once")
        wanted = parse_person(person) if person is not None else None
        tenant_id = await self.tenant_id(tenant)
        async with self._changing() as tx:
            owners = await self._owners(tx, tenant_id, parsed)
            if wanted is not None:
                row = await tx.fetchone(
                    "SELECT 1 FROM persons WHERE id = ? AND tenant_id = ?", (wanted, tenant_id)
                )
                if row is None:
                    raise NotFoundError(f"no person {Scope.person(wanted)} in tenant {tenant!r}")
            distinct = set(owners.values())
            if wanted is not None:
                distinct.add(wanted)
            if len(distinct) > 1:
                taken = ", ".join(f"{acc} ({Scope.person(p)})" for acc, p in sorted(owners.items()))
                raise ConflictError(
                    f"an account belongs to at most one person: {taken}; unlink it first"
                )
            target = distinct.pop() if distinct else await self._new_person(tx, tenant_id, by)
            for account in parsed:
                if str(account) not in owners:
                    await self._insert(tx, tenant_id, account, target, LinkVia.OPERATOR, by)
            rows = await tx.fetchall(
                f"SELECT {_COLUMNS} FROM person_accounts WHERE person_id = ? ORDER BY account",
                (target,),
            )
        return [_link(row) for row in rows]

    async def remove(
        self, account: str, *, by: str = "", tenant: str = Database.DEFAULT_TENANT_SLUG
    ) -> Link | None:
        """Unlink one account (audited as ``by``); ``None`` when it was not linked. A person
        left with no account is deleted."""
        parsed = parse_account(account)
        tenant_id = await self.tenant_id(tenant)
        async with self._changing() as tx:
            return await self._unlink(tx, tenant_id, str(parsed), by, LinkVia.OPERATOR)

    # -- the person's own path -------------------------------------------------------------

    async def issue_code(
        self, identity: Identity, tenant_id: str, *, now: float | None = None
    ) -> LinkOutcome:
        """A new link code for the identity's account, in a direct chat only.

        Any earlier unused code of the account is burnt (one live code per account). Refused
        for a non-person, in a group, and past :data:`CODE_LIMIT` codes per window.
        """
        at = time.time() if now is None else now
        account = identity.account
        if account is None:
            return await self._refuse(tenant_id, "", Reason.NOT_A_PERSON, identity)
        if _in_group(identity):
            return await self._refuse(tenant_id, str(account), Reason.GROUP_CONTEXT)
        async with self._changing(announce=False) as tx:
            row = await tx.fetchone(
                "SELECT COUNT(*) AS n FROM link_codes WHERE tenant_id = ? AND account = ? "
                "AND created_at >= ?",
                (tenant_id, str(account), Database.utc_at(at - RATE_WINDOW)),
            )
            if row is not None and int(row["n"]) >= CODE_LIMIT:
                return await self._refused(tx, tenant_id, str(account), Reason.RATE_LIMITED)
            await tx.execute(
                "UPDATE link_codes SET used_at = ? WHERE tenant_id = ? AND account = ? "
                "AND used_at IS NULL",
                (Database.utc_at(at), tenant_id, str(account)),
            )
            # A code older than the window is expired and counts for no limit: drop every such
            # row (of any account), so the table holds only the codes of the last window.
            await tx.execute(
                "DELETE FROM link_codes WHERE created_at < ?", (Database.utc_at(at - RATE_WINDOW),)
            )
            code = _new_code()
            expires = Database.utc_at(at + CODE_LIFETIME)
            await tx.execute(
                "INSERT INTO link_codes (digest, tenant_id, account, created_at, expires_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (_digest(tenant_id, code), tenant_id, str(account), Database.utc_at(at), expires),
            )
            person = await self._person_in(tx, tenant_id, str(account))
            await self._audit(
                tx,
                tenant_id,
                AuditAction.LINK_CODE,
                str(account),
                person,
                Reason.CODE_ISSUED,
                actor=str(account),
                detail={"expires_at": expires},
            )
        return LinkOutcome(
            True,
            Reason.CODE_ISSUED,
            account=str(account),
            person=str(Scope.person(person)) if person else "",
            code=code,
            expires_at=expires,
        )

    async def redeem(
        self, code: str, identity: Identity, tenant_id: str, *, now: float | None = None
    ) -> LinkOutcome:
        """Link the identity's account to the account that was issued ``code``.

        Any attempt uses the code up (a code sent in a group is burnt and refused). Refused:
        a non-person, a group, too many refusals in the window, no code, an unknown, used or
        expired code, the issuing account itself, an account of another person, and accounts
        linked already.
        """
        at = time.time() if now is None else now
        account = identity.account
        if _in_group(identity):
            # Whoever sent it (a non-person too), a code seen in a group is burnt.
            return await self._burn(code, identity, tenant_id, at)
        if account is None:
            return await self._refuse(tenant_id, "", Reason.NOT_A_PERSON, identity)
        sender = str(account)
        if not _normal_code(code):
            return await self._refuse(tenant_id, sender, Reason.NO_CODE)
        digest = _digest(tenant_id, code)
        async with self._changing() as tx:
            if await self._locked_out(tx, tenant_id, sender, at):
                return await self._refused(tx, tenant_id, sender, Reason.RATE_LIMITED)
            row = await tx.fetchone(
                "SELECT account, expires_at, used_at FROM link_codes "
                "WHERE digest = ? AND tenant_id = ?",
                (digest, tenant_id),
            )
            if row is None:
                return await self._refused(tx, tenant_id, sender, Reason.UNKNOWN_CODE)
            if row["used_at"] is not None:
                return await self._refused(tx, tenant_id, sender, Reason.USED_CODE)
            await tx.execute(
                "UPDATE link_codes SET used_at = ? WHERE digest = ?", (Database.utc_at(at), digest)
            )
            issuer = str(row["account"])
            if row["expires_at"] <= Database.utc_at(at):
                return await self._refused(tx, tenant_id, sender, Reason.EXPIRED_CODE)
            if issuer == sender:
                return await self._refused(tx, tenant_id, sender, Reason.SAME_ACCOUNT)
            owners = await self._owners(tx, tenant_id, [Account.parse(issuer), account])
            mine, theirs = owners.get(sender), owners.get(issuer)
            if mine is not None and mine == theirs:
                return await self._refused(
                    tx, tenant_id, sender, Reason.ALREADY_LINKED, person=mine
                )
            if mine is not None:
                # Joining the issuer would take this account from its person: unlink first.
                return await self._refused(
                    tx, tenant_id, sender, Reason.LINKED_ELSEWHERE, person=mine
                )
            person = theirs or await self._new_person(tx, tenant_id, sender)
            if theirs is None:
                await self._insert(
                    tx, tenant_id, Account.parse(issuer), person, LinkVia.CODE, sender
                )
            await self._insert(tx, tenant_id, account, person, LinkVia.CODE, sender)
        return LinkOutcome(True, Reason.LINKED, account=sender, person=str(Scope.person(person)))

    async def _burn(self, code: str, identity: Identity, tenant_id: str, at: float) -> LinkOutcome:
        """Use up a live code sent in a group (whoever it was issued to) and refuse.

        Whatever is sent, the answer is ``group_context``. Only a live code (unused, not
        expired) is written: it is used up and audited as ``link.refused`` with the issuer in
        ``detail``. Anything else costs one read and writes nothing (a debug line): a
        ``/link x`` in any group the bot is in, admitted or not, by anyone, must not open a
        write transaction or grow the audit log.
        """
        account = identity.account
        sender = "" if account is None else str(account)
        refused = LinkOutcome(False, Reason.GROUP_CONTEXT, account=sender)
        if not _normal_code(code):
            return refused
        live = await self._live_digests(tenant_id, [_digest(tenant_id, code)], at)
        if not live:
            _log.debug("links.group_code_unknown channel=%s", identity.channel)
            return refused
        async with self._changing(announce=False) as tx:
            issued_to = await _use_up(tx, live[0], at)
            if issued_to is None:
                return refused  # used meanwhile: nothing left to burn
            return await self._refused(
                tx,
                tenant_id,
                sender,
                Reason.GROUP_CONTEXT,
                identity=identity if account is None else None,
                detail={"burnt": issued_to},
            )

    async def _live_digests(self, tenant_id: str, digests: Sequence[str], at: float) -> list[str]:
        """Those of ``digests`` that are live codes of ``tenant_id`` at ``at`` (unused, not
        expired): one read, outside any write transaction."""
        marks = ", ".join("?" for _ in digests)
        rows = await self.db.fetchall(
            f"SELECT digest FROM link_codes WHERE tenant_id = ? AND used_at IS NULL "
            f"AND expires_at > ? AND digest IN ({marks})",
            (tenant_id, Database.utc_at(at), *digests),
        )
        return [str(row["digest"]) for row in rows]

    @staticmethod
    def codes_in(text: str) -> tuple[str, ...]:
        """The tokens of ``text`` that :meth:`redeem` would take for a code (ten characters
        of the code alphabet in either case, with any whitespace or dashes between them, at
        least one a digit and one a letter, as every issued code: what :meth:`burn_exposed`
        looks up), each once, at most :data:`_SHOWN_LIMIT`, those of the
        issued shape (``AB2CD-EF3GH``) first. No store is read."""
        if len(text) < _CODE_CHARS or _A_DIGIT.search(text) is None:
            return ()
        tokens: dict[str, str] = {}  # normal form -> the token as shown
        for found in _SHOWN.findall(text):
            normal = _normal_code(found)
            # An issued code holds a digit and a letter; ordinary words hold no digit.
            if _A_DIGIT.search(normal) is not None and not normal.isdigit():
                tokens.setdefault(normal, found)
        shown = sorted(tokens.values(), key=lambda token: _ISSUED_SHAPE.fullmatch(token) is None)
        return tuple(shown[:_SHOWN_LIMIT])

    async def burn_exposed(
        self,
        codes: Sequence[str],
        identity: Identity,
        tenant_id: str,
        *,
        now: float | None = None,
    ) -> list[str]:
        """Burn every live code among ``codes`` (:meth:`codes_in` of a group message's text
        that ``identity`` sent): each is used up and audited as ``link.code`` with reason
        ``exposed_in_group`` (``sender_id`` the account it was issued to, ``actor`` the
        account that showed it, ``""`` for a non-person, the chat in ``detail``). Returns the
        accounts whose codes were burnt; a message with no live code costs one read."""
        if not codes:
            return []
        at = time.time() if now is None else now
        digests = sorted({_digest(tenant_id, code) for code in codes})
        live = await self._live_digests(tenant_id, digests, at)
        if not live:
            return []
        shower = identity.account
        detail = {"channel": identity.channel, "chat": identity.chat_id}
        if shower is None:
            detail["sender"] = identity.sender_id
        burnt: list[str] = []
        async with self._changing(announce=False) as tx:
            for digest in live:
                account = await _use_up(tx, digest, at)
                if account is None:
                    continue  # used meanwhile
                await self._audit(
                    tx,
                    tenant_id,
                    AuditAction.LINK_CODE,
                    account,
                    await self._person_in(tx, tenant_id, account),
                    Reason.EXPOSED_IN_GROUP,
                    actor="" if shower is None else str(shower),
                    detail=detail,
                )
                burnt.append(account)
        return burnt

    async def unlink_person(self, identity: Identity, tenant_id: str) -> LinkOutcome:
        """The person unlinks, from any of its accounts in a direct chat: every account of the
        identity's person is unlinked and the person is gone (audited as the account)."""
        account = identity.account
        if account is None:
            return await self._refuse(tenant_id, "", Reason.NOT_A_PERSON, identity)
        sender = str(account)
        if _in_group(identity):
            return await self._refuse(tenant_id, sender, Reason.GROUP_CONTEXT)
        async with self._changing() as tx:
            person = await self._person_in(tx, tenant_id, sender)
            if person is None:
                return await self._refused(tx, tenant_id, sender, Reason.NOT_LINKED)
            rows = await tx.fetchall(
                "SELECT account FROM person_accounts WHERE person_id = ? ORDER BY account",
                (person,),
            )
            for row in rows:
                await self._unlink(tx, tenant_id, str(row["account"]), sender, LinkVia.CODE)
        return LinkOutcome(True, Reason.UNLINKED, account=sender, person=str(Scope.person(person)))

    # -- inside a transaction --------------------------------------------------------------

    @asynccontextmanager
    async def _changing(self, *, announce: bool = True) -> AsyncIterator[Transaction]:
        """A write transaction over links; when it ends every cache on the database forgets
        every agent's decisions (they may name a person), as the store's triggers tell other
        processes (``announce=False``: nothing a decision reads changed)."""
        try:
            async with self.db.transaction() as tx:
                yield tx
        finally:
            if announce:
                self.db.announce_change(ANY)

    async def _owners(
        self, tx: Transaction, tenant_id: str, accounts: Iterable[Account]
    ) -> dict[str, str]:
        owners: dict[str, str] = {}
        for account in accounts:
            person = await self._person_in(tx, tenant_id, str(account))
            if person is not None:
                owners[str(account)] = person
        return owners

    async def _person_in(self, tx: Transaction, tenant_id: str, account: str) -> str | None:
        row = await tx.fetchone(
            "SELECT person_id FROM person_accounts WHERE tenant_id = ? AND account = ?",
            (tenant_id, account),
        )
        return None if row is None else str(row["person_id"])

    async def _new_person(self, tx: Transaction, tenant_id: str, by: str) -> str:
        person = str(uuid.uuid4())
        await tx.execute(
            "INSERT INTO persons (id, tenant_id, created_by, created_at) VALUES (?, ?, ?, ?)",
            (person, tenant_id, by, Database.utc_at(time.time())),
        )
        return person

    async def _insert(
        self,
        tx: Transaction,
        tenant_id: str,
        account: Account,
        person: str,
        via: LinkVia,
        by: str,
    ) -> None:
        await tx.execute(
            f"INSERT INTO person_accounts ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)",
            (tenant_id, str(account), person, via.value, by, Database.utc_at(time.time())),
        )
        await self._audit(
            tx,
            tenant_id,
            AuditAction.LINK_ADD,
            str(account),
            person,
            Reason.LINKED,
            actor=by,
            detail={"via": via.value},
        )

    async def _unlink(
        self, tx: Transaction, tenant_id: str, account: str, by: str, via: LinkVia
    ) -> Link | None:
        row = await tx.fetchone(
            f"SELECT {_COLUMNS} FROM person_accounts WHERE tenant_id = ? AND account = ?",
            (tenant_id, account),
        )
        if row is None:
            return None
        link = _link(row)
        await tx.execute(
            "DELETE FROM person_accounts WHERE tenant_id = ? AND account = ?", (tenant_id, account)
        )
        await tx.execute(
            "DELETE FROM persons WHERE id = ? AND NOT EXISTS "
            "(SELECT 1 FROM person_accounts WHERE person_id = ?)",
            (link.person_id, link.person_id),
        )
        await self._audit(
            tx,
            tenant_id,
            AuditAction.LINK_REMOVE,
            account,
            link.person_id,
            Reason.UNLINKED,
            actor=by,
            detail={"via": via.value},
        )
        return link

    async def _locked_out(self, tx: Transaction, tenant_id: str, account: str, at: float) -> bool:
        row = await tx.fetchone(
            "SELECT COUNT(*) AS n FROM audit_log WHERE sender_id = ? AND action = ? "
            "AND tenant_id = ? AND created_at >= ?",
            (account, AuditAction.LINK_REFUSED.value, tenant_id, Database.utc_at(at - RATE_WINDOW)),
        )
        return row is not None and int(row["n"]) >= REFUSAL_LIMIT

    async def _refuse(
        self,
        tenant_id: str,
        account: str,
        reason: Reason,
        identity: Identity | None = None,
    ) -> LinkOutcome:
        async with self.db.transaction() as tx:
            return await self._refused(tx, tenant_id, account, reason, identity=identity)

    async def _refused(
        self,
        tx: Transaction,
        tenant_id: str,
        account: str,
        reason: Reason,
        *,
        person: str | None = None,
        identity: Identity | None = None,
        detail: dict[str, str] | None = None,
    ) -> LinkOutcome:
        extra = dict(detail or {})
        if identity is not None:
            # No account to name: say who it was as the identity table does.
            extra.update(sender=identity.sender_id, channel=identity.channel)
        await self._audit(
            tx,
            tenant_id,
            AuditAction.LINK_REFUSED,
            account,
            person,
            reason,
            actor=account,
            detail=extra,
        )
        return LinkOutcome(
            False, reason, account=account, person=str(Scope.person(person)) if person else ""
        )

    async def _audit(
        self,
        tx: Transaction,
        tenant_id: str,
        action: AuditAction,
        account: str,
        person: str | None,
        reason: Reason,
        *,
        actor: str,
        detail: dict[str, str] | None = None,
    ) -> None:
        await self.audit.write(
            AuditEntry(
                action=action,
                sender_id=account,
                actor=actor,
                scope=str(Scope.person(person)) if person else "",
                tenant_id=tenant_id,
                reason=reason.value,
                detail=dict(detail or {}),
            ),
            tx,
        )


def _in_group(identity: Identity) -> bool:
    return identity.is_group or identity.peer_kind is not PeerKind.DIRECT

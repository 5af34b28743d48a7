"""Link commands, platform-neutral: ``link`` (ask for a code, or send one) and ``unlink``.

Answered in the pipeline like the writer commands, for an agent whose ``[identity] links`` is
on (docs/design.md, "Persons and links"): ``/link`` in a direct chat asks for a code for this
account; ``/link CODE`` sent from another account in a direct chat links the two; ``/unlink``
in a direct chat unlinks every account of the sender's person. In a group nothing is issued,
and a code sent there is refused and burnt. An answer never holds a code but the one just
issued, in the direct chat that asked for it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from actorscope.identity import Identity
from actorscope.permissions import LinkOutcome, LinkStore, Reason

__all__ = ["LinkCommand", "LinkRequest", "describe_link", "execute_link_command", "link_request"]


class LinkCommand(StrEnum):
    """The link commands (the name without ``/`` or ``!``)."""

    LINK = "link"
    UNLINK = "unlink"


_BY_NAME = {command.value: command for command in LinkCommand}
_COMMAND = re.compile(r"([/!])([A-Za-z]{1,32})(?:@[A-Za-z0-9_]{1,64})?(?:\s+(.*))?", re.DOTALL)
#: A named command at the start of its text, after at most a mention and punctuation (``/``,
#: ``!``, ``?`` ...), never a later word of the same name; a framework's prefix of any other
#: shape (discord.py's ``link `` or ``bot ``) is cut off first (``prefix``).
_NAMED = (
    r"(?is)(?:<@!?[0-9]{{1,20}}>)?[^\w\s]{{0,8}}\s*{name}(?:@[a-z0-9_]{{1,64}})?(?![a-z0-9_])"
    r"\s*(.*)"
)

_WHY: dict[Reason, str] = {
    Reason.NOT_A_PERSON: "only a person's own account can be linked",
    Reason.GROUP_CONTEXT: (
        "link codes work only in a direct chat with the bot; a code sent here is burnt"
    ),
    Reason.NO_CODE: "send /link alone for a code, or /link CODE with a code",
    Reason.UNKNOWN_CODE: "no such code; ask for a new one with /link",
    Reason.USED_CODE: "that code was used already; ask for a new one with /link",
    Reason.EXPIRED_CODE: "that code has expired; ask for a new one with /link",
    Reason.SAME_ACCOUNT: "send the code from your other account, not this one",
    Reason.ALREADY_LINKED: "these accounts are linked already",
    Reason.LINKED_ELSEWHERE: "this account is linked to someone already; /unlink it first",
    Reason.RATE_LIMITED: "too many link attempts from this account; try again later",
    Reason.NOT_LINKED: "this account is not linked",
}


@dataclass(frozen=True, slots=True)
class LinkRequest:
    """A link command found in a message, with what follows it (the code, if any)."""

    command: LinkCommand
    argument: str


def link_request(named: str, text: str, prefixes: str, *, prefix: str = "") -> LinkRequest | None:
    """The link command of a message, else ``None``.

    ``named`` is the command the normaliser or the framework named (Telegram's ``/link@bot``
    is ``link``; a discord.py bot's ``?link`` with its own prefix too), or ``""``; then
    ``text`` must start with one of ``prefixes`` (``"!"`` on Discord) and a link command. The
    argument is the rest of the text after the command: after ``prefix`` when the framework
    says which it matched (discord.py's ``ctx.prefix``, which may be any string, ``link ``
    too), else after a mention and punctuation at the start of the text.
    """
    if named:
        command = _BY_NAME.get(named.lower())
        if command is None:
            return None
        head = text[len(prefix) :] if prefix and text.startswith(prefix) else text
        pattern = _NAMED.format(name=command.value)
        # An unknown prefix of another shape: the first word of the name (what a code needs).
        found = re.match(pattern, head.strip()) or re.search(rf"(?<![a-z]){pattern}", head)
        argument = found.group(1) if found is not None else ""
    else:
        match = _COMMAND.match(text.strip())
        if match is None or match.group(1) not in prefixes:
            return None
        command = _BY_NAME.get(match.group(2).lower())
        argument = match.group(3) or ""
    if command is None:
        return None
    return LinkRequest(command, argument.strip())


def describe_link(outcome: LinkOutcome) -> str:
    """One line for the chat: what happened, or ``refused (<reason>): <why>``."""
    if outcome.reason is Reason.CODE_ISSUED:
        until = outcome.expires_at[11:16]  # HH:MM of an ISO 8601 UTC time
        return (
            f"your link code is {outcome.code} (once, until {until} UTC): from your other "
            f"account, in a direct chat with this bot, send /link {outcome.code} "
            f"(!link {outcome.code} on Discord)"
        )
    if outcome.reason is Reason.LINKED:
        return f"linked: {outcome.account} is now one person with the account that asked"
    if outcome.reason is Reason.UNLINKED:
        return "unlinked: your accounts are separate again"
    return f"refused ({outcome.reason.value}): {_WHY.get(outcome.reason, '')}"


async def execute_link_command(
    links: LinkStore, request: LinkRequest, identity: Identity, tenant_id: str
) -> LinkOutcome:
    """Run a link command as ``identity`` in ``tenant_id`` and return its outcome."""
    if request.command is LinkCommand.UNLINK:
        return await links.unlink_person(identity, tenant_id)
    if request.argument:
        return await links.redeem(request.argument, identity, tenant_id)
    return await links.issue_code(identity, tenant_id)

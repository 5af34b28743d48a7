"""Writer commands, platform-neutral: ``addwriter`` / ``removewriter`` / ``writers``.

The platform modules (:mod:`~actorscope.channels.telegram._commands`,
:mod:`~actorscope.channels.discord._commands`) find the command and its target the way their
platform makes trustworthy (the replied-to message's sender, a resolved user mention) and call
:func:`execute_writer_command`, which asks the
:class:`~actorscope.permissions.WriterManager` and words the outcome. A target is never taken
from command text: names change hands, ids typed by a user prove nothing.
"""

from __future__ import annotations

import re
from enum import StrEnum

from actorscope.identity import Identity
from actorscope.permissions import Reason, WriterDecision, WriterManager

__all__ = [
    "WriterCommand",
    "describe_decision",
    "execute_writer_command",
    "parse_writer_command",
]


class WriterCommand(StrEnum):
    """The writer-management commands (the name without ``/`` or ``!``)."""

    ADD = "addwriter"
    REMOVE = "removewriter"
    LIST = "writers"

    @classmethod
    def named(cls, name: str) -> WriterCommand | None:
        """The writer command called ``name`` (no prefix, any case), else ``None``."""
        return _BY_NAME.get(name.lower())


_BY_NAME = {command.value: command for command in WriterCommand}
_COMMAND = re.compile(r"([/!])([A-Za-z]{1,32})(?:@[A-Za-z0-9_]{1,64})?(?=\s|$)")

_WHY: dict[Reason, str] = {
    Reason.ALREADY_WRITER: "{target} is already a writer",
    Reason.NOT_A_WRITER: "{target} is not a writer",
    Reason.LAST_WRITER: "{target} is the last writer; add another writer first",
    Reason.NOT_GROUP_CONTEXT: "writers are managed in groups only",
    Reason.NO_AGENT: "this bot has no agent configured",
    Reason.MANAGER_NOT_A_PERSON: (
        "only a person can manage writers (not an anonymous admin, a channel or a bot)"
    ),
    Reason.INVALID_TARGET: "no person to act on: {usage}",
    Reason.NOT_AUTHORIZED: (
        "only owners and writers may manage writers; group admins may add the first writer only"
    ),
}


def parse_writer_command(text: str, *, prefixes: str = "/") -> WriterCommand | None:
    """The writer command ``text`` starts with (``/addwriter@bot`` too), else ``None``."""
    match = _COMMAND.match(text.strip())
    if match is None or match.group(1) not in prefixes:
        return None
    return WriterCommand.named(match.group(2))


def describe_decision(decision: WriterDecision, *, target_name: str = "", usage: str = "") -> str:
    """One line for the chat: what happened, or ``refused (<reason>): <why>``."""
    target = target_name or decision.target or "that user"
    if decision.ok and decision.reason is Reason.WRITER_ADDED:
        return f"added {target} as a writer"
    if decision.ok:
        return f"removed {target} from the writers"
    why = _WHY.get(decision.reason, "").format(target=target, usage=usage or "name a person")
    return f"refused ({decision.reason.value}): {why}" if why else f"refused: {decision.reason}"


async def execute_writer_command(
    manager: WriterManager,
    command: WriterCommand,
    identity: Identity,
    *,
    target: str = "",
    target_name: str = "",
    usage: str = "",
    platform_admin: bool = False,
) -> str:
    """Run ``command`` as ``identity`` (agent bound in it) and return the reply text.

    An empty ``target`` for add/remove still goes to the manager, so the refusal is audited.
    ``platform_admin``: the platform says ``identity`` administers the group (see
    :meth:`~actorscope.permissions.WriterManager.add_writer`).
    """
    if command is WriterCommand.LIST:
        if not identity.is_group:
            return describe_decision(
                WriterDecision(False, Reason.NOT_GROUP_CONTEXT, "", ""), usage=usage
            )
        writers = await manager.named_writers(identity)
        if not writers:
            return "no writers yet: a group admin may add the first one"
        # As /addwriter named them ("@bob (700000002)"); the bare id when added elsewhere.
        return "writers: " + ", ".join(name or sender for sender, name in writers)
    if command is WriterCommand.ADD:
        decision = await manager.add_writer(
            target, identity, platform_admin=platform_admin, name=target_name
        )
    else:
        decision = await manager.remove_writer(target, identity, platform_admin=platform_admin)
    return describe_decision(decision, target_name=target_name, usage=usage)

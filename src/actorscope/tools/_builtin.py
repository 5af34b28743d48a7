"""The built-in, identity-aware LLM tools: workspace files, cron jobs, memory, and whoami.

Every tool acts as the run's bound identity: files and memory live in its scope, permission
checks and ``created_by`` use its actor. No tool takes an actor, a scope or a sender as an
argument; ``agent_id`` / ``agent`` on the memory tools is a memory namespace, validated at the
boundary (:class:`~actorscope.tools._registry.ToolRegistry`) before any backend call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from actorscope._text import has_lone_surrogate
from actorscope.errors import ToolError
from actorscope.tools._cron import MAX_JOB_MESSAGE_CHARS, parse_job_name, parse_schedule
from actorscope.tools._identity_args import AGENT_ALIAS_DESCRIPTION, AGENT_ID_DESCRIPTION
from actorscope.tools._memory import MAX_MEMORY_TEXT_CHARS, MemoryKey
from actorscope.tools._ownership import owner_for_new_row
from actorscope.tools._registry import Tool, ToolCall, ToolRegistry
from actorscope.tools._storage import storage_scope
from actorscope.tools._toolbox import Toolbox, require_scope

__all__ = [
    "BUILTIN_TOOL_NAMES",
    "CronAddInput",
    "CronListInput",
    "CronRemoveInput",
    "MemoryReflectInput",
    "MemorySearchInput",
    "WhoamiInput",
    "WorkspaceReadInput",
    "WorkspaceWriteInput",
    "builtin_tools",
]

BUILTIN_TOOL_NAMES: tuple[str, ...] = (
    "workspace_write",
    "workspace_read",
    "cron_add",
    "cron_list",
    "cron_remove",
    "memory_reflect",
    "memory_search",
    "whoami",
)

_T = TypeVar("_T")
_PATH = (
    "File path relative to this conversation's workspace, with '/' separators. Absolute "
    "paths, '..' and symlinks that lead out of the workspace are refused."
)


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class WorkspaceWriteInput(_Input):
    """Write (create or replace) a text file in this conversation's workspace."""

    path: str = Field(description=_PATH)
    content: str = Field(description="The whole new content of the file (UTF-8 text).")


class WorkspaceReadInput(_Input):
    """Read a text file from this conversation's workspace."""

    path: str = Field(description=_PATH)


class CronAddInput(_Input):
    """Schedule a recurring job in this conversation."""

    name: str = Field(description="A name for the job, unique in this conversation.")
    schedule: str = Field(
        description="5-field cron expression 'minute hour day-of-month month day-of-week' "
        "(e.g. '0 9 * * mon-fri'), or @hourly, @daily, @weekly, @monthly, @yearly."
    )
    message: str = Field(default="", description="What the agent is told when the job runs.")


class CronListInput(_Input):
    """List this conversation's jobs."""


class CronRemoveInput(_Input):
    """Remove one of this conversation's jobs."""

    name: str = Field(description="The name of the job to remove.")


class MemoryReflectInput(_Input):
    """Change the memory of an agent namespace in this conversation.

    Name the namespace with agent_id; agent is its deprecated alias. At least one of agent_id
    or agent is required, checked at run time: each one given must be a string with a
    non-whitespace character. When both are valid, agent_id wins; an invalid value in either
    is an error.
    """

    action: Literal["add", "update", "forget", "pin", "unpin"] = Field(
        description="add a new entry (needs text); update an entry's text (needs target and "
        "text); forget, pin or unpin an entry (need target)."
    )
    agent_id: str | None = Field(default=None, description=AGENT_ID_DESCRIPTION)
    agent: str | None = Field(default=None, description=AGENT_ALIAS_DESCRIPTION)
    text: str | None = Field(default=None, description="The entry's text, for add and update.")
    target: int | None = Field(
        default=None, description="The id of the entry to update, forget, pin or unpin.", ge=1
    )


class MemorySearchInput(_Input):
    """Search the memory of an agent namespace in this conversation.

    Name the namespace with agent_id; agent is its deprecated alias. At least one of agent_id
    or agent is required, checked at run time: each one given must be a string with a
    non-whitespace character. When both are valid, agent_id wins; an invalid value in either
    is an error.
    """

    agent_id: str | None = Field(default=None, description=AGENT_ID_DESCRIPTION)
    agent: str | None = Field(default=None, description=AGENT_ALIAS_DESCRIPTION)
    query: str = Field(
        default="",
        description="Words to look for (case-insensitive); empty: pinned, then recent entries.",
    )
    limit: int = Field(default=10, ge=1, le=50, description="At most this many entries.")


class WhoamiInput(_Input):
    """Show who this run acts for."""


async def _fs(function: Callable[..., _T], *args: Any) -> _T:
    """Run blocking file work off the event loop; an OS failure is a tool error, not a crash."""
    try:
        return await asyncio.to_thread(function, *args)
    except OSError as exc:
        raise ToolError("io_error", f"file system error: {exc.strerror or exc}") from None


def _unicode(value: str, field: str) -> str:
    """``value``, or ``invalid_arguments`` on ``field`` if it cannot be encoded as UTF-8."""
    if has_lone_surrogate(value):
        raise ToolError(
            "invalid_arguments",
            f"{field} is not valid Unicode text (it has a lone surrogate)",
            field=field,
        )
    return value


def _text(value: str | None, action: str) -> str:
    if value is None or not value.strip():
        raise ToolError("invalid_arguments", f"{action} needs a non-empty text", field="text")
    if len(value) > MAX_MEMORY_TEXT_CHARS:
        raise ToolError(
            "invalid_arguments", f"text is longer than {MAX_MEMORY_TEXT_CHARS}", field="text"
        )
    return _unicode(value, "text")


def _target(value: int | None, action: str) -> int:
    if value is None:
        raise ToolError("invalid_arguments", f"{action} needs a target entry id", field="target")
    return value


def _workspace_tools(box: Toolbox) -> list[Tool[Any]]:
    async def write(call: ToolCall, args: WorkspaceWriteInput) -> Mapping[str, Any]:
        agent, who = await box.acting(call.identity)
        require_scope(who)
        await box.require(box.policy.check_file_writer(who), "file_writer")
        size = await _fs(box.workspace.write, agent, who, args.path, args.content)
        return {"path": args.path, "bytes": size}

    async def read(call: ToolCall, args: WorkspaceReadInput) -> Mapping[str, Any]:
        agent, who = await box.acting(call.identity)
        content = await _fs(box.workspace.read, agent, who, args.path)
        return {"path": args.path, "content": content}

    return [
        Tool("workspace_write", _doc(WorkspaceWriteInput), WorkspaceWriteInput, write),
        Tool("workspace_read", _doc(WorkspaceReadInput), WorkspaceReadInput, read),
    ]


def _cron_tools(box: Toolbox) -> list[Tool[Any]]:
    async def add(call: ToolCall, args: CronAddInput) -> Mapping[str, Any]:
        agent, who = await box.acting(call.identity)
        scope = require_scope(who)
        await box.require(box.policy.check_cron(who), "cron")
        if len(args.message) > MAX_JOB_MESSAGE_CHARS:
            raise ToolError("invalid_arguments", "message is too long", field="message")
        job = await box.crons.add(
            agent_id=agent.id,
            scope=scope,
            key=storage_scope(who),
            name=parse_job_name(args.name),
            schedule=parse_schedule(_unicode(args.schedule, "schedule")),
            message=_unicode(args.message, "message"),
            created_by=owner_for_new_row(who),
        )
        return {"job": job.to_json()}

    async def list_jobs(call: ToolCall, args: CronListInput) -> Mapping[str, Any]:
        agent, who = await box.acting(call.identity)
        jobs = await box.crons.list(agent_id=agent.id, key=storage_scope(who))
        return {"jobs": [job.to_json() for job in jobs]}

    async def remove(call: ToolCall, args: CronRemoveInput) -> Mapping[str, Any]:
        agent, who = await box.acting(call.identity)
        key = storage_scope(who)
        await box.require(box.policy.check_cron(who), "cron")
        name = _unicode(args.name, "name")
        job = await box.crons.remove(agent_id=agent.id, key=key, name=name)
        return {"removed": job.to_json()}

    return [
        Tool("cron_add", _doc(CronAddInput), CronAddInput, add),
        Tool("cron_list", _doc(CronListInput), CronListInput, list_jobs),
        Tool("cron_remove", _doc(CronRemoveInput), CronRemoveInput, remove),
    ]


def _memory_tools(box: Toolbox) -> list[Tool[Any]]:
    async def reflect(call: ToolCall, args: MemoryReflectInput) -> Mapping[str, Any]:
        agent, who = await box.acting(call.identity)
        key = MemoryKey(agent.id, call.namespace, storage_scope(who))
        if args.action == "add":
            if args.target is not None:
                raise ToolError("invalid_arguments", "add takes no target", field="target")
            text = _text(args.text, "add")
            reason = await box.may_add_memory(who)
            entry = await box.memory.add(key, text, created_by=owner_for_new_row(who))
        else:
            new_text = _text(args.text, "update") if args.action == "update" else None
            if new_text is None and args.text is not None:
                raise ToolError("invalid_arguments", f"{args.action} takes no text", field="text")
            target = _target(args.target, args.action)
            reason = await box.may_change_memory(who, await box.memory.get(key, target))
            if new_text is not None:
                entry = await box.memory.update(key, target, new_text)
            elif args.action == "forget":
                entry = await box.memory.forget(key, target)
            else:
                entry = await box.memory.set_pinned(key, target, args.action == "pin")
        await box.audit_memory_change(who, args.action, entry, reason)
        return {"action": args.action, "namespace": call.namespace, "entry": entry.to_json()}

    async def search(call: ToolCall, args: MemorySearchInput) -> Mapping[str, Any]:
        agent, who = await box.acting(call.identity)
        key = MemoryKey(agent.id, call.namespace, storage_scope(who))
        query = _unicode(args.query, "query")
        entries = await box.memory.search(key, query, args.limit)
        return {"namespace": call.namespace, "entries": [entry.to_json() for entry in entries]}

    return [
        Tool("memory_reflect", _doc(MemoryReflectInput), MemoryReflectInput, reflect, True),
        Tool("memory_search", _doc(MemorySearchInput), MemorySearchInput, search, True),
    ]


async def _whoami(call: ToolCall, args: WhoamiInput) -> Mapping[str, Any]:
    who = call.identity
    # The same keys as ``actorscope normalize`` and RunRequest: user_id is the scope,
    # sender_id the person who sent the message, actor_id who acts (sender, else scope).
    return {
        "user_id": who.user_id,
        "sender_id": who.sender_id,
        "actor_id": who.actor_id,
        "peer_kind": who.peer_kind.value,
        "sender_kind": who.sender_kind.value,
        "role": who.role,
        "channel": who.channel,
        "chat_id": who.chat_id,
        "is_group": who.is_group,
    }


def _doc(model: type[BaseModel]) -> str:
    return " ".join((model.__doc__ or "").split())


def builtin_tools(box: Toolbox) -> ToolRegistry:
    """A registry of every built-in tool, in :data:`BUILTIN_TOOL_NAMES` order."""
    return ToolRegistry(
        (
            *_workspace_tools(box),
            *_cron_tools(box),
            *_memory_tools(box),
            Tool("whoami", _doc(WhoamiInput), WhoamiInput, _whoami),
        )
    )

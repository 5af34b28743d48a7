"""The built-in tools act as the bound identity: scope for data, actor for permissions."""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from tests._wait import wait_until
from tests.permissions._feed_ticks import FeedTicks

from actorscope.agents import Agent, AgentRegistry
from actorscope.context import bind_identity
from actorscope.identity import Identity
from actorscope.permissions import GrantStore, PermissionPolicy
from actorscope.store import Database
from actorscope.tools import Toolbox, ToolRegistry, builtin_tools
from actorscope.tools._builtin import BUILTIN_TOOL_NAMES

pytestmark = pytest.mark.sqlite_only(
    "the tools' subject is the boundary, not the dialect: test_cron_keys.py and tests/store "
    "run the tools' tables on both"
)

GrantWriter = Callable[[str, str], Awaitable[None]]
#: Another process over the same database (grants and revokes on request).
WORKER = Path(__file__).parent.parent / "permissions" / "grant_worker.py"

CHAT = -100200300
WRITER, MEMBER = "4242", "5151"
GROUP_SCOPE = f"group:telegram:{CHAT}"


def group(sender: str, **changes: Any) -> Identity:
    """A Telegram supergroup member."""
    return replace(Identity.chat("telegram", CHAT, sender, group=True), **changes)


def dm(sender: str) -> Identity:
    """A Telegram private chat."""
    return Identity.chat("telegram", sender, sender, group=False)


async def call(
    tools: ToolRegistry, identity: Identity | None, tool: str, /, **args: Any
) -> dict[str, Any]:
    """Call a tool as ``identity`` (bound, as a host would) and return its payload."""
    if identity is None:
        result = await tools.call(tool, args)
    else:
        with bind_identity(identity):
            result = await tools.call(tool, args)
    return {"is_error": result.is_error, **result.payload}


def _file(tmp_path: Path, scope_dir: str, name: str = "notes.md", agent: str = "main") -> Path:
    (tenant,) = (tmp_path / "ws" / "tenants").iterdir()  # every agent here is in one tenant
    return tenant / "agents" / agent / scope_dir / name


def test_registry_holds_every_builtin_tool(registry: ToolRegistry) -> None:
    """All eight tools are registered, in order, each with a description."""
    assert [tool.name for tool in registry] == list(BUILTIN_TOOL_NAMES)
    assert all(tool.description for tool in registry)


@pytest.mark.parametrize(
    "extra",
    [{}, {"sender_id": WRITER}, {"user_id": "4242"}, {"agent_id": WRITER}, {"actor": WRITER}],
)
async def test_group_non_writer_cannot_write_whatever_the_arguments_say(
    registry: ToolRegistry, grant_writer: GrantWriter, tmp_path: Path, extra: dict[str, str]
) -> None:
    """A member without a grant is refused; ids in the arguments change nothing."""
    await grant_writer(GROUP_SCOPE, WRITER)
    result = await call(
        registry, group(MEMBER), "workspace_write", path="notes.md", content="x", **extra
    )
    assert result["is_error"] is True
    assert result["error"]["code"] in ("permission_denied", "invalid_arguments")
    if not extra:
        assert result["error"]["reason"] == "no_grant"
    assert not (tmp_path / "ws" / "agents").exists() or not any((tmp_path / "ws").rglob("notes.md"))


async def test_group_writer_writes_into_the_group_workspace(
    registry: ToolRegistry, grant_writer: GrantWriter, tmp_path: Path
) -> None:
    """A granted sender writes; the file lands in the group's scope, readable by members."""
    await grant_writer(GROUP_SCOPE, WRITER)
    written = await call(registry, group(WRITER), "workspace_write", path="notes.md", content="hi")
    assert written == {"is_error": False, "path": "notes.md", "bytes": 2}
    assert _file(tmp_path, "group%3Atelegram%3A-100200300").read_text(encoding="utf-8") == "hi"
    read = await call(registry, group(MEMBER), "workspace_read", path="notes.md")
    assert read["content"] == "hi"


async def test_direct_chat_write_needs_no_grant(registry: ToolRegistry, tmp_path: Path) -> None:
    """The same call from a DM is allowed, into the sender's own scope."""
    result = await call(registry, dm(MEMBER), "workspace_write", path="notes.md", content="mine")
    assert result["is_error"] is False
    assert _file(tmp_path, MEMBER).read_text(encoding="utf-8") == "mine"


@pytest.mark.parametrize(
    ("identity", "reason"),
    [
        (Identity.chat("telegram", CHAT, 1087968824, group=True), "empty_sender"),
        (Identity.system(GROUP_SCOPE, "subagent:task-1"), "synthetic_sender"),
    ],
)
async def test_non_person_senders_in_a_group_are_denied(
    registry: ToolRegistry, identity: Identity, reason: str
) -> None:
    """An empty or synthetic sender gets no group write, with the policy's reason."""
    result = await call(registry, identity, "workspace_write", path="a.txt", content="x")
    assert result["error"]["code"] == "permission_denied"
    assert result["error"]["reason"] == reason


async def test_owner_role_bypasses_the_grant(registry: ToolRegistry) -> None:
    """An owner may write in a group without a grant (role_bypass)."""
    result = await call(
        registry, group(MEMBER, role="owner"), "workspace_write", path="a.txt", content="x"
    )
    assert result["is_error"] is False


async def test_no_bound_identity_changes_nothing(registry: ToolRegistry, tmp_path: Path) -> None:
    """Outside any run there is no scope: writes and cron are refused, whoami is empty."""
    write = await call(registry, None, "workspace_write", path="a.txt", content="x")
    cron = await call(registry, None, "cron_add", name="d", schedule="@daily")
    who = await call(registry, None, "whoami")
    assert write["error"]["code"] == cron["error"]["code"] == "no_scope"
    assert (who["user_id"], who["sender_id"], who["actor_id"]) == ("", "", "")
    assert not (tmp_path / "ws").exists()


async def test_cron_jobs_belong_to_the_scope_and_record_the_actor(
    registry: ToolRegistry, grant_writer: GrantWriter
) -> None:
    """A writer adds a group job (created_by = the writer); lists and removes are per scope."""
    await grant_writer(GROUP_SCOPE, WRITER)
    added = await call(
        registry, group(WRITER), "cron_add", name="digest", schedule="0 9 * * MON", message="m"
    )
    assert added["job"]["created_by"] == WRITER
    assert added["job"]["schedule"] == "0 9 * * mon"
    await call(registry, dm(WRITER), "cron_add", name="mine", schedule="@daily")
    listed = await call(registry, group(MEMBER), "cron_list")
    assert [job["name"] for job in listed["jobs"]] == ["digest"]
    denied = await call(registry, group(MEMBER), "cron_remove", name="digest")
    assert denied["error"]["code"] == "permission_denied"
    elsewhere = await call(registry, dm(WRITER), "cron_remove", name="digest")
    assert elsewhere["error"]["code"] == "not_found"
    removed = await call(registry, group(WRITER), "cron_remove", name="digest")
    assert removed["removed"]["name"] == "digest"
    assert (await call(registry, group(WRITER), "cron_list"))["jobs"] == []


async def test_cron_add_is_denied_to_a_group_non_writer(registry: ToolRegistry) -> None:
    """Without a cron or file_writer grant a member cannot schedule in the group."""
    result = await call(registry, group(MEMBER), "cron_add", name="d", schedule="@daily")
    assert result["error"] == {
        "code": "permission_denied",
        "message": "cron permission denied (no_grant)",
        "reason": "no_grant",
    }


@pytest.mark.parametrize(
    ("args", "code"),
    [
        ({"name": "d", "schedule": "61 * * * *"}, "invalid_schedule"),
        ({"name": " ", "schedule": "@daily"}, "invalid_arguments"),
        ({"name": "d", "schedule": "@daily", "message": "x" * 4001}, "invalid_arguments"),
        ({"schedule": "@daily"}, "invalid_arguments"),
    ],
)
async def test_bad_cron_arguments_are_error_results(
    registry: ToolRegistry, args: dict[str, Any], code: str
) -> None:
    """Bad schedules, names and messages come back as structured errors."""
    result = await call(registry, dm(MEMBER), "cron_add", **args)
    assert result["is_error"] is True
    assert result["error"]["code"] == code


async def test_duplicate_cron_name_is_a_conflict(registry: ToolRegistry) -> None:
    """A second job with the same name in the scope is refused."""
    await call(registry, dm(MEMBER), "cron_add", name="d", schedule="@daily")
    again = await call(registry, dm(MEMBER), "cron_add", name="d", schedule="@hourly")
    assert again["error"]["code"] == "conflict"


async def test_memory_round_trip_through_the_tools(registry: ToolRegistry) -> None:
    """add, search, update, pin and forget work on SQLite within the run's scope."""
    me = group(MEMBER)
    added = await call(registry, me, "memory_reflect", action="add", agent_id="p", text="tea")
    entry = added["entry"]["id"]
    assert added["entry"]["created_by"] == MEMBER
    found = await call(registry, me, "memory_search", agent="p", query="TEA")
    assert [e["id"] for e in found["entries"]] == [entry]
    assert (await call(registry, dm(MEMBER), "memory_search", agent_id="p"))["entries"] == []
    await call(
        registry, me, "memory_reflect", action="update", agent_id="p", target=entry, text="x"
    )
    pinned = await call(registry, me, "memory_reflect", action="pin", agent_id="p", target=entry)
    assert pinned["entry"]["pinned"] is True
    await call(registry, me, "memory_reflect", action="forget", agent_id="p", target=entry)
    missing = await call(
        registry, me, "memory_reflect", action="forget", agent_id="p", target=entry
    )
    assert missing["error"]["code"] == "not_found"


async def test_whoami_reports_the_bound_identity(registry: ToolRegistry) -> None:
    """whoami shows user_id, sender_id, actor_id (normalize's keys), kinds, role; no arguments."""
    who = await call(registry, group(WRITER, role="admin"), "whoami")
    assert who == {
        "is_error": False,
        "user_id": GROUP_SCOPE,
        "sender_id": WRITER,
        "actor_id": WRITER,
        "peer_kind": "group",
        "sender_kind": "user",
        "role": "admin",
        "channel": "telegram",
        "chat_id": str(CHAT),
        "is_group": True,
    }
    refused = await call(registry, group(WRITER), "whoami", sender_id="1")
    assert refused["error"]["code"] == "invalid_arguments"


async def test_identity_agent_selects_the_workspace(
    db: Database, registry: ToolRegistry, tmp_path: Path
) -> None:
    """A run bound to another agent (by UUID) uses that agent's workspace."""
    other = await AgentRegistry(db).create("helper")
    me = replace(dm(MEMBER), agent_id=other.id)
    await call(registry, me, "workspace_write", path="notes.md", content="h")
    assert _file(tmp_path, MEMBER, agent="helper").exists()
    assert not _file(tmp_path, MEMBER).exists()


@pytest.mark.parametrize("agent_id", [str(uuid.uuid4()), "not-a-uuid"])
async def test_unknown_agent_is_an_error(registry: ToolRegistry, agent_id: str) -> None:
    """A run bound to an agent that does not exist gets no_agent, not the default agent."""
    result = await call(registry, replace(dm(MEMBER), agent_id=agent_id), "cron_list")
    assert result["error"]["code"] == "no_agent"


@pytest.mark.parametrize("bound_agent", [True, False])
async def test_agent_of_another_tenant_is_an_error(
    registry: ToolRegistry, agent: Agent, bound_agent: bool
) -> None:
    """The run's tenant must own its agent, whether bound or the toolbox's default."""
    me = replace(dm(MEMBER), agent_id=agent.id if bound_agent else None)
    other_tenant = replace(me, tenant_id=str(uuid.uuid4()))
    assert (await call(registry, other_tenant, "cron_list"))["error"]["code"] == "no_agent"
    same_tenant = replace(me, tenant_id=agent.tenant_id)
    assert (await call(registry, same_tenant, "cron_list"))["is_error"] is False


async def test_no_agent_at_all_is_an_error(db: Database, tmp_path: Path) -> None:
    """Without a default agent and none bound, a tool refuses with no_agent."""
    box = Toolbox.create(
        db, policy=PermissionPolicy(GrantStore(db)), workspace_root=tmp_path / "ws"
    )
    result = await call(builtin_tools(box), dm(MEMBER), "workspace_read", path="a")
    assert result["error"]["code"] == "no_agent"


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"], indirect=True)  # the feed's dialect
async def test_a_tool_server_sees_another_process_revoke_within_a_second(
    db_target: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The policy `actorscope mcp` builds follows another process's revoke within 1 s: no
    call that began after its feed's first tick past the revoke is allowed
    (tests/permissions/_feed_ticks.py)."""
    async with Database.open(db_target) as db:
        agent = await AgentRegistry(db).create("main")
        await _revoke_seen_within_a_second(db, db_target, agent, tmp_path, monkeypatch)


async def _revoke_seen_within_a_second(
    db: Database, db_target: str, agent: Agent, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ticks = FeedTicks(db, monkeypatch)
    assert ticks.within_bound
    store = GrantStore(db)
    box = Toolbox.create(
        db, policy=PermissionPolicy(store), workspace_root=tmp_path / "ws", default_agent=agent
    )
    tools = builtin_tools(box)
    member = replace(Identity.chat("telegram", -100777, 42, group=True), agent_id=agent.id)

    async def write_allowed() -> bool:
        result = await call(tools, member, "workspace_write", path="n.md", content="x")
        return not result["is_error"]

    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(WORKER),
        db_target,
        agent.id,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None

    async def ask(op: str) -> dict[str, Any]:
        assert proc.stdin is not None
        assert proc.stdout is not None
        proc.stdin.write((json.dumps({"op": op, "user": "42"}) + "\n").encode())
        await proc.stdin.drain()
        reply: dict[str, Any] = json.loads(
            await asyncio.wait_for(proc.stdout.readline(), timeout=60)
        )
        assert "error" not in reply, reply["error"]
        return reply

    try:
        assert json.loads(await asyncio.wait_for(proc.stdout.readline(), timeout=60))["ready"]
        await ask("grant")
        await wait_until(write_allowed, 10)
        await wait_until(write_allowed, 10)  # warm: answered from the cache
        assert len(store.cache) == 1
        assert (await ask("revoke"))["ok"]
        revoked, _ = ticks.mark()
        allowed_after: list[int] = []  # for each call still allowed: the feed's ticks before it

        async def write_denied() -> bool:
            began = ticks.count - revoked
            if await write_allowed():
                allowed_after.append(began)
                return False
            return True

        await wait_until(write_denied, 10.0)  # bounds a hang only
        # The promise (docs/design.md, freshness): the feed's first tick after the change
        # carries it, so a call that begins after that tick is denied.
        assert all(after <= 1 for after in allowed_after), allowed_after
    finally:
        proc.stdin.write(b'{"op": "quit"}\n')
        await proc.stdin.drain()
        try:
            await asyncio.wait_for(proc.wait(), timeout=15)
        except TimeoutError:
            proc.kill()
            await proc.wait()


@pytest.mark.parametrize("tool", ["memory_reflect", "memory_search"])
def test_memory_tool_and_alias_descriptions_state_the_identity_rules(
    registry: ToolRegistry, tool: str
) -> None:
    """Tool and identity fields say: one required at run time, agent deprecated, agent_id wins."""
    found = registry.get(tool)
    assert found is not None
    properties = found.input_schema["properties"]
    texts = {
        "tool": found.description,
        "agent_id": properties["agent_id"]["description"],
        "agent": properties["agent"]["description"],
    }
    for where, text in texts.items():
        assert "at least one" in text.lower(), where
        assert "checked at run time" in text, where
        assert "deprecated" in text.lower(), where
        assert "agent_id wins" in text, where


async def test_agents_of_two_tenants_with_one_key_never_share_workspace_files(
    db: Database, agent: Agent, registry: ToolRegistry
) -> None:
    """acme's main (by UUID, as an MCP token names it) cannot read or overwrite default's main."""
    agents = AgentRegistry(db)
    acme = await agents.create("main", tenant=(await agents.create_tenant("acme")).slug)
    as_default = replace(group(WRITER), agent_id=agent.id, tenant_id=agent.tenant_id, role="owner")
    as_acme = replace(group(WRITER), agent_id=acme.id, tenant_id=acme.tenant_id, role="owner")
    wrote = await call(registry, as_default, "workspace_write", path="n.md", content="default's")
    assert not wrote["is_error"], wrote
    peek = await call(registry, as_acme, "workspace_read", path="n.md")
    assert peek["error"]["code"] == "not_found"
    await call(registry, as_acme, "workspace_write", path="n.md", content="acme's")
    own = await call(registry, as_default, "workspace_read", path="n.md")
    assert own["content"] == "default's"


async def test_http_user_cannot_read_the_telegram_dm_of_the_same_id(registry: ToolRegistry) -> None:
    """HTTP user "4242" and Telegram user 4242 have separate direct-scope files."""
    http_user = Identity(user_id=WRITER, sender_id="", channel="http")
    await call(registry, dm(WRITER), "workspace_write", path="diary.md", content="private")
    peek = await call(registry, http_user, "workspace_read", path="diary.md")
    assert peek["error"]["code"] == "not_found"


async def test_a_new_agent_reusing_a_removed_key_starts_with_an_empty_workspace(
    db: Database, agent: Agent, toolbox: Toolbox, tmp_path: Path
) -> None:
    """Remove main, create main again: the new one reads nothing; the old files are archived."""
    agents = AgentRegistry(db)
    await call(builtin_tools(toolbox), dm(MEMBER), "workspace_write", path="n.md", content="old")
    await agents.remove("main")
    reborn = await agents.create("main")
    tools = builtin_tools(replace(toolbox, default_agent=reborn))
    peek = await call(tools, dm(MEMBER), "workspace_read", path="n.md")
    assert peek["error"]["code"] == "not_found"
    (archived,) = (tmp_path / "ws" / "tenants").glob(f"*/agents/main~{agent.id}/*/n.md")
    assert archived.read_text(encoding="utf-8") == "old"

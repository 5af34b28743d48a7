"""Workspace: one directory per agent and scope, and no way out of it."""

from __future__ import annotations

import os
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from actorscope.agents import Agent, AgentRegistry
from actorscope.agents._types import AgentKey, AgentUUID, TenantUUID
from actorscope.errors import ToolError
from actorscope.identity import Identity
from actorscope.permissions import GrantStore, PermissionPolicy
from actorscope.store import Database
from actorscope.tools import Toolbox, Workspace
from actorscope.tools._workspace import (
    MAX_FILE_BYTES,
    FileMissingError,
    UnsafePathError,
    scope_segment,
)

pytestmark = pytest.mark.sqlite_only(
    "the tools' subject is the boundary, not the dialect: test_cron_keys.py and tests/store "
    "run the tools' tables on both"
)

SCOPE = "group:telegram:-100200300"
GROUP = Identity.chat("telegram", -100200300, 4242, group=True)
DM = Identity.chat("telegram", 4242, 4242, group=False)
TENANT = TenantUUID(str(uuid.uuid4()))


def make_agent(key: str = "main", tenant: str = TENANT) -> Agent:
    """An agent row as the registry returns one (a fresh UUID, created now)."""
    return Agent(
        id=AgentUUID(str(uuid.uuid4())),
        key=AgentKey(key),
        tenant_id=TenantUUID(tenant),
        created_at=Database.utc_now(),
    )


MAIN = make_agent()
OTHER = make_agent("other")


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    """A workspace rooted in a fresh directory."""
    return Workspace(tmp_path / "root")


def _code(exc: pytest.ExceptionInfo[ToolError]) -> str:
    return exc.value.code


def test_scope_directory_is_tenant_agents_key_scope(ws: Workspace) -> None:
    """Files land under <root>/tenants/<tenant UUID>/agents/<agent key>/<encoded scope>/."""
    ws.write(MAIN, GROUP, "notes/today.md", "hello")
    agent_dir = ws.root / "tenants" / TENANT / "agents" / "main"
    expected = agent_dir / "group%3Atelegram%3A-100200300" / "notes" / "today.md"
    assert expected.read_text(encoding="utf-8") == "hello"
    assert ws.read(MAIN, GROUP, "notes/today.md") == "hello"


@pytest.mark.parametrize(
    ("scope", "segment"),
    [
        ("4242", "4242"),
        ("group:telegram:-1", "group%3Atelegram%3A-1"),
        ("a/b", "a%2Fb"),
        ("..", "%2E%2E"),
        (".hidden", "%2Ehidden"),
        ("con", "%63on"),
        ("50%", "50%25"),
        ("東", "%E6%9D%B1"),
    ],
)
def test_scope_segment_is_one_safe_segment(scope: str, segment: str) -> None:
    """Unsafe characters, dots at the ends and device names are escaped."""
    assert scope_segment(scope) == segment


@given(st.text(min_size=1, max_size=300), st.text(min_size=1, max_size=300))
def test_scope_segment_is_injective_and_portable(first: str, second: str) -> None:
    """Different scopes never share a directory, and every name is one portable segment."""
    a, b = scope_segment(first), scope_segment(second)
    assert (a == b) == (first == second)
    assert "/" not in a
    assert "\\" not in a
    assert "\x00" not in a
    assert a not in (".", "..")
    assert len(a) <= 255


def test_empty_scope_has_no_workspace(ws: Workspace) -> None:
    """No scope, no directory: the call is refused as no_scope."""
    with pytest.raises(ToolError) as exc:
        ws.write(MAIN, Identity(user_id="", sender_id=""), "a.txt", "x")
    assert _code(exc) == "no_scope"


@pytest.mark.parametrize(
    "path",
    [
        "../escape.txt",
        "notes/../../escape.txt",
        "..",
        "/etc/passwd",
        "//server/share",
        "C:/Windows/win.ini",
        "c:relative.txt",
        "notes\\..\\x",
        "",
        "   ",
        ".",
        "./",
        "a\x00b",
    ],
)
def test_traversal_absolute_and_empty_paths_are_rejected(ws: Workspace, path: str) -> None:
    """'..', absolute or drive paths, backslashes, NUL and empty paths never touch the disk."""
    with pytest.raises(ToolError) as exc:
        ws.write(MAIN, GROUP, path, "x")
    assert _code(exc) == "path_rejected"
    assert not (ws.root.parent / "escape.txt").exists()


def test_symlinked_file_pointing_out_is_rejected(ws: Workspace, tmp_path: Path) -> None:
    """A symlink inside the workspace that leads outside can be neither read nor written."""
    outside = tmp_path / "secret.txt"
    outside.write_text("secret", encoding="utf-8")
    ws.write(MAIN, GROUP, "placeholder.txt", "x")
    link = ws.directory(MAIN, GROUP) / "link.txt"
    link.symlink_to(outside)
    with pytest.raises(ToolError) as read:
        ws.read(MAIN, GROUP, "link.txt")
    with pytest.raises(ToolError) as write:
        ws.write(MAIN, GROUP, "link.txt", "overwritten")
    assert _code(read) == _code(write) == "path_rejected"
    assert outside.read_text(encoding="utf-8") == "secret"


def test_symlinked_directory_pointing_out_is_rejected(ws: Workspace, tmp_path: Path) -> None:
    """A linked directory that leads outside cannot be written through, even to a new file."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    base = ws.directory(MAIN, GROUP)
    base.mkdir(parents=True)
    (base / "dir").symlink_to(outside, target_is_directory=True)
    with pytest.raises(ToolError) as exc:
        ws.write(MAIN, GROUP, "dir/new.txt", "x")
    assert _code(exc) == "path_rejected"
    assert list(outside.iterdir()) == []


def test_dangling_symlink_out_is_rejected(ws: Workspace, tmp_path: Path) -> None:
    """A link to a file that does not exist yet outside the workspace is refused too."""
    base = ws.directory(MAIN, GROUP)
    base.mkdir(parents=True)
    (base / "later.txt").symlink_to(tmp_path / "not-yet.txt")
    with pytest.raises(ToolError):
        ws.write(MAIN, GROUP, "later.txt", "x")
    assert not (tmp_path / "not-yet.txt").exists()


def test_symlink_inside_the_workspace_is_followed(ws: Workspace) -> None:
    """A link that stays inside the workspace is an ordinary path."""
    ws.write(MAIN, GROUP, "real.txt", "one")
    (ws.directory(MAIN, GROUP) / "alias.txt").symlink_to("real.txt")
    ws.write(MAIN, GROUP, "alias.txt", "two")
    assert ws.read(MAIN, GROUP, "real.txt") == "two"


def test_scope_directory_linked_out_of_the_root_is_rejected(ws: Workspace, tmp_path: Path) -> None:
    """If the scope's own directory is a link out of the root, nothing is written there."""
    outside = tmp_path / "other"
    outside.mkdir()
    agent_dir = ws.agent_directory(MAIN)
    agent_dir.mkdir(parents=True)
    (agent_dir / scope_segment(SCOPE)).symlink_to(outside, target_is_directory=True)
    with pytest.raises(ToolError):
        ws.write(MAIN, GROUP, "a.txt", "x")
    assert list(outside.iterdir()) == []


def test_scopes_and_agents_are_isolated(ws: Workspace) -> None:
    """The same path in another scope or for another agent is another file."""
    ws.write(MAIN, GROUP, "a.txt", "group")
    ws.write(MAIN, DM, "a.txt", "dm")
    ws.write(OTHER, GROUP, "a.txt", "other agent")
    assert ws.read(MAIN, GROUP, "a.txt") == "group"
    assert ws.read(MAIN, DM, "a.txt") == "dm"
    assert ws.read(OTHER, GROUP, "a.txt") == "other agent"


def test_write_is_atomic_and_leaves_no_temporary_file(ws: Workspace) -> None:
    """A replaced file holds the new content whole, with no temporary file left beside it."""
    ws.write(MAIN, GROUP, "a.txt", "old")
    assert ws.write(MAIN, GROUP, "a.txt", "new ✓") == len("new ✓".encode())
    assert sorted(os.listdir(ws.directory(MAIN, GROUP))) == ["a.txt"]
    assert ws.read(MAIN, GROUP, "a.txt") == "new ✓"


def test_failed_write_keeps_the_old_file_and_no_temporary(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """If the final rename fails, the old content stays and the temporary file is removed."""
    ws.write(MAIN, GROUP, "a.txt", "old")

    def refuse(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="No space"):
        ws.write(MAIN, GROUP, "a.txt", "new")
    monkeypatch.undo()
    assert ws.read(MAIN, GROUP, "a.txt") == "old"
    assert sorted(os.listdir(ws.directory(MAIN, GROUP))) == ["a.txt"]


def test_writing_over_a_directory_is_rejected(ws: Workspace) -> None:
    """A path that names a directory cannot be written as a file."""
    ws.write(MAIN, GROUP, "dir/a.txt", "x")
    with pytest.raises(ToolError) as exc:
        ws.write(MAIN, GROUP, "dir", "x")
    assert _code(exc) == "path_rejected"


def test_reads_of_missing_large_and_binary_files_are_errors(ws: Workspace) -> None:
    """Missing files are not_found, oversized ones too_large, non-UTF-8 ones not_text."""
    with pytest.raises(ToolError) as missing:
        ws.read(MAIN, GROUP, "nope.txt")
    assert _code(missing) == "not_found"
    base = ws.directory(MAIN, GROUP)
    base.mkdir(parents=True)
    (base / "big.bin").write_bytes(b"x" * (MAX_FILE_BYTES + 1))
    (base / "bad.bin").write_bytes(b"\xff\xfe")
    with pytest.raises(ToolError) as big:
        ws.read(MAIN, GROUP, "big.bin")
    with pytest.raises(ToolError) as bad:
        ws.read(MAIN, GROUP, "bad.bin")
    assert (_code(big), _code(bad)) == ("too_large", "not_text")


def test_oversized_or_unencodable_content_is_rejected(ws: Workspace) -> None:
    """Content over the size limit, or with lone surrogates, is refused before any write."""
    with pytest.raises(ToolError) as big:
        ws.write(MAIN, GROUP, "a.txt", "x" * (MAX_FILE_BYTES + 1))
    with pytest.raises(ToolError) as bad:
        ws.write(MAIN, GROUP, "a.txt", "\ud800")
    assert (_code(big), _code(bad)) == ("too_large", "not_text")
    assert not ws.directory(MAIN, GROUP).exists()


HTTP_4242 = Identity(user_id="4242", sender_id="", channel="http")


def test_tenants_sharing_a_root_never_share_files(ws: Workspace) -> None:
    """Agent main of tenant acme and agent main of tenant default see only their own files."""
    acme = make_agent(tenant=str(uuid.uuid4()))
    ws.write(MAIN, GROUP, "notes.md", "default's")
    with pytest.raises(FileMissingError):
        ws.read(acme, GROUP, "notes.md")
    ws.write(acme, GROUP, "notes.md", "acme's")
    assert ws.read(MAIN, GROUP, "notes.md") == "default's"
    assert ws.read(acme, GROUP, "notes.md") == "acme's"
    assert ws.agent_directory(acme) != ws.agent_directory(MAIN)


def test_direct_scopes_of_different_channels_never_share_files(ws: Workspace) -> None:
    """HTTP user "4242" and Telegram user 4242 have separate directories."""
    ws.write(MAIN, DM, "notes.md", "telegram")
    with pytest.raises(FileMissingError):
        ws.read(MAIN, HTTP_4242, "notes.md")
    ws.write(MAIN, HTTP_4242, "notes.md", "http")
    assert ws.read(MAIN, DM, "notes.md") == "telegram"
    assert ws.directory(MAIN, DM).name == "4242"  # a Telegram DM keeps its directory name
    assert ws.directory(MAIN, HTTP_4242).name == scope_segment("direct:http:4242")


def test_a_new_agent_reusing_a_key_starts_empty_and_the_old_files_are_archived(
    ws: Workspace,
) -> None:
    """The removed agent's directory becomes main~<its UUID>; the new main sees no files."""
    old = make_agent()
    ws.write(old, GROUP, "notes.md", "old agent")
    new = make_agent()
    assert new.created_at > old.created_at
    with pytest.raises(FileMissingError):
        ws.read(new, GROUP, "notes.md")
    archived = ws.agent_directory(old).with_name(f"main~{old.id}")
    assert (archived / scope_segment(SCOPE) / "notes.md").read_text(encoding="utf-8") == "old agent"
    with pytest.raises(ToolError) as replaced:
        ws.write(old, GROUP, "notes.md", "the removed agent writes again")
    assert replaced.value.code == "agent_replaced"
    with pytest.raises(FileMissingError):
        ws.read(new, GROUP, "notes.md")


def test_archive_moves_the_agents_directory_aside(ws: Workspace) -> None:
    """archive() renames the agent's directory to <key>~<UUID>; a second call finds none."""
    agent = make_agent()
    ws.write(agent, GROUP, "a.txt", "x")
    archived = ws.archive(agent)
    assert archived == ws.agent_directory(agent).with_name(f"main~{agent.id}")
    assert not ws.agent_directory(agent).exists()
    assert ws.archive(agent) is None


def _legacy_file(root: Path) -> Path:
    legacy = root / "agents" / "main" / scope_segment(SCOPE) / "notes.md"
    legacy.parent.mkdir(parents=True)
    legacy.write_text("written before tenants", encoding="utf-8")
    return legacy


def test_the_legacy_tenant_adopts_the_layout_before_tenants_on_first_use(tmp_path: Path) -> None:
    """<root>/agents/main/... moves under the legacy tenant's main the first time it is used."""
    legacy = _legacy_file(tmp_path / "root")
    ws = Workspace(tmp_path / "root", legacy_tenant=TENANT)
    acme = make_agent(tenant=str(uuid.uuid4()))
    with pytest.raises(FileMissingError):
        ws.read(acme, GROUP, "notes.md")
    assert legacy.exists()  # another tenant never adopts it
    assert ws.read(MAIN, GROUP, "notes.md") == "written before tenants"
    assert not legacy.exists()


def test_without_a_legacy_tenant_old_directories_stay_untouched(tmp_path: Path) -> None:
    """No tenant adopts the old layout unless named; the old files stay where they were."""
    legacy = _legacy_file(tmp_path / "root")
    ws = Workspace(tmp_path / "root")
    with pytest.raises(FileMissingError):
        ws.read(MAIN, GROUP, "notes.md")
    assert legacy.read_text(encoding="utf-8") == "written before tenants"


def test_a_missing_file_and_an_unsafe_path_are_different_errors(ws: Workspace) -> None:
    """Missing: FileMissingError (not_found); unsafe: UnsafePathError (path_rejected)."""
    ws.write(MAIN, GROUP, "a.txt", "x")
    with pytest.raises(FileMissingError) as missing:
        ws.read(MAIN, GROUP, "nope.txt")
    with pytest.raises(UnsafePathError) as unsafe:
        ws.read(MAIN, GROUP, "../a.txt")
    assert not isinstance(missing.value, UnsafePathError)
    assert not isinstance(unsafe.value, FileMissingError)
    assert isinstance(missing.value, ToolError)
    assert isinstance(unsafe.value, ToolError)
    assert (missing.value.code, unsafe.value.code) == ("not_found", "path_rejected")
    assert str(missing.value) == "no file 'nope.txt' in this workspace"
    assert str(unsafe.value) == "path must not contain '..'"


def test_append_creates_then_adds_to_the_end(ws: Workspace) -> None:
    """append() creates a missing file, then adds to it; it returns the bytes added."""
    assert ws.append(MAIN, GROUP, "log/notes.md", "one\n") == 4
    assert ws.append(MAIN, GROUP, "log/notes.md", "two ✓\n") == len("two ✓\n".encode())
    assert ws.read(MAIN, GROUP, "log/notes.md") == "one\ntwo ✓\n"


def test_append_refuses_to_grow_a_file_past_the_limit(ws: Workspace) -> None:
    """An append that would pass MAX_FILE_BYTES is too_large and leaves the file as it was."""
    ws.write(MAIN, GROUP, "a.txt", "x" * MAX_FILE_BYTES)
    with pytest.raises(ToolError) as big:
        ws.append(MAIN, GROUP, "a.txt", "y")
    assert big.value.code == "too_large"
    assert len(ws.read(MAIN, GROUP, "a.txt")) == MAX_FILE_BYTES


def test_append_through_a_link_out_is_rejected(ws: Workspace, tmp_path: Path) -> None:
    """append() checks the path like write(): a symlink leading out is path_rejected."""
    outside = tmp_path / "secret.txt"
    outside.write_text("secret", encoding="utf-8")
    ws.write(MAIN, GROUP, "placeholder.txt", "x")
    (ws.directory(MAIN, GROUP) / "link.txt").symlink_to(outside)
    with pytest.raises(UnsafePathError):
        ws.append(MAIN, GROUP, "link.txt", "more")
    assert outside.read_text(encoding="utf-8") == "secret"


def test_concurrent_appenders_lose_nothing(ws: Workspace) -> None:
    """8 threads x 40 appends: every line arrives once and whole (no read-modify-write race)."""
    workers, rounds = 8, 40

    def appender(worker: int) -> None:
        for i in range(rounds):
            ws.append(MAIN, GROUP, "shared.log", f"worker {worker} line {i} {'.' * 200}\n")

    with ThreadPoolExecutor(max_workers=workers) as pool:
        for future in [pool.submit(appender, w) for w in range(workers)]:
            future.result(timeout=60)
    lines = ws.read(MAIN, GROUP, "shared.log").splitlines()
    expected = {f"worker {w} line {i} {'.' * 200}" for w in range(workers) for i in range(rounds)}
    assert len(lines) == workers * rounds
    assert set(lines) == expected


def test_appends_racing_whole_file_writes_are_never_half_applied(ws: Workspace) -> None:
    """Appends interleaved with write() replacements: the file always ends as whole lines."""
    ws.write(MAIN, GROUP, "mixed.log", "start\n")

    def appender() -> None:
        for i in range(50):
            ws.append(MAIN, GROUP, "mixed.log", f"append {i}\n")

    def replacer() -> None:
        for i in range(20):
            ws.write(MAIN, GROUP, "mixed.log", f"reset {i}\n")

    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = [pool.submit(appender), pool.submit(appender), pool.submit(replacer)]
        for future in futures:
            future.result(timeout=60)
    for line in ws.read(MAIN, GROUP, "mixed.log").splitlines():
        assert line.startswith(("start", "append ", "reset "))


def test_rename_moves_the_directory_with_the_agent(ws: Workspace) -> None:
    """rename(agent, old_key) moves the agent's files to its new key; a stranger's stay."""
    agent = make_agent()
    ws.write(agent, GROUP, "notes.md", "mine")
    renamed = replace(agent, key=AgentKey("helper"))
    assert ws.rename(renamed, "main") == ws.agent_directory(renamed)
    assert ws.read(renamed, GROUP, "notes.md") == "mine"
    assert not ws.agent_directory(agent).exists()
    stranger = make_agent("other")
    ws.write(stranger, GROUP, "notes.md", "theirs")
    assert ws.rename(replace(renamed, key=AgentKey("third")), "other") is None  # not its files
    assert ws.read(stranger, GROUP, "notes.md") == "theirs"


def test_a_renamed_agent_takes_its_files_on_first_use_and_a_new_agent_starts_empty(
    ws: Workspace,
) -> None:
    """Renamed elsewhere: first use moves its directory; a new agent with the old key is empty."""
    agent = make_agent()
    ws.write(agent, GROUP, "notes.md", "mine")
    renamed = replace(agent, key=AgentKey("helper"))
    assert ws.read(renamed, GROUP, "notes.md") == "mine"
    newcomer = make_agent()
    with pytest.raises(FileMissingError):
        ws.read(newcomer, GROUP, "notes.md")
    ws.write(newcomer, GROUP, "notes.md", "new")
    assert ws.read(renamed, GROUP, "notes.md") == "mine"
    assert not list(ws.agent_directory(agent).parent.glob("*~*"))  # nothing archived away


def test_renaming_onto_a_removed_agents_key_archives_its_directory(ws: Workspace) -> None:
    """The new key's directory of a removed agent is archived before the rename moves in."""
    gone = make_agent("helper")
    ws.write(gone, GROUP, "notes.md", "removed agent")
    agent = make_agent()
    ws.write(agent, GROUP, "notes.md", "mine")
    renamed = replace(agent, key=AgentKey("helper"))
    ws.on_agent_changed(agent, renamed)
    assert ws.read(renamed, GROUP, "notes.md") == "mine"
    archived = ws.agent_directory(gone).with_name(f"helper~{gone.id}")
    assert (archived / scope_segment(SCOPE) / "notes.md").read_text("utf-8") == "removed agent"


def test_on_agent_changed_archives_a_removed_agent(ws: Workspace) -> None:
    """The listener archives on remove, so a later agent with the key never meets the files."""
    agent = make_agent()
    ws.write(agent, GROUP, "notes.md", "mine")
    ws.on_agent_changed(agent, None)
    assert not ws.agent_directory(agent).exists()
    assert ws.agent_directory(agent).with_name(f"main~{agent.id}").is_dir()


async def test_a_toolbox_workspace_follows_its_registry(tmp_path: Path) -> None:
    """Through the toolbox, a registry rename moves the files at once and a remove archives."""
    async with Database.open(tmp_path / "t.db") as db:
        registry = AgentRegistry(db)
        box = Toolbox.create(
            db, policy=PermissionPolicy(GrantStore(db)), workspace_root=tmp_path / "ws"
        )
        agent = await registry.create("main")
        box.workspace.write(agent, GROUP, "notes.md", "mine")
        renamed = await registry.rename("main", "helper")
        assert (box.workspace.agent_directory(renamed) / scope_segment(SCOPE)).is_dir()
        assert not box.workspace.agent_directory(agent).exists()
        await registry.remove("helper")
        assert not box.workspace.agent_directory(renamed).exists()
        assert box.workspace.agent_directory(renamed).with_name(f"helper~{agent.id}").is_dir()


@pytest.mark.parametrize("path", ["\ud800", "notes/\ud83d.txt"])
def test_workspace_write_rejects_unencodable_path_cleanly(ws: Workspace, path: str) -> None:
    """A path with a lone surrogate (valid in MCP JSON) is path_rejected, not a crash."""
    with pytest.raises(ToolError) as refused:
        ws.write(MAIN, GROUP, path, "content")
    assert _code(refused) == "path_rejected"


@pytest.mark.parametrize("path", ["\ud800", "notes/\ud83d.txt"])
def test_workspace_read_rejects_unencodable_path_cleanly(ws: Workspace, path: str) -> None:
    """Reading a lone-surrogate path is path_rejected, not UnicodeEncodeError."""
    ws.write(MAIN, GROUP, "seed.txt", "x")  # the scope directory exists
    with pytest.raises(ToolError) as refused:
        ws.read(MAIN, GROUP, path)
    assert _code(refused) == "path_rejected"

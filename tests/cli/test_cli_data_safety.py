"""Read-only commands never create, migrate or change a database; check is a what-if.

Every case runs the installed console script in a subprocess with a timeout.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from actorscope.agents import AgentRegistry
from actorscope.identity import Identity, PeerKind
from actorscope.permissions import GrantStore, LinkStore, PermissionPolicy
from actorscope.store import Database
from actorscope.store._migrations import Migration, load_migrations

#: The ``run_cli`` fixture (tests/cli/conftest.py).
RunCli = Callable[..., subprocess.CompletedProcess[str]]

GROUP = "group:telegram:-100200"
OTHER_GROUP = "group:telegram:-100300"
CHECK = ("check", "--agent", "main", "--scope", GROUP, "--sender", "43", "--type", "cron")
READ_ONLY = {
    "audit": ("audit",),
    "grants list": ("grants", "list"),
    "links list": ("links", "list"),
    "links show": ("links", "show", "telegram:42"),
    "agents list": ("agents", "list"),
    "check": CHECK,
}


def assert_error(result: subprocess.CompletedProcess[str], expected: str) -> None:
    """Exit 2 with one ``actorscope: error:`` line naming ``expected``."""
    assert result.returncode == 2, result.stderr[-2000:]
    (line,) = result.stderr.splitlines()
    assert line.startswith("actorscope: error: ")
    assert expected in line, line


async def _populate(path: Path) -> None:
    """Agent ``main`` in tenants ``default`` and ``acme``, a grant and a denial in each, and
    a person of two accounts in ``default``."""
    async with Database.open(path) as db:
        registry = AgentRegistry(db)
        store = GrantStore(db)
        policy = PermissionPolicy(store)
        await registry.create_tenant("acme")
        for tenant, scope in (("default", GROUP), ("acme", OTHER_GROUP)):
            agent = await registry.create("main", tenant)
            await store.grant(
                agent_id=agent.id,
                scope=scope,
                config_type="cron",
                sender_id="42",
                tenant=tenant,
            )
            identity = Identity(
                user_id=scope,
                sender_id="43",
                peer_kind=PeerKind.GROUP,
                agent_id=agent.id,
                tenant_id=agent.tenant_id,
            )
            assert not (await policy.check("cron", identity)).allowed
        await LinkStore(db).add(["telegram:42", "discord:990000000000000001"], by="ops")


@pytest.fixture
def cli_db(tmp_path: Path) -> Path:
    """A database file with two tenants' agents, grants and audit rows."""
    path = tmp_path / "work.db"
    asyncio.run(_populate(path))
    return path


def _json(result: subprocess.CompletedProcess[str]) -> list[dict[str, str]]:
    assert result.returncode == 0, result.stderr
    rows: list[dict[str, str]] = json.loads(result.stdout)
    return rows


@pytest.mark.parametrize("command", READ_ONLY)
def test_a_read_only_command_on_a_missing_path_creates_nothing(
    run_cli: RunCli, tmp_path: Path, command: str
) -> None:
    """A typo'd --db is exit 2 naming the path, and no file (nor -wal/-shm) appears."""
    result = run_cli(*READ_ONLY[command], "--db", "typo.db", cwd=tmp_path)
    assert_error(result, "'typo.db' does not exist")
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("command", READ_ONLY)
def test_a_read_only_command_on_an_empty_file_is_refused(
    run_cli: RunCli, tmp_path: Path, command: str
) -> None:
    """An existing empty file is not a database: exit 2, and it stays empty."""
    (tmp_path / "empty.db").touch()
    result = run_cli(*READ_ONLY[command], "--db", "empty.db", cwd=tmp_path)
    assert_error(result, "empty file")
    assert (tmp_path / "empty.db").read_bytes() == b""


@pytest.mark.parametrize("as_json", [(), ("--json",)])
@pytest.mark.parametrize("command", READ_ONLY)
def test_a_read_only_command_leaves_the_database_bytes_unchanged(
    run_cli: RunCli, cli_db: Path, command: str, as_json: tuple[str, ...]
) -> None:
    """audit, grants list, agents list and a denying check change no byte of the database."""
    before = cli_db.read_bytes()
    result = run_cli(*READ_ONLY[command], "--db", str(cli_db), *as_json, cwd=cli_db.parent)
    assert result.returncode == 0, result.stderr
    assert cli_db.read_bytes() == before
    assert sorted(os.listdir(cli_db.parent)) == ["work.db"]


def test_an_older_schema_is_not_migrated_by_a_read(
    run_cli: RunCli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read on an older schema says how to upgrade; `migrate` does, then the read works."""
    latest = len(load_migrations())

    def older(*args: Any, **kwargs: Any) -> list[Migration]:
        return [m for m in load_migrations(*args, **kwargs) if m.version < latest]

    async def create_older() -> None:
        with monkeypatch.context() as patched:
            patched.setattr("actorscope.store._sqlite.load_migrations", older)
            async with Database.open(tmp_path / "work.db") as db:
                await AgentRegistry(db).create("main")

    asyncio.run(create_older())
    before = (tmp_path / "work.db").read_bytes()
    assert_error(run_cli("audit", "--db", "work.db", cwd=tmp_path), "actorscope migrate")
    assert (tmp_path / "work.db").read_bytes() == before
    migrated = run_cli("migrate", "--db", "work.db", "--json", cwd=tmp_path)
    assert migrated.returncode == 0, migrated.stderr
    assert json.loads(migrated.stdout)["schema_version"] == latest
    assert _json(run_cli("agents", "list", "--db", "work.db", "--json", cwd=tmp_path))


def test_check_writes_no_audit_row(run_cli: RunCli, cli_db: Path) -> None:
    """A denying check is a what-if: the audit trail is the same before and after."""
    before = _json(run_cli("audit", "--db", str(cli_db), "--json", cwd=cli_db.parent))
    result = run_cli(*CHECK, "--db", str(cli_db), "--json", cwd=cli_db.parent)
    assert json.loads(result.stdout) == {"allowed": False, "reason": "no_grant"}
    after = _json(run_cli("audit", "--db", str(cli_db), "--json", cwd=cli_db.parent))
    assert after == before


@pytest.mark.parametrize(("sender", "status"), [("42", 0), ("43", 1)])
def test_check_exit_code_says_denied(
    run_cli: RunCli, cli_db: Path, sender: str, status: int
) -> None:
    """--exit-code: exit 0 when allowed, 1 when denied; without it exit 0 either way."""
    args = (*CHECK[:6], sender, *CHECK[7:], "--db", str(cli_db))
    assert run_cli(*args, "--exit-code", cwd=cli_db.parent).returncode == status
    assert run_cli(*args, cwd=cli_db.parent).returncode == 0


def test_check_refuses_an_unknown_role(run_cli: RunCli, cli_db: Path) -> None:
    """--role takes only known roles, and the error names them."""
    result = run_cli(*CHECK, "--db", str(cli_db), "--role", "superuser", cwd=cli_db.parent)
    assert_error(result, "admin, operator, owner")
    ok = run_cli(*CHECK, "--db", str(cli_db), "--role", "admin", "--json", cwd=cli_db.parent)
    assert json.loads(ok.stdout) == {"allowed": True, "reason": "role_bypass"}


@pytest.mark.parametrize("command", [("grants", "list"), ("audit",)])
def test_tenant_filters_grants_and_audit(
    run_cli: RunCli, cli_db: Path, command: tuple[str, ...]
) -> None:
    """--tenant shows that tenant's rows only; without it every tenant's rows show."""
    where, db = cli_db.parent, str(cli_db)
    every = _json(run_cli(*command, "--db", db, "--json", cwd=where))
    acme = _json(run_cli(*command, "--db", db, "--tenant", "acme", "--json", cwd=where))
    default = _json(run_cli(*command, "--db", db, "--tenant", "default", "--json", cwd=where))
    assert len(every) == len(acme) + len(default)
    assert {row["tenant_id"] for row in acme} != {row["tenant_id"] for row in default}
    assert len({row["tenant_id"] for row in acme}) == 1
    assert_error(run_cli(*command, "--db", db, "--tenant", "nope", cwd=where), "nope")

"""API keys: migration 0008 on both dialects, hashed storage, revocation, ``actorscope keys``."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from actorscope.agents import Agent
from actorscope.cli import main
from actorscope.errors import ConfigError, NotFoundError
from actorscope.http import ApiKeyStore
from actorscope.store import Database
from actorscope.store._migrations import load_migrations


def test_api_keys_are_migration_0008_on_both_dialects() -> None:
    """Both dialects ship the api_keys table as 0008."""
    for dialect in ("sqlite", "postgresql"):
        found = {m.name: m.version for m in load_migrations(dialect=dialect)}
        assert found["api_keys"] == 8


async def test_a_key_is_stored_as_a_hash_and_authenticates(db: Database, agent: Agent) -> None:
    """The row holds sha256(secret), never the key; the key authenticates, a near miss does not."""
    store = ApiKeyStore(db)
    made = await store.add(tenant="default", user_id="alice", role="operator", agent="main")
    secret = made.key.split("_", 2)[2]
    row = await db.fetchone("SELECT * FROM api_keys WHERE id = ?", (made.record.id,))
    assert row is not None
    assert made.key not in [str(v) for v in dict(row).values()]
    assert row["secret_hash"] == hashlib.sha256(secret.encode()).hexdigest()
    found = await store.authenticate(made.key)
    assert found is not None
    assert (found.user_id, found.role, found.agent_id) == ("alice", "operator", agent.id)
    assert await store.authenticate(made.key[:-1] + ("A" if made.key[-1] != "A" else "B")) is None
    assert await store.authenticate("as_000000000000_" + secret) is None
    assert await store.authenticate("") is None


async def test_a_revoked_key_is_refused_and_the_revocation_audited(
    db: Database, agent: Agent
) -> None:
    """revoke() by prefix: authenticate() refuses the key at once; key.add/key.revoke audited."""
    store = ApiKeyStore(db)
    made = await store.add(tenant="default", user_id="bob", role="viewer")
    assert await store.authenticate(made.key) is not None
    revoked = await store.revoke(made.record.prefix)
    assert revoked.revoked_at is not None
    assert await store.authenticate(made.key) is None
    actions = {row["action"] for row in await db.fetchall("SELECT action FROM audit_log")}
    assert {"key.add", "key.revoke"} <= actions


async def test_bad_key_requests_are_refused_before_writing(db: Database, agent: Agent) -> None:
    """Unknown role, group-shaped user, unknown agent or key: one clear error, no row."""
    store = ApiKeyStore(db)
    with pytest.raises(ConfigError, match="role must be one of"):
        await store.add(tenant="default", user_id="a", role="root")
    with pytest.raises(ConfigError, match="group scope"):
        await store.add(tenant="default", user_id="group:telegram:-1", role="member")
    with pytest.raises(NotFoundError):
        await store.add(tenant="default", user_id="a", role="member", agent="nope")
    with pytest.raises(NotFoundError):
        await store.revoke("ffffffffffff")
    assert await store.list() == []


async def test_touch_records_last_use_at_most_once_a_minute(db: Database, agent: Agent) -> None:
    """last_used_at is set on first use and not rewritten within TOUCH_INTERVAL."""
    store = ApiKeyStore(db)
    made = await store.add(tenant="default", user_id="c", role="member")
    await store.touch(made.record, now="2030-01-01T00:00:00.000000+00:00")
    used = await store.get(made.record.id)
    assert used.last_used_at == "2030-01-01T00:00:00.000000+00:00"
    await store.touch(used, now="2030-01-01T00:00:30.000000+00:00")
    assert (await store.get(made.record.id)).last_used_at == used.last_used_at
    await store.touch(used, now="2030-01-01T00:01:00.000000+00:00")
    assert (await store.get(made.record.id)).last_used_at == "2030-01-01T00:01:00.000000+00:00"


def test_keys_cli_prints_the_key_once_lists_without_secrets_and_revokes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """keys add --json shows the key; keys list never does; keys revoke marks it revoked."""
    db = str(tmp_path / "k.db")
    assert main(["agents", "add", "main", "--db", db, "--create"]) == 0
    capsys.readouterr()
    assert main(["keys", "add", "--db", db, "--tenant", "default", "--user", "ops",
                 "--role", "operator", "--agent", "main", "--json"]) == 0  # fmt: skip
    added = json.loads(capsys.readouterr().out)
    assert added["key"].startswith(f"as_{added['prefix']}_")
    assert main(["keys", "list", "--db", db, "--json"]) == 0
    listed = capsys.readouterr().out
    assert added["key"] not in listed
    assert added["key"].split("_", 2)[2] not in listed
    (row,) = json.loads(listed)
    assert (row["user_id"], row["role"], row["revoked_at"]) == ("ops", "operator", None)
    assert main(["keys", "list", "--db", db]) == 0
    assert "active" in capsys.readouterr().out
    assert main(["keys", "revoke", added["prefix"], "--db", db]) == 0
    assert "revoked key" in capsys.readouterr().out
    assert main(["keys", "list", "--db", db, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["revoked_at"]


def test_keys_cli_errors_are_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bad role, a missing database for list, an unknown key: one error line, exit 2."""
    db = str(tmp_path / "k.db")
    bad = ["keys", "add", "--db", db, "--tenant", "default", "--user", "u", "--role", "god"]
    assert main(bad) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "role must be one of" in err
    assert not Path(db).exists()
    assert main(["keys", "list", "--db", db]) == 2
    assert "actorscope: error:" in capsys.readouterr().err
    assert not Path(db).exists()
    assert main(["agents", "add", "main", "--db", db, "--create"]) == 0
    assert main(["keys", "revoke", "nope", "--db", db]) == 2
    assert "no API key" in capsys.readouterr().err

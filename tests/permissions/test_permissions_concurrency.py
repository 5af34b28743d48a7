"""Concurrent grants, revokes and checks: the serial outcome, nothing lost, nothing stale."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from actorscope.agents import Agent
from actorscope.identity import Identity, PeerKind
from actorscope.permissions import GrantStore, PermissionPolicy, Reason
from actorscope.permissions._records import GrantLookup
from actorscope.store import Database

GROUP = "group:telegram:-100200"
TASKS = 50


def member(agent: Agent, sender: str) -> Identity:
    """A group member's identity for ``agent``."""
    return Identity(user_id=GROUP, sender_id=sender, peer_kind=PeerKind.GROUP, agent_id=agent.id)


async def test_fifty_tasks_reach_the_serial_state(
    db: Database, store: GrantStore, agent: Agent
) -> None:
    """50 tasks grant, re-grant, revoke and check at once; each sees its own change immediately."""
    policy = PermissionPolicy(store)
    await store.grant(agent_id=agent.id, scope="*", config_type="cron", sender_id="999")

    async def task(i: int) -> list[Reason]:
        sender = str(1000 + i)
        seen = []
        keys: dict[str, Any] = {"agent_id": agent.id, "scope": GROUP, "config_type": "file_writer"}
        await store.grant(**keys, sender_id=sender, granted_by=str(i))
        seen.append((await policy.check_file_writer(member(agent, sender))).reason)
        if i % 3 == 0:
            assert await store.revoke(**keys, sender_id=sender)
        elif i % 3 == 1:
            await store.grant(**keys, sender_id=sender, permission="deny")
        seen.append((await policy.check_file_writer(member(agent, sender))).reason)
        seen.append((await policy.check_cron(member(agent, "999"))).reason)
        return seen

    results = await asyncio.gather(*(task(i) for i in range(TASKS)))

    expected_after = {0: Reason.NO_GRANT, 1: Reason.DENIED_BY_GRANT, 2: Reason.GRANTED}
    for i, seen in enumerate(results):
        assert seen == [Reason.GRANTED, expected_after[i % 3], Reason.GRANTED], i
    final = {
        (g.sender_id, g.permission)
        for g in await store.list(agent_id=agent.id, config_type="file_writer")
    }
    serial = {
        (str(1000 + i), "deny" if i % 3 == 1 else "allow") for i in range(TASKS) if i % 3 != 0
    }
    assert final == serial
    changes = await db.fetchone("SELECT COUNT(*) FROM audit_log WHERE action LIKE 'grant.%'")
    assert changes is not None
    assert changes[0] == 1 + TASKS + (TASKS - TASKS // 3)  # shared + one grant + one change each
    # Every answer now comes from the database and the cache alike: check both agree.
    store.invalidate()
    for i in range(TASKS):
        decision = await policy.check_file_writer(member(agent, str(1000 + i)))
        assert decision.reason is expected_after[i % 3]


async def test_a_read_racing_a_grant_is_not_cached(
    store: GrantStore, agent: Agent, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cold check whose read started before a grant answers old data once, never again."""
    policy = PermissionPolicy(store)
    real_check = store.check
    read_done, grant_done = asyncio.Event(), asyncio.Event()

    async def slow_check(
        *,
        agent_id: str,
        scopes: Sequence[str],
        config_types: Sequence[str],
        sender_id: str,
        tenant_id: str | None = None,
        person: str = "",
    ) -> GrantLookup:
        result = await real_check(
            agent_id=agent_id,
            scopes=scopes,
            config_types=config_types,
            sender_id=sender_id,
            tenant_id=tenant_id,
            person=person,
        )
        read_done.set()
        await grant_done.wait()
        return result

    monkeypatch.setattr(store, "check", slow_check)

    async def grant_after_read() -> None:
        await read_done.wait()
        await store.grant(agent_id=agent.id, scope=GROUP, config_type="cron", sender_id="42")
        grant_done.set()

    racing, _ = await asyncio.wait_for(
        asyncio.gather(policy.check_cron(member(agent, "42")), grant_after_read()), timeout=5
    )
    assert racing.reason is Reason.NO_GRANT  # answered from the read before the grant
    monkeypatch.undo()
    assert (await policy.check_cron(member(agent, "42"))).reason is Reason.GRANTED


async def test_revoke_is_effective_for_concurrent_warm_checks(
    store: GrantStore, agent: Agent
) -> None:
    """Checks running alongside a revoke see allowed before it returns and denied after it."""
    policy = PermissionPolicy(store)
    await store.grant(agent_id=agent.id, scope=GROUP, config_type="cron", sender_id="42")
    assert (await policy.check_cron(member(agent, "42"))).allowed
    revoked = asyncio.Event()
    after: list[Reason] = []

    async def checker() -> None:
        # Bounded by the wait_for below, not by a count: warm checks are fast enough that
        # any fixed count can run out before the revoke's commit comes back from its thread.
        while True:
            was_revoked = revoked.is_set()
            decision = await policy.check_cron(member(agent, "42"))
            if was_revoked:
                after.append(decision.reason)
                if len(after) >= 20:
                    return
            await asyncio.sleep(0)

    async def revoker() -> None:
        await asyncio.sleep(0)
        await store.revoke(agent_id=agent.id, scope=GROUP, config_type="cron", sender_id="42")
        revoked.set()

    await asyncio.wait_for(asyncio.gather(checker(), checker(), revoker()), timeout=10)
    assert after
    assert set(after) == {Reason.NO_GRANT}

"""An origin signed here verifies in a second OS process that shares the key via the environment.

The child reads a JSON announce on stdin, builds the run request with
``OriginSigner.from_env`` and prints it as JSON; the parent checks the permission of that
request against its own database.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest

from actorscope.agents import Agent, AgentRegistry
from actorscope.context import bind_identity
from actorscope.identity import PeerKind, SenderKind
from actorscope.messages import InboundMessage, RunRequest
from actorscope.permissions import GrantStore, PermissionPolicy, Reason
from actorscope.propagation import OriginSigner, spawn_subagent
from actorscope.store import Database

CHAT = "-1009876"
GROUP = f"group:telegram:{CHAT}"
WRITER = "4242"

CHILD = """
import sys
from actorscope.messages import InboundMessage
from actorscope.propagation import OriginSigner
msg = InboundMessage.model_validate_json(sys.stdin.read())
signer = OriginSigner.from_env("ACTORSCOPE_TEST_ORIGIN_KEY")
print(signer.run_request(msg, agent_key="main").model_dump_json())
"""


@pytest.fixture
async def policy_agent(tmp_path: Any) -> AsyncIterator[tuple[PermissionPolicy, Agent]]:
    """A policy where WRITER may write files in GROUP for agent ``main``."""
    async with Database.open(tmp_path / "xproc.db") as db:
        agent = await AgentRegistry(db).create("main")
        store = GrantStore(db)
        await store.grant(
            agent_id=agent.id, scope=GROUP, config_type="file_writer", sender_id=WRITER
        )
        yield PermissionPolicy(store), agent


def announce_json(signer: OriginSigner, agent: Agent) -> str:
    """A sub-agent announce for WRITER's group run, as JSON."""
    parent = InboundMessage(
        channel="telegram", sender_id=WRITER, chat_id=CHAT, peer_kind=PeerKind.GROUP,
        user_id=GROUP, agent_id=agent.id, tenant_id=agent.tenant_id,
    )  # fmt: skip
    with bind_identity(parent.identity()):
        task = spawn_subagent("write report.md", signer=signer)
    return task.announce("done", signer=signer).model_dump_json()


def run_child(payload: str, key: str) -> RunRequest:
    """Build the run request in a fresh interpreter that has ``key`` in its environment."""
    env = {**os.environ, "ACTORSCOPE_TEST_ORIGIN_KEY": key}
    done = subprocess.run(  # noqa: S603 - our own interpreter and a constant script
        [sys.executable, "-c", CHILD],
        input=payload,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=True,
    )
    return RunRequest.model_validate_json(done.stdout)


async def test_second_process_with_the_shared_key_attributes_the_writer(
    policy_agent: tuple[PermissionPolicy, Agent],
) -> None:
    """The child verifies the origin; the parent's check of its request allows the writer."""
    policy, agent = policy_agent
    key = secrets.token_hex(32)
    request = run_child(announce_json(OriginSigner(key.encode()), agent), key)
    assert (request.sender_id, request.user_id) == (WRITER, GROUP)
    with bind_identity(request.identity()):
        decision = await policy.check_file_writer()
    assert (decision.allowed, decision.reason) == (True, Reason.GRANTED)


async def test_second_process_with_another_key_stays_synthetic(
    policy_agent: tuple[PermissionPolicy, Agent],
) -> None:
    """With a different key the child keeps the synthetic sender, which the check denies."""
    policy, agent = policy_agent
    request = run_child(announce_json(OriginSigner(), agent), secrets.token_hex(32))
    assert SenderKind.is_synthetic(request.sender_id)
    with bind_identity(request.identity()):
        decision = await policy.check_file_writer()
    assert (decision.allowed, decision.reason) == (False, Reason.SYNTHETIC_SENDER)

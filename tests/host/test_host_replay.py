"""The host consumes origins: a replayed signed carrier runs synthetic, and role stays per agent."""

from __future__ import annotations

from dataclasses import replace

from actorscope.context import bind_identity, current_identity
from actorscope.host import Host, MessageBus, Reply, RunStep
from actorscope.host._sender import MemorySender
from actorscope.identity import Identity, SenderKind
from actorscope.messages import RunRequest
from actorscope.propagation import OriginSigner, delegate, spawn_subagent

HOME = "00000000-0000-4000-8000-00000000000a"
OTHER = "00000000-0000-4000-8000-00000000000b"
TENANT = "00000000-0000-4000-8000-0000000000f1"


def recording_host(
    signer: OriginSigner,
    seen: list[Identity],
    *,
    agent_id: str | None = None,
    tenant_id: str | None = None,
) -> Host:
    """A host whose handler records the identity each run was bound to."""

    async def handler(request: RunRequest) -> Reply:
        identity = current_identity()
        assert identity is not None
        seen.append(identity)
        return None

    step = RunStep(
        handler,
        signer=signer,
        senders={"telegram": MemorySender()},
        agent_id=agent_id,
        tenant_id=tenant_id,
    )
    return Host(step, bus=MessageBus())


async def test_a_second_delivery_of_one_signed_carrier_runs_synthetic() -> None:
    """Processed twice (a redelivery or a replay), a carrier runs as the member only once."""
    signer = OriginSigner()
    with bind_identity(Identity.chat("telegram", -100200, 42, group=True)):
        message = spawn_subagent("summarise", signer=signer).message
    seen: list[Identity] = []
    host = recording_host(signer, seen)
    await host.process(message)
    await host.process(message)
    assert [(i.sender_id, i.sender_kind) for i in seen] == [
        ("42", SenderKind.USER),
        (message.sender_id, SenderKind.SYNTHETIC),
    ]


async def test_replay_through_the_bus_runs_synthetic() -> None:
    """The same carrier published twice on the bus is attributed for its first run only."""
    signer = OriginSigner()
    with bind_identity(Identity.chat("telegram", -100200, 42, group=True)):
        message = spawn_subagent("summarise", signer=signer).message
    seen: list[Identity] = []
    host = recording_host(signer, seen)
    async with host:
        await host.bus.publish(message)
        await host.bus.publish(message)
    assert sorted(i.sender_id for i in seen) == sorted(["42", message.sender_id])


async def test_host_consumes_even_after_a_dry_run_build() -> None:
    """A consume=False build elsewhere leaves the origin for the host, which then spends it."""
    signer = OriginSigner()
    with bind_identity(Identity.chat("telegram", -100200, 42, group=True)):
        message = spawn_subagent("summarise", signer=signer).message
    assert signer.run_request(message, consume=False).sender_id == "42"
    seen: list[Identity] = []
    host = recording_host(signer, seen)
    await host.process(message)
    assert signer.run_request(message).sender_id != "42"
    assert [i.sender_id for i in seen] == ["42"]


async def test_delegate_run_on_the_host_of_another_agent_has_no_role() -> None:
    """An owner of HOME delegating to OTHER: OTHER's host binds the member without a role."""
    signer = OriginSigner()
    owner = replace(
        Identity.chat("telegram", -100200, 42, group=True, role="owner"),
        agent_id=HOME,
        tenant_id=TENANT,
    )
    with bind_identity(owner):
        message = delegate(OTHER, "rewrite", signer=signer).message
    seen: list[Identity] = []
    host = recording_host(signer, seen, agent_id=OTHER, tenant_id=TENANT)
    await host.process(message)
    assert [(i.sender_id, i.role, i.agent_id) for i in seen] == [("42", "", OTHER)]

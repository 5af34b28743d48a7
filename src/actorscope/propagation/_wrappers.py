"""Wrappers that synthesise the messages of a chain, carrying the human who started it.

Sub-agent spawn and announce, delegation and its announce, teammate dispatch, session_send
and ticker runs all build an :class:`~actorscope.messages.InboundMessage` with a *synthetic*
sender (``subagent:<taskID>``, ``subagent:delegate:<id>``, ``teammate:<name>``,
``session_send_tool``, ``ticker:<job>``) and a signed origin. The origin is read from the
bound identity of the calling run (:func:`~actorscope.context.current_identity`) and never
from arguments: any ``origin_*`` key passed in ``metadata`` is dropped and replaced.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass

from actorscope._input import parse_uuid
from actorscope.context import current_identity
from actorscope.errors import IdentityError, PayloadError
from actorscope.identity import Identity, PeerKind, SenderKind
from actorscope.messages import InboundMessage
from actorscope.platforms import PlatformSpec
from actorscope.propagation._keys import is_origin_key
from actorscope.propagation._origin import Origin, OriginSigner
from actorscope.propagation._run import RunInfo

__all__ = [
    "SESSION_SEND_SENDER",
    "DelegateTask",
    "Route",
    "SubagentTask",
    "TickerJob",
    "delegate",
    "session_send",
    "spawn_subagent",
    "teammate_dispatch",
]

#: The sender of every message ``session_send`` synthesises.
SESSION_SEND_SENDER = "session_send_tool"

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_CHANNEL = re.compile(r"[a-z0-9][a-z0-9_.-]{0,63}")


@dataclass(frozen=True, slots=True)
class Route:
    """Where a synthesised message belongs and where its replies go."""

    channel: str
    chat_id: str
    user_id: str
    peer_kind: PeerKind
    thread_id: str = ""
    tenant_id: str | None = None
    agent_id: str | None = None


@dataclass(frozen=True, slots=True)
class SubagentTask:
    """A sub-agent's task: who started it (``origin``), where its result goes, its first message."""

    task_id: str
    prompt: str
    origin: Origin
    route: Route
    message: InboundMessage
    label: str = ""

    @property
    def sender_id(self) -> str:
        """The synthetic sender of the task's messages: ``subagent:<taskID>``."""
        return f"subagent:{self.task_id}"

    @property
    def origin_sender_id(self) -> str:
        """The human the sub-agent works for."""
        return self.origin.sender_id

    def announce(
        self,
        result: str,
        *,
        signer: OriginSigner,
        metadata: Mapping[str, str] | None = None,
    ) -> InboundMessage:
        """The message that brings the sub-agent's ``result`` back to the run that spawned
        it, as the task's own sender."""
        return _announce(self, result, signer=signer, metadata=metadata)


@dataclass(frozen=True, slots=True)
class DelegateTask:
    """A task handed to another agent: ``message`` goes to it, its result back to ``route``."""

    delegation_id: str
    target_agent_id: str
    task: str
    origin: Origin
    route: Route
    message: InboundMessage

    @property
    def sender_id(self) -> str:
        """The synthetic sender of both legs: ``subagent:delegate:<id>``."""
        return f"subagent:delegate:{self.delegation_id}"

    def announce(
        self,
        result: str,
        *,
        signer: OriginSigner,
        metadata: Mapping[str, str] | None = None,
    ) -> InboundMessage:
        """The message that brings the delegate's ``result`` back to the delegating agent's
        run, as the task's own sender."""
        return _announce(self, result, signer=signer, metadata=metadata)


@dataclass(frozen=True, slots=True)
class TickerJob:
    """A scheduled job: it runs in the scope it was created in, for the human who created it."""

    name: str
    prompt: str
    origin: Origin
    route: Route

    @property
    def sender_id(self) -> str:
        """The synthetic sender of each run: ``ticker:<job>``."""
        return f"ticker:{self.name}"

    @classmethod
    def create(cls, name: str, prompt: str) -> TickerJob:
        """A job that will run ``prompt`` in the calling run's scope, for its human."""
        identity, run = _caller("TickerJob.create")
        origin, route = _capture(identity, run)
        return cls(
            name=_name(name, "ticker job name"),
            prompt=_text(prompt, "prompt"),
            origin=origin,
            route=route,
        )

    def run(
        self, *, signer: OriginSigner, metadata: Mapping[str, str] | None = None
    ) -> InboundMessage:
        """The message that starts one run of the job, signed now (each run gets a fresh
        timestamp)."""
        return _carrier(
            signer,
            self.origin,
            self.route,
            sender=self.sender_id,
            content=self.prompt,
            metadata=metadata,
        )


def _caller(what: str) -> tuple[Identity, RunInfo]:
    identity = current_identity()
    if identity is None:
        raise IdentityError(
            f"{what}() must be called inside a run: no identity is bound (see bind_identity)"
        )
    return identity, RunInfo.current() or RunInfo()


def _capture(identity: Identity, run: RunInfo) -> tuple[Origin, Route]:
    origin = Origin.from_identity(
        identity, session_key=run.session_key, trace_id=run.trace_id or uuid.uuid4().hex
    )
    route = Route(
        channel=identity.channel,
        chat_id=identity.chat_id,
        user_id=identity.user_id,
        peer_kind=identity.peer_kind,
        thread_id=run.thread_id,
        tenant_id=identity.tenant_id,
        agent_id=identity.agent_id,
    )
    return origin, route


def _text(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise PayloadError(f"{what} must be a string, got {type(value).__name__}")
    return value


def _name(value: object, what: str) -> str:
    if not isinstance(value, str) or not _NAME.fullmatch(value):
        raise IdentityError(
            f"{what} must be 1-64 letters, digits, '_', '.' or '-' (starting with a letter or "
            f"digit), got {value!r}"
        )
    return value


def _channel(value: object) -> str:
    if not isinstance(value, str) or not _CHANNEL.fullmatch(value):
        raise IdentityError(
            f"channel must be lowercase letters, digits, '_', '.' or '-', got {value!r}"
        )
    return value


def _extra(metadata: Mapping[str, str] | None) -> dict[str, str]:
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise PayloadError(f"metadata must be a mapping, got {type(metadata).__name__}")
    extra: dict[str, str] = {}
    for key, value in metadata.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise PayloadError(f"metadata must map strings to strings, got {key!r}: {value!r}")
        if not is_origin_key(key):
            extra[key] = value
    return extra


def _carrier(
    signer: OriginSigner,
    origin: Origin,
    route: Route,
    *,
    sender: str,
    content: str,
    metadata: Mapping[str, str] | None,
    agent_id: str | None = None,
) -> InboundMessage:
    if not isinstance(signer, OriginSigner):
        raise TypeError(f"signer must be an OriginSigner, got {type(signer).__name__}")
    message = InboundMessage(
        channel=route.channel,
        sender_id=sender,
        chat_id=route.chat_id,
        content=content,
        peer_kind=route.peer_kind,
        user_id=route.user_id,
        sender_kind=SenderKind.SYNTHETIC,
        metadata=_extra(metadata),
        thread_id=route.thread_id,
        tenant_id=route.tenant_id,
        agent_id=route.agent_id if agent_id is None else agent_id,
    )
    return signer.attach(message, origin)


def _announce(
    task: SubagentTask | DelegateTask,
    result: str,
    *,
    signer: OriginSigner,
    metadata: Mapping[str, str] | None,
) -> InboundMessage:
    # The result goes back where the task came from, as the task's own synthetic sender.
    return _carrier(
        signer,
        task.origin,
        task.route,
        sender=task.sender_id,
        content=_text(result, "result"),
        metadata=metadata,
    )


def spawn_subagent(
    prompt: str,
    *,
    signer: OriginSigner,
    label: str = "",
    metadata: Mapping[str, str] | None = None,
) -> SubagentTask:
    """Start a sub-agent task for the calling run; ``task.message`` is its first turn."""
    identity, run = _caller("spawn_subagent")
    origin, route = _capture(identity, run)
    task_id = uuid.uuid4().hex
    message = _carrier(
        signer,
        origin,
        route,
        sender=f"subagent:{task_id}",
        content=_text(prompt, "prompt"),
        metadata=metadata,
    )
    return SubagentTask(
        task_id=task_id,
        prompt=prompt,
        origin=origin,
        route=route,
        message=message,
        label=_text(label, "label"),
    )


def delegate(
    target_agent_id: str,
    task: str,
    *,
    signer: OriginSigner,
    metadata: Mapping[str, str] | None = None,
) -> DelegateTask:
    """Hand ``task`` to another agent (by UUID) on behalf of the calling run's human."""
    identity, run = _caller("delegate")
    target = parse_uuid(target_agent_id, "delegate target agent id")
    origin, route = _capture(identity, run)
    delegation_id = uuid.uuid4().hex
    message = _carrier(
        signer,
        origin,
        route,
        sender=f"subagent:delegate:{delegation_id}",
        content=_text(task, "task"),
        metadata=metadata,
        agent_id=target,
    )
    return DelegateTask(
        delegation_id=delegation_id,
        target_agent_id=target,
        task=task,
        origin=origin,
        route=route,
        message=message,
    )


def teammate_dispatch(
    teammate: str,
    content: str,
    *,
    signer: OriginSigner,
    agent_id: str | None = None,
    metadata: Mapping[str, str] | None = None,
) -> InboundMessage:
    """A message from ``teammate:<teammate>`` to agent ``agent_id`` (default: the caller's)."""
    identity, run = _caller("teammate_dispatch")
    name = _name(teammate, "teammate name")
    target = None if agent_id is None else parse_uuid(agent_id, "teammate agent id")
    origin, route = _capture(identity, run)
    return _carrier(
        signer,
        origin,
        route,
        sender=f"teammate:{name}",
        content=_text(content, "content"),
        metadata=metadata,
        agent_id=target,
    )


def session_send(
    content: str,
    *,
    signer: OriginSigner,
    channel: str,
    chat_id: str,
    peer_kind: PeerKind | str = PeerKind.GROUP,
    thread_id: str = "",
    metadata: Mapping[str, str] | None = None,
) -> InboundMessage:
    """A message into another session (``channel``/``chat_id``/``thread_id``), as the caller."""
    identity, run = _caller("session_send")
    if peer_kind not in (PeerKind.DIRECT, PeerKind.GROUP):
        raise IdentityError(f"peer kind must be 'direct' or 'group', got {peer_kind!r}")
    origin, here = _capture(identity, run)
    target = _channel(channel)
    route = Route(
        channel=target,
        chat_id=PlatformSpec.canonical_chat_id(target, chat_id, "target chat id"),
        user_id=here.user_id,
        peer_kind=PeerKind(peer_kind),
        thread_id=(
            PlatformSpec.canonical_chat_id(target, thread_id, "target thread id")
            if thread_id
            else ""
        ),
        tenant_id=here.tenant_id,
        agent_id=here.agent_id,
    )
    return _carrier(
        signer,
        origin,
        route,
        sender=SESSION_SEND_SENDER,
        content=_text(content, "content"),
        metadata=metadata,
    )

"""The composition root: the one place an agent's services are wired (docs/design.md).

:func:`assemble` is given a database and an :class:`AgentSettings` (the agent, its tenant,
owners, roles, strictness, workspace, shared dedup and origin signer) and returns a frozen
:class:`Assembly`: the agent, its grant store, permission policy, writer manager, link store,
workspace and shared claim store, with factories for what runs on them: a
:class:`~actorscope.channels.Pipeline` per channel, a :class:`~actorscope.host.RunStep` and a
:class:`~actorscope.host.Host`. ``actorscope run``, ``actorscope serve``, the framework
integrations, the testing kit and the probe all call it, so every one of them judges, answers
and runs alike; nothing else builds a policy. It names no platform and loads no platform
library: a handler's :class:`~actorscope.bots.BotServices` are made from an assembly
(``BotServices.of``).
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from actorscope.agents import Agent, AgentRegistry
from actorscope.channels import ChannelConfig, Pipeline, TurnLedger
from actorscope.host import Handler, Host, MessageBus, OutboundSender, RunStep
from actorscope.messages import InboundMessage, RunRequest
from actorscope.permissions import (
    Decision,
    GrantStore,
    LinkMode,
    LinkStore,
    PermissionPolicy,
    WriterManager,
)
from actorscope.propagation import OriginSigner
from actorscope.store import Database
from actorscope.tools import Workspace

__all__ = ["AgentSettings", "Assembly", "assemble"]

#: Told every decision of an assembly's policy (the testing kit records them).
DecisionObserver = Callable[[Decision], None]


@dataclass(frozen=True, slots=True)
class AgentSettings:
    """Who an agent is and how it runs: everything :func:`assemble` needs besides a database.

    ``agent`` is a key or UUID of ``tenant`` (a slug or UUID), found or created.
    ``owners`` (sender ids) run with role ``owner`` and always manage writers; ``roles`` maps
    senders to roles (read at each turn: it may change between turns). ``strict``: a failing
    grant store denies instead of allowing. ``workspace`` is the root of the agent's files.
    ``shared_dedup`` claims each update in the database (several workers; ``None``: on for
    PostgreSQL only). ``signer`` signs and verifies origins. ``audit`` ``False`` makes a
    what-if policy that writes no audit row (``actorscope check``). ``links``: what linked
    accounts change (:class:`~actorscope.permissions.LinkMode`; off unless the agent opts in).
    """

    agent: str = "main"
    tenant: str = Database.DEFAULT_TENANT_SLUG
    owners: tuple[str, ...] = ()
    roles: Mapping[str, str] = field(default_factory=dict)
    strict: bool = False
    workspace: Path = Path("workspace")
    shared_dedup: bool | None = None
    signer: OriginSigner = field(default_factory=OriginSigner)
    audit: bool = True
    links: LinkMode = LinkMode.OFF

    def __post_init__(self) -> None:
        object.__setattr__(self, "links", LinkMode(self.links))
        if not isinstance(self.workspace, Path):
            object.__setattr__(self, "workspace", Path(os.fspath(self.workspace)))
        object.__setattr__(self, "owners", tuple(self.owners))

    def policy(
        self,
        grants: GrantStore,
        *,
        links: LinkStore | None = None,
        observer: DecisionObserver | None = None,
    ) -> PermissionPolicy:
        """The permission policy these settings call for over ``grants``: the one place outside
        ``permissions`` that builds one. :func:`assemble` makes an agent's with it; a process
        that serves every agent of a database (``actorscope mcp`` without ``--agent``) asks
        ``AgentSettings().policy(GrantStore(db))``. ``strict`` and ``audit`` are the settings';
        ``links`` counts a linked person's grants for each of its accounts only when the
        settings' ``links`` is ``"grants"``; ``observer`` is told every decision."""
        return PermissionPolicy(
            grants,
            strict=self.strict,
            audit=self.audit,
            observer=observer,
            links=links if self.links is LinkMode.GRANTS else None,
        )


async def _nowhere(message: InboundMessage) -> None:
    """A pipeline's publish when the transport reads admitted messages from its result
    (the framework integrations: the framework's handlers are the turn)."""


async def _no_turn(request: RunRequest) -> None:
    """A run step's handler when it only prepares (the framework's handlers are the turn)."""


@dataclass(frozen=True, slots=True)
class Assembly:
    """An agent's services, wired once by :func:`assemble`; frozen.

    ``writers`` is the agent's writer manager (its owners); a channel's pipeline has one
    that knows the channel's owners too.
    """

    db: Database
    agent: Agent
    settings: AgentSettings
    grants: GrantStore
    policy: PermissionPolicy
    writers: WriterManager
    workspace: Workspace
    #: The turns its workers have open, and the shared claim store (``turns.shared_dedup``:
    #: ``None`` when claims are not shared) every channel's pipeline claims updates in.
    turns: TurnLedger
    #: The persons and links of the agent's database (operators manage them whether or not
    #: the agent counts them: only ``settings.links`` makes its pipelines and policy use them).
    links: LinkStore

    @property
    def signer(self) -> OriginSigner:
        """The origin signer every run step of the agent uses."""
        return self.settings.signer

    @property
    def roles(self) -> Mapping[str, str]:
        """Configured roles by sender id (the mapping the settings hold, read at each turn)."""
        return self.settings.roles

    @property
    def owners(self) -> tuple[str, ...]:
        """The configured owners."""
        return self.settings.owners

    def observed(self, observer: DecisionObserver) -> Assembly:
        """This assembly with a policy that also tells ``observer`` every decision."""
        policy = self.settings.policy(self.grants, links=self.links, observer=observer)
        return replace(self, policy=policy)

    def pipeline(
        self,
        config: ChannelConfig,
        *,
        publish: Callable[[InboundMessage], Awaitable[None]] = _nowhere,
        run_here: Callable[[InboundMessage], Awaitable[None]] | None = None,
        ledger: TurnLedger | None = None,
        owners: tuple[str, ...] = (),
    ) -> Pipeline:
        """The ingress pipeline of one channel: admitted messages go to ``publish`` (default:
        nowhere, for a transport that reads them from the result), or to ``run_here`` when
        the transport gives the event a task of its own (see :class:`Pipeline`); with
        ``ledger`` a claim is a lease until the turn is over. The channel's owners and
        ``owners`` manage writers too."""
        owners = (*config.owners, *self.owners, *owners)
        return Pipeline(
            config,
            writers=WriterManager(self.grants, owners=owners),
            publish=publish,
            run_here=run_here,
            agent_key=self.agent.key,
            agent_id=self.agent.id,
            tenant_id=self.agent.tenant_id,
            shared_dedup=self.turns.shared_dedup,
            ledger=ledger,
            links=self.links,
            link_mode=self.settings.links,
        )

    def run_step(
        self,
        handler: Handler = _no_turn,
        *,
        owners: tuple[str, ...] = (),
        senders: Mapping[str, OutboundSender] | None = None,
    ) -> RunStep:
        """The run step of the agent with ``handler`` (default: one that only prepares, for
        transports whose framework runs the turn); ``owners`` are added to the agent's."""
        return RunStep(
            handler,
            signer=self.signer,
            senders=senders,
            agent_key=self.agent.key,
            agent_id=self.agent.id,
            tenant_id=self.agent.tenant_id,
            owners=(*self.owners, *owners),
            roles=self.roles,
        )

    def host(
        self,
        handler: Handler,
        *,
        bus: MessageBus,
        senders: Mapping[str, OutboundSender] | None = None,
        concurrency: int = 4,
        on_done: Callable[[InboundMessage], Awaitable[None]] | None = None,
    ) -> Host:
        """A host consuming ``bus`` with the agent's run step around ``handler``
        (:meth:`run_step`); ``concurrency`` and ``on_done`` as for :class:`Host`."""
        return Host(
            self.run_step(handler, senders=senders),
            bus=bus,
            concurrency=concurrency,
            on_done=on_done,
        )


async def assemble(db: Database, settings: AgentSettings | None = None) -> Assembly:
    """Wire the agent of ``settings`` (default: agent ``main`` of the default tenant) on the
    open database ``db``: find or create the agent and build its services once."""
    settings = settings if settings is not None else AgentSettings()
    agent = await AgentRegistry(db).ensure(settings.agent, settings.tenant)
    grants = GrantStore(db)
    links = LinkStore(db)
    shared = settings.shared_dedup
    if shared is None:
        # Several workers share a PostgreSQL database; an SQLite file usually has one process.
        shared = db.dialect == "postgresql"
    return Assembly(
        db=db,
        agent=agent,
        settings=settings,
        grants=grants,
        policy=settings.policy(grants, links=links),
        writers=WriterManager(grants, owners=settings.owners),
        # One agent, one tenant: its tenant adopts a workspace laid out before tenants.
        workspace=Workspace(settings.workspace, legacy_tenant=agent.tenant_id),
        turns=TurnLedger.on(db if shared else None),
        links=links,
    )

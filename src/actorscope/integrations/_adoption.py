"""Adoption: putting an app's gate on another database, agent and workspace before it starts.

A tool that runs a user's bot as written (the testing kit's ``serve_application`` /
``serve_bot``, ``actorscope probe``) must judge it on the tool's grants and keep it off the
bot's own storage, whatever the bot's code passed to ``install()`` or ``ActorscopeCog``. It
does so by *adopting* the bot: every gate that opens inside ``with adoption.bind():`` opens
on the :class:`Adoption` instead of its own settings. A gate opens at the framework's start hook
(PTB ``post_init``, discord.py ``cog_load``, aiogram ``startup``), so a tool wraps the bot's
start in ``with Adoption(...).bind():``; a gate that opened before is not moved (the tool sees that
in :class:`Opened` and refuses to go on). Each gate exposes what it actually opened as
:class:`Opened` (``Gate.opened``, ``ActorscopeCog.opened``), so a tool proves its reach
before it trusts a clean result.
"""

from __future__ import annotations

import os
from contextlib import AbstractContextManager, AsyncExitStack
from contextvars import ContextVar
from dataclasses import dataclass, replace
from pathlib import Path

from actorscope.agents import Agent
from actorscope.assembly import AgentSettings, Assembly, assemble
from actorscope.context import Binding
from actorscope.errors import ConfigError
from actorscope.propagation import OriginSigner
from actorscope.store import Database

__all__ = ["Adoption", "Opened", "open_gate"]


@dataclass(frozen=True, slots=True)
class Adoption:
    """Where an adopted gate runs instead of where its bot said.

    ``database`` is open and stays open (the gate never closes it); ``agent`` (a key or
    UUID) of ``tenant`` is found or created in it; ``workspace`` is the root of the files
    the gate's services hand out; ``signer`` signs and verifies origins (the tool's, so what
    it signs verifies); ``owners`` (sender ids) are added to the bot's own owners.
    """

    database: Database
    workspace: Path
    agent: str = "main"
    tenant: str = Database.DEFAULT_TENANT_SLUG
    signer: OriginSigner | None = None
    owners: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.database, Database):
            raise ConfigError("Adoption needs an open Database")
        if not isinstance(self.workspace, str | os.PathLike):
            raise ConfigError("Adoption needs a workspace folder")

    @staticmethod
    def in_force() -> Adoption | None:
        """The adoption a gate opening now must use (:meth:`bind`), or ``None`` (its own
        settings)."""
        return _ADOPTION.get()

    def bind(self) -> AbstractContextManager[Adoption]:
        """Every actorscope gate that opens inside the ``with`` block (and in tasks started
        from it) opens on this adoption; the previous adoption, if any, returns on exit."""
        return Binding(_ADOPTION, self)

    def applied(self, settings: AgentSettings) -> AgentSettings:
        """``settings`` as the adoption changes them: its agent, tenant, workspace and signer
        (the settings' own signer when it names none); its owners added."""
        return replace(
            settings,
            agent=self.agent,
            tenant=self.tenant,
            workspace=Path(self.workspace),
            signer=self.signer or settings.signer,
            owners=(*settings.owners, *self.owners),
        )


@dataclass(frozen=True, slots=True)
class Opened:
    """What a gate actually opened: the database, the agent and the workspace root, and the
    adoption it opened on (``None``: the bot's own settings)."""

    database: Database
    agent: Agent
    workspace: Path
    adopted: Adoption | None = None

    @property
    def url(self) -> str:
        """The database's path or URL, as the bot's operator would name it."""
        return self.database.path


_ADOPTION: ContextVar[Adoption | None] = ContextVar("actorscope_adoption", default=None)


async def open_gate(
    database: str | os.PathLike[str] | Database, settings: AgentSettings, stack: AsyncExitStack
) -> tuple[Assembly, Opened]:
    """What a gate opens at its framework's start hook: the agent of ``settings`` on
    ``database``, or, inside :meth:`Adoption.bind`, on the adoption (:meth:`Adoption.applied`),
    assembled by the composition root. A database given as a path or URL is opened on
    ``stack`` (and closed with it); an open one is left open. The database's change feed
    starts now, so another process's grant change reaches the gate's cache within a second.
    """
    adoption = Adoption.in_force()
    given = database if adoption is None else adoption.database
    if adoption is not None:
        settings = adoption.applied(settings)
    db = given
    if not isinstance(db, Database):
        db = await stack.enter_async_context(Database.open(os.fspath(db)))
    assembly = await assemble(db, settings)
    await db.watch_changes()
    return assembly, Opened(db, assembly.agent, settings.workspace, adoption)

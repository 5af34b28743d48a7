"""Log lines name an agent as ``key@tenant-slug``: a key alone is ambiguous across tenants.

The UUID goes into the record's ``extra`` (for correlation with events and traces), never
into the message a person reads.
"""

from __future__ import annotations

import logging
from collections.abc import MutableMapping
from typing import Any

from actorscope.agents._models import Agent, Tenant
from actorscope.agents._types import parse_agent_key, parse_tenant_slug
from actorscope.errors import IdentityError

__all__ = ["AgentLogger", "agent_label", "agent_logger"]


def agent_label(key: str, tenant_slug: str) -> str:
    """``key@tenant-slug``, both validated."""
    return f"{parse_agent_key(key)}@{parse_tenant_slug(tenant_slug)}"


class AgentLogger(logging.LoggerAdapter[logging.Logger]):
    """Prefixes every message with ``[key@tenant-slug]`` and adds it to ``extra``.

    ``extra`` gets ``agent`` (the label), ``agent_key``, ``tenant`` (the slug) and, when
    known, ``agent_id`` (the UUID).
    """

    def __init__(
        self, logger: logging.Logger, key: str, tenant_slug: str, agent_id: str = ""
    ) -> None:
        self.label = agent_label(key, tenant_slug)
        fields: dict[str, object] = {"agent": self.label, "agent_key": key, "tenant": tenant_slug}
        if agent_id:
            fields["agent_id"] = agent_id
        super().__init__(logger, fields)

    def process(
        self, msg: Any, kwargs: MutableMapping[str, Any]
    ) -> tuple[Any, MutableMapping[str, Any]]:
        """Prefix the label and add the agent fields to the caller's ``extra`` (ours win)."""
        kwargs["extra"] = {**kwargs.get("extra", {}), **(self.extra or {})}
        return f"[{self.label}] {msg}", kwargs


def agent_logger(logger: logging.Logger, agent: Agent, tenant: Tenant) -> AgentLogger:
    """An :class:`AgentLogger` for a registry agent and its tenant."""
    if agent.tenant_id != tenant.id:
        raise IdentityError(f"agent {agent.key!r} is not in tenant {tenant.slug!r}")
    return AgentLogger(logger, agent.key, tenant.slug, agent.id)

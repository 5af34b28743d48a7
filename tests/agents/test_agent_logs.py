"""Agent log lines name the agent as ``key@tenant-slug``."""

from __future__ import annotations

import logging
import uuid

import pytest

from actorscope.agents import Agent, AgentKey, AgentRegistry, AgentUUID
from actorscope.agents._logs import AgentLogger, agent_logger
from actorscope.agents._models import Tenant
from actorscope.agents._types import TenantUUID
from actorscope.errors import IdentityError


def test_label_is_key_at_slug() -> None:
    """AgentRegistry.label joins key and tenant slug, validating both."""
    assert AgentRegistry.label("bot", "acme") == "bot@acme"
    with pytest.raises(IdentityError):
        AgentRegistry.label("bot", "")
    with pytest.raises(IdentityError):
        AgentRegistry.label("../bot", "acme")


def test_logger_prefixes_the_label_and_adds_fields(caplog: pytest.LogCaptureFixture) -> None:
    """Every message starts with [key@slug]; extra carries agent, key, tenant and agent_id."""
    agent_id = str(uuid.uuid4())
    log = AgentLogger(logging.getLogger("test.agent"), "bot", "acme", agent_id)
    with caplog.at_level(logging.INFO, logger="test.agent"):
        log.info("started %s", "ok", extra={"agent": "spoofed", "step": 1})
    [record] = caplog.records
    assert record.getMessage() == "[bot@acme] started ok"
    assert agent_id not in record.getMessage()
    assert record.__dict__["agent"] == "bot@acme"
    assert record.__dict__["agent_key"] == "bot"
    assert record.__dict__["tenant"] == "acme"
    assert record.__dict__["agent_id"] == agent_id
    assert record.__dict__["step"] == 1


def test_agent_logger_checks_the_tenant(caplog: pytest.LogCaptureFixture) -> None:
    """agent_logger builds from registry records and refuses an agent of another tenant."""
    tenant = Tenant(TenantUUID(str(uuid.uuid4())), "acme")
    agent = Agent(AgentUUID(str(uuid.uuid4())), AgentKey("bot"), tenant.id)
    with caplog.at_level(logging.INFO, logger="test.agent2"):
        agent_logger(logging.getLogger("test.agent2"), agent, tenant).info("hi")
    assert [r.getMessage() for r in caplog.records] == ["[bot@acme] hi"]
    other = Tenant(TenantUUID(str(uuid.uuid4())), "other")
    with pytest.raises(IdentityError, match="not in tenant"):
        agent_logger(logging.getLogger("test.agent2"), agent, other)

"""Agent and tenant identity: UUIDs for the system, keys for people."""

from actorscope.agents._models import Agent
from actorscope.agents._registry import AgentRegistry
from actorscope.agents._types import AgentKey, AgentUUID

__all__ = ["Agent", "AgentKey", "AgentRegistry", "AgentUUID"]

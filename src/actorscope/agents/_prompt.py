"""The system prompt names the agent by ``@<agent_key>``; its UUID never reaches the model.

A UUID in model-visible text gets echoed into replies, memories and tool arguments, where
it then passes for a name. The UUID is kept on the config for tracing only, and any text
given to the config is scrubbed of the UUID in every spelling (any case, with or without
hyphens, braces or ``urn:uuid:``) before rendering.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from actorscope._input import parse_uuid
from actorscope.agents._types import AgentKey, AgentUUID, parse_agent_key
from actorscope.errors import IdentityError

__all__ = ["SystemPromptConfig", "uuid_pattern"]


def uuid_pattern(agent_uuid: str) -> re.Pattern[str]:
    """A case-insensitive pattern for the UUID's 32 hex digits, in order, with any separators.

    Matches the canonical form, upper case, bare hex, and spellings with up to three
    non-alphanumeric characters (``-``, ``_``, spaces, ``:``, ``.``) between digits.
    """
    digits = parse_uuid(agent_uuid, "agent uuid").replace("-", "")
    return re.compile(r"[\W_]{0,3}".join(digits), re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class SystemPromptConfig:
    """What the model is told about who it is: ``You are @<agent_key>``, plus optional text."""

    agent_key: AgentKey
    agent_uuid: AgentUUID
    display_name: str = ""
    instructions: str = ""

    def __post_init__(self) -> None:
        parse_agent_key(self.agent_key)
        object.__setattr__(self, "agent_uuid", AgentUUID(parse_uuid(self.agent_uuid, "agent uuid")))
        if uuid_pattern(self.agent_uuid).search(self.agent_key):
            raise IdentityError(f"agent key {self.agent_key!r} spells the agent's UUID")

    def _scrub(self, text: str) -> str:
        return uuid_pattern(self.agent_uuid).sub(f"@{self.agent_key}", text)

    def render(self) -> str:
        """The system prompt text; it never contains the agent UUID in any spelling."""
        lines = [f"You are @{self.agent_key}."]
        if self.display_name:
            lines.append(f"Your display name is {self._scrub(self.display_name)}.")
        if self.instructions:
            lines.extend(("", self._scrub(self.instructions)))
        return "\n".join(lines)

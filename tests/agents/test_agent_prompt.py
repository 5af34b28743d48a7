"""The system prompt says "You are @<key>" and never carries the agent UUID."""

from __future__ import annotations

import re
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from actorscope._input import InvalidUUIDError
from actorscope.agents import AgentKey, AgentUUID
from actorscope.agents._prompt import SystemPromptConfig
from actorscope.errors import IdentityError

KEYS = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_-]{0,20}", fullmatch=True)
UUIDS = st.uuids().map(str)


def spellings(agent_uuid: str) -> list[str]:
    """Ways a UUID can be written into text."""
    value = uuid.UUID(agent_uuid)
    return [
        str(value),
        str(value).upper(),
        value.hex,
        value.hex.upper(),
        "{" + str(value) + "}",
        value.urn,
        str(value).replace("-", " "),
        str(value).replace("-", "_"),
        ":".join(value.hex[i : i + 2] for i in range(0, 32, 2)),
    ]


def contains_uuid(text: str, agent_uuid: str) -> bool:
    """Whether the UUID's 32 hex digits appear in order once all punctuation is removed."""
    squashed = re.sub(r"[\W_]", "", text).lower()
    return uuid.UUID(agent_uuid).hex in squashed


@settings(max_examples=200, deadline=None)
@given(
    key=KEYS,
    agent_uuid=UUIDS,
    display=st.text(max_size=30),
    before=st.text(max_size=30),
    after=st.text(max_size=30),
    style=st.integers(min_value=0, max_value=8),
    leak=st.booleans(),
)
def test_rendered_prompt_never_contains_the_uuid(
    key: str,
    agent_uuid: str,
    display: str,
    before: str,
    after: str,
    style: int,
    leak: bool,
) -> None:
    """Whatever the key and text (even text quoting the UUID), the UUID is never rendered."""
    instructions = before + (spellings(agent_uuid)[style] if leak else "") + after
    config = SystemPromptConfig(
        AgentKey(key), AgentUUID(agent_uuid), display_name=display, instructions=instructions
    )
    text = config.render()
    assert text.startswith(f"You are @{key}.")
    assert not contains_uuid(text, agent_uuid)
    for spelling in spellings(agent_uuid):
        assert spelling.lower() not in text.lower()


def test_quoted_uuid_is_replaced_by_the_handle() -> None:
    """A UUID written in the instructions reads as the agent's @key instead."""
    agent_uuid = str(uuid.uuid4())
    config = SystemPromptConfig(
        AgentKey("bot"), AgentUUID(agent_uuid), instructions=f"Your id is {agent_uuid.upper()}."
    )
    assert config.render() == "You are @bot.\n\nYour id is @bot."


def test_prompt_config_validates_its_ids() -> None:
    """A bad key, a non-UUID, or a key that spells the UUID is refused at construction."""
    agent_uuid = str(uuid.uuid4())
    with pytest.raises(IdentityError):
        SystemPromptConfig(AgentKey("../bot"), AgentUUID(agent_uuid))
    with pytest.raises(InvalidUUIDError):
        SystemPromptConfig(AgentKey("bot"), AgentUUID("bot"))
    with pytest.raises(IdentityError, match="spells"):
        SystemPromptConfig(AgentKey(uuid.UUID(agent_uuid).hex), AgentUUID(agent_uuid))

"""The fake chat's side of the platform contract (:class:`actorscope.channels.Platform`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from tests.fakechat._chat import FakeChat
from tests.fakechat._normalize import NAME, inspect_event
from tests.fakechat._runner import FakeChatRunner

from actorscope.channels import ChannelSection, Ingress, Pipeline
from actorscope.errors import ConfigError
from actorscope.platforms import PlatformSpec, platform_spec

__all__ = ["PLATFORM", "FakeChatPlatform", "FakeChatSection"]


class FakeChatSection(ChannelSection):
    """``[fakechat]`` of a ``bot.toml``: the channel keys and ``enabled``; nothing of its own."""

    platform: Literal["fakechat"] = "fakechat"


class FakeChatPlatform:
    """A tiny chat of string ids: rooms, people, DMs, threads, replies."""

    command_prefixes = "/"
    event_name = "a fake chat event (event_id, chat)"
    simulator = "tests.fakechat._sim:FakeChatSim"
    probe_world = ""  # the world every chat has
    sandbox = "tests.fakechat._sandbox:SANDBOX"
    section: type[ChannelSection] = FakeChatSection

    @property
    def spec(self) -> PlatformSpec:
        """Its registration (registered by the test that uses it)."""
        spec = platform_spec(NAME)
        if spec is None:
            raise ConfigError(f"{NAME} is not registered")
        return spec

    def inspect(
        self, event: Mapping[str, Any], *, agent_key: str = "main", channel: str = ""
    ) -> Ingress:
        """The normaliser (its scopes always name ``fakechat``)."""
        return inspect_event(event, agent_key=agent_key)

    def recognizes(self, event: Mapping[str, Any]) -> bool:
        """A fake chat event has an ``event_id`` and a ``chat``."""
        return "event_id" in event and "chat" in event

    def token_problem(self, token: str) -> str:
        """Its server's tokens are 32 hex digits."""
        hexdigits = set("0123456789abcdef")
        return "" if len(token) == 32 and set(token) <= hexdigits else "is not a fakechat token"

    def runner(self, pipeline: Pipeline, *, token: str, **options: Any) -> FakeChatRunner:
        """The runner on the server given as the ``chat`` option, or else the server of this
        process ``token`` is the bot's token of (``actorscope run``)."""
        chat = options.get("chat", FakeChat.serving(token))
        if not isinstance(chat, FakeChat):
            raise ConfigError("fakechat: no server of this process has the token")
        return FakeChatRunner(pipeline, token=token, chat=chat)


#: The contract its spec names (``tests.fakechat:PLATFORM``).
PLATFORM = FakeChatPlatform()

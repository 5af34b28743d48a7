"""The fake chat's simulator: the production runner on an in-memory server, the bot's turns.

A :class:`~actorscope.testing.Simulator` like the kit's Telegram and Discord ones, built only
from the kit's public faces: the pipeline comes from the env's assembly, each event goes
through :meth:`~actorscope.testing.Simulator.feed`, and every post is recorded
(:meth:`~actorscope.testing.Simulator.record_send`).
"""

from __future__ import annotations

from typing import Any

from tests.fakechat._chat import FakeChat, Post
from tests.fakechat._normalize import NAME
from tests.fakechat._platform import PLATFORM
from tests.fakechat._runner import FakeChatRunner

from actorscope.channels import ChannelConfig
from actorscope.host import OutboundSender
from actorscope.testing import AgentEnv, ChatSim, SimulatedEvent, Simulator

__all__ = ["FakeChatSim"]


class FakeChatSim(Simulator, ChatSim):
    """A fake chat world, its runner fed in memory, and the bot's turns; a
    :class:`~actorscope.testing.ChatSim` (declared, so mypy checks it), which the probe
    drives."""

    platform = NAME

    def __init__(self, env: AgentEnv, *, config: ChannelConfig | None = None) -> None:
        super().__init__(env, config or ChannelConfig(platform=NAME, require_mention=False))
        self.chat = FakeChat()
        self.chat.listeners.append(self._posted)
        self._runner: FakeChatRunner | None = None

    @property
    def runner(self) -> FakeChatRunner:
        """The production runner (once started)."""
        if self._runner is None:
            raise RuntimeError("FakeChatSim is not started (use `async with`)")
        return self._runner

    @property
    def sender(self) -> OutboundSender:
        """The runner: it posts the bot's replies."""
        return self.runner

    async def __aenter__(self) -> FakeChatSim:
        pipeline = self.assembly.pipeline(
            self.config, publish=self.bus.publish_from_channel, owners=self.env.owners
        )
        runner = PLATFORM.runner(pipeline, token=self.chat.token, chat=self.chat)
        self.step.add_sender(runner.name, runner)
        self._runner = runner
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.runner.stop()

    def person(self, name: str) -> str:
        """Add a person; their sender id."""
        return self.chat.person(name)

    def room(self, name: str) -> str:
        """Add a group room; its chat id."""
        return self.chat.room(name)

    async def say(
        self,
        who: str,
        text: str,
        where: str | None = None,
        *,
        thread: str = "",
        reply_to: SimulatedEvent | None = None,
        to_bot: bool = False,
    ) -> SimulatedEvent:
        """``who`` writes ``text`` in room ``where`` (``None``: their DM with the bot)."""
        replied = "" if reply_to is None else str(reply_to.payload["message_id"])
        raw = self.chat.message(who, text, where, thread=thread, reply_to=replied, to_bot=to_bot)
        return await self._send(f"{who} in {where or 'DM'}", raw)

    async def bot_post(self, bot: str, text: str, where: str) -> SimulatedEvent:
        """Another bot posts ``text`` in ``where``."""
        return await self._send(
            f"bot {bot} in {where}", self.chat.message(bot, text, where, bot=True)
        )

    async def notice(self, text: str, where: str) -> SimulatedEvent:
        """A post without an author (the room's system notice) in ``where``."""
        return await self._send(f"notice in {where}", self.chat.message(None, text, where))

    async def _send(self, label: str, raw: dict[str, Any]) -> SimulatedEvent:
        runner = self.runner
        runner.pipeline.config = self.config  # a config replaced between events applies
        return await self.feed(label, raw, lambda: runner.handle(raw))

    def _posted(self, post: Post) -> None:
        self.record_send(text=post.text, chat=post.chat, topic=post.thread)

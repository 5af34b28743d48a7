"""The fake chat's runner: the transport that feeds each event to the channel's pipeline.

Its writer-command surface: ``/addwriter`` and ``/removewriter`` name the author of the
message they reply to, as the server says (never a name typed in the command); ``/writers``
lists. The pipeline runs them (:meth:`~actorscope.channels.Pipeline.writer_command`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from typing import Any

from tests.fakechat._chat import FakeChat
from tests.fakechat._normalize import NAME, inspect_event

from actorscope.channels import ChannelAdapter, Ingress, Pipeline, WriterCommand
from actorscope.errors import ConfigError
from actorscope.identity import Identity
from actorscope.messages import OutboundMessage

__all__ = ["USAGE", "FakeChatRunner"]

USAGE = "reply to a message of the person with /addwriter or /removewriter"
#: How long stop() waits for the poll loop to end.
_STOP_WAIT = 5.0


class FakeChatRunner(ChannelAdapter):
    """The production runner of the fake chat: polls its server, sends the bot's posts."""

    def __init__(self, pipeline: Pipeline, *, token: str, chat: FakeChat) -> None:
        if token != chat.token:
            raise ConfigError("fakechat: the token is not this chat's bot token")
        self.name = NAME
        self.pipeline = pipeline
        self.chat = chat
        self._task: asyncio.Task[None] | None = None

    async def handle(self, event: Mapping[str, Any]) -> Ingress:
        """Take one raw event the whole way through the channel's pipeline."""
        ingress = inspect_event(event, agent_key=self.pipeline.agent_key)

        async def run_command(command: WriterCommand, identity: Identity) -> str | None:
            reply = event.get("reply_to")
            target = reply.get("from") if isinstance(reply, Mapping) else None
            return await self.pipeline.writer_command(
                command,
                identity,
                target=target if type(target) is str else "",
                target_name=self.chat.people.get(target, "") if type(target) is str else "",
                usage=USAGE,
            )

        return await self.pipeline.process(
            ingress,
            bot_username=self.chat.bot,
            run_command=run_command,
            command_prefixes="/",
            sender=self,
        )

    async def start(self) -> None:
        """Poll the server until stopped."""
        if self._task is None:
            self._task = asyncio.create_task(self._poll())

    async def _poll(self) -> None:
        while True:
            event = await self.chat.updates.get()
            self.chat.handled.append((event, await self.handle(event)))

    async def stop(self) -> None:
        """Stop polling (bounded); safe twice or before start()."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait_for(task, _STOP_WAIT)

    async def send(self, msg: OutboundMessage) -> None:
        """Post ``msg`` into its room (or DM) and thread."""
        self.chat.post(msg.chat_id, msg.content, msg.thread_id)

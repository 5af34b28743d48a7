"""Writer commands: parsing, wording, and the Telegram flow through a real PTB Application."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from tests._wait import wait_until
from tests._wiring import channel_pipeline
from tests._world import devs_forum

from actorscope.agents import AgentRegistry
from actorscope.channels._config import ChannelConfig
from actorscope.channels._writer_commands import (
    WriterCommand,
    describe_decision,
    parse_writer_command,
)
from actorscope.channels.telegram._runner import TelegramRunner
from actorscope.host import Host, MessageBus, RunStep
from actorscope.messages import RunRequest
from actorscope.permissions import GrantStore, Reason, WriterDecision
from actorscope.propagation import OriginSigner
from actorscope.sandbox import BotApiEmulator
from actorscope.sandbox._telegram import MemberStatus as TelegramMemberStatus
from actorscope.store import Database


def test_parse_writer_command() -> None:
    """Only the three names count, with the platform's prefix, addressed or not."""
    assert parse_writer_command("/addwriter") is WriterCommand.ADD
    assert parse_writer_command("/removewriter@notes_bot please") is WriterCommand.REMOVE
    assert parse_writer_command("!writers", prefixes="!") is WriterCommand.LIST
    assert parse_writer_command("!writers") is None
    assert parse_writer_command("/addwriters") is None
    assert parse_writer_command("please /addwriter") is None
    assert parse_writer_command("/note x") is None
    assert WriterCommand.named("AddWriter") is WriterCommand.ADD
    assert WriterCommand.named("ask") is None


def test_describe_decision_states_outcome_and_reason() -> None:
    """Success names the target; a refusal carries the reason value and why."""
    added = WriterDecision(True, Reason.WRITER_ADDED, "group:telegram:-1", "42")
    assert describe_decision(added, target_name="@bob (42)") == "added @bob (42) as a writer"
    last = WriterDecision(False, Reason.LAST_WRITER, "group:telegram:-1", "42")
    assert describe_decision(last).startswith("refused (last_writer): 42 is the last writer")
    nobody = WriterDecision(False, Reason.INVALID_TARGET, "group:telegram:-1", "")
    assert describe_decision(nobody, usage="reply to them") == (
        "refused (invalid_target): no person to act on: reply to them"
    )


@dataclass
class Chat:
    """A running bot on the emulator's @devs forum (topic "ideas"), and what it handled."""

    emu: BotApiEmulator
    grants: GrantStore
    agent_id: str
    handled: list[RunRequest]

    def scope(self) -> str:
        """The group scope of @devs."""
        return f"group:telegram:{self.emu.state.chat('@devs').id}"

    def uid(self, name: str) -> str:
        """A user's sender id."""
        return str(self.emu.state.user(name).id)

    async def say(self, user: str, text: str, *, reply_to: int | None = None) -> int:
        """``user`` writes in topic "ideas"; returns the message id."""
        update = self.emu.user_message(user, text, "@devs", topic="ideas", reply_to=reply_to)
        assert update is not None
        message_id: int = update["message"]["message_id"]
        return message_id

    async def command(self, user: str, text: str, *, reply_to: int | None = None) -> str:
        """``user`` sends a command; returns the bot's reply (which must land in "ideas")."""
        before = len(self.emu.sent_messages())
        await self.say(user, text, reply_to=reply_to)
        await wait_until(lambda: len(self.emu.sent_messages()) > before)
        sent: dict[str, Any] = self.emu.sent_messages()[-1]
        assert sent["chat"]["id"] == self.emu.state.chat("@devs").id
        assert sent["message_thread_id"] == 2
        text_sent: str = sent["text"]
        return text_sent


@pytest.fixture
async def chat(tmp_path: Path) -> AsyncIterator[Chat]:
    """alice and dave are admins of @devs, bob and carol members; owner 4242 is configured."""
    emu = devs_forum(BotApiEmulator(max_poll_timeout=1.0))
    devs = emu.state.chat("@devs")
    for name, status in (
        ("carol", TelegramMemberStatus.MEMBER),
        ("dave", TelegramMemberStatus.CREATOR),
    ):
        emu.state.set_member(devs, emu.state.add_user(name.title(), username=name), status)
    async with Database.open(tmp_path / "t.db") as db:
        agent = await AgentRegistry(db).create("main")
        grants = GrantStore(db)
        bus = MessageBus()
        handled: list[RunRequest] = []

        async def handler(request: RunRequest) -> None:
            handled.append(request)

        config = ChannelConfig(platform="telegram", owners=["4242"])
        runner = TelegramRunner(
            channel_pipeline(db, config, bus=bus, agent=agent),
            token=emu.token,
            request=emu.request(),
            get_updates_request=emu.request(),
            poll_timeout=1,
        )
        host = Host(RunStep(handler, signer=OriginSigner(), agent_id=agent.id), bus=bus)
        await host.start()
        await runner.start()
        try:
            yield Chat(emu, grants, agent.id, handled)
        finally:
            emu.close()
            await runner.stop()
            await host.stop()


async def test_admin_bootstrap_then_writers_decide(chat: Chat) -> None:
    """A member cannot add; an admin adds the first writer; then a non-writer admin cannot.

    getChatMember is asked only while the group has no writer."""
    bob_msg = await chat.say("bob", "hello")
    carol_msg = await chat.say("carol", "me too")
    assert (await chat.command("bob", "/addwriter", reply_to=bob_msg)).startswith(
        "refused (not_authorized)"
    )
    reply = await chat.command("alice", "/addwriter", reply_to=bob_msg)
    assert reply == f"added @bob ({chat.uid('bob')}) as a writer"
    refused = await chat.command("dave", "/addwriter", reply_to=carol_msg)
    assert refused.startswith("refused (not_authorized)")
    added = await chat.command("bob", "/addwriter", reply_to=carol_msg)
    assert added == f"added @carol ({chat.uid('carol')}) as a writer"
    listed = await chat.command("carol", "/writers")
    # Named as /addwriter named them, in the order of their ids.
    assert listed == f"writers: @bob ({chat.uid('bob')}), @carol ({chat.uid('carol')})"
    assert {g.scope for g in await chat.grants.list()} == {chat.scope()}
    asked = [c.params["user_id"] for c in chat.emu.calls_to("getChatMember")]
    # Asked only while the group had no writer: not for dave's or bob's later commands.
    assert asked == [int(chat.uid("bob")), int(chat.uid("alice"))]
    assert chat.handled == []  # writer commands never reach the handler


async def test_last_writer_cannot_be_removed(chat: Chat) -> None:
    """Removing works while another writer remains; the last one stays."""
    bob_msg = await chat.say("bob", "hi")
    carol_msg = await chat.say("carol", "hi")
    await chat.command("alice", "/addwriter", reply_to=bob_msg)
    await chat.command("bob", "/addwriter", reply_to=carol_msg)
    removed = await chat.command("carol", "/removewriter", reply_to=bob_msg)
    assert removed == f"removed @bob ({chat.uid('bob')}) from the writers"
    last = await chat.command("carol", "/removewriter", reply_to=carol_msg)
    assert last.startswith("refused (last_writer)")
    assert await chat.command("carol", "/writers") == f"writers: @carol ({chat.uid('carol')})"


async def test_target_comes_from_the_reply_never_from_text(chat: Chat) -> None:
    """``/addwriter @carol`` without a reply names nobody; a reply to the bot names nobody."""
    refused = await chat.command("alice", "/addwriter @carol")
    assert refused.startswith("refused (invalid_target)")
    bot_reply = chat.emu.sent_messages()[-1]["message_id"]
    again = await chat.command("alice", f"/addwriter {chat.uid('carol')}", reply_to=bot_reply)
    assert again.startswith("refused (invalid_target)")
    assert await chat.grants.list() == []
    assert (await chat.command("alice", "/writers")).startswith("no writers yet")


async def test_owner_and_anonymous_admin(chat: Chat) -> None:
    """A configured owner manages writers at any time; an anonymous admin never does."""
    chat.emu.state.add_user("Owen", username="owen", user_id=4242)
    bob_msg = await chat.say("bob", "hi")
    carol_msg = await chat.say("carol", "hi")
    await chat.command("alice", "/addwriter", reply_to=bob_msg)
    by_owner = await chat.command("owen", "/addwriter", reply_to=carol_msg)
    assert by_owner == f"added @carol ({chat.uid('carol')}) as a writer"
    before = len(chat.emu.sent_messages())
    chat.emu.anonymous_admin_message("@devs", "/addwriter", topic="ideas", reply_to=bob_msg)
    # The marker: updates are handled in order, so once alice's /writers is answered the
    # anonymous admin's message was decided too. ignore_bots drops it before any command runs.
    assert (await chat.command("alice", "/writers")).startswith("writers")
    assert len(chat.emu.sent_messages()) == before + 1
    assert sorted(g.sender_id for g in await chat.grants.list()) == sorted(
        [chat.uid("bob"), chat.uid("carol")]
    )

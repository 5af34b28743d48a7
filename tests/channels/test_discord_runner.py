"""The Discord runner: gateway payloads replayed through discord.py, HTTP calls recorded."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import discord
import pytest
import telegram
from discord.webhook.async_ import AsyncWebhookAdapter
from tests._wait import wait_until
from tests._wiring import channel_pipeline

from actorscope.agents import AgentRegistry
from actorscope.bots import BotServices
from actorscope.channels._config import ChannelConfig
from actorscope.channels.discord._runner import DiscordRunner
from actorscope.errors import ConfigError, ReplyError
from actorscope.host import Host, MessageBus, Reply, RunStep
from actorscope.messages import (
    Attachment,
    Button,
    InboundMessage,
    MetaKey,
    OutboundMessage,
    RichReply,
    RunRequest,
)
from actorscope.permissions import GrantStore, PermissionPolicy
from actorscope.propagation import OriginSigner
from actorscope.store import Database
from actorscope.tools._workspace import Workspace

GUILD, TEXT, THREAD, MOD_ROLE = (
    71000000000000001,
    71000000000000002,
    71000000000000003,
    71000000000000004,
)
BOT = 71000000000000009
OWNER, MOD, ANN, BEN = 8001, 8002, 8003, 8004
MANAGE_GUILD = 1 << 5
NAMES = {OWNER: "olga", MOD: "mo", ANN: "ann", BEN: "ben", BOT: "notes"}
STAMP = "2024-01-01T00:00:00+00:00"


def user(uid: int) -> dict[str, Any]:
    """A Discord user object."""
    data: dict[str, Any] = {
        "id": str(uid),
        "username": NAMES[uid],
        "discriminator": "0",
        "avatar": None,
        "global_name": NAMES[uid].title(),
    }
    if uid == BOT:
        data["bot"] = True
    return data


def member(uid: int, *, with_user: bool = False) -> dict[str, Any]:
    """A guild member object; MOD holds the role with Manage Guild."""
    data: dict[str, Any] = {
        "roles": [str(MOD_ROLE)] if uid == MOD else [],
        "joined_at": STAMP,
        "deaf": False,
        "mute": False,
        "flags": 0,
    }
    if with_user:
        data["user"] = user(uid)
    return data


def guild_create() -> dict[str, Any]:
    """GUILD_CREATE: OWNER owns the guild, MOD has a Manage Guild role, a text channel + thread."""
    return {
        "id": str(GUILD),
        "name": "devs",
        "owner_id": str(OWNER),
        "unavailable": False,
        "roles": [
            {"id": str(GUILD), "name": "@everyone", "permissions": "0", "position": 0},
            {"id": str(MOD_ROLE), "name": "mods", "permissions": str(MANAGE_GUILD), "position": 1},
        ],
        "channels": [
            {"id": str(TEXT), "type": 0, "name": "general", "position": 0, "guild_id": str(GUILD)}
        ],
        "threads": [
            {
                "id": str(THREAD),
                "type": 11,
                "name": "a thread",
                "parent_id": str(TEXT),
                "guild_id": str(GUILD),
                "owner_id": str(ANN),
                "thread_metadata": {
                    "archived": False,
                    "auto_archive_duration": 1440,
                    "archive_timestamp": STAMP,
                    "locked": False,
                },
                "message_count": 1,
                "member_count": 1,
                "rate_limit_per_user": 0,
            }
        ],
        "members": [member(uid, with_user=True) for uid in (OWNER, MOD, ANN, BEN, BOT)],
        "member_count": 5,
        "large": False,
        "emojis": [],
        "stickers": [],
        "features": [],
        "voice_states": [],
        "presences": [],
        "stage_instances": [],
        "guild_scheduled_events": [],
        "joined_at": STAMP,
    }


def message_create(
    message_id: int, author: int, content: str, *, mentions: tuple[int, ...] = ()
) -> dict[str, Any]:
    """MESSAGE_CREATE in the text channel; ``mentions`` as Discord resolved them."""
    return {
        "id": str(message_id),
        "type": 0,
        "channel_id": str(TEXT),
        "guild_id": str(GUILD),
        "author": user(author),
        "member": member(author),
        "content": content,
        "timestamp": STAMP,
        "edited_timestamp": None,
        "tts": False,
        "mention_everyone": False,
        "mentions": [user(uid) | {"member": member(uid)} for uid in mentions],
        "mention_roles": [],
        "attachments": [],
        "embeds": [],
        "pinned": False,
    }


def slash(interaction_id: int, invoker: int, name: str, target: int | None) -> dict[str, Any]:
    """INTERACTION_CREATE for a writer slash command in the thread."""
    perms = MANAGE_GUILD if invoker in (OWNER, MOD) else 0
    data: dict[str, Any] = {"id": "555", "name": name, "type": 1}
    if target is not None:
        data["options"] = [{"name": "user", "type": 6, "value": str(target)}]
        data["resolved"] = {
            "users": {str(target): user(target)},
            "members": {str(target): member(target) | {"permissions": "0"}},
        }
    return {
        "id": str(interaction_id),
        "application_id": str(BOT),
        "type": 2,
        "token": f"tok{interaction_id}",
        "version": 1,
        "channel_id": str(THREAD),
        "channel": {
            "id": str(THREAD),
            "type": 11,
            "guild_id": str(GUILD),
            "parent_id": str(TEXT),
            "name": "a thread",
        },
        "data": data,
        "locale": "en-US",
        "app_permissions": "0",
        "entitlements": [],
        "attachment_size_limit": 26214400,
        "authorizing_integration_owners": {"0": str(GUILD)},
        "context": 0,
        "guild_id": str(GUILD),
        "member": member(invoker, with_user=True) | {"permissions": str(perms)},
        "guild_locale": "en-US",
    }


def component_click(interaction_id: int, clicker: int, custom_id: str) -> dict[str, Any]:
    """INTERACTION_CREATE for a click on a button with ``custom_id`` of a bot message."""
    payload = slash(interaction_id, clicker, "", None)
    payload["type"] = 3
    payload["data"] = {"custom_id": custom_id, "component_type": 2}
    payload["message"] = message_create(interaction_id - 1, BOT, "pick") | {
        "channel_id": str(THREAD)
    }
    return payload


def body(kwargs: dict[str, Any], json_key: str, form_key: str) -> Any:
    """The JSON body of a recorded request: plain, or the ``payload_json`` of a multipart form."""
    if kwargs.get(json_key) is not None:
        return kwargs[json_key]
    form = kwargs.get(form_key) or []
    for part in form:
        if part["name"] == "payload_json":
            data = json.loads(part["value"])
            data["files"] = [f.filename for f in kwargs.get("files") or []]
            return data
    return None


@dataclass
class Replay:
    """A runner whose client parsed GUILD_CREATE; HTTP is recorded, never sent."""

    runner: DiscordRunner
    bus: MessageBus
    grants: GrantStore
    services: BotServices
    http: list[tuple[str, str, Any]] = field(default_factory=list)
    next_id: int = 72000000000000000

    def sent_texts(self) -> list[tuple[str, str]]:
        """(path, content) of every message the bot sent or interaction it answered."""
        texts = []
        for _, path, payload in self.http:
            body = payload or {}
            text = body.get("content") or (body.get("data") or {}).get("content")
            if text is not None:
                texts.append((path, text))
        return texts

    async def message(self, author: int, content: str, *, mentions: tuple[int, ...] = ()) -> str:
        """Replay one message; once its handlers are done, the bot's reply text (``""``: none)."""
        self.next_id += 1
        sent, running = len(self.sent_texts()), asyncio.all_tasks()
        state = self.runner.client._connection
        payload: Any = message_create(self.next_id, author, content, mentions=mentions)
        state.parse_message_create(payload)
        return await self._reply(sent, running)

    async def slash(self, invoker: int, name: str, target: int | None = None) -> str:
        """Replay one slash command; once its handlers are done, the response text."""
        self.next_id += 1
        sent, running = len(self.sent_texts()), asyncio.all_tasks()
        state = self.runner.client._connection
        payload: Any = slash(self.next_id, invoker, name, target)
        state.parse_interaction_create(payload)
        return await self._reply(sent, running)

    async def _reply(self, sent: int, running: set[asyncio.Task[Any]]) -> str:
        """The newest text sent after ``sent`` texts, once every task the replayed event
        started (discord.py dispatches each handler as a task on this loop) has finished."""
        await wait_until(lambda: not asyncio.all_tasks() - running)
        texts = self.sent_texts()
        return texts[-1][1] if len(texts) > sent else ""


@pytest.fixture
async def replay(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Replay]:
    """A DiscordRunner (never connected) with GUILD_CREATE parsed and HTTP recorded."""
    async with Database.open(tmp_path / "t.db") as db:
        agent = await AgentRegistry(db).create("main")
        grants = GrantStore(db)
        bus = MessageBus()
        runner = DiscordRunner(
            channel_pipeline(
                db, ChannelConfig(platform="discord"), bus=bus, agent=agent, run_here=True
            ),
            token="unused",  # noqa: S106 - never logs in
            sync_commands=False,
        )
        workspace = Workspace(tmp_path / "ws")
        services = BotServices(
            db, agent, grants, PermissionPolicy(grants), workspace, {"discord": runner}
        )
        result = Replay(runner, bus, grants, services)
        client = runner.client
        await client._async_setup_hook()

        async def http_request(route: Any, **kwargs: Any) -> Any:
            sent = body(kwargs, "json", "form")
            result.http.append((route.method, route.path, sent))
            if route.method == "POST" and route.path.endswith("/messages"):
                result.next_id += 1
                return message_create(result.next_id, BOT, sent.get("content") or "")
            return {}

        async def webhook_request(self: Any, route: Any, session: Any, **kwargs: Any) -> Any:
            sent = body(kwargs, "payload", "multipart")
            result.http.append((route.method, route.path, sent))
            if route.path.startswith("/webhooks/"):  # a follow-up message
                result.next_id += 1
                reply = message_create(result.next_id, BOT, sent.get("content") or "")
                return reply | {"channel_id": str(THREAD), "webhook_id": str(BOT)}
            return {"interaction": {"id": "1", "type": 2}}

        monkeypatch.setattr(client.http, "request", http_request)
        monkeypatch.setattr(AsyncWebhookAdapter, "request", webhook_request)
        state = client._connection
        bot_user: Any = user(BOT)
        guild: Any = guild_create()
        state.user = discord.ClientUser(state=state, data=bot_user)
        state.parse_guild_create(guild)
        try:
            yield result
        finally:
            await client.close()


async def test_bang_commands_bootstrap_and_last_writer(replay: Replay) -> None:
    """!addwriter: a Manage Guild member bootstraps; then only writers; the last one stays."""
    refused = await replay.message(ANN, "!addwriter <@8004>", mentions=(BEN,))
    assert refused.startswith("refused (not_authorized)")
    added = await replay.message(MOD, "!addwriter <@8003>", mentions=(ANN,))
    assert added == f"added @ann ({ANN}) as a writer"
    late_admin = await replay.message(OWNER, "!writers")
    assert late_admin == f"writers: @ann ({ANN})"  # named as !addwriter named them
    by_writer = await replay.message(ANN, "!addwriter <@8004>", mentions=(BEN,))
    assert by_writer == f"added @ben ({BEN}) as a writer"
    removed = await replay.message(BEN, "!removewriter <@8003>", mentions=(ANN,))
    assert removed == f"removed @ann ({ANN}) from the writers"
    last = await replay.message(BEN, "!removewriter <@8004>", mentions=(BEN,))
    assert last.startswith("refused (last_writer)")
    grants = await replay.grants.list()
    assert [(g.scope, g.sender_id) for g in grants] == [(f"guild:{GUILD}:*", str(BEN))]
    paths = {path for _, path, _ in replay.http}
    assert paths == {"/channels/{channel_id}/messages"}
    assert replay.bus.qsize() == 0  # writer commands never reach the handler


async def test_non_admin_member_after_bootstrap_and_text_ids(replay: Replay) -> None:
    """After bootstrap a Manage Guild non-writer is refused; ids typed in text name nobody."""
    await replay.message(MOD, "!addwriter <@8003>", mentions=(ANN,))
    typed = await replay.message(ANN, f"!addwriter {BEN} @ben")
    assert typed.startswith("refused (invalid_target)")
    owner = await replay.message(OWNER, "!addwriter <@8004>", mentions=(BEN,))
    assert owner.startswith("refused (not_authorized)")  # Manage Guild bootstraps only
    assert [g.sender_id for g in await replay.grants.list()] == [str(ANN)]


async def test_slash_commands_answer_the_interaction(replay: Replay) -> None:
    """Slash commands go through discord.py's command tree; Manage Guild comes from the payload."""
    refused = await replay.slash(BEN, "addwriter", ANN)
    assert refused.startswith("refused (not_authorized)")
    added = await replay.slash(MOD, "addwriter", BEN)
    assert added == f"added @ben ({BEN}) as a writer"
    assert await replay.slash(ANN, "writers") == f"writers: @ben ({BEN})"
    callbacks = [path for _, path, _ in replay.http]
    assert callbacks == ["/interactions/{webhook_id}/{webhook_token}/callback"] * 3


async def test_plain_message_is_published_and_reply_goes_to_the_thread(replay: Replay) -> None:
    """A mention in a guild channel reaches the bus as the member; send() targets the thread."""
    await replay.message(ANN, "<@71000000000000009> hello", mentions=(BOT,))
    inbound: InboundMessage = await asyncio.wait_for(replay.bus.get(), 1)
    replay.bus.task_done()
    assert (inbound.user_id, inbound.sender_id) == (f"guild:{GUILD}:user:{ANN}", str(ANN))
    assert inbound.content == "hello"
    await replay.runner.send(
        OutboundMessage(
            channel="discord",
            chat_id=str(TEXT),
            thread_id=str(THREAD),
            content="hi",
            reply_to_message_id=inbound.message_id,
        )
    )
    method, path, payload = replay.http[-1]
    assert (method, path, payload["content"]) == ("POST", "/channels/{channel_id}/messages", "hi")
    assert payload["message_reference"]["channel_id"] == THREAD
    unaddressed = await replay.message(ANN, "chatter")
    assert unaddressed == ""
    assert replay.bus.qsize() == 0


async def test_other_slash_command_is_deferred_and_followed_up(replay: Replay) -> None:
    """A slash command the tree does not own: deferred, published, the reply is the follow-up."""
    replay.next_id += 1
    payload: Any = slash(replay.next_id, ANN, "ask", None)
    replay.runner.client._connection.parse_interaction_create(payload)
    inbound: InboundMessage = await asyncio.wait_for(replay.bus.get(), 1)
    replay.bus.task_done()
    assert (inbound.user_id, inbound.sender_id) == (f"guild:{GUILD}:user:{ANN}", str(ANN))
    assert inbound.thread_id == str(THREAD)
    await replay.runner.send(
        OutboundMessage(
            channel="discord",
            chat_id=inbound.chat_id,
            thread_id=inbound.thread_id,
            content="answer",
            reply_to_message_id=inbound.message_id,
        )
    )
    routes = [(method, path) for method, path, _ in replay.http]
    assert routes == [
        ("POST", "/interactions/{webhook_id}/{webhook_token}/callback"),
        ("POST", "/webhooks/{webhook_id}/{webhook_token}"),
    ]
    assert replay.http[0][2]["type"] == 5  # deferred channel message
    assert replay.http[1][2]["content"] == "answer"


async def test_send_text_sends_what_a_built_reply_sends(replay: Replay) -> None:
    """A plain-text reply (thread, channel, long text, a pending slash command) makes the
    same calls as sending the reply message built for it."""
    await replay.message(ANN, "<@71000000000000009> hello", mentions=(BOT,))
    in_channel: InboundMessage = await asyncio.wait_for(replay.bus.get(), 1)
    replay.bus.task_done()
    in_thread = in_channel.model_copy(update={"thread_id": str(THREAD), "message_id": "5"})
    no_id = in_channel.model_copy(update={"message_id": ""})
    for source, text in [
        (in_channel, "hi"),
        (in_thread, "\nin the thread\n"),
        (no_id, "y" * 4500),
        (in_channel, ""),
    ]:
        start = len(replay.http)
        await replay.runner.send(OutboundMessage.reply_to(source, text))
        middle = len(replay.http)
        await replay.runner.send_text(source, text)
        calls = [(path, {**(sent or {}), "nonce": ""}) for _, path, sent in replay.http]
        assert calls[middle:] == calls[start:middle]
        assert middle > start
    replay.next_id += 1
    payload: Any = slash(replay.next_id, ANN, "ask", None)
    replay.runner.client._connection.parse_interaction_create(payload)
    slashed: InboundMessage = await asyncio.wait_for(replay.bus.get(), 1)
    replay.bus.task_done()
    start = len(replay.http)
    await replay.runner.send_text(slashed, "answer")
    assert [(method, path) for method, path, _ in replay.http[start:]] == [
        ("POST", "/webhooks/{webhook_id}/{webhook_token}")
    ]
    assert replay.http[-1][2]["content"] == "answer"


def run_step(replay: Replay, turn: Any) -> RunStep:
    """A run step with ``turn`` as the handler (services bound), replying through the runner."""
    return RunStep(
        replay.services.wrap(turn),
        signer=OriginSigner(),
        senders={"discord": replay.runner},
        agent_id=replay.services.agent.id,
        tenant_id=replay.services.agent.tenant_id,
    )


async def test_rich_reply_renders_buttons_files_and_a_click_comes_back(
    replay: Replay, tmp_path: Path
) -> None:
    """Markdown + two buttons + a photo: one message with components; a click returns its id."""
    photo = tmp_path / "chart.png"
    photo.write_bytes(b"\x89PNG fake")

    async def turn(request: RunRequest) -> Reply:
        if request.metadata.get(MetaKey.CALLBACK_DATA) == "yes":
            return f"you chose {request.content}"
        return RichReply(
            "**Ship it?**",
            format="markdown",
            buttons=[Button("Yes", data="yes"), Button("Docs", url="https://example.org/docs")],
            media=[Attachment.photo(photo), Attachment.photo("https://example.org/p.png")],
        )

    step = run_step(replay, turn)
    await replay.message(ANN, "<@71000000000000009> ship", mentions=(BOT,))
    inbound: InboundMessage = await asyncio.wait_for(replay.bus.get(), 1)
    replay.bus.task_done()
    await step.run(inbound)
    method, path, sent = replay.http[-1]
    assert (method, path) == ("POST", "/channels/{channel_id}/messages")
    assert sent["content"] == "**Ship it?**"
    assert sent["files"] == ["chart.png"]
    assert [e["image"]["url"] for e in sent["embeds"]] == ["https://example.org/p.png"]
    (row,) = sent["components"]
    assert [(b["label"], b.get("custom_id"), b.get("url")) for b in row["components"]] == [
        ("Yes", "yes", None),
        ("Docs", None, "https://example.org/docs"),
    ]
    replay.next_id += 2
    click: Any = component_click(replay.next_id, BEN, "yes")
    replay.runner.client._connection.parse_interaction_create(click)
    clicked: InboundMessage = await asyncio.wait_for(replay.bus.get(), 1)
    replay.bus.task_done()
    assert (clicked.sender_id, clicked.content) == (str(BEN), "yes")
    assert clicked.metadata[MetaKey.CALLBACK_DATA] == "yes"
    await step.run(clicked)
    routes = [(method, path) for method, path, _ in replay.http[-2:]]
    assert routes == [
        ("POST", "/interactions/{webhook_id}/{webhook_token}/callback"),
        ("POST", "/webhooks/{webhook_id}/{webhook_token}"),
    ]
    assert replay.http[-1][2]["content"] == "you chose yes"


async def test_handler_uses_the_native_discord_client(replay: Replay) -> None:
    """BotServices.current().native(discord.Client) is the runner's client, with its cache."""

    async def turn(request: RunRequest) -> Reply:
        channel = BotServices.current().native(discord.Client).get_channel(int(request.chat_id))
        assert isinstance(channel, discord.TextChannel)
        return f"in #{channel.name}"

    await replay.message(ANN, "<@71000000000000009> where", mentions=(BOT,))
    inbound: InboundMessage = await asyncio.wait_for(replay.bus.get(), 1)
    replay.bus.task_done()
    await run_step(replay, turn).run(inbound)
    assert replay.http[-1][2]["content"] == "in #general"
    with pytest.raises(ConfigError, match=r"no channel running in this bot has a telegram\.Bot"):
        replay.services.native(telegram.Bot)
    with pytest.raises(ConfigError, match="takes the class of the object it gives"):
        replay.services.native("telegram")  # type: ignore[arg-type]


async def test_with_a_host_running_the_turn_runs_in_the_events_task(replay: Replay) -> None:
    """Under a running host with a free turn slot, a message's turn runs in the task
    discord.py gave its event, not on a host worker (no bus hop); the reply goes out."""
    tasks: list[str] = []

    async def turn(request: RunRequest) -> Reply:
        task = asyncio.current_task()
        tasks.append(task.get_name() if task is not None else "")
        return "noted"

    step = RunStep(
        replay.services.wrap(turn),
        signer=OriginSigner(),
        senders={"discord": replay.runner},
        agent_id=replay.services.agent.id,
        tenant_id=replay.services.agent.tenant_id,
    )
    host = Host(step, bus=replay.bus)
    async with host:
        answer = await replay.message(ANN, "<@71000000000000009> hi", mentions=(BOT,))
    assert answer == "noted"
    assert tasks == ["discord.py: on_message"]
    assert replay.bus.qsize() == 0


async def test_html_reply_is_sent_as_its_text(replay: Replay) -> None:
    """Discord renders no HTML: an HTML reply goes out as its text, entities decoded."""
    await replay.runner.send(
        OutboundMessage(
            channel="discord", chat_id=str(TEXT), content="<b>a</b> &amp; <i>b</i>", format="html"
        )
    )
    assert replay.http[-1][2]["content"] == "a & b"


async def test_text_reply_sends_without_a_thread_hop(
    replay: Replay, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reply without media is sent on the loop: no worker-thread round trip per reply."""
    hops: list[object] = []

    async def to_thread(func: Any, /, *args: Any, **kwargs: Any) -> Any:
        hops.append(func)
        return func(*args, **kwargs)

    monkeypatch.setattr(asyncio, "to_thread", to_thread)
    await replay.runner.send(OutboundMessage(channel="discord", chat_id=str(TEXT), content="hi"))
    assert replay.http[-1][2]["content"] == "hi"
    assert hops == []


def _reply(buttons: Any) -> OutboundMessage:
    return OutboundMessage(channel="discord", chat_id=str(TEXT), content="x", buttons=buttons)


@pytest.mark.parametrize(
    ("buttons", "message"),
    [
        (
            [Button(str(i), data=str(i)) for i in range(6)],
            "button row 1: Discord allows 5 buttons per row, this has 6",
        ),
        (
            [[Button(str(i), data=str(i))] for i in range(6)],
            "Discord allows 5 rows of buttons, this has 6",
        ),
        (
            [Button("Long", data="d" * 101)],
            "button 'Long': Discord allows 100 characters of custom id, this has 101",
        ),
        ([Button("A", data="same"), Button("B", data="same")], "button 'B': Discord needs each"),
        ([Button("x" * 81, data="d")], "Discord allows 80 characters of text"),
    ],
)
async def test_discord_limits_are_refused_before_any_call(
    replay: Replay, buttons: Any, message: str
) -> None:
    """Past Discord's button limits: one ReplyError naming the limit, nothing sent."""
    with pytest.raises(ReplyError) as caught:
        await replay.runner.send(_reply(buttons))
    assert message in str(caught.value)
    assert replay.http == []


async def test_refused_reply_through_the_run_step_is_one_log_line(
    replay: Replay, caplog: pytest.LogCaptureFixture
) -> None:
    """The run step logs a refused reply as its reason, with no traceback, and sends nothing."""

    async def turn(request: RunRequest) -> Reply:
        return RichReply("pick", buttons=[Button("Long", data="d" * 101)])

    await replay.message(ANN, "<@71000000000000009> pick", mentions=(BOT,))
    inbound: InboundMessage = await asyncio.wait_for(replay.bus.get(), 1)
    replay.bus.task_done()
    with caplog.at_level(logging.ERROR, logger="actorscope.host"):
        assert await run_step(replay, turn).run(inbound) != []
    (record,) = caplog.records
    assert "Discord allows 100 characters of custom id" in record.getMessage()
    assert record.exc_info is None
    assert replay.http == []


@pytest.mark.parametrize("event", ["click", "slash"])
async def test_every_reply_to_an_interaction_is_its_follow_up(replay: Replay, event: str) -> None:
    """A handler answering a click (or a slash command) with two replies: both are follow-ups
    of the interaction; none goes to the channel with the interaction's id as the message it
    replies to."""

    async def turn(request: RunRequest) -> Reply:
        return [RichReply("one"), RichReply("two")]

    replay.next_id += 2
    payload: Any = (
        component_click(replay.next_id, BEN, "yes")
        if event == "click"
        else slash(replay.next_id, ANN, "ask", None)
    )
    replay.runner.client._connection.parse_interaction_create(payload)
    inbound: InboundMessage = await asyncio.wait_for(replay.bus.get(), 1)
    replay.bus.task_done()
    await run_step(replay, turn).run(inbound)
    routes = [(method, path) for method, path, _ in replay.http]
    assert routes == [
        ("POST", "/interactions/{webhook_id}/{webhook_token}/callback"),
        ("POST", "/webhooks/{webhook_id}/{webhook_token}"),
        ("POST", "/webhooks/{webhook_id}/{webhook_token}"),
    ]
    assert [sent["content"] for _, _, sent in replay.http[1:]] == ["one", "two"]

"""The Discord emulator's gateway: discord.py clients and raw sockets speaking its protocol."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import discord
import pytest
from tests.sandbox.conftest import BOUND, Connect

from actorscope.sandbox import DiscordEmulator, DiscordWorld, discord_pointed_at
from actorscope.sandbox._gateway import CloseCode

# Intents: GUILDS | GUILD_MESSAGES | MESSAGE_CONTENT, and the same without content.
WITH_CONTENT = (1 << 0) | (1 << 9) | (1 << 15)
WITHOUT_CONTENT = (1 << 0) | (1 << 9)


def content_intents() -> discord.Intents:
    """Default intents plus message content."""
    intents = discord.Intents.default()
    intents.message_content = True
    return intents


class ReplyBot(discord.Client):
    """A plain bot: replies "pong: <text>" to every message that is not its own."""

    async def on_message(self, message: discord.Message) -> None:
        """Reply to people."""
        if message.author != self.user:
            await message.reply(f"pong: {message.content}")


class QuickReidentifyBot(ReplyBot):
    """ReplyBot without discord.py's 5 s pause before identifying again (a public hook)."""

    async def before_identify_hook(self, shard_id: int | None, *, initial: bool = False) -> None:
        """Identify at once."""


class Raw:
    """A raw gateway client: JSON text frames, every receive bounded."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws = ws

    async def recv(self) -> dict[str, Any]:
        """The next payload."""
        msg = await self.ws.receive(timeout=BOUND)
        assert msg.type is aiohttp.WSMsgType.TEXT, msg
        payload: dict[str, Any] = json.loads(msg.data)
        return payload

    async def send(self, op: int, d: object) -> None:
        """Send one payload."""
        await self.ws.send_str(json.dumps({"op": op, "d": d}))

    async def close_code(self) -> int | None:
        """Read until the server closes; its close code."""
        while True:
            msg = await self.ws.receive(timeout=BOUND)
            if msg.type in {aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED}:
                return self.ws.close_code

    async def identify(self, token: str, intents: int, shard: list[int] | None = None) -> None:
        """Send IDENTIFY."""
        d: dict[str, Any] = {"token": token, "intents": intents, "properties": {}}
        if shard is not None:
            d["shard"] = shard
        await self.send(2, d)

    async def dispatches(self, count: int) -> list[dict[str, Any]]:
        """The next ``count`` dispatches (heartbeat ACKs skipped)."""
        found: list[dict[str, Any]] = []
        while len(found) < count:
            payload = await self.recv()
            if payload["op"] == 0:
                found.append(payload)
        return found


@pytest.fixture
async def raw(emu: DiscordEmulator) -> AsyncIterator[Raw]:
    """A raw socket to the emulator's gateway, HELLO already read."""
    async with (
        aiohttp.ClientSession() as session,
        session.ws_connect(emu.gateway_url + "?v=10&encoding=json") as ws,
    ):
        client = Raw(ws)
        hello = await client.recv()
        assert hello["op"] == 10
        yield client


async def test_plain_client_replies_through_the_emulator(
    emu: DiscordEmulator, connect: Connect
) -> None:
    """A discord.Client with on_message connects unchanged and its reply reaches the channel."""
    async with connect(ReplyBot(intents=content_intents())):
        sent = await emu.say("carol", "general", "ping")
        reply = await emu.wait_for_bot_message(channel="general", after=sent.id)
    assert reply.content == "pong: ping"
    assert reply.reference is not None
    assert reply.reference["message_id"] == str(sent.id)


async def test_resume_after_a_killed_socket_loses_no_event(
    emu: DiscordEmulator, connect: Connect
) -> None:
    """A message sent while the socket is dead is replayed on RESUME and answered."""
    async with connect(ReplyBot(intents=content_intents())):
        (session,) = await emu.wait_connected()
        emu.gateway.drop_connections()
        sent = await emu.say("carol", "general", "while you were out")
        reply = await emu.wait_for_bot_message(channel="general", after=sent.id)
    assert reply.content == "pong: while you were out"
    assert session.resumes == 1
    assert list(emu.gateway.sessions) == [session.id]  # resumed, never identified again


async def test_bad_token_closes_with_4004(raw: Raw) -> None:
    """IDENTIFY with a wrong token closes the socket with 4004."""
    await raw.identify("not-the-token", WITH_CONTENT)
    assert await raw.close_code() == 4004


async def test_disallowed_intents_close_with_4014(emu: DiscordEmulator, raw: Raw) -> None:
    """Asking for message content that the application may not have closes with 4014."""
    emu.world.privileged_intents = 0
    await raw.identify(emu.world.token, WITH_CONTENT)
    assert await raw.close_code() == 4014


async def test_discord_py_reports_disallowed_intents() -> None:
    """discord.py turns the 4014 close into PrivilegedIntentsRequired."""
    world = DiscordWorld()
    world.privileged_intents = 0
    async with DiscordEmulator(world, wait_timeout=BOUND) as emu:
        client = discord.Client(intents=content_intents())
        with discord_pointed_at(emu):
            await client.login(emu.world.token)
            try:
                with pytest.raises(discord.PrivilegedIntentsRequired):
                    await asyncio.wait_for(client.connect(), BOUND)
            finally:
                await client.close()


async def test_missed_heartbeat_closes_with_4009() -> None:
    """A client that stops heartbeating is closed with 4009 (session timed out)."""
    async with (
        DiscordEmulator(heartbeat_interval=0.05, wait_timeout=BOUND) as emu,
        aiohttp.ClientSession() as session,
        session.ws_connect(emu.gateway_url) as ws,
    ):
        raw = Raw(ws)
        assert (await raw.recv())["d"]["heartbeat_interval"] == 50
        assert await raw.close_code() == CloseCode.SESSION_TIMED_OUT


async def test_heartbeat_is_acknowledged(raw: Raw) -> None:
    """A heartbeat gets HEARTBEAT_ACK."""
    await raw.send(1, None)
    assert (await raw.recv())["op"] == 11


async def test_ready_then_guild_create_with_channels_threads_roles_members(
    emu: DiscordEmulator, raw: Raw
) -> None:
    """IDENTIFY gives READY, then GUILD_CREATE with the guild's channels, threads and members."""
    await raw.identify(emu.world.token, WITH_CONTENT)
    ready, guild = await raw.dispatches(2)
    assert ready["t"] == "READY"
    assert ready["s"] == 1
    assert ready["d"]["user"]["id"] == str(emu.world.bot.id)
    assert ready["d"]["resume_gateway_url"] == emu.gateway_url
    assert guild["t"] == "GUILD_CREATE"
    data = guild["d"]
    assert {c["name"] for c in data["channels"]} == {"general", "random"}
    assert [t["name"] for t in data["threads"]] == ["design"]
    assert {r["name"] for r in data["roles"]} == {"@everyone", "managers"}
    assert {m["user"]["username"] for m in data["members"]} >= {"alice", "carol", "dave"}


async def test_without_message_content_intent_content_is_empty(
    emu: DiscordEmulator, raw: Raw
) -> None:
    """Without MESSAGE_CONTENT a guild message arrives empty, unless it mentions the bot."""
    await raw.identify(emu.world.token, WITHOUT_CONTENT)
    await raw.dispatches(2)
    await emu.wait_connected()
    await emu.say("carol", "general", "secret")
    await emu.say("carol", "general", f"<@{emu.world.bot.id}> hello")
    plain, mention = await raw.dispatches(2)
    assert plain["t"] == "MESSAGE_CREATE"
    assert plain["d"]["content"] == ""
    assert mention["d"]["content"] == f"<@{emu.world.bot.id}> hello"


async def test_shards_get_their_own_guilds(emu: DiscordEmulator) -> None:
    """Each of two shards gets exactly the guilds with (guild_id >> 22) % 2 == its shard id."""
    alice = emu.world.user("alice")
    for index in range(3):
        emu.world.add_guild(f"extra-{index}", owner=alice)
    expected = {
        shard_id: sorted(str(g) for g in emu.world.guilds if (g >> 22) % 2 == shard_id)
        for shard_id in (0, 1)
    }
    assert expected[0]
    assert expected[1]
    async with aiohttp.ClientSession() as session:
        for shard_id in (0, 1):
            async with session.ws_connect(emu.gateway_url) as ws:
                raw = Raw(ws)
                await raw.recv()
                await raw.identify(emu.world.token, WITH_CONTENT, [shard_id, 2])
                count = len(expected[shard_id])
                ready, *guilds = await raw.dispatches(1 + count)
                assert ready["d"]["shard"] == [shard_id, 2]
                assert sorted(g["id"] for g in ready["d"]["guilds"]) == expected[shard_id]
                assert sorted(g["d"]["id"] for g in guilds) == expected[shard_id]


async def test_bad_shard_closes_with_4010(emu: DiscordEmulator, raw: Raw) -> None:
    """A shard id outside the shard count closes with 4010."""
    await raw.identify(emu.world.token, WITH_CONTENT, [2, 2])
    assert await raw.close_code() == CloseCode.INVALID_SHARD


async def test_resume_with_unknown_session_is_invalid(raw: Raw) -> None:
    """RESUME of a session the gateway does not know gets INVALID_SESSION (not resumable)."""
    await raw.send(6, {"token": "x", "session_id": "nope", "seq": 1})
    assert await raw.recv() == {"op": 9, "d": False}


async def test_payload_before_identify_closes_with_4003(raw: Raw) -> None:
    """A payload other than heartbeat, identify or resume before IDENTIFY closes with 4003."""
    await raw.send(8, {"guild_id": "1"})
    assert await raw.close_code() == CloseCode.NOT_AUTHENTICATED


async def test_invalid_session_makes_discord_py_identify_again(
    emu: DiscordEmulator, connect: Connect
) -> None:
    """After INVALID_SESSION (not resumable) discord.py identifies anew and keeps working."""
    async with connect(QuickReidentifyBot(intents=content_intents())):
        (first,) = await emu.wait_connected()
        await emu.gateway.invalidate_sessions()
        (second,) = await emu.wait_connected()
        sent = await emu.say("bob", "general", "again")
        reply = await emu.wait_for_bot_message(channel="general", after=sent.id)
    assert second.id != first.id
    assert reply.content == "pong: again"


async def test_etf_encoding_is_refused(emu: DiscordEmulator) -> None:
    """The gateway speaks JSON only: an ETF client is refused before the upgrade."""
    async with aiohttp.ClientSession() as session:
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await session.ws_connect(
                emu.gateway_url + "?encoding=etf", timeout=aiohttp.ClientWSTimeout(ws_close=BOUND)
            )
    assert refused.value.status == 400

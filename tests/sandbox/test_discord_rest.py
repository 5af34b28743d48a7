"""The Discord emulator's REST API: Discord's error shapes and rate limits, over raw HTTP."""

from __future__ import annotations

import json
import zlib
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from tests.sandbox.conftest import BOUND

from actorscope.sandbox import DiscordEmulator, DiscordHttpCall
from actorscope.sandbox._rest import RateLimit as DiscordRateLimit
from actorscope.sandbox._world import Permission as DiscordPermission


class Api:
    """A bounded raw HTTP client for the emulator's ``/api/v10``."""

    def __init__(self, session: aiohttp.ClientSession, emu: DiscordEmulator) -> None:
        self.session = session
        self.emu = emu

    async def call(
        self, method: str, path: str, body: object = None, *, token: str | None = None
    ) -> tuple[int, Any, dict[str, str]]:
        """Status, parsed JSON (or None) and headers of one request."""
        auth = {"Authorization": f"Bot {token or self.emu.world.token}"}
        async with self.session.request(
            method,
            self.emu.api_url + path,
            json=body,
            headers=auth,
            timeout=aiohttp.ClientTimeout(total=BOUND),
        ) as response:
            data = await response.json() if response.status != 204 else None
            return response.status, data, dict(response.headers)


@pytest.fixture
async def api(emu: DiscordEmulator) -> AsyncIterator[Api]:
    """A raw client of ``emu``."""
    async with aiohttp.ClientSession() as session:
        yield Api(session, emu)


async def test_wrong_token_is_401(api: Api) -> None:
    """A request with a token the emulator does not know is 401 in Discord's shape."""
    status, data, _ = await api.call("GET", "/users/@me", token="nope")  # noqa: S106 - a wrong token on purpose
    assert status == 401
    assert data == {"message": "401: Unauthorized", "code": 0}


async def test_unknown_channel_is_404(api: Api) -> None:
    """Posting to a channel that does not exist is 404 Unknown Channel (10003)."""
    status, data, _ = await api.call("POST", "/channels/123/messages", {"content": "hi"})
    assert status == 404
    assert data == {"message": "Unknown Channel", "code": 10003}


async def test_missing_permissions_is_403(emu: DiscordEmulator, api: Api) -> None:
    """Where @everyone may not send, the bot's post is 403 Missing Permissions (50013)."""
    random = emu.world.channel("random")
    random.overwrites[emu.world.guild().id] = (0, int(DiscordPermission.SEND_MESSAGES))
    status, data, _ = await api.call("POST", f"/channels/{random.id}/messages", {"content": "x"})
    assert status == 403
    assert data == {"message": "Missing Permissions", "code": 50013}


async def test_too_long_content_is_400_with_field_errors(emu: DiscordEmulator, api: Api) -> None:
    """Content over 2000 characters is 400 Invalid Form Body naming the field."""
    general = emu.world.channel("general")
    status, data, _ = await api.call(
        "POST", f"/channels/{general.id}/messages", {"content": "x" * 2001}
    )
    assert status == 400
    assert data["code"] == 50035
    assert data["errors"]["content"]["_errors"][0]["code"] == "BASE_TYPE_MAX_LENGTH"


async def test_empty_message_is_400(emu: DiscordEmulator, api: Api) -> None:
    """A message with no content, embeds or components is 400 (50006)."""
    general = emu.world.channel("general")
    status, data, _ = await api.call("POST", f"/channels/{general.id}/messages", {})
    assert status == 400
    assert data["code"] == 50006


async def test_every_request_is_logged_with_its_body_and_status(
    emu: DiscordEmulator, api: Api
) -> None:
    """The REST log keeps method, path below /api/v10, the JSON body read and the status."""
    general = emu.world.channel("general")
    await api.call("POST", f"/channels/{general.id}/messages", {"content": "hi"})
    await api.call("GET", "/nowhere")
    assert list(emu.requests) == [
        DiscordHttpCall("POST", f"/channels/{general.id}/messages", {"content": "hi"}, 200),
        DiscordHttpCall("GET", "/nowhere", None, 404),
    ]


async def test_burst_gets_429_with_bucket_headers() -> None:
    """Past the bucket's limit a route answers 429 with retry_after and Discord's headers."""
    async with (
        DiscordEmulator(rate_limit=DiscordRateLimit(limit=2, per=60.0), wait_timeout=BOUND) as emu,
        aiohttp.ClientSession() as session,
    ):
        api = Api(session, emu)
        path = f"/channels/{emu.world.channel('general').id}/messages"
        first = await api.call("POST", path, {"content": "1"})
        second = await api.call("POST", path, {"content": "2"})
        status, data, headers = await api.call("POST", path, {"content": "3"})
    assert first[2]["X-RateLimit-Remaining"] == "1"
    assert second[2]["X-RateLimit-Remaining"] == "0"
    assert status == 429
    assert 0 < data["retry_after"] <= 60
    assert data["global"] is False
    assert headers["X-RateLimit-Remaining"] == "0"
    assert headers["X-RateLimit-Bucket"] == first[2]["X-RateLimit-Bucket"]
    assert "Via" in headers
    assert [m.content for m in emu.messages] == ["1", "2"]


async def test_each_interactions_follow_ups_have_their_own_bucket() -> None:
    """Follow-ups count per webhook id *and* token, as on Discord: answering many interactions
    at once is not throttled as one bucket (the bot's application id is every one's webhook)."""
    async with (
        DiscordEmulator(rate_limit=DiscordRateLimit(limit=1, per=60.0), wait_timeout=BOUND) as emu,
        aiohttp.ClientSession() as session,
    ):
        api = Api(session, emu)
        general = emu.world.channel("general")
        statuses = []
        for who in ("alice", "bob", "carol"):
            interaction = await emu.slash(who, general, "ask", q="hi")
            callback = f"/interactions/{interaction.id}/{interaction.token}/callback"
            follow_up = f"/webhooks/{emu.world.application_id}/{interaction.token}"
            statuses.append((await api.call("POST", callback, {"type": 5}))[0])
            statuses.append((await api.call("POST", follow_up, {"content": who}))[0])
        again = await api.call("POST", follow_up, {"content": "once more"})
    assert statuses == [200, 200] * 3
    assert again[0] == 429


async def test_gateway_bot_names_the_emulator(emu: DiscordEmulator, api: Api) -> None:
    """GET /gateway/bot answers the emulator's own websocket URL."""
    status, data, _ = await api.call("GET", "/gateway/bot")
    assert status == 200
    assert data["url"] == emu.gateway_url
    assert data["url"].startswith("ws://127.0.0.1:")


async def test_zlib_stream_frames_inflate_to_json(emu: DiscordEmulator) -> None:
    """With compress=zlib-stream every frame is binary and inflates (one stream) to JSON."""
    inflate = zlib.decompressobj()
    async with (
        aiohttp.ClientSession() as session,
        session.ws_connect(emu.gateway_url + "?v=10&encoding=json&compress=zlib-stream") as ws,
    ):
        await ws.send_str(json.dumps({"op": 1, "d": None}))
        payloads = []
        for _ in range(2):
            msg = await ws.receive(timeout=BOUND)
            assert msg.type is aiohttp.WSMsgType.BINARY
            assert msg.data.endswith(b"\x00\x00\xff\xff")
            payloads.append(json.loads(inflate.decompress(msg.data)))
    assert [p["op"] for p in payloads] == [10, 11]

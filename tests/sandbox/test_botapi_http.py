"""The emulator over real loopback HTTP: raw requests and a PTB bot with HTTPXRequest."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator

import httpx
import pytest
from telegram import Update
from telegram.ext import ApplicationBuilder, ContextTypes, MessageHandler, filters
from tests._wait import wait_until
from tests._world import devs_forum

from actorscope.sandbox import BotApiEmulator, BotApiError, BotApiServer


@pytest.fixture
def emu() -> BotApiEmulator:
    """The shared @devs forum (tests/_world.py): topic "ideas" (thread 2), alice and bob."""
    return devs_forum(BotApiEmulator(max_poll_timeout=5.0))


@pytest.fixture
async def server(emu: BotApiEmulator) -> AsyncIterator[BotApiServer]:
    """The emulator served on an ephemeral loopback port."""
    async with BotApiServer(emu, port=0) as running:
        yield running


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    """A plain HTTP client (closed afterwards)."""
    async with httpx.AsyncClient(timeout=5.0) as http:
        yield http


def url(server: BotApiServer, method: str) -> str:
    return f"{server.base_url}{server.emulator.token}/{method}"


async def test_server_binds_loopback_on_an_ephemeral_port(server: BotApiServer) -> None:
    """Port 0 picks a free port on 127.0.0.1, and base_url names it."""
    assert server.port > 0
    assert server.base_url == f"http://127.0.0.1:{server.port}/bot"


async def test_json_form_multipart_and_query_bodies(
    server: BotApiServer, client: httpx.AsyncClient
) -> None:
    """The same call works as JSON, urlencoded form, multipart form and query string."""
    devs = server.emulator.state.chat("@devs").id
    as_json = await client.post(url(server, "sendMessage"), json={"chat_id": devs, "text": "j"})
    as_form = await client.post(
        url(server, "sendMessage"),
        data={"chat_id": str(devs), "text": "f", "message_thread_id": "2"},
    )
    as_multipart = await client.post(
        url(server, "sendMessage"),
        data={"chat_id": str(devs), "text": "m"},
        files={"thumbnail": ("t.bin", b"1234", "application/octet-stream")},
    )
    as_query = await client.get(url(server, "sendMessage"), params={"chat_id": devs, "text": "q"})
    for response in (as_json, as_form, as_multipart, as_query):
        assert response.status_code == 200, response.text
        assert response.headers["content-type"].startswith("application/json")
    assert [m["text"] for m in server.emulator.sent_messages()] == ["j", "f", "m", "q"]
    assert as_form.json()["result"]["message_thread_id"] == 2
    multipart_call = server.emulator.calls_to("sendMessage")[2]
    assert multipart_call.params["thumbnail"] == {
        "filename": "t.bin",
        "mime_type": "application/octet-stream",
        "size": 4,
    }


async def test_http_errors_look_like_the_bot_api(
    server: BotApiServer, client: httpx.AsyncClient
) -> None:
    """Unknown methods, bad bodies, wrong tokens and stray paths get Bot API error JSON."""
    unknown = await client.post(url(server, "fly"), json={})
    assert (unknown.status_code, unknown.json()) == (
        404,
        {"ok": False, "error_code": 404, "description": "Not Found: method not found"},
    )
    bad_json = await client.post(
        url(server, "getMe"), content=b"{nope", headers={"content-type": "application/json"}
    )
    assert bad_json.status_code == 400
    assert bad_json.json()["description"] == "Bad Request: can't parse JSON body"
    bad_param = await client.post(url(server, "getUpdates"), data={"limit": "many"})
    assert bad_param.status_code == 400
    assert bad_param.json()["description"] == "Bad Request: parameter 'limit' must be an integer"
    wrong_token = await client.post(f"{server.base_url}1:nope/getMe")
    assert wrong_token.status_code == 401
    stray = await client.get(f"http://127.0.0.1:{server.port}/robots.txt")
    assert stray.status_code == 404
    assert stray.json()["ok"] is False


async def test_stop_ends_a_waiting_long_poll(emu: BotApiEmulator) -> None:
    """Stopping the server answers a pending long poll at once and closes the port."""
    server = BotApiServer(emu)
    await server.start()
    port = server.port
    async with httpx.AsyncClient(timeout=10.0) as http:
        poll = asyncio.create_task(http.post(url(server, "getUpdates"), json={"timeout": 30}))
        await wait_until(lambda: bool(emu.calls_to("getUpdates")))
        started = time.monotonic()
        await asyncio.wait_for(server.stop(), 5.0)
        response = await asyncio.wait_for(poll, 5.0)
        assert time.monotonic() - started < 3.0
        assert response.json() == {"ok": True, "result": []}
        with pytest.raises(httpx.ConnectError):
            await http.get(f"http://127.0.0.1:{port}/bot{emu.token}/getMe")


async def test_client_gone_mid_body_is_no_server_error(
    server: BotApiServer, caplog: pytest.LogCaptureFixture
) -> None:
    """A client that closes the connection halfway through a body leaves no error log."""
    caplog.set_level(logging.DEBUG)
    _, writer = await asyncio.open_connection("127.0.0.1", server.port)
    head = (
        f"POST /bot{server.emulator.token}/getUpdates HTTP/1.1\r\nHost: x\r\n"
        "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\n"
    )
    writer.write(head.encode() + b"timeout=")
    await writer.drain()
    writer.close()
    await writer.wait_closed()
    handled = {"actorscope.sandbox.telegram", "aiohttp.server"}
    await wait_until(lambda: any(r.name in handled for r in caplog.records))
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


def test_port_out_of_range_is_refused(emu: BotApiEmulator) -> None:
    """A port outside 0..65535 is refused before anything binds."""
    with pytest.raises(BotApiError, match="out of range"):
        BotApiServer(emu, port=70000)


async def test_ptb_application_polls_over_http(emu: BotApiEmulator, server: BotApiServer) -> None:
    """A real PTB bot with the default HTTPXRequest long-polls and replies in the topic."""
    seen: list[str] = []

    async def echo(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.effective_message is not None
        seen.append(update.effective_message.text or "")
        await update.effective_message.reply_text("pong")

    app = ApplicationBuilder().token(emu.token).base_url(server.base_url).build()
    app.add_handler(MessageHandler(filters.TEXT, echo))
    async with app:
        await app.start()
        assert app.updater is not None
        await app.updater.start_polling(poll_interval=0.0, timeout=1)
        try:
            await wait_until(lambda: bool(emu.calls_to("getUpdates")))
            started = time.monotonic()
            emu.user_message("alice", "ping", "@devs", topic="ideas")
            await wait_until(lambda: bool(emu.sent_messages()))
            assert time.monotonic() - started < 3.0
        finally:
            await asyncio.wait_for(app.updater.stop(), 10.0)
            await asyncio.wait_for(app.stop(), 10.0)
    assert seen == ["ping"]
    (call,) = emu.calls_to("sendMessage")
    assert call.params["chat_id"] == emu.state.chat("@devs").id
    assert call.params["message_thread_id"] == 2
    assert call.params["text"] == "pong"
    assert json.loads(json.dumps(call.result))["is_topic_message"] is True
    assert [c.method for c in emu.calls[:2]] == ["getMe", "deleteWebhook"]

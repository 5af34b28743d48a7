"""Webhook delivery: the served emulator POSTs updates to the bot's webhook through a route."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web
from tests._wait import wait_until

from actorscope._aio import Site
from actorscope.sandbox import BotApiEmulator, BotApiError, BotApiServer

JSON = dict[str, Any]


class Receiver:
    """The bot's webhook server: records each POST; answers ``statuses`` in turn, then 200."""

    def __init__(self, statuses: list[int] | None = None) -> None:
        self.posts: list[tuple[str, JSON, str | None]] = []
        self.statuses = list(statuses or [])
        self.site = Site()

    async def handle(self, request: web.Request) -> web.Response:
        body = json.loads(await request.read())
        secret = request.headers.get("X-Telegram-Bot-Api-Secret-Token")
        self.posts.append((request.path, body, secret))
        return web.Response(status=self.statuses.pop(0) if self.statuses else 200)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.site.port}"


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    """A webhook receiver on a free loopback port."""
    hook = Receiver()
    app = web.Application()
    app.router.add_post("/{tail:.*}", hook.handle)
    await hook.site.start(app, "127.0.0.1", 0, shutdown_timeout=1.0)
    try:
        yield hook
    finally:
        await hook.site.stop()


@pytest.fixture
def emu() -> BotApiEmulator:
    """An emulator with alice."""
    emu = BotApiEmulator()
    emu.state.add_user("Alice", username="alice")
    return emu


async def set_webhook(emu: BotApiEmulator, url: str, **params: Any) -> None:
    response = await emu.call("setWebhook", {"url": url, **params})
    assert response.ok, response.body


async def test_updates_are_posted_in_order_with_the_secret(
    emu: BotApiEmulator, receiver: Receiver
) -> None:
    """While a webhook is set, each update is POSTed (secret header included) and confirmed."""
    routes = {"https://bot.example.com": receiver.url}
    async with BotApiServer(emu, webhook_routes=routes):
        await set_webhook(emu, "https://bot.example.com/tg/hook", secret_token="s3cret")  # noqa: S106
        first = emu.user_message("alice", "one")
        second = emu.user_message("alice", "two")
        await wait_until(lambda: len(receiver.posts) == 2)
        await wait_until(lambda: emu.queue.pending() == [])
    assert receiver.posts == [
        ("/tg/hook", first, "s3cret"),
        ("/tg/hook", second, "s3cret"),
    ]


async def test_a_failed_delivery_is_retried_and_reported(emu: BotApiEmulator) -> None:
    """A non-2xx answer leaves the update pending, reported by getWebhookInfo, and retried."""
    hook = Receiver(statuses=[500])
    app = web.Application()
    app.router.add_post("/{tail:.*}", hook.handle)
    await hook.site.start(app, "127.0.0.1", 0, shutdown_timeout=1.0)
    try:
        async with BotApiServer(emu, webhook_routes={"https://b.example": hook.url}):
            await set_webhook(emu, "https://b.example/hook")
            emu.user_message("alice", "retry me")
            await wait_until(lambda: len(hook.posts) == 2)
            await wait_until(lambda: emu.queue.pending() == [])
            info = (await emu.call("getWebhookInfo")).body["result"]
    finally:
        await hook.site.stop()
    assert hook.posts[0] == hook.posts[1]
    assert info["last_error_message"] == "Wrong response from the webhook: 500"


async def test_no_route_keeps_the_updates_and_says_why(emu: BotApiEmulator) -> None:
    """A webhook the sandbox cannot reach: updates wait and getWebhookInfo names the URL."""
    async with BotApiServer(emu):
        await set_webhook(emu, "https://nowhere.example/hook")
        emu.user_message("alice", "anyone?")

        def reported() -> bool:
            return emu.context.setup.webhook_error is not None

        await wait_until(reported)
        info = (await emu.call("getWebhookInfo")).body["result"]
    assert info["pending_update_count"] == 1
    assert info["last_error_message"] == (
        "the sandbox has no route to https://nowhere.example/hook"
    )


async def test_set_webhook_allowed_updates_filter_what_is_delivered(
    emu: BotApiEmulator,
) -> None:
    """allowed_updates given to setWebhook choose the update types, as getUpdates' do."""
    await set_webhook(emu, "https://b.example/hook", allowed_updates=["callback_query"])
    assert emu.user_message("alice", "not wanted") is None


@pytest.mark.parametrize(
    ("url", "error"),
    [
        ("http://b.example/hook", "An HTTPS URL must be provided for webhook"),
        ("https://b.example:8080/hook", "only on ports 80, 88, 443 or 8443"),
    ],
)
async def test_set_webhook_refuses_what_telegram_refuses(
    emu: BotApiEmulator, url: str, error: str
) -> None:
    """setWebhook needs HTTPS on one of Telegram's four ports."""
    response = await emu.call("setWebhook", {"url": url})
    assert response.status == 400
    assert error in response.body["description"]


@pytest.mark.parametrize(
    ("routes", "error"),
    [
        ({"http://b.example": "http://127.0.0.1:1"}, "is no HTTPS URL"),
        ({"https://b.example": "http://10.0.0.1:80"}, "is not on 127.0.0.1"),
    ],
)
def test_routes_lead_to_loopback_only(
    emu: BotApiEmulator, routes: dict[str, str], error: str
) -> None:
    """A route maps a public HTTPS URL to 127.0.0.1: the sandbox never posts anywhere else."""
    with pytest.raises(BotApiError, match=error):
        BotApiServer(emu, webhook_routes=routes)

"""Deliver updates to the bot's webhook, as Telegram does, through a loopback route.

A bot sets a public HTTPS URL (``https://bot.example.com/telegram``); in front of the bot a
proxy terminates TLS and forwards to the bot's own server. The emulator is offline and never
leaves 127.0.0.1, so it is given that proxy's routes: each public base URL with the loopback
base URL standing in for it (``{"https://bot.example.com": "http://127.0.0.1:8000"}``).

While a webhook is set, pending updates are POSTed one at a time, oldest first, as JSON with
``X-Telegram-Bot-Api-Secret-Token`` when the bot gave a secret. A 2xx answer confirms the
update; anything else (or no answer) is retried with a growing delay, and ``getWebhookInfo``
reports the last error, as on Telegram.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Mapping
from urllib.parse import urlsplit

import aiohttp

from actorscope.sandbox._telegram.emulator import BotApiEmulator
from actorscope.sandbox._telegram.errors import BotApiError

__all__ = ["WebhookDelivery", "checked_routes"]

_log = logging.getLogger("actorscope.sandbox.telegram")
_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
#: How long one delivery may take, and the retry delays (doubling up to the last).
_POST_TIMEOUT = 10.0
_FIRST_RETRY = 0.05
_LAST_RETRY = 1.0


def checked_routes(routes: Mapping[str, str]) -> dict[str, str]:
    """``routes`` without trailing slashes, each an HTTPS base mapped to a loopback base."""
    checked: dict[str, str] = {}
    for public, local in routes.items():
        if urlsplit(public).scheme != "https" or not urlsplit(public).hostname:
            raise BotApiError(400, f"Bad Request: webhook route {public!r} is no HTTPS URL")
        target = urlsplit(local)
        if target.scheme not in ("http", "https") or target.hostname not in _LOOPBACK:
            raise BotApiError(
                400, f"Bad Request: webhook route target {local!r} is not on 127.0.0.1"
            )
        checked[public.rstrip("/")] = local.rstrip("/")
    return checked


class WebhookDelivery:
    """POSTs an emulator's pending updates to the bot's webhook while one is set."""

    def __init__(self, emulator: BotApiEmulator, routes: Mapping[str, str]) -> None:
        self.emulator = emulator
        self.routes = checked_routes(routes)
        self._task: asyncio.Task[None] | None = None

    def route(self, url: str) -> str | None:
        """The loopback URL standing in for the webhook ``url`` (``None``: no route)."""
        for public, local in self.routes.items():
            if url == public or url.startswith(public + "/"):
                return local + url[len(public) :]
        return None

    def start(self) -> None:
        """Start delivering in the background."""
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="actorscope-webhook-delivery")

    async def stop(self) -> None:
        """Stop delivering (an update being POSTed stays pending)."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _run(self) -> None:
        queue = self.emulator.queue
        delay = _FIRST_RETRY
        async with aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=_POST_TIMEOUT)
        ) as session:
            while not queue.closed:
                hook = self.emulator.webhook
                pending = queue.pending()
                if not hook.get("url") or not pending:
                    await queue.changed()
                    continue
                target = self.route(hook["url"])
                if target is None:
                    self._failed(f"the sandbox has no route to {hook['url']}")
                    await queue.changed()
                    continue
                update = pending[0]
                if await self._post(session, target, hook.get("secret_token", ""), update):
                    queue.confirm(update["update_id"])
                    delay = _FIRST_RETRY
                    continue
                # Wait before the retry, or less when the webhook or the queue changes.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(queue.changed(), delay)
                delay = min(delay * 2, _LAST_RETRY)

    async def _post(
        self, session: aiohttp.ClientSession, target: str, secret: str, update: dict[str, object]
    ) -> bool:
        headers = {"Content-Type": "application/json"}
        if secret:
            headers["X-Telegram-Bot-Api-Secret-Token"] = secret
        try:
            async with session.post(target, data=json.dumps(update), headers=headers) as response:
                if 200 <= response.status < 300:
                    return True
                self._failed(f"Wrong response from the webhook: {response.status}")
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            self._failed(f"Connection failed: {exc.__class__.__name__}")
        return False

    def _failed(self, message: str) -> None:
        setup = self.emulator.context.setup
        if setup.webhook_error is None or setup.webhook_error[1] != message:
            _log.debug("botapi.webhook_failed %s", message)
        setup.webhook_error = (self.emulator.state.now(), message)

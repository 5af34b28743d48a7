"""Telegram webhook mode: the ``[telegram]`` webhook settings and a small aiohttp receiver.

The keys and how several workers share one URL: docs/reference/config.md, "Webhook mode".
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import TracebackType
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from aiohttp import web
from pydantic import BeforeValidator

from actorscope._aio import Site
from actorscope._input import non_empty_text
from actorscope.errors import ConfigError

__all__ = [
    "DEFAULT_LISTEN",
    "SECRET_HEADER",
    "Fed",
    "HttpsUrl",
    "ListenHost",
    "Mode",
    "UrlPath",
    "Webhook",
    "WebhookConfig",
    "WebhookServer",
    "default_path",
    "https_url",
    "listen_host",
    "url_path",
]

_log = logging.getLogger("actorscope.channels.telegram")

DEFAULT_LISTEN = "127.0.0.1"
#: The header Telegram sends the ``secret_token`` of ``setWebhook`` in.
SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"  # noqa: S105 - a header name
Mode = Literal["polling", "webhook"]

_SECRET = re.compile(r"[A-Za-z0-9_-]{1,256}")
_HOSTNAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?")
_PATH = re.compile(r"/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*")
_SHUTDOWN_TIMEOUT = 2.0


class Fed(StrEnum):
    """What became of one webhook request's update."""

    ACCEPTED = "accepted"  # queued for processing: 200
    NOT_AN_UPDATE = "not_an_update"  # a JSON object that is no update: 400
    BUSY = "busy"  # too many queued: 503, so Telegram delivers it again later


_STATUS = {Fed.ACCEPTED: 200, Fed.NOT_AN_UPDATE: 400, Fed.BUSY: 503}
Feed = Callable[[Mapping[str, Any]], Awaitable[Fed]]


def https_url(value: Any) -> str:
    """``webhook_url``: a public ``https://`` URL with a host and no fragment."""
    url = non_empty_text(value)
    parts = urlsplit(url)
    if parts.scheme != "https" or not parts.hostname or parts.fragment:
        raise ValueError(f"must be an https:// URL, got {url!r}")
    return url


def listen_host(value: Any) -> str:
    """``listen``: an IP address or a host name."""
    host = non_empty_text(value)
    try:
        ipaddress.ip_address(host)
    except ValueError:
        if not _HOSTNAME.fullmatch(host):
            raise ValueError(f"must be an IP address or host name, got {host!r}") from None
    return host


def url_path(value: Any) -> str:
    """``path``: a URL path starting with ``/``."""
    path = non_empty_text(value)
    if not _PATH.fullmatch(path):
        raise ValueError(f"must start with '/' and be a URL path, got {path!r}")
    return path


#: ``webhook_url``, ``listen`` and ``path`` as pydantic types (``port`` is ``_input.Port``).
HttpsUrl = Annotated[str, BeforeValidator(https_url)]
ListenHost = Annotated[str, BeforeValidator(listen_host)]
UrlPath = Annotated[str, BeforeValidator(url_path)]


def default_path(url: str) -> str:
    """Where the receiver listens when ``path`` is not given: the path of ``url``."""
    return urlsplit(url).path or "/"


@dataclass(frozen=True, slots=True)
class Webhook:
    """Resolved webhook settings, the secret included (never shown by ``repr``)."""

    url: str
    secret_token: str = field(repr=False)
    listen: str = DEFAULT_LISTEN
    port: int = 0
    path: str = "/"
    set_webhook: bool | None = None


@dataclass(frozen=True, slots=True)
class WebhookConfig:
    """What the ``[telegram]`` section says about webhook mode (the secret is a variable name)."""

    url: str
    secret_token_env: str
    port: int
    listen: str = DEFAULT_LISTEN
    path: str = "/"
    set_webhook: bool | None = None

    def resolve(self, env: Mapping[str, str], where: str = "telegram") -> Webhook:
        """The settings with the secret read from the environment; one clear error if unset."""
        secret = env.get(self.secret_token_env, "").strip()
        if not secret:
            raise ConfigError(
                f"{where}: environment variable {self.secret_token_env} is not set "
                "(the webhook secret token)"
            )
        if not _SECRET.fullmatch(secret):
            raise ConfigError(
                f"{where}: the webhook secret token in {self.secret_token_env} must be 1-256 "
                "characters A-Z, a-z, 0-9, _ or -"
            )
        return Webhook(
            url=self.url,
            secret_token=secret,
            listen=self.listen,
            port=self.port,
            path=self.path,
            set_webhook=self.set_webhook,
        )


def _text_response(status: int, text: str) -> web.Response:
    return web.Response(status=status, text=text)


class WebhookServer:
    """Receives Telegram's webhook POSTs and hands each update to ``feed`` (a context manager).

    ``feed(update)`` says what became of it (:class:`Fed`), which sets the HTTP status.
    """

    def __init__(self, webhook: Webhook, feed: Feed) -> None:
        self.webhook = webhook
        self._feed = feed
        self._secret = webhook.secret_token.encode()
        self._site = Site()

    @property
    def port(self) -> int:
        """The bound port (known once started; useful with ``port = 0``)."""
        if self._site.port is None:
            raise ConfigError("the webhook server is not running")
        return self._site.port

    @property
    def local_url(self) -> str:
        """Where this worker receives updates (what the proxy forwards to)."""
        return f"http://{self.webhook.listen}:{self.port}{self.webhook.path}"

    async def start(self) -> None:
        """Bind ``listen:port`` and start answering."""
        if self._site.running:
            raise ConfigError("the webhook server is already running")
        app = web.Application()
        app.router.add_post(self.webhook.path, self._receive)
        try:
            await self._site.start(
                app, self.webhook.listen, self.webhook.port, shutdown_timeout=_SHUTDOWN_TIMEOUT
            )
        except OSError as exc:
            raise ConfigError(
                f"cannot listen on {self.webhook.listen}:{self.webhook.port}: {exc.strerror}"
            ) from None
        _log.info("telegram.webhook_listening url=%s", self.local_url)

    async def stop(self) -> None:
        """Close the socket and every connection; safe to call twice."""
        await self._site.stop()

    async def __aenter__(self) -> WebhookServer:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    async def _receive(self, request: web.Request) -> web.Response:
        given = request.headers.get(SECRET_HEADER, "").encode()
        if not hmac.compare_digest(given, self._secret):
            _log.warning("telegram.webhook_rejected remote=%s: bad secret", request.remote)
            return _text_response(403, "forbidden")
        try:
            data = json.loads(await request.read())
        except (ValueError, RecursionError):
            return _text_response(400, "the body is not JSON")
        if not isinstance(data, dict):
            return _text_response(400, "the body is not a JSON object")
        fed = await self._feed(data)
        return _text_response(_STATUS[fed], fed.value)

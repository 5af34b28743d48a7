"""Telegram webhook mode: the ``[telegram]`` webhook settings and a small aiohttp receiver.

::

    [telegram]
    mode = "webhook"                          # or "polling" (the default)
    webhook_url = "https://bots.example.com/tg"
    secret_token_env = "TELEGRAM_WEBHOOK_SECRET"
    listen = "127.0.0.1"                      # where this worker listens (behind the proxy)
    port = 8081                               # each worker on a host takes its own port
    path = "/tg"                              # defaults to webhook_url's path
    set_webhook = true                        # omit: decided by the shared store (see below)

Several workers can sit behind one URL. Each checks the ``X-Telegram-Bot-Api-Secret-Token``
header (a request without the configured secret gets 403, before its body is read), parses the
update and hands it to the runner, which puts it on the same queue polling fills: one update
goes through normalisation, admission, the duplicate filters and the bus exactly as it would
when polled. Only one worker should call ``setWebhook``: ``set_webhook = true`` or ``false``
says so explicitly; left out, the first worker to claim the (url, secret) pair in the shared
store calls it, and without a shared store the worker calls it itself.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
import re
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import TracebackType
from typing import Any, Literal
from urllib.parse import urlsplit

from aiohttp import web

from actorscope._aio import Site
from actorscope.errors import ConfigError

__all__ = [
    "DEFAULT_LISTEN",
    "SECRET_HEADER",
    "WEBHOOK_KEYS",
    "Fed",
    "Webhook",
    "WebhookConfig",
    "WebhookServer",
    "telegram_mode",
]

_log = logging.getLogger("actorscope.channels.telegram")

DEFAULT_LISTEN = "127.0.0.1"
#: The header Telegram sends the ``secret_token`` of ``setWebhook`` in.
SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"  # noqa: S105 - a header name
Mode = Literal["polling", "webhook"]

_MODES: tuple[Mode, ...] = ("polling", "webhook")
_KEYS = ("webhook_url", "secret_token_env", "listen", "port", "path", "set_webhook")
#: The ``[telegram]`` keys this module reads (besides the ChannelConfig ones).
WEBHOOK_KEYS = frozenset({"mode", *_KEYS})
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
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


def telegram_mode(data: Mapping[str, Any], where: str) -> Mode:
    """The section's ``mode`` (``polling`` when absent)."""
    mode = data.get("mode", "polling")
    if mode not in _MODES:
        raise ConfigError(f'{where}: mode must be "polling" or "webhook", got {mode!r}')
    return "webhook" if mode == "webhook" else "polling"


def _text(data: Mapping[str, Any], key: str, where: str) -> str:
    value = data[key]
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where}: {key} must be a non-empty string, got {value!r}")
    return value.strip()


def _url(data: Mapping[str, Any], where: str) -> str:
    if "webhook_url" not in data:
        raise ConfigError(f'{where}: mode = "webhook" needs webhook_url (the public https URL)')
    url = _text(data, "webhook_url", where)
    parts = urlsplit(url)
    if parts.scheme != "https" or not parts.hostname or parts.fragment:
        raise ConfigError(f"{where}: webhook_url must be an https:// URL, got {url!r}")
    return url


def _secret_env(data: Mapping[str, Any], where: str) -> str:
    if "secret_token_env" not in data:
        raise ConfigError(
            f'{where}: mode = "webhook" needs secret_token_env (the variable holding the '
            "webhook secret token)"
        )
    name = _text(data, "secret_token_env", where)
    if not _ENV_NAME.fullmatch(name):
        raise ConfigError(f"{where}: secret_token_env {name!r} is not a variable name")
    return name


def _listen(data: Mapping[str, Any], where: str) -> str:
    if "listen" not in data:
        return DEFAULT_LISTEN
    host = _text(data, "listen", where)
    try:
        ipaddress.ip_address(host)
    except ValueError:
        if not _HOSTNAME.fullmatch(host):
            raise ConfigError(
                f"{where}: listen must be an IP address or host name, got {host!r}"
            ) from None
    return host


def _port(data: Mapping[str, Any], where: str) -> int:
    if "port" not in data:
        raise ConfigError(f'{where}: mode = "webhook" needs port (where this worker listens)')
    port = data["port"]
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise ConfigError(f"{where}: port must be an integer from 0 to 65535, got {port!r}")
    return port


def _path(data: Mapping[str, Any], url: str, where: str) -> str:
    if "path" not in data:
        return urlsplit(url).path or "/"
    path = _text(data, "path", where)
    if not _PATH.fullmatch(path):
        raise ConfigError(f"{where}: path must start with '/' and be a URL path, got {path!r}")
    return path


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

    @classmethod
    def pop_from(cls, data: MutableMapping[str, Any], where: str) -> WebhookConfig | None:
        """Remove ``mode`` and the webhook keys from ``data``; the config in webhook mode."""
        mode = telegram_mode(data, where)
        data.pop("mode", None)
        given = {key: data.pop(key) for key in _KEYS if key in data}
        if mode == "polling":
            if given:
                raise ConfigError(f'{where}: {next(iter(given))} needs mode = "webhook"')
            return None
        set_webhook = given.get("set_webhook")
        if set_webhook is not None and not isinstance(set_webhook, bool):
            raise ConfigError(f"{where}: set_webhook must be true or false, got {set_webhook!r}")
        url = _url(given, where)
        return cls(
            url=url,
            secret_token_env=_secret_env(given, where),
            port=_port(given, where),
            listen=_listen(given, where),
            path=_path(given, url, where),
            set_webhook=set_webhook,
        )

    def resolve(self, env: Mapping[str, str], where: str = "[telegram]") -> Webhook:
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

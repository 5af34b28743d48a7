"""``[telegram]`` of ``bot.toml``: the channel keys, ``enabled``, ``base_url`` and webhook mode."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, Self

from pydantic import model_validator

from actorscope._input import EnvName, Flag, HttpServiceUrl, Port
from actorscope.channels._config import ChannelSection
from actorscope.channels.telegram._webhook import (
    DEFAULT_LISTEN,
    HttpsUrl,
    ListenHost,
    Mode,
    UrlPath,
    WebhookConfig,
    default_path,
)

__all__ = ["TelegramSection"]

_WEBHOOK_KEYS = ("webhook_url", "secret_token_env", "listen", "port", "path", "set_webhook")
_WEBHOOK_NEEDS = (
    ("webhook_url", "the public https URL"),
    ("secret_token_env", "the variable holding the webhook secret token"),
    ("port", "where this worker listens"),
)


class TelegramSection(ChannelSection):
    """``[telegram]``: the :class:`~actorscope.channels.ChannelConfig` keys, ``enabled``, and
    webhook mode.

    ``mode = "webhook"`` needs ``webhook_url``, ``secret_token_env`` and ``port`` (see
    "Webhook mode" below); in polling mode those keys are errors.
    ``base_url`` points the bot at another Bot API server (a local one:
    ``http://127.0.0.1:8081/bot``; plain ``http`` only on this host).
    """

    token_keys = frozenset({"base_url"})
    platform: Literal["telegram"] = "telegram"
    base_url: HttpServiceUrl | None = None
    mode: Mode = "polling"
    webhook_url: HttpsUrl | None = None
    secret_token_env: EnvName | None = None
    listen: ListenHost | None = None
    port: Port | None = None
    path: UrlPath | None = None
    set_webhook: Flag | None = None

    @model_validator(mode="after")
    def _webhook_keys(self) -> Self:
        if self.mode == "polling":
            given = [key for key in _WEBHOOK_KEYS if key in self.model_fields_set]
            if given:
                raise ValueError(f'{given[0]} needs mode = "webhook"')
        else:
            for key, what in _WEBHOOK_NEEDS:
                if key not in self.model_fields_set:
                    raise ValueError(f'mode = "webhook" needs {key} ({what})')
        return self

    def runner_options(self, env: Mapping[str, str], source: str = "") -> dict[str, Any]:
        """``base_url``, and the ``webhook`` with its secret in webhook mode."""
        webhook = self.webhook
        where = f"{source}: {self.name}" if source else self.name
        return {
            "base_url": self.base_url,
            "webhook": None if webhook is None else webhook.resolve(env, where),
        }

    @property
    def webhook(self) -> WebhookConfig | None:
        """The webhook settings in webhook mode, else ``None`` (polling)."""
        if self.webhook_url is None or self.secret_token_env is None or self.port is None:
            return None
        return WebhookConfig(
            url=self.webhook_url,
            secret_token_env=self.secret_token_env,
            port=self.port,
            listen=self.listen or DEFAULT_LISTEN,
            path=self.path or default_path(self.webhook_url),
            set_webhook=self.set_webhook,
        )

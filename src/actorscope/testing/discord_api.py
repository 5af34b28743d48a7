"""Discord's side of the simulator: answers the bot's HTTP requests and interaction callbacks.

:class:`DiscordApi` stands in for ``discord.com``: it records every request the bot's
discord.py client makes (:class:`HttpCall`, ids filled into the path), reports each message the
bot sends, and answers with the message object Discord would return.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

with warnings.catch_warnings():
    # discord.py imports the deprecated stdlib ``audioop`` for voice, which nothing here uses;
    # a project's ``filterwarnings = error`` must not make loading the pytest plugin fail.
    warnings.filterwarnings("ignore", "'audioop' is deprecated", DeprecationWarning)
    from discord.http import Route
    from discord.webhook.async_ import AsyncWebhookAdapter

from actorscope.testing.discord_payloads import (
    DiscordChannel,
    DiscordUser,
    Snowflakes,
    message_object,
)

__all__ = ["DiscordApi", "HttpCall", "InteractionAdapter", "SendListener"]

#: Interaction callback types that acknowledge without a message (deferred responses).
_DEFERRALS = frozenset({5, 6})

#: Called with (channel or None, channel id, text) for every message the bot sends.
SendListener = Callable[[DiscordChannel | None, int, str], None]


@dataclass(frozen=True, slots=True)
class HttpCall:
    """One request the bot made to Discord's HTTP API: method, path (ids filled in), JSON body."""

    method: str
    path: str
    json: Mapping[str, Any] | None


class DiscordApi:
    """Records and answers the bot's requests to Discord."""

    def __init__(
        self,
        ids: Snowflakes,
        bot: DiscordUser,
        channels: Mapping[int, DiscordChannel],
        on_send: SendListener,
    ) -> None:
        self.ids = ids
        self.bot = bot
        self.channels = channels
        self.calls: list[HttpCall] = []
        #: The channel each interaction happened in (its replies go there).
        self.interactions: dict[int, DiscordChannel] = {}
        self._on_send = on_send

    async def request(self, route: Route, **kwargs: Any) -> Any:
        """Stand-in for ``HTTPClient.request``: record, and answer a message send."""
        body = kwargs.get("json")
        self.calls.append(HttpCall(route.method, route.url.removeprefix(route.BASE), body))
        channel_id = route.channel_id
        if (
            route.method == "POST"
            and route.path == "/channels/{channel_id}/messages"
            and channel_id is not None
        ):
            channel = self.channels.get(int(channel_id))
            text = str((body or {}).get("content") or "")
            self._on_send(channel, int(channel_id), text)
            where = channel or DiscordChannel(int(channel_id), "unknown")
            return message_object(self.ids.next(), where, self.bot, text)
        if route.method == "PUT" and route.path == "/applications/{application_id}/commands":
            return []  # tree.sync(): no command is registered anywhere but in the bot
        return {}

    def webhook_request(self, route: Route, payload: Mapping[str, Any] | None) -> Any:
        """An interaction callback or follow-up: record it and return what Discord would."""
        self.calls.append(HttpCall(route.method, route.url.removeprefix(route.BASE), payload))
        body = dict(payload or {})
        if route.path.endswith("/callback"):
            interaction_id = int(route.webhook_id or 0)
            channel = self.interactions[interaction_id]
            text = str((body.get("data") or {}).get("content") or "")
            if int(body.get("type", 4)) not in _DEFERRALS:  # a deferral sends nothing yet
                self._on_send(channel, channel.id, text)
            sent = message_object(self.ids.next(), channel, self.bot, text)
            return {
                "interaction": {
                    "id": str(interaction_id),
                    "type": 2,
                    "response_message_id": sent["id"],
                    "response_message_loading": False,
                    "response_message_ephemeral": False,
                },
                "resource": {"type": int(body.get("type", 4)), "message": sent},
            }
        # A follow-up: POST /webhooks/{application id}/{interaction token}.
        token = str(route.webhook_token or "")
        interaction_id = int(token.rsplit("-", 1)[-1]) if token[-1:].isdigit() else 0
        followed = self.interactions.get(interaction_id)
        text = str(body.get("content") or "")
        self._on_send(followed, followed.id if followed else 0, text)
        return message_object(
            self.ids.next(), followed or DiscordChannel(0, "unknown"), self.bot, text
        )


class InteractionAdapter(AsyncWebhookAdapter):
    """Answers interaction callbacks and follow-ups locally, like Discord would."""

    def __init__(self, api: DiscordApi) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self._api = api

    async def request(self, route: Route, session: Any, **kwargs: Any) -> Any:
        """Record the call; answer with the message it created."""
        return self._api.webhook_request(route, kwargs.get("payload"))

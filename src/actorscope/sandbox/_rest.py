"""The emulated Discord REST API (``/api/v10``): what discord.py's calls need.

Errors have Discord's shapes: ``{"message": ..., "code": ...}`` (401, 403 Missing
Permissions, 404 Unknown Channel / Message / ...) and 400 ``Invalid Form Body`` with field
errors. Every route answers with Discord's rate-limit headers; a burst past the bucket gets
429 with ``retry_after`` (and ``Via``, which discord.py reads to tell Discord from Cloudflare).
Every request is logged as a :class:`~actorscope.sandbox.DiscordHttpCall`
(``DiscordEmulator.requests``).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from aiohttp import web

from actorscope.errors import ConfigError
from actorscope.sandbox._gateway import Gateway, Intent
from actorscope.sandbox._world import (
    EPHEMERAL,
    IS_COMPONENTS_V2,
    JSON,
    Channel,
    ChannelType,
    Guild,
    Interaction,
    Message,
    Permission,
    User,
    Webhook,
    World,
)

__all__ = ["DiscordHTTPError", "Emulated", "HttpCall", "RateLimit", "Rest"]

_MAX_CONTENT = 2000
_MAX_EMBEDS = 10
_Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
#: Where a handler leaves the JSON body it read, for the request log.
_BODY = web.RequestKey("actorscope_body", dict[str, Any])


@dataclass(frozen=True, slots=True)
class HttpCall:
    """One REST request the bot made: method, path below ``/api/v10``, the JSON body it sent
    (``payload_json`` of a multipart body; ``None`` when the route read none) and the status."""

    method: str
    path: str
    json: Mapping[str, Any] | None
    status: int


class DiscordHTTPError(Exception):
    """An error answer, in Discord's shape (raised inside a handler, turned into JSON)."""

    def __init__(self, status: int, code: int, message: str, errors: JSON | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.errors = errors

    def response(self) -> web.Response:
        body: JSON = {"message": self.message, "code": self.code}
        if self.errors is not None:
            body["errors"] = self.errors
        return _json_reply(body, status=self.status)


def _unknown(what: str, code: int) -> DiscordHTTPError:
    return DiscordHTTPError(404, code, f"Unknown {what}")


def _field_error(name: str, code: str, message: str) -> DiscordHTTPError:
    return DiscordHTTPError(
        400,
        50035,
        "Invalid Form Body",
        {name: {"_errors": [{"code": code, "message": message}]}},
    )


_MISSING_PERMISSIONS = (403, 50013, "Missing Permissions")
_UNAUTHORIZED = (401, 0, "401: Unauthorized")


#: Rate-limit windows kept before the finished ones are dropped.
_MAX_WINDOWS = 10_000


@dataclass(frozen=True, slots=True)
class RateLimit:
    """A bucket: ``limit`` requests per ``per`` seconds, per route and top-level resource."""

    limit: int = 5
    per: float = 2.0

    def __post_init__(self) -> None:
        if self.limit < 1 or self.per <= 0:
            raise ConfigError("a rate limit needs limit >= 1 and per > 0 seconds")


def _major(info: Mapping[str, str]) -> str:
    """The top-level resource a route's bucket counts per, as Discord has it: the channel, the
    guild, the webhook with its token (each interaction's follow-ups have their own), or the
    interaction."""
    for key in ("channel_id", "guild_id"):
        if key in info:
            return info[key]
    if "webhook_id" in info:
        return f"{info['webhook_id']}/{info.get('token', '')}"
    return info.get("interaction_id", "")


class _Buckets:
    def __init__(self, rule: RateLimit) -> None:
        self.rule = rule
        self._windows: dict[tuple[str, str], tuple[float, int]] = {}

    def take(self, route: str, major: str) -> tuple[dict[str, str], float | None]:
        """Count one request: the headers to answer with, and ``retry_after`` when over."""
        now = time.monotonic()
        if len(self._windows) >= _MAX_WINDOWS:
            # Forget the windows that are over (one per interaction adds up).
            self._windows = {
                key: window
                for key, window in self._windows.items()
                if now - window[0] < self.rule.per
            }
        start, used = self._windows.get((route, major), (now, 0))
        if now - start >= self.rule.per:
            start, used = now, 0
        reset_after = max(self.rule.per - (now - start), 0.001)
        bucket = hashlib.sha1(route.encode(), usedforsecurity=False).hexdigest()[:16]
        headers = {
            "X-RateLimit-Limit": str(self.rule.limit),
            "X-RateLimit-Bucket": bucket,
            "X-RateLimit-Reset-After": f"{reset_after:.3f}",
            "X-RateLimit-Reset": f"{time.time() + reset_after:.3f}",
        }
        if used >= self.rule.limit:
            headers["X-RateLimit-Remaining"] = "0"
            headers["X-RateLimit-Scope"] = "user"
            headers["Retry-After"] = str(max(int(reset_after + 0.999), 1))
            return headers, reset_after
        self._windows[(route, major)] = (start, used + 1)
        headers["X-RateLimit-Remaining"] = str(self.rule.limit - used - 1)
        return headers, None


class Emulated(Protocol):
    """What the routes use of the emulator they serve (:class:`~actorscope.sandbox.DiscordEmulator`
    has it all): its world and logs, and the changes the people and the REST side share. The
    emulator imports the routes, so the routes name this and not the emulator."""

    world: World
    gateway: Gateway
    messages: list[Message]
    typing: list[Channel]
    interactions: dict[int, Interaction]
    commands: dict[int | None, list[JSON]]
    modal_listeners: list[Callable[[Interaction], None]]
    requests: deque[HttpCall]

    @property
    def gateway_url(self) -> str: ...

    async def changed(self) -> None: ...

    def reaction_key(self, guild: Guild | None, emoji: str) -> str: ...

    async def reaction_event(self, event: str, message: Message, user: User, key: str) -> None: ...

    async def post(
        self,
        author: User,
        channel: Channel,
        content: str,
        *,
        embeds: list[JSON] | None = None,
        components: list[JSON] | None = None,
        webhook_id: int | None = None,
        reply_to: Message | None = None,
        interaction_metadata: JSON | None = None,
        ephemeral_to: User | None = None,
        flags: int = 0,
    ) -> Message: ...

    async def edit(self, message: Message, content: str) -> Message: ...

    async def delete(self, message: Message) -> None: ...

    async def webhook_post(self, hook: Webhook | str, content: str) -> Message: ...

    async def member_updated(self, guild: Guild, user: User) -> None: ...

    async def open_thread(self, who: User | str, where: Channel | str, name: str) -> Channel: ...


class Rest:
    """The REST routes of one emulator."""

    def __init__(self, emulator: Emulated, rate_limit: RateLimit) -> None:
        self.emu = emulator
        self.world = emulator.world
        self._buckets = _Buckets(rate_limit)
        self._prefix = ""
        #: The bot's requests being answered right now.
        self.in_flight = 0

    def install(self, router: web.UrlDispatcher, prefix: str) -> None:
        """Add every route under ``prefix``."""
        self._prefix = prefix
        bot = True
        routes: list[tuple[str, str, _Handler, bool]] = [
            ("GET", "/gateway", self.get_gateway, False),
            ("GET", "/gateway/bot", self.get_gateway_bot, bot),
            ("GET", "/users/@me", self.get_me, bot),
            ("GET", "/users/{user_id}", self.get_user, bot),
            ("POST", "/users/@me/channels", self.open_dm, bot),
            ("GET", "/oauth2/applications/@me", self.get_application, bot),
            ("GET", "/applications/@me", self.get_application, bot),
            ("GET", "/channels/{channel_id}", self.get_channel, bot),
            ("GET", "/channels/{channel_id}/messages", self.list_messages, bot),
            ("POST", "/channels/{channel_id}/messages", self.create_message, bot),
            ("GET", "/channels/{channel_id}/messages/{message_id}", self.get_message, bot),
            ("PATCH", "/channels/{channel_id}/messages/{message_id}", self.edit_message, bot),
            ("DELETE", "/channels/{channel_id}/messages/{message_id}", self.delete_message, bot),
            ("POST", "/channels/{channel_id}/typing", self.typing, bot),
            (
                "PUT",
                "/channels/{channel_id}/messages/{message_id}/reactions/{emoji}/@me",
                self.add_reaction,
                bot,
            ),
            (
                "DELETE",
                "/channels/{channel_id}/messages/{message_id}/reactions/{emoji}/@me",
                self.remove_reaction,
                bot,
            ),
            ("POST", "/channels/{channel_id}/threads", self.create_thread, bot),
            (
                "POST",
                "/channels/{channel_id}/messages/{message_id}/threads",
                self.create_thread,
                bot,
            ),
            ("GET", "/guilds/{guild_id}", self.get_guild, bot),
            ("GET", "/guilds/{guild_id}/channels", self.get_guild_channels, bot),
            ("POST", "/guilds/{guild_id}/channels", self.create_channel, bot),
            ("GET", "/guilds/{guild_id}/roles", self.get_roles, bot),
            ("GET", "/guilds/{guild_id}/members/{user_id}", self.get_member, bot),
            ("PATCH", "/guilds/{guild_id}/members/{user_id}", self.edit_member, bot),
            ("PUT", "/guilds/{guild_id}/members/{user_id}/roles/{role_id}", self.add_role, bot),
            (
                "DELETE",
                "/guilds/{guild_id}/members/{user_id}/roles/{role_id}",
                self.remove_role,
                bot,
            ),
            ("GET", "/applications/{app_id}/commands", self.get_commands, bot),
            ("PUT", "/applications/{app_id}/commands", self.put_commands, bot),
            ("GET", "/applications/{app_id}/guilds/{guild_id}/commands", self.get_commands, bot),
            ("PUT", "/applications/{app_id}/guilds/{guild_id}/commands", self.put_commands, bot),
            (
                "POST",
                "/interactions/{interaction_id}/{token}/callback",
                self.interaction_callback,
                False,
            ),
            ("POST", "/webhooks/{webhook_id}/{token}", self.execute_webhook, False),
            (
                "GET",
                "/webhooks/{webhook_id}/{token}/messages/{message_id}",
                self.get_webhook_message,
                False,
            ),
            (
                "PATCH",
                "/webhooks/{webhook_id}/{token}/messages/{message_id}",
                self.edit_webhook_message,
                False,
            ),
            (
                "DELETE",
                "/webhooks/{webhook_id}/{token}/messages/{message_id}",
                self.delete_webhook_message,
                False,
            ),
        ]
        for method, path, handler, needs_bot in routes:
            router.add_route(method, prefix + path, self._wrap(path, handler, needs_bot))
        router.add_route("*", prefix + "/{tail:.*}", self._not_found)

    def _wrap(self, path: str, handler: _Handler, needs_bot: bool) -> _Handler:
        async def route(request: web.Request) -> web.StreamResponse:
            if needs_bot and request.headers.get("Authorization") != f"Bot {self.world.token}":
                return DiscordHTTPError(*_UNAUTHORIZED).response()
            major = _major(request.match_info)
            headers, retry_after = self._buckets.take(f"{request.method} {path}", major)
            if retry_after is not None:
                body = {
                    "message": "You are being rate limited.",
                    "retry_after": round(retry_after, 3),
                    "global": False,
                }
                return _json_reply(body, status=429, headers=headers | {"Via": "1.1 google"})
            self.in_flight += 1
            try:
                response = await handler(request)
            except DiscordHTTPError as exc:
                response = exc.response()
            finally:
                self.in_flight -= 1
            response.headers.update(headers)
            self._log(request, response.status)
            await self.emu.changed()
            return response

        return route

    async def _not_found(self, request: web.Request) -> web.Response:
        self._log(request, 404)
        return DiscordHTTPError(404, 0, "404: Not Found").response()

    def _log(self, request: web.Request, status: int) -> None:
        body = request.get(_BODY)
        path = request.path.removeprefix(self._prefix)
        self.emu.requests.append(HttpCall(request.method, path, body, status))

    # -- helpers ----------------------------------------------------------------------------

    async def _body(self, request: web.Request) -> JSON:
        """A JSON body, or the ``payload_json`` part of a multipart body."""
        if not request.body_exists:
            return {}
        if request.content_type == "multipart/form-data":
            form = await request.post()
            raw = form.get("payload_json")
            text = raw if isinstance(raw, str) else "{}"
        else:
            text = (await request.read()).decode("utf-8", "replace")
        try:
            body = json.loads(text)
        except ValueError:
            raise DiscordHTTPError(400, 50109, "The request body contains invalid JSON.") from None
        if not isinstance(body, dict | list):
            raise DiscordHTTPError(400, 50109, "The request body contains invalid JSON.")
        parsed = body if isinstance(body, dict) else {"_list": body}
        request[_BODY] = parsed
        return parsed

    def _channel(self, request: web.Request) -> Channel:
        channel = self.world.channels.get(_snowflake(request.match_info["channel_id"]))
        if channel is None:
            raise _unknown("Channel", 10003)
        return channel

    def _guild(self, request: web.Request) -> Guild:
        guild = self.world.guilds.get(_snowflake(request.match_info["guild_id"]))
        if guild is None:
            raise _unknown("Guild", 10004)
        return guild

    def _message(self, request: web.Request, channel: Channel) -> Message:
        message = self.world.messages.get(_snowflake(request.match_info["message_id"]))
        if message is None or message.deleted or message.channel.id != channel.id:
            raise _unknown("Message", 10008)
        return message

    def _require(self, channel: Channel, *needed: Permission) -> None:
        """403 unless the bot holds every permission in ``needed`` in ``channel``."""
        guild = self.world.guild_of(channel)
        if guild is None:
            return
        have = guild.permissions_in(channel, self.world.bot.id)
        if any(not have & bit for bit in needed):
            raise DiscordHTTPError(*_MISSING_PERMISSIONS)

    def _message_fields(self, body: JSON, *, partial: bool) -> tuple[str, list[JSON], list[JSON]]:
        content = body.get("content")
        if content is None:
            content = ""
        if not isinstance(content, str):
            raise _field_error("content", "STRING_TYPE_CONVERT", "Could not interpret as string.")
        if len(content) > _MAX_CONTENT:
            raise _field_error(
                "content", "BASE_TYPE_MAX_LENGTH", f"Must be {_MAX_CONTENT} or fewer in length."
            )
        embeds = body.get("embeds") or []
        if not isinstance(embeds, list) or len(embeds) > _MAX_EMBEDS:
            raise _field_error(
                "embeds", "BASE_TYPE_MAX_LENGTH", f"Must be {_MAX_EMBEDS} or fewer in length."
            )
        components = body.get("components") or []
        if not isinstance(components, list):
            raise _field_error("components", "LIST_TYPE_CONVERT", "Must be an array.")
        if not partial and not (content or embeds or components):
            raise DiscordHTTPError(400, 50006, "Cannot send an empty message")
        if _flags(body) & IS_COMPONENTS_V2 and (content or embeds):
            raise _field_error(
                "content",
                "MESSAGE_CANNOT_USE_LEGACY_FIELDS_WITH_COMPONENTS_V2",
                "The 'content' and 'embeds' fields cannot be used with components v2.",
            )
        return content, embeds, components

    def _json(self, message: Message, status: int = 200) -> web.Response:
        guild = self.world.guild_of(message.channel)
        return _json_reply(message.to_json(guild, bot_id=self.world.bot.id), status=status)

    # -- gateway, users, application --------------------------------------------------------

    async def get_gateway(self, request: web.Request) -> web.Response:
        return _json_reply({"url": self.emu.gateway_url})

    async def get_gateway_bot(self, request: web.Request) -> web.Response:
        return _json_reply(
            {
                "url": self.emu.gateway_url,
                "shards": 1,
                "session_start_limit": {
                    "total": 1000,
                    "remaining": 1000,
                    "reset_after": 0,
                    "max_concurrency": 16,
                },
            }
        )

    async def get_me(self, request: web.Request) -> web.Response:
        return _json_reply(self.world.bot.to_json() | {"verified": True, "mfa_enabled": False})

    async def get_user(self, request: web.Request) -> web.Response:
        user = self.world.users.get(_snowflake(request.match_info["user_id"]))
        if user is None:
            raise _unknown("User", 10013)
        return _json_reply(user.to_json())

    async def open_dm(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        user = self.world.users.get(_snowflake(str(body.get("recipient_id", ""))))
        if user is None:
            raise _field_error("recipient_id", "NUMBER_TYPE_COERCE", "Value is not a snowflake.")
        return _json_reply(self.world.dm_channel(user).to_json())

    async def get_application(self, request: web.Request) -> web.Response:
        owner = next(iter(self.world.guilds.values()), None)
        owner_user = self.world.users.get(owner.owner_id) if owner else None
        return _json_reply(
            {
                "id": str(self.world.application_id),
                "name": self.world.bot.username,
                "description": "an actorscope sandbox application",
                "icon": None,
                "rpc_origins": [],
                "bot_public": False,
                "bot_require_code_grant": False,
                "owner": (owner_user or self.world.bot).to_json(),
                "team": None,
                "verify_key": "0" * 64,
                "flags": 0,
                "summary": "",
                "bot": self.world.bot.to_json(),
                "interactions_endpoint_url": None,
                "redirect_uris": [],
                "approximate_guild_count": len(self.world.guilds),
            }
        )

    # -- channels and messages -------------------------------------------------------------

    async def get_channel(self, request: web.Request) -> web.Response:
        return _json_reply(self._channel(request).to_json())

    async def list_messages(self, request: web.Request) -> web.Response:
        channel = self._channel(request)
        self._require(channel, Permission.VIEW_CHANNEL, Permission.READ_MESSAGE_HISTORY)
        limit = _snowflake(request.query.get("limit", "50")) or 50
        found = [m for m in self.emu.messages if m.channel.id == channel.id and not m.deleted]
        guild = self.world.guild_of(channel)
        newest = list(reversed(found))[: min(limit, 100)]
        return _json_reply([m.to_json(guild, bot_id=self.world.bot.id) for m in newest])

    async def get_message(self, request: web.Request) -> web.Response:
        channel = self._channel(request)
        self._require(channel, Permission.VIEW_CHANNEL, Permission.READ_MESSAGE_HISTORY)
        return self._json(self._message(request, channel))

    async def create_message(self, request: web.Request) -> web.Response:
        channel = self._channel(request)
        send = (
            Permission.SEND_MESSAGES_IN_THREADS if channel.is_thread else Permission.SEND_MESSAGES
        )
        self._require(channel, Permission.VIEW_CHANNEL, send)
        body = await self._body(request)
        content, embeds, components = self._message_fields(body, partial=False)
        reply_to = None
        reference = body.get("message_reference")
        if isinstance(reference, dict) and reference.get("message_id") is not None:
            reply_to = self.world.messages.get(_snowflake(str(reference["message_id"])))
            if reply_to is None and reference.get("fail_if_not_exists", True):
                raise _field_error(
                    "message_reference", "MESSAGE_REFERENCE_UNKNOWN_MESSAGE", "Unknown message"
                )
        message = await self.emu.post(
            self.world.bot,
            channel,
            content,
            embeds=embeds,
            components=components,
            reply_to=reply_to,
            flags=_flags(body) & ~EPHEMERAL,
        )
        return self._json(message)

    async def edit_message(self, request: web.Request) -> web.Response:
        channel = self._channel(request)
        message = self._message(request, channel)
        if message.author.id != self.world.bot.id:
            raise DiscordHTTPError(403, 50005, "Cannot edit a message authored by another user")
        await self._apply_edit(message, await self._body(request))
        return self._json(message)

    async def _apply_edit(self, message: Message, body: JSON) -> None:
        content, embeds, components = self._message_fields(body, partial=True)
        if "content" in body:
            message.content = content
        if "embeds" in body:
            message.embeds = embeds
        if "components" in body:
            message.components = components
        if "flags" in body:
            message.flags = _flags(body) & ~EPHEMERAL
        await self.emu.edit(message, message.content)

    async def delete_message(self, request: web.Request) -> web.StreamResponse:
        channel = self._channel(request)
        message = self._message(request, channel)
        if message.author.id != self.world.bot.id:
            self._require(channel, Permission.MANAGE_MESSAGES)
        await self.emu.delete(message)
        return web.Response(status=204)

    async def typing(self, request: web.Request) -> web.StreamResponse:
        channel = self._channel(request)
        self._require(channel, Permission.SEND_MESSAGES)
        self.emu.typing.append(channel)
        await self.emu.changed()
        return web.Response(status=204)

    def _emoji(self, request: web.Request, channel: Channel) -> str:
        try:
            return self.emu.reaction_key(self.world.guild_of(channel), request.match_info["emoji"])
        except ConfigError:
            raise DiscordHTTPError(400, 10014, "Unknown Emoji") from None

    async def add_reaction(self, request: web.Request) -> web.StreamResponse:
        channel = self._channel(request)
        self._require(channel, Permission.ADD_REACTIONS, Permission.READ_MESSAGE_HISTORY)
        message = self._message(request, channel)
        key = self._emoji(request, channel)
        holders = message.reactions.setdefault(key, set())
        if self.world.bot.id not in holders:
            holders.add(self.world.bot.id)
            await self.emu.reaction_event("MESSAGE_REACTION_ADD", message, self.world.bot, key)
        return web.Response(status=204)

    async def remove_reaction(self, request: web.Request) -> web.StreamResponse:
        channel = self._channel(request)
        message = self._message(request, channel)
        key = self._emoji(request, channel)
        holders = message.reactions.get(key, set())
        if self.world.bot.id in holders:
            holders.discard(self.world.bot.id)
            await self.emu.reaction_event("MESSAGE_REACTION_REMOVE", message, self.world.bot, key)
        return web.Response(status=204)

    async def create_thread(self, request: web.Request) -> web.Response:
        channel = self._channel(request)
        self._require(channel, Permission.CREATE_PUBLIC_THREADS)
        body = await self._body(request)
        name = body.get("name")
        if not isinstance(name, str) or not 1 <= len(name) <= 100:
            raise _field_error(
                "name", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length."
            )
        if channel.guild_id is None or channel.is_thread:
            raise DiscordHTTPError(400, 50024, "Cannot execute action on this channel type")
        thread = await self.emu.open_thread(self.world.bot, channel, name)
        return _json_reply(thread.to_json(), status=201)

    # -- guilds, members, roles --------------------------------------------------------------

    async def get_guild(self, request: web.Request) -> web.Response:
        return _json_reply(self._guild(request).to_json())

    async def get_guild_channels(self, request: web.Request) -> web.Response:
        guild = self._guild(request)
        return _json_reply([c.to_json() for c in guild.channels.values() if not c.is_thread])

    async def create_channel(self, request: web.Request) -> web.Response:
        guild = self._guild(request)
        if not guild.base_permissions(self.world.bot.id) & Permission.MANAGE_CHANNELS:
            raise DiscordHTTPError(*_MISSING_PERMISSIONS)
        body = await self._body(request)
        name, kind = body.get("name"), body.get("type", 0)
        if not isinstance(name, str) or not 1 <= len(name) <= 100:
            raise _field_error(
                "name", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length."
            )
        if kind not in (int(ChannelType.TEXT), int(ChannelType.VOICE)):
            raise _field_error("type", "BASE_TYPE_CHOICES", "The sandbox makes text or voice.")
        topic = body.get("topic")
        if topic is not None and (not isinstance(topic, str) or len(topic) > 1024):
            raise _field_error("topic", "BASE_TYPE_MAX_LENGTH", "Must be 1024 or fewer in length.")
        overwrites = self._overwrites(guild, body.get("permission_overwrites") or [])
        if kind == ChannelType.TEXT:
            # Discord writes text channel names lower case, with dashes for spaces.
            name = "-".join(name.lower().split())
        channel = self.world.add_channel(guild, name, kind=ChannelType(kind), topic=topic)
        for target, (allow, deny, member) in overwrites.items():
            channel.overwrites[target] = (allow, deny)
            if member:
                channel.member_overwrites.add(target)
        await self.emu.gateway.dispatch(
            "CHANNEL_CREATE", channel.to_json(), guild_id=guild.id, intent=Intent.GUILDS
        )
        await self.emu.changed()
        return _json_reply(channel.to_json(), status=201)

    def _overwrites(self, guild: Guild, raw: object) -> dict[int, tuple[int, int, bool]]:
        """``permission_overwrites`` of a new channel: role (type 0) or member (type 1) ids of
        the guild with allow and deny bits; the bot may only grant what it has itself."""
        if not isinstance(raw, list):
            raise _field_error("permission_overwrites", "LIST_TYPE_CONVERT", "Must be an array.")
        have = guild.base_permissions(self.world.bot.id)
        found: dict[int, tuple[int, int, bool]] = {}
        for index, item in enumerate(raw):
            where = f"permission_overwrites.{index}"
            if not isinstance(item, dict) or item.get("type") not in (0, 1):
                raise _field_error(where, "BASE_TYPE_REQUIRED", "This field is required")
            target = _snowflake(str(item.get("id", "")))
            member = item["type"] == 1
            if target not in (guild.members if member else guild.roles):
                raise _field_error(f"{where}.id", "UNKNOWN_OVERWRITE", "Unknown role or member")
            allow, deny = _bits(item.get("allow")), _bits(item.get("deny"))
            if allow < 0 or deny < 0:
                raise _field_error(where, "NUMBER_TYPE_COERCE", "Value is not a number.")
            if allow & ~have or deny & ~have:
                raise DiscordHTTPError(*_MISSING_PERMISSIONS)
            found[target] = (allow, deny, member)
        return found

    async def edit_member(self, request: web.Request) -> web.Response:
        guild = self._guild(request)
        member = guild.members.get(_snowflake(request.match_info["user_id"]))
        if member is None:
            raise _unknown("Member", 10007)
        body = await self._body(request)
        have = guild.base_permissions(self.world.bot.id)
        if "communication_disabled_until" in body:
            until = body["communication_disabled_until"]
            if not have & Permission.MODERATE_MEMBERS or member.user.id == guild.owner_id:
                raise DiscordHTTPError(*_MISSING_PERMISSIONS)
            if until is not None and not _iso_time(until):
                raise _field_error(
                    "communication_disabled_until", "DATE_TYPE_CONVERT", "Could not parse date."
                )
            member.timed_out_until = until
        if "nick" in body:
            nick = body["nick"]
            if nick is not None and (not isinstance(nick, str) or len(nick) > 32):
                raise _field_error("nick", "BASE_TYPE_MAX_LENGTH", "Must be 32 or fewer in length.")
            member.nick = nick or None
        if "roles" in body:
            if not have & Permission.MANAGE_ROLES:
                raise DiscordHTTPError(*_MISSING_PERMISSIONS)
            roles = [_snowflake(str(r)) for r in body["roles"] or []]
            if any(r not in guild.roles or r == guild.id for r in roles):
                raise _field_error("roles", "UNKNOWN_ROLE", "Unknown role")
            member.roles = roles
        await self.emu.member_updated(guild, member.user)
        return _json_reply(member.to_json())

    async def get_roles(self, request: web.Request) -> web.Response:
        return _json_reply([r.to_json() for r in self._guild(request).roles.values()])

    async def get_member(self, request: web.Request) -> web.Response:
        guild = self._guild(request)
        member = guild.members.get(_snowflake(request.match_info["user_id"]))
        if member is None:
            raise _unknown("Member", 10007)
        return _json_reply(member.to_json())

    async def add_role(self, request: web.Request) -> web.StreamResponse:
        return await self._change_role(request, add=True)

    async def remove_role(self, request: web.Request) -> web.StreamResponse:
        return await self._change_role(request, add=False)

    async def _change_role(self, request: web.Request, *, add: bool) -> web.StreamResponse:
        guild = self._guild(request)
        member = guild.members.get(_snowflake(request.match_info["user_id"]))
        if member is None:
            raise _unknown("Member", 10007)
        role = guild.roles.get(_snowflake(request.match_info["role_id"]))
        if role is None or role.id == guild.id:
            raise _unknown("Role", 10011)
        if not guild.base_permissions(self.world.bot.id) & Permission.MANAGE_ROLES:
            raise DiscordHTTPError(*_MISSING_PERMISSIONS)
        if add and role.id not in member.roles:
            member.roles.append(role.id)
        if not add and role.id in member.roles:
            member.roles.remove(role.id)
        await self.emu.member_updated(guild, member.user)
        return web.Response(status=204)

    # -- application commands ----------------------------------------------------------------

    def _command_scope(self, request: web.Request) -> int | None:
        if _snowflake(request.match_info["app_id"]) != self.world.application_id:
            raise _unknown("Application", 10002)
        if "guild_id" in request.match_info:
            return self._guild(request).id
        return None

    async def get_commands(self, request: web.Request) -> web.Response:
        return _json_reply(self.emu.commands.get(self._command_scope(request), []))

    async def put_commands(self, request: web.Request) -> web.Response:
        scope = self._command_scope(request)
        body = await self._body(request)
        raw = body.get("_list")
        if not isinstance(raw, list):
            raise _field_error("_root", "LIST_TYPE_CONVERT", "Must be an array.")
        commands: list[JSON] = []
        for index, item in enumerate(raw):
            if not isinstance(item, dict) or not isinstance(item.get("name"), str):
                raise _field_error(str(index), "BASE_TYPE_REQUIRED", "This field is required")
            commands.append(
                {
                    "type": 1,
                    "description": "",
                    "options": [],
                    "default_member_permissions": None,
                    "nsfw": False,
                    **item,
                    "id": str(self.world.snowflake()),
                    "application_id": str(self.world.application_id),
                    "version": str(self.world.snowflake()),
                    **({"guild_id": str(scope)} if scope is not None else {}),
                }
            )
        self.emu.commands[scope] = commands
        await self.emu.changed()
        return _json_reply(commands)

    # -- interactions and webhooks -----------------------------------------------------------

    def _interaction(self, request: web.Request) -> Interaction:
        """The interaction a callback (by id) or a follow-up (by token) names, token checked."""
        info = request.match_info
        token = info["token"]
        if "interaction_id" in info:
            interaction = self.emu.interactions.get(_snowflake(info["interaction_id"]))
        else:
            found = (i for i in self.emu.interactions.values() if i.token == token)
            interaction = next(found, None)
        if interaction is None or interaction.token != token:
            raise _unknown("interaction", 10062)
        return interaction

    async def interaction_callback(self, request: web.Request) -> web.Response:
        interaction = self._interaction(request)
        if interaction.callbacks:
            raise DiscordHTTPError(400, 40060, "Interaction has already been acknowledged.")
        body = await self._body(request)
        kind = body.get("type")
        if kind not in {1, 4, 5, 6, 7, 9}:
            raise _field_error(
                "type", "BASE_TYPE_CHOICES", "Value must be one of (1, 4, 5, 6, 7, 9)."
            )
        raw_data = body.get("data")
        data: JSON = raw_data if isinstance(raw_data, dict) else {}
        if kind in (6, 7) and interaction.message is None:
            raise DiscordHTTPError(400, 50035, "Interaction has no message to update")
        if kind == 9:
            self._check_modal(interaction, data)
        interaction.callbacks.append(int(kind))
        ephemeral = _ephemeral(data)
        message: Message | None = None
        if kind == 4:
            content, embeds, components = self._message_fields(data, partial=False)
            message = await self._interaction_message(
                interaction, content, embeds, components, ephemeral=ephemeral, flags=_flags(data)
            )
            interaction.original = message
        elif kind == 5:
            interaction.ephemeral = ephemeral
        elif kind == 9:
            interaction.modal = data
            for listener in list(self.emu.modal_listeners):
                listener(interaction)
        elif interaction.message is not None:  # 6, 7: the component's message is the original
            interaction.original = interaction.message
            if kind == 7:
                await self._apply_edit(interaction.message, data)
                message = interaction.message
                ephemeral = message.ephemeral_to is not None
        await self.emu.changed()
        answer: JSON = {
            "interaction": {
                "id": str(interaction.id),
                "type": interaction.type,
                "response_message_loading": kind == 5,
                "response_message_ephemeral": ephemeral,
                "activity_instance_id": None,
            }
        }
        if message is not None:
            answer["interaction"]["response_message_id"] = str(message.id)
            answer["resource"] = {
                "type": kind,
                "message": message.to_json(
                    self.world.guild_of(message.channel), bot_id=self.world.bot.id
                ),
            }
        else:
            answer["resource"] = {"type": kind}
        return _json_reply(answer)

    @staticmethod
    def _check_modal(interaction: Interaction, data: JSON) -> None:
        """A modal answers a command or a component, and has an id, a title and inputs."""
        if interaction.type == 5:
            raise DiscordHTTPError(400, 50035, "A modal submit cannot be answered with a modal")
        custom_id, title = data.get("custom_id"), data.get("title")
        if not isinstance(custom_id, str) or not 1 <= len(custom_id) <= 100:
            raise _field_error("data.custom_id", "BASE_TYPE_REQUIRED", "This field is required")
        if not isinstance(title, str) or not 1 <= len(title) <= 45:
            raise _field_error(
                "data.title", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 45 in length."
            )
        components = data.get("components")
        if not isinstance(components, list) or not 1 <= len(components) <= 5:
            raise _field_error(
                "data.components", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 5 in length."
            )

    async def _interaction_message(
        self,
        interaction: Interaction,
        content: str,
        embeds: list[JSON],
        components: list[JSON],
        *,
        ephemeral: bool,
        flags: int = 0,
    ) -> Message:
        """The bot's message answering ``interaction``; an ephemeral one is its user's alone."""
        metadata = {
            "id": str(interaction.id),
            "type": interaction.type,
            "user": interaction.user.to_json(),
            "authorizing_integration_owners": {},
        }
        message = await self.emu.post(
            self.world.bot,
            interaction.channel,
            content,
            embeds=embeds,
            components=components,
            interaction_metadata=metadata,
            ephemeral_to=interaction.user if ephemeral else None,
            flags=flags & ~EPHEMERAL,
        )
        interaction.replies.append(message)
        return message

    async def execute_webhook(self, request: web.Request) -> web.Response:
        webhook_id = _snowflake(request.match_info["webhook_id"])
        body = await self._body(request)
        content, embeds, components = self._message_fields(body, partial=False)
        if webhook_id == self.world.application_id:
            interaction = self._interaction(request)
            if not interaction.callbacks:
                raise _unknown("Webhook", 10015)
            # The first follow-up of a deferred reply (callback 5) is that reply: its flags are
            # ignored and the defer's decide whether it is ephemeral (Discord's docs).
            first = interaction.callbacks[0] == 5 and interaction.original is None
            ephemeral = interaction.ephemeral if first else _ephemeral(body)
            message = await self._interaction_message(
                interaction, content, embeds, components, ephemeral=ephemeral, flags=_flags(body)
            )
            if first:
                interaction.original = message
            return self._json(message)
        hook = self.world.webhooks.get(webhook_id)
        if hook is None or hook.token != request.match_info["token"]:
            raise _unknown("Webhook", 10015)
        message = await self.emu.webhook_post(hook, content)
        return self._json(message)

    def _webhook_target(self, request: web.Request) -> tuple[Interaction, Message | None]:
        if _snowflake(request.match_info["webhook_id"]) != self.world.application_id:
            raise _unknown("Webhook", 10015)
        interaction = self._interaction(request)
        raw = request.match_info["message_id"]
        if raw == "@original":
            return interaction, interaction.original
        wanted = _snowflake(raw)
        message = next((m for m in interaction.replies if m.id == wanted), None)
        if message is None or message.deleted:
            raise _unknown("Message", 10008)
        return interaction, message

    async def get_webhook_message(self, request: web.Request) -> web.Response:
        _, message = self._webhook_target(request)
        if message is None:
            raise _unknown("Message", 10008)
        return self._json(message)

    async def edit_webhook_message(self, request: web.Request) -> web.Response:
        interaction, message = self._webhook_target(request)
        body = await self._body(request)
        if message is None:  # editing a deferred reply posts it
            content, embeds, components = self._message_fields(body, partial=False)
            message = await self._interaction_message(
                interaction, content, embeds, components, ephemeral=interaction.ephemeral
            )
            interaction.original = message
            return self._json(message)
        await self._apply_edit(message, body)
        return self._json(message)

    async def delete_webhook_message(self, request: web.Request) -> web.StreamResponse:
        _, message = self._webhook_target(request)
        if message is None:
            raise _unknown("Message", 10008)
        await self.emu.delete(message)
        return web.Response(status=204)


def _json_reply(
    data: object, *, status: int = 200, headers: dict[str, str] | None = None
) -> web.Response:
    """A JSON answer with exactly ``application/json`` (discord.py compares the header)."""
    return web.Response(
        status=status,
        body=json.dumps(data).encode(),
        content_type="application/json",
        headers=headers,
    )


def _ephemeral(data: JSON) -> bool:
    """Whether a message body's ``flags`` ask for an ephemeral message (64)."""
    flags = data.get("flags")
    return isinstance(flags, int) and not isinstance(flags, bool) and bool(flags & EPHEMERAL)


def _snowflake(raw: str) -> int:
    """A path or body snowflake; anything else is 0 (which no object has)."""
    return int(raw) if raw.isdigit() and len(raw) < 21 else 0


def _flags(body: JSON) -> int:
    """The ``flags`` of a message body (0 when absent or not a number)."""
    flags = body.get("flags")
    return flags if isinstance(flags, int) and not isinstance(flags, bool) else 0


def _bits(raw: object) -> int:
    """Permission bits given as a string or an integer (-1 when they are neither)."""
    if isinstance(raw, int) and not isinstance(raw, bool):
        return raw
    if raw is None:
        return 0
    return int(raw) if isinstance(raw, str) and raw.isdigit() else -1


def _iso_time(raw: object) -> bool:
    """Whether ``raw`` is an ISO 8601 timestamp."""
    if not isinstance(raw, str):
        return False
    try:
        datetime.fromisoformat(raw)
    except ValueError:
        return False
    return True

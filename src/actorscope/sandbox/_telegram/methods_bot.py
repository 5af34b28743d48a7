"""Bot-level methods: getMe, getUpdates, commands, webhook, close and logOut."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlsplit

from actorscope.sandbox._telegram.context import MethodContext
from actorscope.sandbox._telegram.errors import BotApiError
from actorscope.sandbox._telegram.models import ChatType
from actorscope.sandbox._telegram.params import Params

__all__ = [
    "close",
    "delete_my_commands",
    "delete_webhook",
    "get_me",
    "get_my_commands",
    "get_updates",
    "get_webhook_info",
    "log_out",
    "set_my_commands",
    "set_webhook",
]

_COMMAND = re.compile(r"^[a-z0-9_]{1,32}$")
_SECRET_TOKEN = re.compile(r"^[A-Za-z0-9_-]{1,256}$")
_WEBHOOK_PORTS = frozenset({80, 88, 443, 8443})
_SCOPES = frozenset(
    {
        "default",
        "all_private_chats",
        "all_group_chats",
        "all_chat_administrators",
        "chat",
        "chat_administrators",
        "chat_member",
    }
)


async def get_me(ctx: MethodContext, p: Params) -> Any:
    """The bot's own ``User`` with the capability flags ``getMe`` adds."""
    return {
        **ctx.state.bot.to_json(),
        "can_join_groups": True,
        "can_read_all_group_messages": not ctx.privacy_mode,
        "supports_inline_queries": True,
        "can_connect_to_business": False,
        "has_main_web_app": False,
    }


async def get_updates(ctx: MethodContext, p: Params) -> Any:
    """Long polling: pending updates after ``offset``, waiting up to ``timeout`` seconds."""
    if ctx.setup.webhook.get("url"):
        raise BotApiError(
            409,
            "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook "
            "to delete the webhook first",
        )
    allowed = p.get_array("allowed_updates")
    if allowed is not None:
        if not all(isinstance(kind, str) for kind in allowed):
            raise BotApiError(400, "Bad Request: allowed_updates must be a list of strings")
        ctx.updates.set_allowed(allowed)
    return await ctx.updates.poll(
        offset=p.get_int("offset"),
        limit=p.get_int("limit", 100) or 0,
        wait=p.get_number("timeout", 0.0) or 0.0,
    )


def _scope(ctx: MethodContext, p: Params) -> dict[str, Any]:
    """The command scope, its chat (and member) resolved to ids, so @name and id match."""
    scope = p.get_object("scope") or {"type": "default"}
    kind = scope.get("type")
    if kind not in _SCOPES:
        raise BotApiError(400, "Bad Request: BOT_COMMAND_SCOPE_INVALID")
    if kind not in ("chat", "chat_administrators", "chat_member"):
        return {"type": kind}
    chat = ctx.state.chat(Params(scope).chat_id())
    if kind != "chat_member":
        return {"type": kind, "chat_id": chat.id}
    if chat.type is ChatType.PRIVATE:
        raise BotApiError(400, "Bad Request: can't use chat_member scope in private chats")
    user = ctx.state.user(Params(scope).require_int("user_id"))
    if not ctx.state.status(chat, user).is_present:
        raise BotApiError(400, "Bad Request: user not found")
    return {"type": kind, "chat_id": chat.id, "user_id": user.id}


def _commands_key(ctx: MethodContext, p: Params) -> str:
    scope = _scope(ctx, p)
    language = p.get_str("language_code", "") or ""
    if language and not re.fullmatch(r"[a-z]{2}", language):
        raise BotApiError(400, "Bad Request: LANG_CODE_INVALID")
    return json.dumps([scope, language], sort_keys=True)


async def set_my_commands(ctx: MethodContext, p: Params) -> Any:
    """Store the command list for a scope and language (validated like Telegram does)."""
    commands = p.get_array("commands", required=True) or []
    if len(commands) > 100:
        raise BotApiError(400, "Bad Request: too many commands")
    cleaned: list[dict[str, str]] = []
    for entry in commands:
        if not isinstance(entry, dict):
            raise BotApiError(400, "Bad Request: can't parse BotCommand")
        command, description = entry.get("command"), entry.get("description")
        if not isinstance(command, str) or not _COMMAND.match(command):
            raise BotApiError(400, "Bad Request: BOT_COMMAND_INVALID")
        if not isinstance(description, str) or not 1 <= len(description.strip()) <= 256:
            raise BotApiError(400, "Bad Request: BOT_COMMAND_DESCRIPTION_INVALID")
        cleaned.append({"command": command, "description": description})
    ctx.setup.commands[_commands_key(ctx, p)] = cleaned
    return True


async def get_my_commands(ctx: MethodContext, p: Params) -> Any:
    """The command list stored for a scope and language (empty when none)."""
    return list(ctx.setup.commands.get(_commands_key(ctx, p), []))


async def delete_my_commands(ctx: MethodContext, p: Params) -> Any:
    """Forget the command list of a scope and language."""
    ctx.setup.commands.pop(_commands_key(ctx, p), None)
    return True


async def set_webhook(ctx: MethodContext, p: Params) -> Any:
    """Set the webhook (an empty url removes it): an HTTPS URL on port 443, 80, 88 or 8443.

    ``emu.webhook`` says what the bot asked for (``url``, ``secret_token``,
    ``allowed_updates``). A :class:`~actorscope.sandbox.BotApiServer` with a route for the URL
    POSTs the updates to it; without one they wait (``getWebhookInfo`` says why).
    """
    url = p.get_str("url", "") or ""
    if not url:
        ctx.setup.webhook = {}
        ctx.updates.touch()
        return True
    parts = urlsplit(url)
    if parts.scheme != "https" or not parts.hostname:
        raise BotApiError(
            400, "Bad Request: bad webhook: An HTTPS URL must be provided for webhook"
        )
    try:
        port = parts.port or 443
    except ValueError:
        raise BotApiError(400, "Bad Request: bad webhook: invalid port") from None
    if port not in _WEBHOOK_PORTS:
        raise BotApiError(
            400, "Bad Request: bad webhook: Webhook can be set up only on ports 80, 88, 443 or 8443"
        )
    secret = p.get_str("secret_token", "") or ""
    if secret and not _SECRET_TOKEN.match(secret):
        raise BotApiError(400, "Bad Request: secret token contains unallowed characters")
    allowed = p.get_array("allowed_updates")
    if allowed is not None:
        if not all(isinstance(kind, str) for kind in allowed):
            raise BotApiError(400, "Bad Request: allowed_updates must be a list of strings")
        ctx.updates.set_allowed(allowed)
    if p.get_bool("drop_pending_updates"):
        ctx.updates.drop_pending()
    ctx.setup.webhook = {"url": url, "secret_token": secret, "allowed_updates": allowed}
    ctx.setup.webhook_error = None
    ctx.updates.touch()
    return True


async def delete_webhook(ctx: MethodContext, p: Params) -> Any:
    """Forget the webhook; optionally drop the pending updates."""
    ctx.setup.webhook = {}
    ctx.setup.webhook_error = None
    if p.get_bool("drop_pending_updates"):
        ctx.updates.drop_pending()
    ctx.updates.touch()
    return True


async def get_webhook_info(ctx: MethodContext, p: Params) -> Any:
    """The webhook's url (``""`` when polling), and how many updates are waiting."""
    info: dict[str, Any] = {
        "url": ctx.setup.webhook.get("url", ""),
        "has_custom_certificate": False,
        "pending_update_count": len(ctx.updates.pending()),
    }
    if ctx.setup.webhook.get("allowed_updates") is not None:
        info["allowed_updates"] = ctx.setup.webhook["allowed_updates"]
    if ctx.setup.webhook_error is not None:
        info["last_error_date"], info["last_error_message"] = ctx.setup.webhook_error
    return info


async def close(ctx: MethodContext, p: Params) -> Any:
    """Accepted: there is no server instance to close."""
    return True


async def log_out(ctx: MethodContext, p: Params) -> Any:
    """Accepted: there is no cloud server to log out from."""
    return True

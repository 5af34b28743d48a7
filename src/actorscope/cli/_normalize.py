"""``actorscope normalize``: what an adapter makes of one Telegram update or Discord dispatch."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from actorscope.channels.base import IgnoreReason, Ingress
from actorscope.channels.discord import inspect_dispatch
from actorscope.channels.telegram import inspect_update
from actorscope.cli._app import app
from actorscope.errors import ConfigError, PayloadError
from actorscope.identity import DISCORD, TELEGRAM, PeerKind, session_key

__all__ = ["ingress_json", "normalize"]

_PLATFORMS = (TELEGRAM, DISCORD)


def ingress_json(ingress: Ingress) -> dict[str, Any]:
    """The CLI's JSON object for an ingress: the identity fields, or ``ignored`` and why."""
    message = ingress.message
    if message is None:
        reason = ingress.reason or IgnoreReason.UNSUPPORTED_EVENT
        return {"ignored": True, "reason": reason.value}
    return {
        "channel": message.channel,
        "peer_kind": message.peer_kind.value,
        "user_id": message.user_id,
        "sender_id": message.sender_id,
        "actor_id": message.sender_id or message.user_id,
        "chat_id": message.chat_id,
        "sender_kind": message.sender_kind.value,
        "session_key": ingress.session_key,
        "thread_id": message.thread_id,
    }


def _read_json(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise PayloadError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise PayloadError(f"{path}: not UTF-8 text") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise PayloadError(f"{path}: not valid JSON: {exc.msg} at line {exc.lineno}") from None


@app.command("normalize")
def normalize(
    file: Annotated[
        Path, typer.Argument(help="A Telegram Update or a Discord gateway dispatch (JSON).")
    ],
    platform: Annotated[str, typer.Option("--platform", help="telegram or discord.")],
    agent: Annotated[str, typer.Option("--agent", help="The agent key for the session key.")] = (
        "main"
    ),
) -> None:
    """Print the scope, actor and session key an adapter derives from FILE."""
    if platform not in _PLATFORMS:
        raise ConfigError(f"--platform must be telegram or discord, got {platform!r}")
    session_key(agent, platform, PeerKind.DIRECT, 0)  # rejects a bad agent key up front
    payload = _read_json(file)
    if not isinstance(payload, dict):
        raise PayloadError(f"{file}: a {platform} payload must be a JSON object")
    if platform == TELEGRAM:
        ingress = inspect_update(payload, agent_key=agent)
    else:
        ingress = inspect_dispatch(payload, agent_key=agent)
    if ingress.reason is IgnoreReason.MALFORMED:
        raise PayloadError(f"{file}: malformed {platform} payload: {ingress.detail}")
    typer.echo(json.dumps(ingress_json(ingress)))

"""``actorscope normalize``: what an adapter makes of one Telegram update or Discord dispatch."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from actorscope._input import parse_json, read_text_file, shown_path
from actorscope.cli._app import app
from actorscope.errors import ConfigError, PayloadError
from actorscope.identity import PeerKind, session_key
from actorscope.platforms import DISCORD, TELEGRAM

if TYPE_CHECKING:  # the adapters load the platform libraries: imported where they run
    from actorscope.channels._base import Ingress

__all__ = ["ingress_json", "normalize"]

_PLATFORMS = (TELEGRAM, DISCORD)


def ingress_json(ingress: Ingress) -> dict[str, Any]:
    """The CLI's JSON object for an ingress: the identity fields, or ``ignored`` and why."""
    from actorscope.channels._base import IgnoreReason

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


# The adapters log a library's failure as "<ExceptionName>: <message>" (see ``ignored``).
_EXCEPTION_DETAIL = re.compile(r"(?P<name>[A-Za-z_]\w*(?:Error|Exception)): (?P<message>.*)", re.S)
# A library constructor called without a field: "Update.__init__() missing 1 required
# positional argument: 'update_id'" (or "arguments: 'a' and 'b'").
_MISSING_ARGUMENT = re.compile(
    r"\w+\.__init__\(\) missing \d+ required (?:keyword-only |positional )?"
    r"arguments?: (?P<names>.*)"
)
#: The keys that say which platform a payload came from.
_DISCORD_DISPATCH_KEYS = frozenset({"op", "t", "d"})
_STDIN = "-"


def _reason(detail: str) -> str:
    """An adapter's ``detail`` for a person: without the Python exception name."""
    match = _EXCEPTION_DETAIL.fullmatch(detail)
    if match is None:
        reason = detail
    elif match["name"] == "KeyError":
        reason = f"missing key {match['message']}"
    else:
        reason = match["message"]
    missing = _MISSING_ARGUMENT.fullmatch(reason)
    if missing is not None:
        reason = f"missing key {missing['names']}"
    return reason or "not readable"


def _other_platform(payload: dict[str, Any], platform: str) -> str | None:
    """Why ``payload`` looks like the other platform's, in words; None if it does not."""
    dispatch = bool(_DISCORD_DISPATCH_KEYS & set(payload))
    if platform == TELEGRAM and "update_id" not in payload and dispatch:
        return (
            "a Telegram Update needs an update_id, and this looks like a Discord gateway "
            "dispatch (op, t, d): use --platform discord"
        )
    if platform == DISCORD and "update_id" in payload:
        return (
            "a Discord dispatch needs op, t and d (or a bare message object), and this looks "
            "like a Telegram Update (update_id): use --platform telegram"
        )
    return None


@app.command("normalize")
def normalize(
    file: Annotated[
        Path,
        typer.Argument(
            help="A Telegram Update or a Discord gateway dispatch (JSON); '-' reads stdin.",
            metavar="FILE",
        ),
    ],
    platform: Annotated[
        str, typer.Option("--platform", help="telegram or discord.", metavar="PLATFORM")
    ],
    agent: Annotated[
        str, typer.Option("--agent", help="The agent key for the session key.", metavar="KEY")
    ] = ("main"),
    as_json: Annotated[
        bool,
        typer.Option("--json", help="Print JSON (normalize prints JSON with or without it)."),
    ] = False,
) -> None:
    """Print the scope, actor and session key an adapter derives from FILE, as one JSON object.

    ``--json`` is accepted like every other command's; the output is JSON with or without it.
    """
    from actorscope.channels._base import IgnoreReason
    from actorscope.channels.discord import inspect_dispatch
    from actorscope.channels.telegram import inspect_update

    if platform not in _PLATFORMS:
        raise ConfigError(f"--platform must be telegram or discord, got {platform!r}")
    session_key(agent, platform, PeerKind.DIRECT, 0)  # rejects a bad agent key up front
    stdin = str(file) == _STDIN
    # /dev/stdin: read_text_file's limits and errors apply to a pipe as to a file.
    text = read_text_file(Path("/dev/stdin") if stdin else file, PayloadError)
    name = "stdin" if stdin else shown_path(file)
    payload = parse_json(text, "stdin" if stdin else str(file), PayloadError)
    if not isinstance(payload, dict):
        raise PayloadError(f"{name}: a {platform} payload must be a JSON object")
    other = _other_platform(payload, platform)
    if other is not None:
        raise PayloadError(f"{name}: {other}")
    if platform == TELEGRAM:
        ingress = inspect_update(payload, agent_key=agent)
    else:
        ingress = inspect_dispatch(payload, agent_key=agent)
    if ingress.reason is IgnoreReason.MALFORMED:
        raise PayloadError(f"{name}: malformed {platform} payload: {_reason(ingress.detail)}")
    typer.echo(json.dumps(ingress_json(ingress)))

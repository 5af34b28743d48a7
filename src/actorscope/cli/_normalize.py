"""``actorscope normalize``: what a platform's normaliser makes of one raw event (a Telegram
update, a Discord dispatch, any registered platform's), asked through the platform contract."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from actorscope._input import parse_json, read_text_file, shown_path
from actorscope.errors import ConfigError, PayloadError
from actorscope.identity import PeerKind, session_key

if TYPE_CHECKING:  # the adapters load the platform libraries: imported where they run
    from actorscope.channels import Ingress, Platform

__all__ = ["ingress_json", "normalize"]


def ingress_json(ingress: Ingress) -> dict[str, Any]:
    """The CLI's JSON object for an ingress: the identity fields, or ``ignored`` and why."""
    from actorscope.channels import IgnoreReason

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


def _other_platform(payload: dict[str, Any], chosen: Platform) -> str | None:
    """Why ``payload`` looks like another platform's, in words; None if it does not."""
    from actorscope.channels import platform
    from actorscope.platforms import platform_specs

    if chosen.recognizes(payload):
        return None
    for spec in platform_specs():
        other = platform(spec.name)
        if other is not chosen and other.recognizes(payload):
            return (
                f"{chosen.event_name} was expected, and this looks like {other.event_name}: "
                f"use --platform {spec.name}"
            )
    return None


def normalize(
    file: Annotated[
        Path,
        typer.Argument(
            help="One raw event of the platform (JSON: a Telegram Update, a Discord gateway "
            "dispatch); '-' reads stdin.",
            metavar="FILE",
        ),
    ],
    platform: Annotated[
        str,
        typer.Option(
            "--platform", help="telegram, discord or another platform.", metavar="PLATFORM"
        ),
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
    from actorscope.channels import IgnoreReason
    from actorscope.channels import platform as platform_of
    from actorscope.platforms import platform_specs

    names = [spec.name for spec in platform_specs()]
    if platform not in names:
        raise ConfigError(f"--platform must be {' or '.join(names)}, got {platform!r}")
    chosen = platform_of(platform)
    # Rejects a bad agent key up front ("1" is a chat id in every id form).
    session_key(agent, platform, PeerKind.DIRECT, "1")
    stdin = str(file) == _STDIN
    # /dev/stdin: read_text_file's limits and errors apply to a pipe as to a file.
    text = read_text_file(Path("/dev/stdin") if stdin else file, PayloadError)
    name = "stdin" if stdin else shown_path(file)
    payload = parse_json(text, "stdin" if stdin else str(file), PayloadError)
    if not isinstance(payload, dict):
        raise PayloadError(f"{name}: a {platform} payload must be a JSON object")
    other = _other_platform(payload, chosen)
    if other is not None:
        raise PayloadError(f"{name}: {other}")
    ingress = chosen.inspect(payload, agent_key=agent)
    if ingress.reason is IgnoreReason.MALFORMED:
        raise PayloadError(f"{name}: malformed {platform} payload: {_reason(ingress.detail)}")
    typer.echo(json.dumps(ingress_json(ingress)))

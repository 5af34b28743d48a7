"""Crafted raw payloads: each field of the wrong type is normalised or ignored, never a person."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from actorscope.channels._base import IgnoreReason, Ingress, display_name, flag_raised
from actorscope.channels._config import ChannelConfig
from actorscope.channels._policy import admit
from actorscope.channels.discord._normalize import inspect_dispatch
from actorscope.channels.telegram._normalize import inspect_update
from actorscope.identity import SenderKind

FIXTURES = Path(__file__).parent.parent / "fixtures"
BOT_ID = 81234567890000001
DROP = object()
MALFORMED = IgnoreReason.MALFORMED
Path_ = tuple[str | int, ...]
#: (fixture, (*path, value)): the fixture's field at ``path`` set to ``value`` (DROP: removed).
Case = tuple[str, tuple[Any, ...]]


def crafted(platform: str, name: str, path: Path_, value: Any) -> dict[str, Any]:
    """Fixture ``platform/name`` with the field at ``path`` set to ``value`` (or dropped)."""
    payload: dict[str, Any] = json.loads((FIXTURES / platform / f"{name}.json").read_text())
    parent: Any = payload
    for key in path[:-1]:
        parent = parent[key]
    if value is DROP:
        parent.pop(path[-1], None)
    else:
        parent[path[-1]] = copy.deepcopy(value)
    return payload


def telegram(payload: dict[str, Any], ignore_bots: bool = True) -> Ingress:
    """The Telegram adapter on a raw update, as the webhook and the CLI call it."""
    return inspect_update(payload, bot_username="actorscope_bot", ignore_bots=ignore_bots)


def discord(payload: dict[str, Any], ignore_bots: bool = True) -> Ingress:
    """The Discord adapter on a raw gateway dispatch."""
    return inspect_dispatch(payload, bot_id=BOT_ID, ignore_bots=ignore_bots)


CB, MSG, D = ("callback_query",), ("message",), ("d",)
TELEGRAM_CASES: list[Case] = [
    ("callback_query", (*CB, "data", 12345)),
    ("callback_query", (*CB, "data", ["vote"])),
    ("callback_query", (*CB, "id", {"a": 1})),
    ("callback_query", (*CB, "id", 7)),
    ("callback_query", (*CB, "from", "id", 2**70)),
    ("callback_query", (*CB, "message", "message_thread_id", "7")),
    ("callback_query", (*CB, "message", "message_thread_id", -5)),
    ("callback_query", (*CB, "message", "chat", "id", "-1001234567890")),
    ("private", (*MSG, "text", 42)),
    ("private", (*MSG, "text", ["hi"])),
    ("private", (*MSG, "message_id", {"a": 1})),
    ("private", (*MSG, "message_id", "10")),
    ("private", (*MSG, "chat", "id", "4242")),
    ("private", (*MSG, "from", "id", 2**64)),
    ("group", (*MSG, "chat", "id", -(2**70))),
    ("group", (*MSG, "chat", "id", 0)),
    ("forum_topic", (*MSG, "message_thread_id", "7")),
    ("forum_topic", (*MSG, "message_thread_id", 0)),
    ("supergroup_reply", (*MSG, "reply_to_message", "message_id", [1])),
    ("migrate_to", (*MSG, "migrate_to_chat_id", "-1001234567890")),
    ("migrate_to", (*MSG, "migrate_to_chat_id", 2**70)),
]
DISCORD_CASES: list[Case] = [
    ("guild_message", (*D, "author", "id", "09001")),
    ("guild_message", (*D, "author", "id", 2**64)),
    ("guild_message", (*D, "author", "id", "18446744073709551616")),
    ("guild_message", (*D, "author", [])),
    ("guild_message", (*D, "content", 5)),
    ("guild_message", (*D, "content", {"text": "hi"})),
    ("guild_message", (*D, "type", False)),
    ("guild_message", (*D, "type", 0.0)),
    ("guild_message", (*D, "mentions", "81234567890000001")),
    ("guild_message", (*D, "message_reference", ["81234567890990000"])),
    ("guild_message", (*D, "referenced_message", {"author": "x"})),
    ("guild_message", (*D, "guild_id", None)),
    ("guild_message", (*D, "guild_id", "0081234567890123456")),
    ("webhook_message", (*D, "webhook_id", None)),
    ("webhook_message", (*D, "webhook_id", "0")),
    ("dm_message", (*D, "member", None)),
    ("dm_message", (*D, "guild_id", None)),
    ("slash_guild", (*D, "guild_id", DROP)),
    ("slash_guild", (*D, "member", [])),
    ("slash_guild", (*D, "type", 2.0)),
    ("slash_guild", (*D, "type", "2")),
    ("slash_guild", (*D, "channel", "general")),
    ("slash_guild", (*D, "channel", "type", "11")),
    ("slash_guild", (*D, "data", "name", 5)),
    ("slash_guild", (*D, "data", "options", 0, "value", {"x": 1})),
    ("slash_guild", (*D, "data", "options", 0, "name", ["question"])),
    ("slash_dm", (*D, "channel", "guild_id", None)),
    ("slash_dm", (*D, "user", "not a user")),
]


def split_case(case: Case) -> tuple[str, Path_, Any]:
    """``(fixture, (*path, value))`` → ``(fixture, path, value)``."""
    name, path_and_value = case
    return name, path_and_value[:-1], path_and_value[-1]


def case_id(case: Case) -> str:
    """A readable test id: fixture, dotted path and the value's repr."""
    name, path, value = split_case(case)
    shown = "DROP" if value is DROP else repr(value)[:24]
    return f"{name}:{'.'.join(map(str, path))}={shown}"


@pytest.mark.parametrize("case", TELEGRAM_CASES, ids=case_id)
def test_telegram_field_of_the_wrong_type_is_malformed(case: Case) -> None:
    """A Telegram id, text or topic of the wrong type or range makes the update malformed."""
    name, path, value = split_case(case)
    for ignore_bots in (True, False):
        ingress = telegram(crafted("telegram", name, path, value), ignore_bots)
        assert ingress.message is None, ingress.message
        assert ingress.reason is MALFORMED, ingress
        assert ingress.migration is None


@pytest.mark.parametrize("case", DISCORD_CASES, ids=case_id)
def test_discord_field_of_the_wrong_type_is_malformed(case: Case) -> None:
    """A Discord id, guild, content, reference or option of the wrong type is malformed."""
    name, path, value = split_case(case)
    for ignore_bots in (True, False):
        ingress = discord(crafted("discord", name, path, value), ignore_bots)
        assert ingress.message is None, ingress.message
        assert ingress.reason is MALFORMED, ingress


# Every JSON form a "not a person" flag can take, except false itself.
RAISED_FLAGS: list[Any] = [True, 1, 2, "true", "false", "", 0, None, [], {}, 1.0]
FLAGS: list[tuple[str, str, Path_]] = [
    ("telegram", "private", (*MSG, "from", "is_bot")),
    ("telegram", "group", (*MSG, "from", "is_bot")),
    ("telegram", "callback_query", (*CB, "from", "is_bot")),
    ("telegram", "callback_inline", (*CB, "from", "is_bot")),
    ("discord", "guild_message", (*D, "author", "bot")),
    ("discord", "guild_message", (*D, "author", "system")),
    ("discord", "dm_message", (*D, "author", "bot")),
    ("discord", "dm_message", (*D, "author", "system")),
    ("discord", "slash_guild", (*D, "member", "user", "bot")),
    ("discord", "slash_guild", (*D, "member", "user", "system")),
    ("discord", "slash_dm", (*D, "user", "bot")),
]


def adapter(platform: str, payload: dict[str, Any], ignore_bots: bool) -> Ingress:
    """The adapter of ``platform`` on ``payload``."""
    run = telegram if platform == "telegram" else discord
    return run(payload, ignore_bots)


@pytest.mark.parametrize(("platform", "name", "path"), FLAGS, ids=lambda v: str(v))
def test_any_raised_nonperson_flag_means_no_person(platform: str, name: str, path: Path_) -> None:
    """``is_bot``/``bot``/``system`` in any JSON form but ``false`` never yields a person."""
    for value in RAISED_FLAGS:
        for ignore_bots in (True, False):
            ingress = adapter(platform, crafted(platform, name, path, value), ignore_bots)
            message = ingress.message
            if message is not None:
                assert message.sender_kind is not SenderKind.USER, (value, message)
                assert message.sender_id == "", (value, message)
            elif ignore_bots:
                assert ingress.reason in (
                    IgnoreReason.BOT_SENDER,
                    IgnoreReason.NONPERSON_SENDER,
                    IgnoreReason.SYSTEM_MESSAGE,
                    IgnoreReason.NO_GUILD,  # a Discord bot in a DM has no safe scope
                ), (value, ingress)


@pytest.mark.parametrize(("platform", "name", "path"), FLAGS, ids=lambda v: str(v))
def test_false_or_absent_flag_is_a_person(platform: str, name: str, path: Path_) -> None:
    """The same payloads with the flag JSON ``false`` (or absent on Discord) are a person's."""
    # Telegram's is_bot is a required field: without it the update is malformed.
    for value in (False,) if platform == "telegram" else (False, DROP):
        message = adapter(platform, crafted(platform, name, path, value), True).message
        assert message is not None, value
        assert message.sender_kind is SenderKind.USER
        assert message.sender_id


def test_discord_ids_are_canonical_strings_or_json_integers() -> None:
    """A snowflake as a canonical string or a JSON integer names the same person."""
    as_int = discord(crafted("discord", "guild_message", (*D, "author", "id"), 9001)).message
    as_str = discord(crafted("discord", "guild_message", (*D, "author", "id"), "9001")).message
    assert as_int is not None
    assert as_str is not None
    assert as_int.sender_id == as_str.sender_id == "9001"


def test_non_string_display_names_are_dropped_not_repred() -> None:
    """A username that is a number or an object gives no display name (identity unchanged)."""
    message = telegram(crafted("telegram", "group", (*MSG, "from", "username"), {"a": 1})).message
    assert message is not None
    assert message.sender_id == "4242"
    assert message.metadata["sender_name"] == "Alice"  # the first_name, not "{'a': 1}"
    payload = crafted("discord", "guild_message", (*D, "author", "username"), 5)
    message = discord(payload).message
    assert message is not None
    assert message.metadata["sender_name"] == ""
    assert display_name(None, 5, "", "bob") == "bob"
    assert not flag_raised(False)
    assert flag_raised(0)
    assert flag_raised(None)


# Crafted fields the adapters normalise (a message comes out): admit() must take those too.
NORMALISED_CASES: list[tuple[str, Case]] = [
    ("telegram", ("group", (*MSG, "from", "username", 7))),
    ("telegram", ("callback_query", (*CB, "from", "first_name", ["x"]))),
    ("telegram", ("forum_topic", (*MSG, "is_topic_message", "yes"))),
    ("discord", ("guild_message", (*D, "author", "id", 9001))),
    ("discord", ("guild_message", (*D, "author", "username", {"x": 1}))),
    ("discord", ("slash_guild", (*D, "member", "user", "username", 5))),
]
ALL_CASES = (
    [("telegram", c) for c in TELEGRAM_CASES]
    + [("discord", c) for c in DISCORD_CASES]
    + NORMALISED_CASES
)


@pytest.mark.parametrize(("platform", "case"), ALL_CASES, ids=lambda v: str(v)[:40])
def test_admit_handles_whatever_a_crafted_payload_produced(platform: str, case: Case) -> None:
    """admit() on the adapter's result of a crafted payload decides, never raises."""
    name, path, value = split_case(case)
    for ignore_bots in (True, False):
        message = adapter(platform, crafted(platform, name, path, value), ignore_bots).message
        if message is None:
            continue
        config = ChannelConfig(
            platform="telegram" if platform == "telegram" else "discord",
            ignore_bots=ignore_bots,
            require_mention=False,
        )
        decision = admit(message, config, bot_username="actorscope_bot", bot_id=str(BOT_ID))
        assert decision.admitted or decision.reason is not None

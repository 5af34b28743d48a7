"""Discord fixtures replayed through a real discord.py client's own gateway parsers (offline)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import discord
import pytest
from tests._wait import wait_until

from actorscope.channels._base import ADAPTER_METADATA_KEYS, IgnoreReason
from actorscope.channels._dedup import dedup_key
from actorscope.channels.discord import PLATFORM as DISCORD_PLATFORM
from actorscope.channels.discord._normalize import inspect_dispatch
from actorscope.errors import IdentityError
from actorscope.identity import SenderKind
from actorscope.messages import InboundMessage, MetaKey

FIXTURES = Path(__file__).parent.parent / "fixtures" / "discord"
G, TEXT, THREAD, DM = (
    "81234567890123456",
    "81234567890123457",
    "81234567890123999",
    "81234567890124000",
)
BOT_ID = 81234567890000001
HOOK, OTHER_BOT = "81234567890777888", "81234567890000002"

# fixture -> (user_id, sender_id, kind, session key, thread_id, reason with the defaults)
Expected = tuple[str, str, SenderKind, str, str, IgnoreReason | None]
MESSAGES: dict[str, Expected] = {
    "guild_message": (
        f"guild:{G}:user:9001", "9001", SenderKind.USER,
        f"agent:main:discord:group:{TEXT}", "", None,
    ),
    "thread_message": (
        f"guild:{G}:user:9001", "9001", SenderKind.USER,
        f"agent:main:discord:group:{TEXT}:thread:{THREAD}", THREAD, None,
    ),
    "dm_message": ("9002", "9002", SenderKind.USER, f"agent:main:discord:direct:{DM}", "", None),
    "webhook_message": (
        f"guild:{G}:webhook:{HOOK}", "", SenderKind.WEBHOOK,
        f"agent:main:discord:group:{TEXT}", "", IgnoreReason.NONPERSON_SENDER,
    ),
    "bot_message": (
        f"guild:{G}:bot:{OTHER_BOT}", "", SenderKind.BOT,
        f"agent:main:discord:group:{TEXT}", "", IgnoreReason.BOT_SENDER,
    ),
    "other_bot_slash_reply": (
        f"guild:{G}:bot:{OTHER_BOT}", "", SenderKind.BOT,
        f"agent:main:discord:group:{TEXT}", "", IgnoreReason.BOT_SENDER,
    ),
    "spoof_names": (
        f"guild:{G}:user:9001", "9001", SenderKind.USER,
        f"agent:main:discord:group:{TEXT}", "", None,
    ),
}  # fmt: skip
IGNORED_MESSAGES = {
    "own_slash_reply": IgnoreReason.OWN_MESSAGE,
    "system_message": IgnoreReason.SYSTEM_MESSAGE,
}
# A slash command maps exactly like a message from the same person in the same place.
INTERACTIONS: dict[str, Expected] = {
    "slash_guild": MESSAGES["guild_message"],
    "slash_thread": MESSAGES["thread_message"],
    "slash_dm": MESSAGES["dm_message"],
}


def load(name: str) -> dict[str, Any]:
    """One fixture gateway dispatch."""
    data: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text())
    return data


class RecordingClient(discord.Client):
    """A client that keeps what its gateway parsers dispatch, and never talks HTTP."""

    def __init__(self) -> None:
        intents = discord.Intents.default()
        intents.message_content = True
        super().__init__(intents=intents)
        self.messages: list[discord.Message] = []
        self.interactions: list[discord.Interaction[Any]] = []
        self.http_calls: list[Any] = []

    async def on_message(self, message: discord.Message) -> None:
        """Keep the parsed message."""
        self.messages.append(message)

    async def on_interaction(self, interaction: discord.Interaction[Any]) -> None:
        """Keep the parsed interaction."""
        self.interactions.append(interaction)


@pytest.fixture
async def client() -> AsyncIterator[RecordingClient]:
    """A client whose state knows the fixture guild, its channel, thread and members."""
    client = RecordingClient()
    await client._async_setup_hook()

    async def no_http(*args: Any, **kwargs: Any) -> Any:
        client.http_calls.append(args)
        return {}

    client.http.request = no_http  # type: ignore[method-assign]
    state = client._connection
    bot: Any = {"id": str(BOT_ID), "username": "actorscope", "discriminator": "0", "avatar": None}
    state.user = discord.ClientUser(state=state, data=bot | {"bot": True})
    state.parse_guild_create(load("guild_create")["d"])
    yield client
    await client.close()
    assert client.http_calls == []


async def settle(items: list[Any], count: int) -> Any:
    """Let the dispatched event handler run (bounded), then return the newest item."""
    await wait_until(lambda: len(items) >= count)
    assert len(items) == count
    return items[-1]


def assert_maps_to(message: InboundMessage | None, expected: Expected, name: str) -> InboundMessage:
    """``message`` has the scope, sender, sender kind, session key and thread ``expected`` names."""
    user_id, sender_id, kind, key, thread, _ = expected
    assert message is not None, name
    assert (message.user_id, message.sender_id, message.sender_kind) == (
        user_id,
        sender_id,
        kind,
    ), name
    assert (message.metadata["session_key"], message.thread_id) == (key, thread), name
    return message


async def test_guild_create_built_thread_and_members(client: RecordingClient) -> None:
    """The replayed GUILD_CREATE gave discord.py a guild with the channel and the thread."""
    guild = client.get_guild(int(G))
    assert guild is not None
    assert isinstance(guild.get_thread(int(THREAD)), discord.Thread)


async def test_messages_through_discord_py_parsers(client: RecordingClient) -> None:
    """MESSAGE_CREATE parsed by discord.py normalises to the identity table's values."""
    state = client._connection
    for index, (name, expected) in enumerate(MESSAGES.items(), start=1):
        state.parse_message_create(load(name)["d"])
        parsed = await settle(client.messages, index)
        message = assert_maps_to(
            DISCORD_PLATFORM.normalize_message(parsed, bot_id=BOT_ID, ignore_bots=False),
            expected,
            name,
        )
        assert DISCORD_PLATFORM.inspect_message(parsed, bot_id=BOT_ID).reason is expected[5], name
        if name == "guild_message":
            assert message.metadata[MetaKey.ADDRESSED] == "mention"


async def test_ignored_messages_through_discord_py(client: RecordingClient) -> None:
    """The bot's own slash-command reply and system messages are ignored, bots opted in or not."""
    state = client._connection
    for index, (name, reason) in enumerate(IGNORED_MESSAGES.items(), start=1):
        state.parse_message_create(load(name)["d"])
        parsed = await settle(client.messages, index)
        for ignore_bots in (True, False):
            ingress = DISCORD_PLATFORM.inspect_message(
                parsed, bot_id=BOT_ID, ignore_bots=ignore_bots
            )
            assert ingress.reason is reason, name


async def test_interactions_through_discord_py_parsers(client: RecordingClient) -> None:
    """INTERACTION_CREATE parsed by discord.py: the actor is interaction.user, in guild and DM."""
    state = client._connection
    for index, (name, expected) in enumerate(INTERACTIONS.items(), start=1):
        state.parse_interaction_create(load(name)["d"])
        parsed = await settle(client.interactions, index)
        message = assert_maps_to(DISCORD_PLATFORM.normalize_interaction(parsed), expected, name)
        assert message.metadata[MetaKey.ADDRESSED] == "interaction"
        assert message.content.startswith("/ask")


async def test_parsed_objects_with_raised_flags_are_no_person(client: RecordingClient) -> None:
    """discord.py keeps ``bot: 1`` / ``system: "true"`` as given: neither makes a person."""
    state = client._connection
    # discord.py rebuilds a guild author from minimal user JSON (no ``system``): DM for that.
    cases = (
        ("guild_message", "9101", "bot", 1, IgnoreReason.BOT_SENDER),
        ("guild_message", "9102", "bot", "true", IgnoreReason.BOT_SENDER),
        ("dm_message", "9103", "system", "true", IgnoreReason.SYSTEM_MESSAGE),
    )
    for count, (fixture, author, key, value, reason) in enumerate(cases, start=1):
        data = load(fixture)["d"]
        # A new author each time: discord.py reuses the user object it cached for an id.
        data["author"] |= {"id": author, key: value}
        state.parse_message_create(data)
        parsed = await settle(client.messages, count)
        assert DISCORD_PLATFORM.inspect_message(parsed, bot_id=BOT_ID).reason is reason, (
            key,
            value,
        )
        opted_in = DISCORD_PLATFORM.normalize_message(parsed, bot_id=BOT_ID, ignore_bots=False)
        assert opted_in is None or opted_in.sender_kind is not SenderKind.USER, (key, value)
    interaction = load("slash_guild")["d"]
    interaction["member"]["user"] |= {"id": "9104", "bot": 1}
    state.parse_interaction_create(interaction)
    parsed_interaction = await settle(client.interactions, 1)
    assert (
        DISCORD_PLATFORM.inspect_interaction(parsed_interaction).reason is IgnoreReason.BOT_SENDER
    )


async def test_parsed_object_with_non_string_content_is_malformed(client: RecordingClient) -> None:
    """discord.py does not check ``content``'s type; the adapter does."""
    data = load("guild_message")["d"]
    data["content"] = 42
    client._connection.parse_message_create(data)
    parsed = await settle(client.messages, 1)
    assert DISCORD_PLATFORM.inspect_message(parsed, bot_id=BOT_ID).reason is IgnoreReason.MALFORMED


def test_raw_dicts_match_parsed_objects() -> None:
    """Raw gateway dicts give the same identities (threads need the thread-parent map)."""
    parents = {int(THREAD): int(TEXT)}
    for name, expected in MESSAGES.items():
        message = DISCORD_PLATFORM.normalize_message(
            load(name)["d"], bot_id=BOT_ID, ignore_bots=False, thread_parents=parents
        )
        assert_maps_to(message, expected, name)
    for name, expected in INTERACTIONS.items():
        assert_maps_to(DISCORD_PLATFORM.normalize_interaction(load(name)["d"]), expected, name)


def test_slash_reply_never_names_the_human() -> None:
    """A bot's reply to a slash command stays the bot's: interaction_metadata.user is unused."""
    message = DISCORD_PLATFORM.normalize_message(
        load("other_bot_slash_reply")["d"], ignore_bots=False
    )
    assert message is not None
    assert message.sender_id == ""
    assert "9001" not in message.user_id


def test_webhook_and_bot_without_guild_are_ignored() -> None:
    """A webhook or bot message with no known guild has no safe scope and is ignored."""
    for name in ("webhook_message", "bot_message"):
        data = load(name)["d"]
        del data["guild_id"]
        # With its member object left, the message claims a guild it does not name: malformed.
        assert (
            DISCORD_PLATFORM.inspect_message(data, ignore_bots=False).reason
            is IgnoreReason.MALFORMED
        ), name
        del data["member"]
        ingress = DISCORD_PLATFORM.inspect_message(data, ignore_bots=False)
        assert ingress.reason is IgnoreReason.NO_GUILD, name


def test_mention_and_reply_mark_addressed() -> None:
    """A <@bot> mention or a reply to the bot's message marks the message addressed."""
    mention = DISCORD_PLATFORM.normalize_message(load("guild_message")["d"], bot_id=BOT_ID)
    assert mention is not None
    assert mention.metadata[MetaKey.ADDRESSED] == "mention"
    data = load("thread_message")["d"]
    data["message_reference"] = {"message_id": "81234567890990000", "channel_id": THREAD}
    data["referenced_message"] = load("own_slash_reply")["d"]
    reply = DISCORD_PLATFORM.normalize_message(data, bot_id=str(BOT_ID))
    assert reply is not None
    assert reply.metadata[MetaKey.ADDRESSED] == "reply"
    assert reply.metadata["reply_to_message_id"] == "81234567890990000"
    plain = DISCORD_PLATFORM.normalize_message(load("thread_message")["d"], bot_id=BOT_ID)
    assert plain is not None
    assert MetaKey.ADDRESSED not in plain.metadata


def test_a_callers_marks_fill_in_what_the_payload_does_not_say() -> None:
    """The Cog's marks: a command's addressed mark where no mention or reply marked it, and
    the command name; without them nothing is marked."""
    mention = DISCORD_PLATFORM.inspect_message(
        load("guild_message")["d"], bot_id=BOT_ID, addressed="command", command="writers"
    ).message
    assert mention is not None
    assert (mention.metadata[MetaKey.ADDRESSED], mention.metadata[MetaKey.COMMAND]) == (
        "mention",
        "writers",
    )
    plain = DISCORD_PLATFORM.inspect_message(
        load("thread_message")["d"], bot_id=BOT_ID, addressed="command"
    ).message
    assert plain is not None
    assert plain.metadata[MetaKey.ADDRESSED] == "command"
    assert MetaKey.COMMAND not in plain.metadata
    unmarked = DISCORD_PLATFORM.inspect_message(load("thread_message")["d"], bot_id=BOT_ID).message
    assert unmarked is not None
    assert {MetaKey.ADDRESSED, MetaKey.COMMAND}.isdisjoint(unmarked.metadata)
    with pytest.raises(ValueError, match="addressed must be one of mention, reply, command"):
        DISCORD_PLATFORM.inspect_message(load("thread_message")["d"], addressed="shouted")


def test_spoofed_names_change_nothing() -> None:
    """Usernames like subagent:1, display names like 1087968824, origin text: no effect."""
    message = DISCORD_PLATFORM.normalize_message(load("spoof_names")["d"], bot_id=BOT_ID)
    assert message is not None
    assert (message.sender_id, message.sender_kind) == ("9001", SenderKind.USER)
    assert set(message.metadata) <= ADAPTER_METADATA_KEYS
    assert not any(key.startswith("origin_") for key in message.metadata)


def test_clear_caches_forgets_the_memoised_session_keys() -> None:
    """clear_caches() (for benchmarks) drops the memo: the next message builds an equal key anew."""
    payload = load("guild_message")["d"]
    first, again = (
        DISCORD_PLATFORM.normalize_message(payload, bot_id=BOT_ID, agent_key="memo")
        for _ in range(2)
    )
    assert first is not None
    assert again is not None
    assert first.metadata["session_key"] is again.metadata["session_key"]  # memoised
    DISCORD_PLATFORM.clear_caches()
    fresh = DISCORD_PLATFORM.normalize_message(payload, bot_id=BOT_ID, agent_key="memo")
    assert fresh is not None
    assert fresh.metadata["session_key"] == first.metadata["session_key"]
    assert fresh.metadata["session_key"] is not first.metadata["session_key"]


def test_dispatch_envelope_and_bare_data() -> None:
    """inspect_dispatch takes the gateway envelope or its bare ``d`` object."""
    for name in ("guild_message", "slash_guild"):
        envelope = inspect_dispatch(load(name))
        bare = inspect_dispatch(load(name)["d"])
        assert envelope.message is not None
        assert envelope.message == bare.message
    assert inspect_dispatch(load("guild_create")).reason is IgnoreReason.UNSUPPORTED_EVENT


def test_unhandled_interaction_types_are_ignored() -> None:
    """Pings and autocomplete are not messages."""
    data = load("slash_guild")["d"]
    data["type"] = 4
    assert DISCORD_PLATFORM.inspect_interaction(data).reason is IgnoreReason.UNSUPPORTED_EVENT


def test_bad_agent_key_is_the_callers_error() -> None:
    """A malformed agent key raises instead of being reported as a malformed event."""
    with pytest.raises(IdentityError):
        DISCORD_PLATFORM.normalize_message(load("guild_message")["d"], agent_key="a b")
    with pytest.raises(IdentityError):
        DISCORD_PLATFORM.normalize_interaction(load("slash_dm")["d"], agent_key="")


def test_bad_agent_key_raises_for_an_ignored_message_too() -> None:
    """A bad agent key raises before the message is read, even one that is ignored."""
    data = load("guild_message")["d"]
    data["type"] = 7  # a system message: ignored
    with pytest.raises(IdentityError):
        DISCORD_PLATFORM.inspect_message(data, agent_key="a b")


def test_malformed_payloads_are_ignored_not_raised() -> None:
    """Missing ids, bad snowflakes and non-mappings are ignored as malformed."""
    data = load("guild_message")["d"]
    data["author"]["id"] = "12ab"
    assert DISCORD_PLATFORM.inspect_message(data).reason is IgnoreReason.MALFORMED
    not_a_message: Any = 42
    assert DISCORD_PLATFORM.inspect_message(not_a_message).reason is IgnoreReason.MALFORMED
    assert DISCORD_PLATFORM.inspect_interaction(not_a_message).reason is IgnoreReason.MALFORMED
    assert inspect_dispatch({"op": 0, "t": "MESSAGE_CREATE", "d": []}).reason is (
        IgnoreReason.MALFORMED
    )


def test_placeholder_ids_are_never_discord_senders() -> None:
    """An author or interaction user with a Telegram placeholder id gets no identity."""
    data = load("guild_message")["d"]
    data["author"]["id"] = "1087968824"
    assert DISCORD_PLATFORM.inspect_message(data).reason is IgnoreReason.MALFORMED
    interaction = load("slash_dm")["d"]
    interaction["user"]["id"] = "777000"
    assert DISCORD_PLATFORM.inspect_interaction(interaction).reason is IgnoreReason.MALFORMED


# --- impossible or malformed ids never become identities ------------------------------------


def _guild_message(author_id: str) -> dict[str, Any]:
    """A gateway MESSAGE_CREATE in a guild channel by ``author_id``."""
    return {
        "op": 0,
        "t": "MESSAGE_CREATE",
        "d": {
            "id": "1200000000000000001",
            "channel_id": "1200000000000000002",
            "guild_id": "1200000000000000003",
            "author": {"id": author_id, "username": "zero"},
            "content": "hello",
            "type": 0,
        },
    }


@pytest.mark.parametrize("raw", ["0", "000"])
def test_discord_author_id_zero_is_malformed_not_a_person(raw: str) -> None:
    """A snowflake of 0 (or "000") is not a user id: the message is ignored as malformed."""
    ingress = inspect_dispatch(_guild_message(raw))
    assert (ingress.message, ingress.reason) == (None, IgnoreReason.MALFORMED)


def test_discord_interaction_user_id_zero_is_malformed() -> None:
    """An interaction whose user id is 0 yields no actor: ignored as malformed."""
    payload = {
        "op": 0,
        "t": "INTERACTION_CREATE",
        "d": {
            "id": "1200000000000000009",
            "type": 2,
            "channel_id": "1200000000000000002",
            "guild_id": "1200000000000000003",
            "member": {"user": {"id": "0", "username": "zero"}},
            "data": {"name": "ask"},
        },
    }
    ingress = inspect_dispatch(payload)
    assert (ingress.message, ingress.reason) == (None, IgnoreReason.MALFORMED)


def test_discord_author_bot_one_is_not_a_person() -> None:
    """``author.bot: 1`` (a truthy integer, not ``true``) is a bot, as ``true`` is."""
    payload = _guild_message("1200000000000000004")
    payload["d"]["author"]["bot"] = 1
    assert inspect_dispatch(payload).reason is IgnoreReason.BOT_SENDER
    opted_in = inspect_dispatch(payload, ignore_bots=False).message
    assert opted_in is not None
    assert opted_in.sender_id == ""
    assert opted_in.user_id == "guild:1200000000000000003:bot:1200000000000000004"


def test_discord_message_with_member_but_no_guild_id_is_not_a_dm() -> None:
    """A guild-shaped message (``member``) without ``guild_id`` is malformed, never a DM scope."""
    payload = _guild_message("1200000000000000004")
    del payload["d"]["guild_id"]
    payload["d"]["member"] = {"roles": [], "joined_at": "2024-01-01T00:00:00+00:00"}
    ingress = inspect_dispatch(payload)
    assert (ingress.message, ingress.reason) == (None, IgnoreReason.MALFORMED)


def test_an_edit_is_not_a_duplicate_of_the_original() -> None:
    """An edited message carries its edit time, so dedup keys it apart from the original."""
    data = load("guild_message")["d"]
    original = DISCORD_PLATFORM.normalize_message(data)
    edited = DISCORD_PLATFORM.normalize_message(
        {**data, "edited_timestamp": "2026-01-01T00:01:00.250000+00:00"}
    )
    assert original is not None
    assert edited is not None
    assert MetaKey.EDIT_DATE not in original.metadata
    assert edited.metadata[MetaKey.EDIT_DATE] == "1767225660.25"
    assert dedup_key(edited) != dedup_key(original)
    assert (
        DISCORD_PLATFORM.inspect_message({**data, "edited_timestamp": 7}).reason
        is IgnoreReason.MALFORMED
    )

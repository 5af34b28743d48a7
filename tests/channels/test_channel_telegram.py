"""Telegram fixtures through a real PTB ``Application`` (offline) into its normaliser."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from telegram import Update
from telegram.ext import Application, ApplicationBuilder, ContextTypes, TypeHandler
from telegram.request import BaseRequest, RequestData

from actorscope.channels._base import ADAPTER_METADATA_KEYS, IgnoreReason
from actorscope.channels.telegram import PLATFORM
from actorscope.channels.telegram._normalize import chat_migration, inspect_update
from actorscope.errors import IdentityError
from actorscope.identity import PLACEHOLDER_SENDER_IDS, SenderKind
from actorscope.messages import InboundMessage, MetaKey, OutboundMessage

FIXTURES = Path(__file__).parent.parent / "fixtures" / "telegram"
BOT_USER = {
    "id": 999000111,
    "is_bot": True,
    "first_name": "Actorscope",
    "username": "actorscope_bot",
}
FORUM, GROUP, SUPER = "-1001234567890", "-4100200300", "-1009990001111"

# fixture -> (user_id, sender_id, sender kind, session key, thread_id, reason with ignore_bots on)
Expected = tuple[str, str, SenderKind, str, str, IgnoreReason | None]
EXPECTED: dict[str, Expected] = {
    "private": ("4242", "4242", SenderKind.USER, "agent:main:telegram:direct:4242", "", None),
    "group": (
        f"group:telegram:{GROUP}", "4242", SenderKind.USER,
        f"agent:main:telegram:group:{GROUP}", "", None,
    ),
    "supergroup": (
        f"group:telegram:{SUPER}", "5151", SenderKind.USER,
        f"agent:main:telegram:group:{SUPER}", "", None,
    ),
    "forum_topic": (
        f"group:telegram:{FORUM}", "4242", SenderKind.USER,
        f"agent:main:telegram:group:{FORUM}:topic:7", "7", None,
    ),
    "forum_general": (
        f"group:telegram:{FORUM}", "5151", SenderKind.USER,
        f"agent:main:telegram:group:{FORUM}:topic:1", "1", None,
    ),
    "supergroup_reply": (
        f"group:telegram:{SUPER}", "4242", SenderKind.USER,
        f"agent:main:telegram:group:{SUPER}", "", None,
    ),
    "anonymous_admin": (
        f"group:telegram:{FORUM}", "", SenderKind.ANONYMOUS_ADMIN,
        f"agent:main:telegram:group:{FORUM}:topic:1", "1", IgnoreReason.NONPERSON_SENDER,
    ),
    "channel_sender": (
        f"group:telegram:{SUPER}", "", SenderKind.CHANNEL,
        f"agent:main:telegram:group:{SUPER}", "", IgnoreReason.NONPERSON_SENDER,
    ),
    "automatic_forward": (
        f"group:telegram:{SUPER}", "", SenderKind.SERVICE,
        f"agent:main:telegram:group:{SUPER}", "", IgnoreReason.NONPERSON_SENDER,
    ),
    "channel_post": (
        "group:telegram:-1009876543210", "", SenderKind.CHANNEL,
        "agent:main:telegram:group:-1009876543210", "", IgnoreReason.NONPERSON_SENDER,
    ),
    "edited_message": (
        f"group:telegram:{GROUP}", "4242", SenderKind.USER,
        f"agent:main:telegram:group:{GROUP}", "", None,
    ),
    "callback_query": (
        f"group:telegram:{FORUM}", "5151", SenderKind.USER,
        f"agent:main:telegram:group:{FORUM}:topic:7", "7", None,
    ),
    "callback_inline": (
        "4242", "4242", SenderKind.USER, "agent:main:telegram:direct:4242", "", None,
    ),
    "bot_sender": (
        f"group:telegram:{GROUP}", "", SenderKind.BOT,
        f"agent:main:telegram:group:{GROUP}", "", IgnoreReason.BOT_SENDER,
    ),
    "spoof_placeholder_from": (
        f"group:telegram:{GROUP}", "", SenderKind.ANONYMOUS_ADMIN,
        f"agent:main:telegram:group:{GROUP}", "", IgnoreReason.NONPERSON_SENDER,
    ),
    "spoof_names": (
        f"group:telegram:{GROUP}", "4242", SenderKind.USER,
        f"agent:main:telegram:group:{GROUP}", "", None,
    ),
    "spoof_private_placeholder": (
        "group:telegram:777000", "", SenderKind.SERVICE,
        "agent:main:telegram:group:777000", "", IgnoreReason.NONPERSON_SENDER,
    ),
}  # fmt: skip
IGNORED: dict[str, IgnoreReason] = {
    "my_chat_member": IgnoreReason.CHAT_MEMBER_UPDATE,
    "service_new_members": IgnoreReason.SERVICE_MESSAGE,
    "migrate_to": IgnoreReason.CHAT_MIGRATED,
    "migrate_from": IgnoreReason.CHAT_MIGRATED,
}


def load(name: str) -> dict[str, Any]:
    """One fixture update as a dict."""
    data: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text())
    return data


class MemoryRequest(BaseRequest):
    """A PTB request backend answering the Bot API from memory and recording every call."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    @property
    def read_timeout(self) -> float | None:
        """No timeouts: nothing leaves the process."""
        return None

    async def initialize(self) -> None:
        """Nothing to open."""

    async def shutdown(self) -> None:
        """Nothing to close."""

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: Any = None,
        write_timeout: Any = None,
        connect_timeout: Any = None,
        pool_timeout: Any = None,
    ) -> tuple[int, bytes]:
        """Answer ``getMe`` with the bot, anything else with ``true``."""
        endpoint = url.rsplit("/", 1)[-1]
        self.calls.append(endpoint)
        result: Any = BOT_USER if endpoint == "getMe" else True
        return 200, json.dumps({"ok": True, "result": result}).encode()


async def through_application(names: list[str], **options: Any) -> dict[str, InboundMessage | None]:
    """Run fixtures through ``Application.process_update`` with a normalising handler."""
    request = MemoryRequest()
    app: Application[Any, Any, Any, Any, Any, Any] = (
        ApplicationBuilder().token("123:TEST").request(request).updater(None).build()
    )
    results: dict[str, InboundMessage | None] = {}
    current: list[str] = []

    async def handler(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        results[current[0]] = PLATFORM.normalize_update(
            update, bot_username=context.bot.username, **options
        )

    app.add_handler(TypeHandler(Update, handler))
    async with app:
        for name in names:
            current[:] = [name]
            await app.process_update(Update.de_json(load(name), app.bot))
    assert request.calls == ["getMe"]  # normalisation itself never calls the API
    return results


async def test_every_fixture_through_ptb_application() -> None:
    """Each fixture, processed by a real PTB Application, yields the identity table's values."""
    results = await through_application([*EXPECTED, *IGNORED], ignore_bots=False)
    for name, (user_id, sender_id, kind, key, thread, _) in EXPECTED.items():
        message = results[name]
        assert message is not None, name
        assert (message.user_id, message.sender_id, message.sender_kind) == (
            user_id,
            sender_id,
            kind,
        ), name
        assert message.metadata["session_key"] == key, name
        assert message.thread_id == thread, name
        assert message.sender_id not in PLACEHOLDER_SENDER_IDS
    for name in IGNORED:
        assert results[name] is None, name


async def test_default_ignores_nonperson_senders() -> None:
    """With the defaults, bots and every non-person sender are ignored with their reason."""
    for name, expected in EXPECTED.items():
        ingress = inspect_update(load(name), bot_username="actorscope_bot")
        assert ingress.reason is expected[5], name
        assert (ingress.message is None) is (expected[5] is not None), name
    for name, reason in IGNORED.items():
        assert inspect_update(load(name)).reason is reason, name


def test_forum_topic_reply_to_topic_root_is_not_a_reply_to_the_bot() -> None:
    """In a topic the bot opened, the topic root is not a reply: no ``addressed``."""
    message = PLATFORM.normalize_update(load("forum_topic"), bot_username="actorscope_bot")
    assert message is not None
    assert MetaKey.ADDRESSED not in message.metadata
    assert "reply_to_message_id" not in message.metadata


def test_reply_to_the_bot_and_mentions_and_commands_are_addressed() -> None:
    """A reply to the bot, an @mention and a /cmd@bot each mark the message addressed."""
    cases = {"supergroup_reply": "reply", "group": "mention", "supergroup": "command"}
    for name, how in cases.items():
        message = PLATFORM.normalize_update(load(name), bot_username="actorscope_bot")
        assert message is not None
        assert message.metadata[MetaKey.ADDRESSED] == how, name
    other = load("supergroup")
    other["message"]["text"] = "/status@someone_else_bot"
    assert inspect_update(other, bot_username="actorscope_bot").reason is (
        IgnoreReason.NOT_FOR_THIS_BOT
    )


def test_edited_message_and_callback_metadata() -> None:
    """Edits carry their edit time; callbacks carry the data as content and count as addressed."""
    edit = PLATFORM.normalize_update(load("edited_message"))
    assert edit is not None
    assert edit.metadata[MetaKey.EVENT] == "edited_message"
    assert edit.metadata[MetaKey.EDIT_DATE] == "1700000100"
    click = PLATFORM.normalize_update(load("callback_query"))
    assert click is not None
    assert (click.content, click.metadata[MetaKey.ADDRESSED]) == ("vote:yes", "callback")


def test_a_reply_to_a_click_answers_the_message_clicked() -> None:
    """A click's message id is the click's own (for dedup), but a reply to it answers the
    message whose button was clicked; a click on an inline-mode message answers none."""
    click = PLATFORM.normalize_update(load("callback_query"))
    assert click is not None
    assert (click.message_id, click.reply_target) == ("cb-1", "60")
    assert OutboundMessage.reply_to(click, "ok").reply_to_message_id == "60"
    inline = PLATFORM.normalize_update(load("callback_inline"))
    assert inline is not None
    assert (inline.message_id, inline.reply_target) == ("cb-2", "")
    assert OutboundMessage.reply_to(inline, "ok").reply_to_message_id == ""


def test_a_click_on_a_message_without_a_valid_id_is_malformed() -> None:
    """A click whose message id is not a positive integer is refused as malformed."""
    clicker = {"id": 5151, "is_bot": False, "first_name": "Bob"}
    for bad in (0, -3, "60", True):
        update = _callback(clicker)
        update["callback_query"]["message"]["message_id"] = bad
        ingress = inspect_update(update)
        assert (ingress.message, ingress.reason) == (None, IgnoreReason.MALFORMED), bad


def test_migration_is_exposed_as_scope_move() -> None:
    """Both migration updates name the old and new group scopes."""
    for name in ("migrate_to", "migrate_from"):
        move = chat_migration(load(name))
        assert move is not None
        assert (move.old_scope, move.new_scope) == (
            "group:telegram:-4100200300",
            "group:telegram:-1004100200300",
        )
    assert chat_migration(load("group")) is None


def test_spoofed_names_and_text_change_nothing() -> None:
    """Display names and text that look like ids or origins never reach identity or metadata."""
    message = PLATFORM.normalize_update(load("spoof_names"), bot_username="actorscope_bot")
    assert message is not None
    assert (message.sender_id, message.sender_kind) == ("4242", SenderKind.USER)
    assert set(message.metadata) <= ADAPTER_METADATA_KEYS
    assert not any(key.startswith("origin_") for key in message.metadata)


def test_custom_channel_name_and_agent_key() -> None:
    """A configured channel name becomes the scope's channel; the agent key the session's."""
    message = PLATFORM.normalize_update(load("group"), channel="tg-work", agent_key="helper")
    assert message is not None
    assert message.user_id == f"group:tg-work:{GROUP}"
    assert message.metadata["session_key"] == f"agent:helper:tg-work:group:{GROUP}"


def test_clear_caches_forgets_the_memoised_session_keys() -> None:
    """clear_caches() (for benchmarks) drops the memo: the next update builds an equal key anew."""
    first, again = (PLATFORM.normalize_update(load("group"), agent_key="memo") for _ in range(2))
    assert first is not None
    assert again is not None
    assert first.metadata["session_key"] is again.metadata["session_key"]  # memoised
    PLATFORM.clear_caches()
    fresh = PLATFORM.normalize_update(load("group"), agent_key="memo")
    assert fresh is not None
    assert fresh.metadata["session_key"] == first.metadata["session_key"]
    assert fresh.metadata["session_key"] is not first.metadata["session_key"]


def test_bad_agent_key_is_the_callers_error() -> None:
    """A malformed agent key raises instead of silently ignoring every update."""
    with pytest.raises(IdentityError):
        PLATFORM.normalize_update(load("group"), agent_key="a:b")


@pytest.mark.parametrize("fixture", ["my_chat_member", "service_new_members"])
def test_bad_agent_key_raises_for_an_ignored_update_too(fixture: str) -> None:
    """A bad agent key or channel raises before the update is read, even one that is ignored."""
    with pytest.raises(IdentityError):
        inspect_update(load(fixture), agent_key="a:b")
    with pytest.raises(IdentityError):
        inspect_update(load(fixture), channel="Bad Channel")


def test_not_an_update_is_malformed() -> None:
    """Anything but an Update or a mapping is ignored as malformed, not raised."""
    not_an_update: Any = [1, 2]
    assert inspect_update(not_an_update).reason is IgnoreReason.MALFORMED


def test_media_messages_carry_caption_and_file_ids() -> None:
    """A photo or document message keeps its caption as content and lists its files."""
    update = load("group")
    message = update["message"]
    del message["text"]
    message["caption"] = "look @actorscope_bot"
    message["photo"] = [
        {"file_id": "small", "file_unique_id": "s", "width": 90, "height": 90},
        {"file_id": "large", "file_unique_id": "l", "width": 900, "height": 900},
    ]
    message["document"] = {"file_id": "doc", "file_unique_id": "d", "mime_type": "text/plain"}
    normalized = PLATFORM.normalize_update(update, bot_username="actorscope_bot")
    assert normalized is not None
    assert normalized.content == "look @actorscope_bot"
    assert [(m.kind, m.file_id) for m in normalized.media] == [
        ("photo", "large"),
        ("document", "doc"),
    ]
    assert normalized.media[1].mime_type == "text/plain"


# --- button presses: bot accounts and malformed data ----------------------------------------


def _callback(clicker: dict[str, Any], data: Any = "vote:yes") -> dict[str, Any]:
    """A supergroup button press by ``clicker`` carrying ``data``."""
    return {
        "update_id": 2,
        "callback_query": {
            "id": "4382",
            "chat_instance": "ci",
            "data": data,
            "from": clicker,
            "message": {
                "message_id": 60,
                "date": 1,
                "chat": {"id": -1001234567890, "type": "supergroup", "title": "devs"},
                "text": "vote?",
            },
        },
    }


def test_telegram_callback_query_from_a_bot_is_not_a_person() -> None:
    """A button press whose ``from`` is a bot account never yields a person sender."""
    for is_bot in (True, 1, "true"):
        clicker = {"id": 5151, "is_bot": is_bot, "first_name": "spam_bot"}
        for ignore_bots in (True, False):
            ingress = inspect_update(_callback(clicker), ignore_bots=ignore_bots)
            assert (ingress.message, ingress.reason) == (None, IgnoreReason.BOT_SENDER), is_bot


def test_non_string_callback_data_is_malformed() -> None:
    """Integer or list ``callback_data`` is malformed: no message, so admit() never sees it."""
    clicker = {"id": 5151, "is_bot": False, "first_name": "Bob"}
    for data in (12345, ["vote"], {"v": 1}):
        ingress = inspect_update(_callback(clicker, data))
        assert (ingress.message, ingress.reason) == (None, IgnoreReason.MALFORMED), data

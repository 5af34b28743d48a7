"""The identity table of docs/design.md, builder by builder, plus the sender classifiers."""

from __future__ import annotations

import dataclasses
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import actorscope.identity
from actorscope.errors import ActorscopeError, IdentityError
from actorscope.identity import (
    _SYNTHETIC_SENDER_PREFIXES,
    ANONYMOUS_ADMIN_ID,
    CHANNEL_BOT_ID,
    PLACEHOLDER_SENDER_IDS,
    SERVICE_ID,
    SYNTHETIC_SENDER_EXACT,
    Identity,
    PeerKind,
    Scope,
    ScopeKind,
    SenderKind,
    _is_canonical_platform_id,
    session_key,
)
from actorscope.platforms import BuiltInPlatform, _integer_id

ALICE = 4242
GROUP_CHAT = -4100200300
FORUM_CHAT = -1001234567890
GUILD = 81234567890123456
GUILD_CHANNEL = 81234567890123457
CAROL = 9001

# --- Telegram ------------------------------------------------------------------------------


# --- Discord -------------------------------------------------------------------------------


# --- HTTP and system -----------------------------------------------------------------------


def test_http_identity_scope_is_the_user_and_sender_is_empty() -> None:
    """An HTTP caller: scope = user id, sender "", actor = user id."""
    identity = Identity.http("api-user-17", role="admin", tenant_id="t-1")
    assert identity.user_id == "api-user-17"
    assert identity.sender_id == ""
    assert identity.actor_id == "api-user-17"
    assert identity.channel == BuiltInPlatform.HTTP
    assert identity.peer_kind is PeerKind.DIRECT
    assert identity.sender_kind is SenderKind.NONE
    assert identity.role == "admin"
    assert identity.tenant_id == "t-1"


@pytest.mark.parametrize("bad", ["", " user", "user ", " "])
def test_http_identity_rejects_empty_or_padded_user(bad: str) -> None:
    """An empty or whitespace-padded HTTP user id raises IdentityError."""
    with pytest.raises(IdentityError):
        Identity.http(bad)


def test_system_identity_with_synthetic_sender() -> None:
    """A ticker run keeps its synthetic sender, marked SYNTHETIC, and the inherited group scope."""
    identity = Identity.system(f"group:telegram:{GROUP_CHAT}", "ticker:daily-digest")
    assert identity.sender_id == "ticker:daily-digest"
    assert identity.sender_kind is SenderKind.SYNTHETIC
    assert identity.user_id == f"group:telegram:{GROUP_CHAT}"
    assert identity.peer_kind is PeerKind.GROUP
    assert identity.actor_id == "ticker:daily-digest"


def test_system_identity_with_real_propagated_sender() -> None:
    """A system run with a propagated real sender: USER kind, actor is that sender."""
    identity = Identity.system(f"group:telegram:{GROUP_CHAT}", "4242")
    assert identity.sender_id == "4242"
    assert identity.sender_kind is SenderKind.USER
    assert identity.actor_id == "4242"
    assert identity.is_group


def test_system_identity_with_empty_sender_falls_back_to_the_scope() -> None:
    """A system run without a sender: NONE kind, actor is the inherited scope."""
    identity = Identity.system("4242")
    assert identity.sender_id == ""
    assert identity.sender_kind is SenderKind.NONE
    assert identity.actor_id == "4242"
    assert identity.peer_kind is PeerKind.DIRECT


def test_system_identity_without_anything_is_empty() -> None:
    """A bare system run has empty scope, sender and actor."""
    identity = Identity.system()
    assert (identity.user_id, identity.sender_id, identity.actor_id) == ("", "", "")
    assert identity.sender_kind is SenderKind.NONE


# --- Identity itself ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("user_id", "sender_id", "actor"),
    [("scope", "sender", "sender"), ("scope", "", "scope"), ("", "", "")],
)
def test_actor_id_is_sender_else_scope(user_id: str, sender_id: str, actor: str) -> None:
    """actor_id = sender_id or user_id."""
    assert Identity(user_id=user_id, sender_id=sender_id).actor_id == actor


def test_identity_is_frozen() -> None:
    """Assigning to an Identity field raises FrozenInstanceError."""
    identity = Identity(user_id="1", sender_id="1")
    with pytest.raises(dataclasses.FrozenInstanceError):
        identity.sender_id = "2"  # type: ignore[misc]


def test_identity_rejects_non_string_ids() -> None:
    """A non-string id field raises IdentityError."""
    with pytest.raises(IdentityError):
        Identity(user_id=42, sender_id="42")  # type: ignore[arg-type]


def test_identity_coerces_kind_strings_to_enums() -> None:
    """String peer/sender kinds become PeerKind/SenderKind members."""
    peer: Any = "group"
    kind: Any = "webhook"
    identity = Identity(user_id="g", sender_id="", peer_kind=peer, sender_kind=kind)
    assert identity.peer_kind is PeerKind.GROUP
    assert identity.sender_kind is SenderKind.WEBHOOK


# --- session keys --------------------------------------------------------------------------


def test_session_key_direct() -> None:
    """A direct chat session key: agent:<key>:<channel>:direct:<chat>."""
    assert (
        session_key("main", BuiltInPlatform.TELEGRAM, PeerKind.DIRECT, 4242)
        == "agent:main:telegram:direct:4242"
    )


def test_session_key_group() -> None:
    """A group chat session key: agent:<key>:<channel>:group:<chat>."""
    assert (
        session_key("main", BuiltInPlatform.TELEGRAM, PeerKind.GROUP, GROUP_CHAT)
        == f"agent:main:telegram:group:{GROUP_CHAT}"
    )


def test_session_key_topic() -> None:
    """A forum topic appends :topic:<N>."""
    assert (
        session_key("main", BuiltInPlatform.TELEGRAM, PeerKind.GROUP, FORUM_CHAT, topic_id=7)
        == f"agent:main:telegram:group:{FORUM_CHAT}:topic:7"
    )


def test_session_key_thread() -> None:
    """A thread appends :thread:<N>."""
    assert (
        session_key(
            "main",
            BuiltInPlatform.DISCORD,
            PeerKind.GROUP,
            GUILD_CHANNEL,
            thread_id="81234567890123999",
        )
        == f"agent:main:discord:group:{GUILD_CHANNEL}:thread:81234567890123999"
    )


def test_session_key_rejects_topic_and_thread_together() -> None:
    """Passing both a topic and a thread raises IdentityError."""
    with pytest.raises(IdentityError, match="not both"):
        session_key(
            "main", BuiltInPlatform.TELEGRAM, PeerKind.GROUP, FORUM_CHAT, topic_id=1, thread_id=2
        )


@pytest.mark.parametrize("bad_key", ["", "a:b", "a b", "tab\tkey", "\n"])
def test_session_key_rejects_a_bad_agent_key(bad_key: str) -> None:
    """An empty agent key or one with ':' or whitespace raises IdentityError."""
    with pytest.raises(IdentityError, match="agent key"):
        session_key(bad_key, BuiltInPlatform.TELEGRAM, PeerKind.DIRECT, 1)


def test_session_key_rejects_a_non_numeric_topic() -> None:
    """A topic id that is not numeric raises IdentityError."""
    with pytest.raises(IdentityError, match="topic id"):
        session_key(
            "main", BuiltInPlatform.TELEGRAM, PeerKind.GROUP, FORUM_CHAT, topic_id="general"
        )


# --- classifiers ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("scope", "expected"),
    [
        ("group:telegram:-100", True),
        ("guild:1:user:2", True),
        ("4242", False),
        ("", False),
        ("groups:x", False),
        ("Group:telegram:1", False),
        ("api-user-17", False),
    ],
)
def test_is_group_scope(scope: str, expected: bool) -> None:
    """A scope is a group context iff it starts with group: or guild:."""
    assert Scope.is_group_id(scope) is expected


@pytest.mark.parametrize(
    "sender",
    [
        "subagent:abc-123",
        "subagent:delegate:xyz",
        "notification:system",
        "teammate:dashboard",
        "system:escalation",
        "ticker:heartbeat",
        "session_send_tool",
    ],
)
def test_is_synthetic_sender_true(sender: str) -> None:
    """Each synthetic prefix, and the exact session_send_tool, is synthetic."""
    assert SenderKind.is_synthetic(sender)


@pytest.mark.parametrize(
    "sender",
    [
        "42",
        "",
        "session_send_tool2",
        "session_send_tool:x",
        "xsession_send_tool",
        "session_send",
        "subagent",
        "my-subagent:abc",
        "1087968824",
    ],
)
def test_is_synthetic_sender_false(sender: str) -> None:
    """Real ids and near misses are not synthetic; session_send_tool matches exactly only."""
    assert not SenderKind.is_synthetic(sender)


@pytest.mark.parametrize(
    "sender",
    [
        ANONYMOUS_ADMIN_ID,
        CHANNEL_BOT_ID,
        SERVICE_ID,
        "1087968824|GroupAnonymousBot",
        "136817688|Channel_Bot",
        " 777000 ",
    ],
)
def test_is_placeholder_sender_true(sender: str) -> None:
    """Telegram placeholder ids are placeholders, legacy "id|name" form included."""
    assert SenderKind.is_placeholder(sender)


@pytest.mark.parametrize("sender", ["42", "", "10879688240", "777", "42|1087968824"])
def test_is_placeholder_sender_false(sender: str) -> None:
    """Other ids are not placeholders."""
    assert not SenderKind.is_placeholder(sender)


def test_placeholder_ids_are_exactly_the_three_telegram_ids() -> None:
    """The placeholder set holds exactly 1087968824, 136817688 and 777000."""
    assert frozenset({"1087968824", "136817688", "777000"}) == PLACEHOLDER_SENDER_IDS


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("42|bob", "42"), ("42", "42"), (" 42|bob ", "42"), ("42|a|b", "42"), ("", ""), ("|x", "")],
)
def test_normalize_sender_id(raw: str, expected: str) -> None:
    """A legacy "<id>|<username>" sender string is split down to the id."""
    assert SenderKind.normalize_id(raw) == expected


# --- _integer_id ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [(42, "42"), ("42", "42"), ("-100123", "-100123"), ("007", "7"), (-5, "-5")],
)
def test_platform_id_canonicalises_numbers(value: int | str, expected: str) -> None:
    """A numeric id (int or decimal string) becomes its canonical decimal string."""
    assert _integer_id(value, "chat id") == expected


@pytest.mark.parametrize("bad", ["1:2", "abc", True, False, "subagent:1", "", " 1", "1\n", 1.5])
def test_platform_id_rejects_non_numeric(bad: object) -> None:
    """Colons, names, booleans, synthetic ids and padding raise IdentityError naming the field."""
    with pytest.raises(IdentityError, match="chat id"):
        _integer_id(bad, "chat id")  # type: ignore[arg-type]


def test_identity_error_is_an_actorscope_error() -> None:
    """IdentityError derives from ActorscopeError."""
    assert issubclass(IdentityError, ActorscopeError)


# --- properties ----------------------------------------------------------------------------

ids = st.integers(min_value=1, max_value=10**19)
# Discord snowflakes of people: Telegram placeholder ids are refused by discord_identity.
person_ids = ids.filter(lambda i: str(i) not in PLACEHOLDER_SENDER_IDS)
chat_ids = st.integers(min_value=-(10**14), max_value=10**14)
real_senders = ids.filter(lambda n: str(n) not in PLACEHOLDER_SENDER_IDS)


def _int_or_str(strategy: st.SearchStrategy[int]) -> st.SearchStrategy[int | str]:
    return st.one_of(strategy, strategy.map(str))


@settings(max_examples=200, deadline=None)
@given(raw=st.text())
def test_normalize_sender_id_is_idempotent(raw: str) -> None:
    """normalize_id(normalize_id(x)) == normalize_id(x) for any text."""
    once = SenderKind.normalize_id(raw)
    assert SenderKind.normalize_id(once) == once
    assert "|" not in once


# --- look-alikes (issue 13 item 10) and the identity step ----------------------------------

TG_GROUP = "group:telegram:-100200"
#: Format characters (Unicode category Cf) an attacker can hide in an id.
FORMAT_CHARS = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u202e", "\u00ad"]


@pytest.mark.parametrize(
    "sender",
    ["SUBAGENT:x", "\u200bsubagent:x", "sub\u200dagent:x", "Ticker:x", "SESSION_SEND_TOOL",
     "\uff53ubagent:x", "\ufeffsystem:x|bob", " Teammate:x "],
)  # fmt: skip
def test_synthetic_detection_ignores_case_and_format_characters(sender: str) -> None:
    """``SUBAGENT:x``, a zero-width-prefixed or full-width ``subagent:x`` are all synthetic."""
    assert SenderKind.is_synthetic(sender)


@pytest.mark.parametrize(
    "sender",
    ["0777000", "00136817688", "\uff17\uff17\uff17\uff10\uff10\uff10", "777000\u200b",
     "\u0667\u0667\u0667\u0660\u0660\u0660", "0777000|svc"],
)  # fmt: skip
def test_placeholder_lookalikes_are_placeholders(sender: str) -> None:
    """Leading zeros, full-width or other decimal digits, format characters: still placeholders."""
    assert SenderKind.is_placeholder(sender)


@pytest.mark.parametrize("sender", ["7770000", "77700", "0", "1" * 5000, "-777000"])
def test_near_placeholders_are_not_placeholders(sender: str) -> None:
    """Other numbers (a 5,000-digit one too: no int() digit-limit crash) are not placeholders."""
    assert not SenderKind.is_placeholder(sender)


@pytest.mark.parametrize(
    ("sender", "canonical"),
    [("42", True), ("81234567890123456", True), ("0", False), ("042", False), ("+42", False),
     ("-42", False), ("42\n", False), (" 42", False), ("\uff14\uff12", False),
     ("\u0664\u0662", False), ("4_2", False), ("", False), ("1" * 33, False)],
)  # fmt: skip
def test_is_canonical_platform_id(sender: str, canonical: bool) -> None:
    """Only a positive ASCII integer without sign or leading zero is canonical."""
    assert _is_canonical_platform_id(sender) is canonical


@pytest.mark.parametrize(
    ("scope", "sender", "channel", "problem"),
    [
        (TG_GROUP, "42", "", False),
        (TG_GROUP, "42|bob", "", False),  # legacy: split on | first
        (TG_GROUP, "", "", False),  # empty is the policy's empty_sender, not this
        (TG_GROUP, "042", "", True),
        (TG_GROUP, "42\u200b", "", True),
        (TG_GROUP, "bob", "", True),
        ("group:x", "bob", "", True),  # a two-part group scope is the default channel's
        ("guild:9:user:42", "042", "", True),
        ("group:matrix:5", "042", "", False),  # a custom channel's ids are opaque...
        ("group:matrix:5", "042", "discord", True),  # ...unless the identity says Discord
        ("group:matrix:5", "bob\u200b", "matrix", True),
        ("group:matrix:5", "\uff42ob", "matrix", True),
        ("group:matrix:5", "jos\u00e9", "matrix", False),  # NFC text is fine
        ("4242", "042", "telegram", False),  # direct contexts: only storability
        ("4242", "4\x002", "telegram", True),
        ("42\ud800", "", "", True),
        (TG_GROUP + "\x00", "42", "", True),
        ("group:matrix:5", "a" * 256, "matrix", False),  # the longest sender a grant may name
        ("group:matrix:5", "a" * 257, "matrix", True),
        ("4242", "a" * 257, "", True),  # length is checked everywhere, like storability
        ("group:matrix:" + "5" * 499, "bob", "matrix", False),  # 512 characters
        ("group:matrix:" + "5" * 500, "bob", "matrix", True),
    ],
)
def test_identity_problem(scope: str, sender: str, channel: str, problem: bool) -> None:
    """The identity step: storable everywhere; in groups a well-formed id for the channel."""
    found = Identity.problem(scope, sender, channel)
    assert (found is not None) is problem, found


@given(st.integers(min_value=1, max_value=10**30), st.integers(min_value=1, max_value=3))
def test_leading_zeros_are_never_a_telegram_or_discord_person(number: int, zeros: int) -> None:
    """Property: any positive id with leading zeros is refused in Telegram and Discord groups."""
    sender = "0" * zeros + str(number)
    assert Identity.problem(TG_GROUP, str(number)) is None
    assert Identity.problem(TG_GROUP, sender) is not None
    assert Identity.problem(f"guild:9:user:{number}", sender) is not None


@given(
    st.integers(min_value=1, max_value=10**30),
    st.sampled_from(FORMAT_CHARS),
    st.integers(min_value=0, max_value=31),
    st.sampled_from(["telegram", "discord", "matrix"]),
)
def test_a_format_character_anywhere_makes_any_group_sender_invalid(
    number: int, char: str, at: int, channel: str
) -> None:
    """Property: a Cf character inside an id is refused in groups on every channel."""
    text = str(number)
    at = min(at, len(text))
    sender = text[:at] + char + text[at:]
    assert unicodedata.category(char) == "Cf"
    assert Identity.problem(f"group:{channel}:-5", sender, channel) is not None


@given(
    st.sampled_from(sorted(_SYNTHETIC_SENDER_PREFIXES)),
    st.text(alphabet="abc:-1", max_size=8),
    st.lists(st.booleans(), min_size=30, max_size=30),
    st.lists(st.sampled_from(["", *FORMAT_CHARS]), min_size=30, max_size=30),
)
def test_synthetic_prefix_in_any_case_with_hidden_characters_is_synthetic(
    prefix: str, rest: str, upper: list[bool], hidden: list[str]
) -> None:
    """Property: case changes and format characters never hide a synthetic prefix."""
    spelled = "".join(
        (char.upper() if up else char) + gap
        for char, up, gap in zip(prefix, upper, hidden, strict=False)
    )
    assert SenderKind.is_synthetic(hidden[-1] + spelled + rest)


@given(st.sampled_from(sorted(SYNTHETIC_SENDER_EXACT)), st.lists(st.booleans(), min_size=30))
def test_exact_synthetic_sender_in_any_case_is_synthetic(exact: str, upper: list[bool]) -> None:
    """Property: ``session_send_tool`` in any mix of case is synthetic."""
    assert SenderKind.is_synthetic(
        "".join(c.upper() if u else c for c, u in zip(exact, upper, strict=False))
    )


def test_system_identity_carries_the_channel_it_inherits() -> None:
    """A system run says the channel of the scope it inherits; a malformed one is refused."""
    assert Identity.system("4242", channel="telegram").channel == "telegram"
    assert Identity.system("4242").channel == ""
    with pytest.raises(IdentityError, match="channel name"):
        Identity.system("4242", channel="Tele gram")


@pytest.mark.parametrize(
    ("text", "kind", "parts", "canonical"),
    [
        ("group:telegram:-100", ScopeKind.GROUP, ("telegram", "-100", "", ""), None),
        ("group:-100", ScopeKind.GROUP, ("telegram", "-100", "", ""), "group:telegram:-100"),
        ("group:custom:-0100", ScopeKind.GROUP, ("custom", "-100", "", ""), "group:custom:-100"),
        ("guild:1:user:2", ScopeKind.GUILD_MEMBER, ("discord", "", "1", "2"), None),
        ("guild:1:webhook:3", ScopeKind.GUILD_WEBHOOK, ("discord", "", "1", "3"), None),
        ("guild:1:bot:4", ScopeKind.GUILD_BOT, ("discord", "", "1", "4"), None),
        ("4242", ScopeKind.DIRECT, ("", "4242", "", ""), None),
    ],
)
def test_scope_parse_reads_every_kind(
    text: str, kind: ScopeKind, parts: tuple[str, str, str, str], canonical: str | None
) -> None:
    """Scope.parse names the kind and parts of each scope form; str() gives it back canonical."""
    scope = Scope.parse(text)
    assert scope.kind is kind
    assert (scope.channel, scope.chat_id, scope.guild_id, scope.member_id) == parts
    assert str(scope) == (canonical or text)
    assert scope.is_group is (kind is not ScopeKind.DIRECT)


@pytest.mark.parametrize(
    "text",
    ["group:x", "group:a:b:c", "group:Tele:1", "guild:1:2", "guild:01:user:2", "guild:1:admin:2"],
)
def test_scope_parse_refuses_malformed_group_scopes(text: str) -> None:
    """A malformed group or guild scope is one IdentityError from parse, None from try_parse."""
    with pytest.raises(IdentityError, match="malformed scope"):
        Scope.parse(text)
    assert Scope.try_parse(text) is None


@pytest.mark.parametrize("user", ["group:telegram:-100200", "guild:81234567890123456:user:42"])
def test_http_identity_refuses_a_group_shaped_user_id(user: str) -> None:
    """An HTTP user id shaped like a group scope is refused, never that group's scope."""
    with pytest.raises(IdentityError, match="must not look like a group scope"):
        Identity.http(user)


# --- One builder, by the registration -------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "problem"),
    [
        pytest.param(
            lambda: Identity.chat(BuiltInPlatform.DISCORD, 7, CAROL, group=True),
            "a user message outside a guild has no discord scope",
            id="guild-form-group-without-a-guild",
        ),
        pytest.param(
            lambda: Identity.chat(BuiltInPlatform.DISCORD, 7, None, group=False),
            "a none message outside a guild has no discord scope",
            id="guild-form-direct-without-a-person",
        ),
        pytest.param(
            lambda: Identity.chat(
                BuiltInPlatform.DISCORD,
                7,
                5,
                group=True,
                guild_id=9,
                sender_kind=SenderKind.SYNTHETIC,
            ),
            "a synthetic message in a guild has no discord scope",
            id="guild-form-other-kind",
        ),
        pytest.param(
            lambda: Identity.chat(BuiltInPlatform.TELEGRAM, -5, ALICE, group=True, guild_id=9),
            "telegram has no guilds: its groups are group:<chat>",
            id="group-form-with-a-guild",
        ),
    ],
)
def test_chat_identity_refuses_a_scope_its_form_does_not_have(call: Any, problem: str) -> None:
    """A guild form without a guild (or a safe sender), or a guild on the group form, is one
    IdentityError saying so."""
    with pytest.raises(IdentityError) as refused:
        call()
    assert str(refused.value) == problem


def test_the_identity_module_names_no_platform() -> None:
    """identity.py never names Telegram or Discord: their vocabulary is in their subpackages."""
    text = Path(actorscope.identity.__file__).read_text().lower()
    assert ("telegram" not in text, "discord" not in text) == (True, True)

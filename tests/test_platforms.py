"""The platform registry: what every layer asks about a platform's ids, and accounts.

A platform of opaque ids (a chat whose people and rooms are named ``alice`` and ``ideas``)
is registered for a test with ``with register(...)``; identity, scopes, session keys, grants and
channel configurations then take its ids, and the built-in platforms' rules never change.
"""

from __future__ import annotations

import threading
from importlib.metadata import EntryPoint

import pytest
from tests.fakechat import SPEC

from actorscope.channels import ChannelConfig
from actorscope.errors import ConfigError, GrantError, IdentityError
from actorscope.identity import Identity, PeerKind, Scope, SenderKind, session_key
from actorscope.permissions import PermissionPolicy, Reason
from actorscope.permissions._scopes import parse_grant_scope, parse_grantee
from actorscope.platforms import (
    ENTRY_POINT_GROUP,
    Account,
    BuiltInPlatform,
    IdForm,
    PlatformSpec,
    _Registry,
    platform_spec,
    register,
)

FAKE = PlatformSpec("fakechat", IdForm.OPAQUE, "thread", "tests.fakechat:PLATFORM")


def test_built_in_platforms_cannot_be_replaced() -> None:
    """Telegram's integer ids stay: a registration under its name is refused."""
    assert platform_spec(BuiltInPlatform.TELEGRAM) == PlatformSpec(
        BuiltInPlatform.TELEGRAM,
        IdForm.INTEGER,
        "topic",
        "actorscope.channels.telegram:PLATFORM",
        legacy_groups=True,
        legacy_direct_keys=True,
        max_person_id=2**52 - 1,
    )
    with pytest.raises(ConfigError, match="registered already"):
        register(PlatformSpec(BuiltInPlatform.TELEGRAM, IdForm.OPAQUE))
    assert Identity.problem("group:telegram:-100", "042") is not None


def test_a_bad_spec_is_one_clear_error() -> None:
    """A name that could not be a channel, or a thread word of neither kind, is refused."""
    with pytest.raises(ConfigError, match="platform name"):
        PlatformSpec("Fake Chat", IdForm.OPAQUE)
    with pytest.raises(ConfigError, match="'topic' or 'thread'"):
        PlatformSpec("fake", IdForm.OPAQUE, "room")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="takes a PlatformSpec"):
        register("fake")  # type: ignore[arg-type]


def test_the_group_forms_stay_closed() -> None:
    """No registration takes the guild form or the legacy one: a new platform's groups are
    ``group:<platform>:<chat>``, and every group scope says whose it is."""
    for spec in (
        PlatformSpec("fakeguild", IdForm.OPAQUE, group_form="guild"),
        PlatformSpec("fakelegacy", IdForm.OPAQUE, legacy_groups=True),
    ):
        with pytest.raises(ConfigError, match="the grammar is closed"):
            register(spec)
        assert platform_spec(spec.name) is None
    with pytest.raises(ConfigError, match="the storage keys are closed"):
        register(PlatformSpec("fakebare", IdForm.INTEGER, legacy_direct_keys=True))
    assert platform_spec("fakebare") is None
    with pytest.raises(ConfigError, match="'group' or 'guild'"):
        PlatformSpec("fake", IdForm.OPAQUE, group_form="room")  # type: ignore[arg-type]
    scopes = ("guild:1:user:2", "group:-100", "42")
    assert [Scope.parse(scope).channel for scope in scopes] == [
        BuiltInPlatform.DISCORD,
        BuiltInPlatform.TELEGRAM,
        "",
    ]
    with register(FAKE):
        assert Scope.parse("group:fakechat:ideas").channel == "fakechat"


def test_a_channels_chat_ids_take_its_platforms_form() -> None:
    """canonical_chat_id: the platform's spec decides; a channel of no platform is numeric."""
    assert PlatformSpec.canonical_chat_id(BuiltInPlatform.TELEGRAM, "-0100") == "-100"
    assert PlatformSpec.canonical_chat_id("tg-work", 7) == "7"
    with pytest.raises(IdentityError, match="topic id must be a numeric id"):
        PlatformSpec.canonical_chat_id("tg-work", "ideas", "topic id")
    with register(FAKE):
        assert PlatformSpec.canonical_chat_id("fakechat", "ideas") == "ideas"


def test_a_registration_stays_until_its_handle_is_left() -> None:
    """register() registers at once; the handle it returns, left as a context, unregisters."""
    spec = PlatformSpec("stays", IdForm.OPAQUE)
    handle = register(spec)
    try:
        assert platform_spec("stays") is spec
    finally:
        with handle as entered:
            assert entered is spec
    assert platform_spec("stays") is None


def test_an_opaque_platform_names_its_rooms_and_people() -> None:
    """Registered, its rooms are group scopes and session keys; unregistered, they are not."""
    assert Scope.try_parse("group:fakechat:ideas") is None
    with register(FAKE):
        assert str(Scope.group("fakechat", "ideas")) == "group:fakechat:ideas"
        assert str(Scope.parse("group:fakechat:ideas")) == "group:fakechat:ideas"
        key = session_key("main", "fakechat", PeerKind.GROUP, "ideas", thread_id="t1")
        assert key == "agent:main:fakechat:group:ideas:thread:t1"
        assert Identity.problem("group:fakechat:ideas", "alice", "fakechat") is None
        for look_alike in ("alice\u200b", "\uff41lice", "al ice", "alice:x"):
            assert Identity.problem("group:fakechat:ideas", look_alike, "fakechat") is not None
        with pytest.raises(IdentityError, match="fakechat id"):
            str(Scope.group("fakechat", "id:eas"))
        assert parse_grant_scope("group:fakechat:ideas") == "group:fakechat:ideas"
        assert parse_grantee("alice", "group:fakechat:ideas") == "alice"
        with pytest.raises(GrantError):
            parse_grantee("alice\u200b", "group:fakechat:ideas")
    assert Scope.try_parse("group:fakechat:ideas") is None


def test_a_channel_config_takes_the_platforms_ids() -> None:
    """A registered platform with a contract is a channel's platform; its ids are its own."""
    with pytest.raises(ConfigError, match="must be one of telegram, discord"):
        ChannelConfig.from_mapping({"platform": "fakechat"})
    with register(FAKE):
        config = ChannelConfig.from_mapping(
            {"platform": "fakechat", "owners": ["alice"], "groups": {"ideas": {}}}
        )
        assert (config.name, config.owners, list(config.groups)) == (
            "fakechat",
            ("alice",),
            ["ideas"],
        )
        with pytest.raises(ConfigError, match="not a fakechat sender id"):
            ChannelConfig.from_mapping({"platform": "fakechat", "owners": ["al ice"]})
        room = {"policy": "allowlist", "allow_from": ["alice"]}
        config = ChannelConfig.from_mapping({"platform": "fakechat", "groups": {"ideas": room}})
        assert config.groups["ideas"].allow_from == ("alice",)
        with pytest.raises(
            ConfigError, match=r"ideas.allow_from\[0\] = 'al ice' is not a fakechat"
        ):
            ChannelConfig.from_mapping(
                {"platform": "fakechat", "groups": {"ideas": {"allow_from": ["al ice"]}}}
            )
        with pytest.raises(ConfigError, match="policy"):
            ChannelConfig.from_mapping(
                {"platform": "fakechat", "groups": {"ideas": {"allow_from": [], "policy": "x"}}}
            )
        with pytest.raises(ConfigError, match="must be one of"):
            ChannelConfig.from_mapping({"platform": BuiltInPlatform.HTTP})


def test_accounts_are_platform_and_id() -> None:
    """An account is ``platform:id``; the identity's platform says which id acts."""
    assert str(Account("telegram", "42")) == "telegram:42"
    assert Account.parse("discord:1234") == Account("discord", "1234")
    for bad in ("telegram:042", "nowhere:1", "telegram", "http:al ice"):
        with pytest.raises(IdentityError):
            Account.parse(bad)
    person = Identity("group:telegram:-100", "42", "telegram", "-100", PeerKind.GROUP)
    assert person.account == Account("telegram", "42")
    assert Identity.http("alice").account == Account(BuiltInPlatform.HTTP, "alice")
    nobody = Identity("group:telegram:-100", "", "telegram", "-100", PeerKind.GROUP)
    synthetic = Identity("u", "subagent:1", "telegram", sender_kind=SenderKind.SYNTHETIC)
    other_channel = Identity("42", "42", "tg2", "42")
    assert [i.account for i in (nobody, synthetic, other_channel)] == [None, None, None]
    with register(FAKE):
        alice = Identity("group:fakechat:ideas", "alice", "fakechat", "ideas", PeerKind.GROUP)
        assert alice.account == Account("fakechat", "alice")
        assert Account.parse("fakechat:alice") == Account("fakechat", "alice")


def test_a_rule_asked_before_a_platform_registers_is_the_platforms_rule_after() -> None:
    """A sender judged while a platform of integer ids is absent (opaque rule: ``"042"`` is
    someone) is judged by its rule once it registers (a look-alike of ``42``), and by the
    opaque rule again once it leaves: no cached answer outlives a registry change."""
    integers = PlatformSpec("intchat", IdForm.INTEGER, "thread", "tests.fakechat:PLATFORM")
    look_alike = Identity("group:intchat:5", "042", "intchat", "5", PeerKind.GROUP)
    assert PermissionPolicy.non_person_reason(look_alike) is None
    with register(integers):
        assert PermissionPolicy.non_person_reason(look_alike) is Reason.INVALID_IDENTITY
    assert PermissionPolicy.non_person_reason(look_alike) is None


def test_discovery_runs_once_however_many_threads_ask(monkeypatch: pytest.MonkeyPatch) -> None:
    """Threads asking about an unknown platform together look for installed platforms once,
    and each gets the answer after that look, never a half-done one."""
    from importlib import metadata

    registry = _Registry(())
    looked: list[str] = []
    started, release = threading.Event(), threading.Event()

    def entry_points(group: str) -> tuple[EntryPoint, ...]:
        looked.append(group)
        started.set()
        release.wait(30)
        return (EntryPoint("fakechat", "tests.fakechat:SPEC", group),)

    monkeypatch.setattr(metadata, "entry_points", entry_points)
    answers: list[PlatformSpec | None] = []
    threads = [threading.Thread(target=lambda: answers.append(registry.get("fakechat")))]
    threads[0].start()
    assert started.wait(30)
    threads.append(threading.Thread(target=lambda: answers.append(registry.get("fakechat"))))
    threads[1].start()
    release.set()
    for thread in threads:
        thread.join(30)
    assert looked == [ENTRY_POINT_GROUP]
    assert answers == [SPEC, SPEC]


@pytest.mark.parametrize(
    ("account", "bound"),
    [
        ("telegram:99999999999999999999999999", 2**52 - 1),
        (f"telegram:{2**52}", 2**52 - 1),
        (f"discord:{2**64}", 2**64 - 1),
    ],
)
def test_an_account_id_past_its_platforms_bound_is_refused(account: str, bound: int) -> None:
    """A Telegram user id past 52 bits or a Discord snowflake past 64 bits is no person id."""
    platform, _, number = account.partition(":")
    with pytest.raises(
        IdentityError, match=rf"^'{number}' is not a {platform} person id \(1 to {bound}\)$"
    ):
        Account.parse(account)
    assert str(Account.parse(f"{platform}:{bound}")) == f"{platform}:{bound}"


def test_a_broken_entry_point_fails_only_questions_about_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Beside a broken installed platform, another installed one is found and an unknown
    name is no platform; asking about the broken one, or for every platform, is its error."""
    from importlib import metadata

    entries = (
        EntryPoint("chat", "nonexistent_mod:SPEC", ENTRY_POINT_GROUP),
        EntryPoint("fakechat", "tests.fakechat:SPEC", ENTRY_POINT_GROUP),
    )
    monkeypatch.setattr(metadata, "entry_points", lambda group: entries)
    registry = _Registry(())
    assert registry.get("tg2") is None
    assert registry.get("fakechat") == SPEC
    said = (
        "platform entry point chat = 'nonexistent_mod:SPEC' (actorscope.platforms) cannot be "
        "loaded: ModuleNotFoundError: No module named 'nonexistent_mod'"
    )
    for ask in (lambda: registry.get("chat"), registry.all):
        with pytest.raises(ConfigError) as refused:
            ask()
        assert str(refused.value) == said

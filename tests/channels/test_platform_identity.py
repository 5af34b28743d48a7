"""The built-in platforms' own identity translations: Telegram's chat types and Discord's
authors (a person, a webhook or a bot), each ``PLATFORM.identity`` into ``Identity.chat``."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from actorscope.channels.discord import PLATFORM as DISCORD
from actorscope.channels.telegram import PLATFORM as TELEGRAM
from actorscope.errors import IdentityError
from actorscope.identity import (
    ANONYMOUS_ADMIN_ID,
    PLACEHOLDER_SENDER_IDS,
    Identity,
    PeerKind,
    Scope,
    SenderKind,
)
from actorscope.platforms import BuiltInPlatform

ALICE = 4242
GROUP_CHAT = -4100200300
FORUM_CHAT = -1001234567890
GUILD = 81234567890123456
GUILD_CHANNEL = 81234567890123457
CAROL = 9001

ids = st.integers(min_value=1, max_value=10**19)
# Discord snowflakes of people: Telegram placeholder ids are refused by DISCORD.identity.
person_ids = ids.filter(lambda i: str(i) not in PLACEHOLDER_SENDER_IDS)
chat_ids = st.integers(min_value=-(10**14), max_value=10**14)
real_senders = ids.filter(lambda n: str(n) not in PLACEHOLDER_SENDER_IDS)


def _int_or_str(strategy: st.SearchStrategy[int]) -> st.SearchStrategy[int | str]:
    return st.one_of(strategy, strategy.map(str))


# --- Telegram ------------------------------------------------------------------------------


def test_telegram_private_chat_scope_and_actor_are_the_sender() -> None:
    """A Telegram private chat: scope = sender = actor, direct peer, user kind."""
    identity = TELEGRAM.identity(ALICE, "private", ALICE)
    assert identity == Identity(
        user_id="4242",
        sender_id="4242",
        channel=BuiltInPlatform.TELEGRAM.value,
        chat_id="4242",
        peer_kind=PeerKind.DIRECT,
        sender_kind=SenderKind.USER,
    )
    assert identity.actor_id == "4242"
    assert not identity.is_group


@pytest.mark.parametrize("chat_type", ["group", "supergroup"])
def test_telegram_group_scope_is_the_chat_and_actor_is_the_sender(chat_type: str) -> None:
    """A Telegram group or supergroup: scope group:telegram:<chat>, actor the sender."""
    identity = TELEGRAM.identity(FORUM_CHAT, chat_type, ALICE)
    assert identity.user_id == f"group:telegram:{FORUM_CHAT}"
    assert identity.sender_id == "4242"
    assert identity.actor_id == "4242"
    assert identity.chat_id == str(FORUM_CHAT)
    assert identity.channel == BuiltInPlatform.TELEGRAM
    assert identity.peer_kind is PeerKind.GROUP
    assert identity.sender_kind is SenderKind.USER
    assert identity.is_group


def test_telegram_group_scope_uses_the_given_channel_name() -> None:
    """A custom channel name goes into the group scope: group:<channel>:<chatID>."""
    identity = TELEGRAM.identity(GROUP_CHAT, "group", ALICE, channel="tg-backup")
    assert identity.user_id == f"group:tg-backup:{GROUP_CHAT}"
    assert identity.channel == "tg-backup"


def test_telegram_channel_post_has_no_sender_and_keeps_the_chat_scope() -> None:
    """A Telegram channel post: empty sender, CHANNEL kind, scope group:telegram:<chat>."""
    identity = TELEGRAM.identity(-1009876543210, "channel", None, sender_kind=SenderKind.CHANNEL)
    assert identity.user_id == "group:telegram:-1009876543210"
    assert identity.sender_id == ""
    assert identity.sender_kind is SenderKind.CHANNEL
    assert identity.peer_kind is PeerKind.GROUP
    assert identity.actor_id == identity.user_id


def test_telegram_missing_sender_is_kind_none_with_group_scope() -> None:
    """A Telegram message without a sender gets sender "" and SenderKind.NONE."""
    identity = TELEGRAM.identity(GROUP_CHAT, "group", None)
    assert identity.sender_id == ""
    assert identity.sender_kind is SenderKind.NONE
    assert identity.user_id == f"group:telegram:{GROUP_CHAT}"


@pytest.mark.parametrize(
    ("placeholder", "kind"),
    [
        (1087968824, SenderKind.ANONYMOUS_ADMIN),
        (136817688, SenderKind.CHANNEL),
        (777000, SenderKind.SERVICE),
        ("1087968824", SenderKind.ANONYMOUS_ADMIN),
        ("136817688", SenderKind.CHANNEL),
        ("777000", SenderKind.SERVICE),
    ],
)
@pytest.mark.parametrize("chat_type", ["private", "group", "supergroup", "channel"])
def test_telegram_placeholder_sender_is_empty_with_group_scope(
    placeholder: int | str, kind: SenderKind, chat_type: str
) -> None:
    """A placeholder from-id: sender "", its SenderKind, group scope, even in a "private" chat."""
    identity = TELEGRAM.identity(GROUP_CHAT, chat_type, placeholder)
    assert identity.sender_id == ""
    assert identity.sender_kind is kind
    assert identity.user_id == f"group:telegram:{GROUP_CHAT}"
    assert identity.peer_kind is PeerKind.GROUP
    assert identity.is_group


def test_telegram_placeholder_overrides_a_claimed_user_kind() -> None:
    """A placeholder id is never a person even when the caller claims SenderKind.USER."""
    identity = TELEGRAM.identity(
        GROUP_CHAT, "supergroup", ANONYMOUS_ADMIN_ID, sender_kind=SenderKind.USER
    )
    assert identity.sender_id == ""
    assert identity.sender_kind is SenderKind.ANONYMOUS_ADMIN


@pytest.mark.parametrize(
    "kind",
    [SenderKind.CHANNEL, SenderKind.SERVICE, SenderKind.ANONYMOUS_ADMIN, SenderKind.SYNTHETIC],
)
def test_telegram_nonperson_kind_in_private_chat_never_gets_a_direct_scope(
    kind: SenderKind,
) -> None:
    """A non-person sender kind in a "private" chat drops the sender and keeps the group scope."""
    identity = TELEGRAM.identity(ALICE, "private", ALICE, sender_kind=kind)
    assert identity.sender_id == ""
    assert identity.sender_kind is kind
    assert identity.user_id == f"group:telegram:{ALICE}"
    assert identity.peer_kind is PeerKind.GROUP


def test_telegram_unknown_chat_type_is_rejected() -> None:
    """An unknown Telegram chat type raises IdentityError."""
    with pytest.raises(IdentityError, match="chat type"):
        TELEGRAM.identity(GROUP_CHAT, "megagroup", ALICE)


@pytest.mark.parametrize("bad", ["1:2", "abc", "subagent:1", "", "12a"])
def test_telegram_rejects_a_non_numeric_sender(bad: str) -> None:
    """A Telegram sender id that is not numeric raises IdentityError."""
    with pytest.raises(IdentityError, match="sender id"):
        TELEGRAM.identity(GROUP_CHAT, "group", bad)


def test_telegram_rejects_an_invalid_channel_name() -> None:
    """An uppercase or colon-bearing channel name cannot enter a scope."""
    with pytest.raises(IdentityError, match="channel name"):
        TELEGRAM.identity(GROUP_CHAT, "group", ALICE, channel="Tele:gram")


def test_discord_dm_scope_and_actor_are_the_sender() -> None:
    """A Discord DM: scope = sender snowflake = actor, direct peer."""
    identity = DISCORD.identity(CAROL, chat_id=CAROL + 1)
    assert identity == Identity(
        user_id="9001",
        sender_id="9001",
        channel=BuiltInPlatform.DISCORD.value,
        chat_id="9002",
        peer_kind=PeerKind.DIRECT,
        sender_kind=SenderKind.USER,
    )
    assert identity.actor_id == "9001"


def test_discord_guild_scope_is_per_member() -> None:
    """A Discord guild message: scope guild:<gid>:user:<sid>, actor the sender."""
    identity = DISCORD.identity(CAROL, chat_id=GUILD_CHANNEL, guild_id=GUILD)
    assert identity.user_id == f"guild:{GUILD}:user:{CAROL}"
    assert identity.sender_id == str(CAROL)
    assert identity.actor_id == str(CAROL)
    assert identity.chat_id == str(GUILD_CHANNEL)
    assert identity.peer_kind is PeerKind.GROUP
    assert identity.is_group


def test_discord_guild_thread_does_not_change_the_scope() -> None:
    """Two channels (e.g. a thread) of one guild give the same member scope."""
    one = DISCORD.identity(CAROL, chat_id=GUILD_CHANNEL, guild_id=GUILD)
    other = DISCORD.identity(CAROL, chat_id=81234567890123999, guild_id=GUILD)
    assert one.user_id == other.user_id


@pytest.mark.parametrize(
    "kind",
    [SenderKind.CHANNEL, SenderKind.NONE, SenderKind.SYNTHETIC, SenderKind.ANONYMOUS_ADMIN],
)
def test_discord_identity_refuses_other_kinds(kind: SenderKind) -> None:
    """discord_identity raises IdentityError for a kind but a person, a webhook or a bot."""
    with pytest.raises(IdentityError, match="a person, a webhook or a bot"):
        DISCORD.identity(CAROL, chat_id=GUILD_CHANNEL, guild_id=GUILD, sender_kind=kind)


@pytest.mark.parametrize("kind", ["bogus", 7, None])
def test_discord_identity_refuses_a_kind_it_cannot_read(kind: object) -> None:
    """A sender kind no Discord sender has, of any type, is one IdentityError."""
    with pytest.raises(IdentityError, match="a person, a webhook or a bot"):
        DISCORD.identity(CAROL, chat_id=GUILD_CHANNEL, guild_id=GUILD, sender_kind=kind)  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", [SenderKind.WEBHOOK, SenderKind.BOT])
def test_discord_nonperson_identity_takes_no_role(kind: SenderKind) -> None:
    """A webhook's or a bot's message is never given a role (an owner role would bypass)."""
    with pytest.raises(IdentityError, match="takes no role"):
        DISCORD.identity(
            CAROL, chat_id=GUILD_CHANNEL, guild_id=GUILD, sender_kind=kind, role="owner"
        )


@pytest.mark.parametrize("kind", [SenderKind.WEBHOOK, SenderKind.BOT])
def test_discord_identity_refuses_a_nonperson_without_a_guild(kind: SenderKind) -> None:
    """A Discord webhook or bot author outside a guild has no safe scope: refused."""
    with pytest.raises(IdentityError, match="needs its guild"):
        DISCORD.identity(CAROL, chat_id=GUILD_CHANNEL, sender_kind=kind)


def test_discord_webhook_scope_and_empty_sender() -> None:
    """A Discord webhook message: scope guild:<gid>:webhook:<id>, sender "", WEBHOOK kind."""
    identity = DISCORD.identity(
        777888, chat_id=GUILD_CHANNEL, guild_id=GUILD, sender_kind=SenderKind.WEBHOOK
    )
    assert identity.user_id == f"guild:{GUILD}:webhook:777888"
    assert identity.sender_id == ""
    assert identity.actor_id == identity.user_id
    assert identity.sender_kind is SenderKind.WEBHOOK
    assert identity.peer_kind is PeerKind.GROUP
    assert identity.channel == BuiltInPlatform.DISCORD


def test_discord_bot_author_scope_and_empty_sender() -> None:
    """A Discord bot-authored message: scope guild:<gid>:bot:<id>, sender "", BOT kind."""
    identity = DISCORD.identity(
        555, chat_id=GUILD_CHANNEL, guild_id=GUILD, sender_kind=SenderKind.BOT
    )
    assert identity.user_id == f"guild:{GUILD}:bot:555"
    assert identity.sender_id == ""
    assert identity.sender_kind is SenderKind.BOT
    assert identity.is_group


@settings(max_examples=60, deadline=None)
@given(sender=_int_or_str(real_senders), chat=_int_or_str(chat_ids))
def test_direct_telegram_scope_is_never_a_group_scope(sender: int | str, chat: int | str) -> None:
    """A Telegram private chat with a real numeric sender never yields a group scope."""
    identity = TELEGRAM.identity(chat, "private", sender)
    assert not Scope.is_group_id(identity.user_id)
    assert identity.peer_kind is PeerKind.DIRECT
    assert identity.user_id == identity.sender_id == str(int(sender))


@settings(max_examples=60, deadline=None)
@given(sender=_int_or_str(person_ids), chat=_int_or_str(ids))
def test_discord_dm_scope_is_never_a_group_scope(sender: int | str, chat: int | str) -> None:
    """A Discord DM never yields a group scope."""
    identity = DISCORD.identity(sender, chat_id=chat)
    assert not Scope.is_group_id(identity.user_id)
    assert identity.peer_kind is PeerKind.DIRECT


@settings(max_examples=60, deadline=None)
@given(
    chat=_int_or_str(chat_ids),
    chat_type=st.sampled_from(["private", "group", "supergroup", "channel"]),
    sender=st.one_of(st.none(), _int_or_str(ids), st.sampled_from(sorted(PLACEHOLDER_SENDER_IDS))),
    kind=st.sampled_from(SenderKind),
)
def test_telegram_group_scope_names_its_chat(
    chat: int | str, chat_type: str, sender: int | str | None, kind: SenderKind
) -> None:
    """Every Telegram group scope ends with the chat id as its last segment."""
    identity = TELEGRAM.identity(chat, chat_type, sender, sender_kind=kind)
    if identity.is_group:
        assert identity.user_id.startswith("group:telegram:")
        assert identity.user_id.rsplit(":", 1)[-1] == str(int(chat))
        assert identity.peer_kind is PeerKind.GROUP
    else:
        assert chat_type == "private"
        assert identity.sender_id != ""


@settings(max_examples=60, deadline=None)
@given(
    sender=_int_or_str(person_ids),
    chat=_int_or_str(ids),
    guild=_int_or_str(ids),
    nonperson=st.sampled_from([SenderKind.WEBHOOK, SenderKind.BOT]),
)
def test_discord_group_scope_names_its_guild(
    sender: int | str, chat: int | str, guild: int | str, nonperson: SenderKind
) -> None:
    """Every Discord guild scope names the guild id as its second segment."""
    member = DISCORD.identity(sender, chat_id=chat, guild_id=guild)
    other = DISCORD.identity(sender, chat_id=chat, guild_id=guild, sender_kind=nonperson)
    for identity in (member, other):
        assert identity.is_group
        assert identity.user_id.split(":")[:2] == ["guild", str(int(guild))]


@st.composite
def platform_identities(draw: st.DrawFn) -> Identity:
    """Any identity a platform builder (Telegram, Discord, HTTP) can produce."""
    builder = draw(st.sampled_from(["telegram", "discord", "discord_nonperson", "http"]))
    if builder == "telegram":
        return TELEGRAM.identity(
            draw(_int_or_str(chat_ids)),
            draw(st.sampled_from(["private", "group", "supergroup", "channel"])),
            draw(
                st.one_of(
                    st.none(), _int_or_str(ids), st.sampled_from(sorted(PLACEHOLDER_SENDER_IDS))
                )
            ),
            sender_kind=draw(st.sampled_from(SenderKind)),
        )
    if builder == "discord":
        return DISCORD.identity(
            draw(_int_or_str(person_ids)),
            chat_id=draw(_int_or_str(ids)),
            guild_id=draw(st.one_of(st.none(), _int_or_str(ids))),
        )
    if builder == "discord_nonperson":
        return DISCORD.identity(
            draw(_int_or_str(ids)),
            chat_id=draw(_int_or_str(ids)),
            guild_id=draw(_int_or_str(ids)),
            sender_kind=draw(st.sampled_from([SenderKind.WEBHOOK, SenderKind.BOT])),
        )
    user = draw(st.text(min_size=1).filter(lambda s: s == s.strip()))
    return Identity.http(user)


@pytest.mark.parametrize("placeholder", ["1087968824", "136817688", "777000"])
def test_discord_identity_refuses_a_telegram_placeholder_sender(placeholder: str) -> None:
    """docs/design.md: Telegram placeholder ids are never identities (Discord builder too)."""
    with pytest.raises(IdentityError, match="Telegram placeholder id, never a Discord person"):
        DISCORD.identity(placeholder, chat_id=5, guild_id=9)


def test_chat_identity_follows_the_guild_form_of_its_platform() -> None:
    """On the guild form's platform each sender has a guild scope of its own; a direct chat
    is the person's; the named Discord builders are this builder."""
    member = Identity.chat(
        BuiltInPlatform.DISCORD, GUILD_CHANNEL, CAROL, group=True, guild_id=GUILD
    )
    assert (member.user_id, member.sender_id, member.peer_kind) == (
        f"guild:{GUILD}:user:{CAROL}",
        str(CAROL),
        PeerKind.GROUP,
    )
    assert member == DISCORD.identity(CAROL, chat_id=GUILD_CHANNEL, guild_id=GUILD)
    hook = Identity.chat(
        BuiltInPlatform.DISCORD,
        GUILD_CHANNEL,
        55,
        group=True,
        guild_id=GUILD,
        sender_kind=SenderKind.WEBHOOK,
    )
    assert (hook.user_id, hook.sender_id, hook.sender_kind) == (
        f"guild:{GUILD}:webhook:55",
        "",
        SenderKind.WEBHOOK,
    )
    assert hook == DISCORD.identity(
        55, chat_id=GUILD_CHANNEL, guild_id=GUILD, sender_kind=SenderKind.WEBHOOK
    )
    dm = Identity.chat(BuiltInPlatform.DISCORD, 7, CAROL, group=False)
    assert (dm.user_id, dm.peer_kind) == (str(CAROL), PeerKind.DIRECT)


@pytest.mark.parametrize("nobody", [0, -5, "-1001234"])
def test_an_id_no_person_has_is_nobody_on_the_built_in_platforms(nobody: int | str) -> None:
    """0 or a negative id is never a person's (the platform's id rule): on Telegram such a
    sender is no sender (the chat's scope, even in a private chat); Discord refuses it, saying
    the id is no person's."""
    identity = TELEGRAM.identity(ALICE, "private", nobody)
    assert (identity.user_id, identity.sender_id, identity.sender_kind) == (
        f"group:telegram:{ALICE}",
        "",
        SenderKind.NONE,
    )
    said = f"sender id {int(nobody)} is not a discord person id"
    with pytest.raises(IdentityError) as direct:
        DISCORD.identity(nobody, chat_id=7)
    assert str(direct.value) == said
    with pytest.raises(IdentityError) as member:
        DISCORD.identity(nobody, chat_id=7, guild_id=9)
    assert str(member.value) == said


def test_telegram_identity_keeps_a_channel_name_of_the_bots_own() -> None:
    """A Telegram bot under a channel name of its own gets it in its scopes (Telegram's ids)."""
    identity = TELEGRAM.identity(GROUP_CHAT, "group", ALICE, channel="tg2")
    assert (identity.user_id, identity.channel) == (f"group:tg2:{GROUP_CHAT}", "tg2")
    with pytest.raises(IdentityError, match="chat id"):
        TELEGRAM.identity("ideas", "group", ALICE, channel="tg2")


@settings(max_examples=100, deadline=None)
@given(identity=platform_identities())
def test_platform_sender_ids_never_contain_a_colon(identity: Identity) -> None:
    """No sender id built by a platform builder contains ":" (nor is synthetic or a placeholder)."""
    assert ":" not in identity.sender_id
    assert not SenderKind.is_synthetic(identity.sender_id)
    assert not SenderKind.is_placeholder(identity.sender_id)


@settings(max_examples=100, deadline=None)
@given(identity=platform_identities())
def test_no_person_means_no_direct_scope(identity: Identity) -> None:
    """A platform identity with an empty sender is a group scope unless it is an HTTP caller."""
    if identity.sender_id == "" and identity.channel != BuiltInPlatform.HTTP:
        assert identity.is_group

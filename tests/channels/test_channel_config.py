"""ChannelConfig loading, admission (policies and mention gate), mentions and the dedup cache."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from actorscope.channels._base import IgnoreReason
from actorscope.channels._config import ChannelConfig, Policy
from actorscope.channels._dedup import DedupCache
from actorscope.channels._mention import command_of, mentions_bot, strip_mention
from actorscope.channels._policy import admit
from actorscope.errors import ConfigError
from actorscope.identity import PeerKind, SenderKind
from actorscope.messages import InboundMessage, MetaKey


def write(tmp_path: Path, text: str) -> Path:
    """A TOML file with ``text``."""
    path = tmp_path / "bot.toml"
    path.write_text(text)
    return path


def group_message(
    sender: str = "4242", content: str = "hi", addressed: str = "", chat: str = "-100"
) -> InboundMessage:
    """A Telegram group message from ``sender``."""
    metadata = {MetaKey.SESSION_KEY: f"agent:main:telegram:group:{chat}"}
    if addressed:
        metadata[MetaKey.ADDRESSED] = addressed
    return InboundMessage(
        channel="telegram",
        sender_id=sender,
        chat_id=chat,
        user_id=f"group:telegram:{chat}",
        peer_kind=PeerKind.GROUP,
        sender_kind=SenderKind.USER if sender else SenderKind.ANONYMOUS_ADMIN,
        content=content,
        metadata=metadata,
        message_id="7",
    )


def direct_message(sender: str = "4242") -> InboundMessage:
    """A Telegram private message from ``sender``."""
    return InboundMessage(
        channel="telegram", sender_id=sender, chat_id=sender, user_id=sender, content="hi"
    )


def test_loads_toml_with_defaults_and_overrides(tmp_path: Path) -> None:
    """A TOML file loads; name defaults to the platform; ids become canonical strings."""
    path = write(
        tmp_path,
        'platform = "telegram"\ngroup_policy = "allowlist"\nallow_from = [4242, "0005151"]\n'
        'owners = [1]\n[groups."-100"]\npolicy = "open"\nrequire_mention = false\n',
    )
    config = ChannelConfig.from_toml(path)
    assert config.name == "telegram"
    assert config.allow_from == ("4242", "5151")
    assert config.require_mention is True
    assert config.ignore_bots is True
    assert config.groups["-100"].policy is Policy.OPEN
    assert config.role_for("1") == "owner"
    assert config.role_for("4242") == ""


def test_loads_a_nested_table(tmp_path: Path) -> None:
    """``table=`` picks a dotted sub-table of a larger config file."""
    path = write(tmp_path, '[channels.discord]\nplatform = "discord"\nname = "dc-main"\n')
    config = ChannelConfig.from_toml(path, table="channels.discord")
    assert (config.platform, config.name) == ("discord", "dc-main")
    with pytest.raises(ConfigError, match=r"no table \[channels.telegram\]"):
        ChannelConfig.from_toml(path, table="channels.telegram")


@pytest.mark.parametrize(
    ("entry", "why"),
    [
        ('"@alice"', "is a username; use the numeric sender id"),
        ('"alice"', "is not a numeric sender id"),
        ('"-1001234"', "is not a numeric sender id"),
        ('"1087968824"', "is a Telegram placeholder"),
        ("true", "is not a numeric sender id"),
    ],
)
def test_allow_from_rejects_non_numeric_entries(tmp_path: Path, entry: str, why: str) -> None:
    """A username, chat id, placeholder or boolean in allow_from is one clear ConfigError."""
    path = write(tmp_path, f'platform = "telegram"\nallow_from = [4242, {entry}]\n')
    with pytest.raises(ConfigError, match=r"allow_from\[1\]") as caught:
        ChannelConfig.from_toml(path)
    assert why in str(caught.value)
    assert str(path) in str(caught.value)


def test_group_override_allow_from_is_checked_too(tmp_path: Path) -> None:
    """Overrides validate their allow_from the same way and name the group."""
    path = write(tmp_path, 'platform = "telegram"\n[groups."-100"]\nallow_from = ["@bob"]\n')
    with pytest.raises(ConfigError, match=r"groups.-100.allow_from\[0\] = '@bob' is a username"):
        ChannelConfig.from_toml(path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('platform = "telegram"\ntokn_env = "X"\n', "tokn_env: unknown key"),
        (
            'platform = "telegram"\n[groups."-100"]\nmention = true\n',
            "groups.-100.mention: unknown key",
        ),
        ('platform = "telegram"\ndm_policy = "maybe"\n', "dm_policy"),
        ('platform = "irc"\n', "platform"),
        ('platform = "telegram"\nname = "Bad Name"\n', "must be lowercase"),
        ('platform = "telegram"\n[groups.general]\n', "not a numeric chat or guild id"),
        ("platform = \n", "not valid TOML"),
    ],
)
def test_bad_config_is_one_config_error(tmp_path: Path, text: str, message: str) -> None:
    """Unknown keys, bad values and bad TOML each raise a ConfigError naming the problem."""
    with pytest.raises(ConfigError, match=message):
        ChannelConfig.from_toml(write(tmp_path, text))


def test_fifo_is_read_with_bounds_not_blocking(tmp_path: Path) -> None:
    """A FIFO without a writer is an empty file (one ConfigError), not a read that never ends."""
    os.mkfifo(tmp_path / "channel.toml")
    with pytest.raises(ConfigError, match="platform: missing"):
        ChannelConfig.from_toml(tmp_path / "channel.toml")


def test_missing_file_is_a_config_error(tmp_path: Path) -> None:
    """A config path that cannot be read is a ConfigError, not an OSError."""
    with pytest.raises(ConfigError, match="cannot read"):
        ChannelConfig.from_toml(tmp_path / "missing.toml")


def test_dm_policies() -> None:
    """open admits, allowlist admits listed senders and owners, disabled admits nobody."""
    open_ = ChannelConfig(platform="telegram")
    assert admit(direct_message(), open_).admitted
    allow = ChannelConfig(
        platform="telegram", dm_policy="allowlist", allow_from=["1"], owners=["2"]
    )
    assert admit(direct_message("1"), allow).admitted
    assert admit(direct_message("2"), allow).admitted
    assert admit(direct_message("3"), allow).reason is IgnoreReason.NOT_ALLOWED
    closed = ChannelConfig(platform="telegram", dm_policy="disabled", owners=["2"])
    assert admit(direct_message("2"), closed).reason is IgnoreReason.DM_DISABLED


def test_group_policy_and_overrides() -> None:
    """Group policy applies unless the chat has an override; an empty sender never passes."""
    config = ChannelConfig(
        platform="telegram",
        group_policy="allowlist",
        allow_from=["1"],
        require_mention=False,
        groups={"-200": {"policy": "disabled"}, "-300": {"allow_from": ["9"]}},
    )
    assert admit(group_message("1"), config).admitted
    assert admit(group_message("2"), config).reason is IgnoreReason.NOT_ALLOWED
    assert admit(group_message("1", chat="-200"), config).reason is IgnoreReason.GROUP_DISABLED
    assert admit(group_message("9", chat="-300"), config).admitted
    assert admit(group_message("1", chat="-300"), config).reason is IgnoreReason.NOT_ALLOWED
    opted_in = config.model_copy(update={"ignore_bots": False})
    assert admit(group_message(""), opted_in).reason is IgnoreReason.NOT_ALLOWED


def test_nonperson_senders_follow_ignore_bots() -> None:
    """Non-person senders are refused by default and admitted (still sender-less) on opt-in."""
    message = group_message("", addressed="mention")
    assert admit(message, ChannelConfig(platform="telegram")).reason is (
        IgnoreReason.NONPERSON_SENDER
    )
    admitted = admit(message, ChannelConfig(platform="telegram", ignore_bots=False))
    assert admitted.message is not None
    assert admitted.message.sender_id == ""


def test_mention_gate_and_stripping() -> None:
    """In groups an unaddressed message is refused; an addressed one loses the @mention."""
    config = ChannelConfig(platform="telegram")
    assert admit(group_message(), config).reason is IgnoreReason.NOT_MENTIONED
    result = admit(
        group_message(content="@Actorscope_Bot  what now?", addressed="mention"),
        config,
        bot_username="actorscope_bot",
    )
    assert result.message is not None
    assert result.message.content == "what now?"
    reply = admit(group_message(content="sure", addressed="reply"), config)
    assert reply.message is not None
    assert reply.message.content == "sure"
    no_gate = ChannelConfig(platform="telegram", groups={"-100": {"require_mention": False}})
    assert admit(group_message(), no_gate).admitted


def test_mentions_helpers() -> None:
    """Only the bot's own name counts; commands are split; Discord ids work too."""
    assert mentions_bot("hey @bot!", username="bot")
    assert not mentions_bot("hey @bot_fan", username="bot")
    assert not mentions_bot("mail me@bot", username="bot")
    assert not mentions_bot("hey @bot", username=None)
    assert mentions_bot("<@!123> hi", user_id="123")
    assert strip_mention("<@123> hi", user_id="123") == "hi"
    assert strip_mention("/start@bot now", username="bot") == "/start now"
    assert strip_mention("/start@other now", username="bot") == "/start@other now"
    assert command_of("/start@bot x") == ("start", "bot")
    assert command_of("/help") == ("help", "")
    assert command_of("hello") is None


def test_dedup_ttl_with_injected_clock() -> None:
    """A key is a duplicate within ttl, new again after it, and the cache stays bounded."""
    now = [100.0]
    cache = DedupCache(ttl=10, maxsize=3, clock=lambda: now[0])
    assert not cache.seen("telegram", "-100", "7")
    assert cache.seen("telegram", "-100", "7")
    assert not cache.seen("telegram", "-101", "7")
    now[0] = 111.0
    assert not cache.seen("telegram", "-100", "7")
    for index in range(10):
        cache.seen("discord", "1", str(index))
    assert len(cache) == 3
    assert not cache.seen("telegram", "-100", "")


def test_dedup_of_messages_keeps_edits_apart() -> None:
    """A redelivered message is a duplicate; its later edit is not."""
    cache = DedupCache()
    message = group_message()
    assert not cache.seen_message(message)
    assert cache.seen_message(message)
    edit = message.model_copy(
        update={"metadata": {**message.metadata, "event": "edited_message", "edit_date": "5"}}
    )
    assert not cache.seen_message(edit)
    assert cache.seen_message(edit)


def test_dedup_rejects_nonsense_sizes() -> None:
    """A non-positive ttl or size is a ConfigError."""
    with pytest.raises(ConfigError):
        DedupCache(ttl=0)

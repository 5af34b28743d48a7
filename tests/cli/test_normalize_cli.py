"""``actorscope normalize``: one JSON object per fixture, or one error line and exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from actorscope.cli import main

FIXTURES = Path(__file__).parent.parent / "fixtures"
KEYS = [
    "channel",
    "peer_kind",
    "user_id",
    "sender_id",
    "actor_id",
    "chat_id",
    "sender_kind",
    "session_key",
    "thread_id",
]


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run the CLI and return (status, stdout, stderr)."""
    status = main(["normalize", *args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_telegram_forum_topic(capsys: pytest.CaptureFixture[str]) -> None:
    """A forum-topic update prints exactly the contract keys with the topic session key."""
    status, out, err = run(
        capsys, "--platform", "telegram", str(FIXTURES / "telegram" / "forum_topic.json")
    )
    assert (status, err) == (0, "")
    result = json.loads(out)
    assert list(result) == KEYS
    assert result["user_id"] == "group:telegram:-1001234567890"
    assert result["sender_id"] == result["actor_id"] == "4242"
    assert result["session_key"] == "agent:main:telegram:group:-1001234567890:topic:7"
    assert result["thread_id"] == "7"


def test_discord_envelope_with_agent_key(capsys: pytest.CaptureFixture[str]) -> None:
    """A Discord dispatch prints the member scope; --agent changes the session key only."""
    path = str(FIXTURES / "discord" / "slash_guild.json")
    status, out, _ = run(capsys, "--platform", "discord", "--agent", "helper", path)
    assert status == 0
    result = json.loads(out)
    assert result["user_id"] == "guild:81234567890123456:user:9001"
    assert result["sender_kind"] == "user"
    assert result["session_key"] == "agent:helper:discord:group:81234567890123457"


def test_bare_discord_data_object(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A bare ``d`` object is accepted like the envelope."""
    envelope = json.loads((FIXTURES / "discord" / "dm_message.json").read_text())
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(envelope["d"]))
    status, out, _ = run(capsys, "--platform", "discord", str(bare))
    assert status == 0
    assert json.loads(out)["user_id"] == "9002"


@pytest.mark.parametrize(
    ("platform", "name", "reason"),
    [
        ("telegram", "anonymous_admin", "nonperson_sender"),
        ("telegram", "my_chat_member", "chat_member_update"),
        ("telegram", "migrate_to", "chat_migrated"),
        ("discord", "webhook_message", "nonperson_sender"),
        ("discord", "system_message", "system_message"),
    ],
)
def test_ignored_events(
    capsys: pytest.CaptureFixture[str], platform: str, name: str, reason: str
) -> None:
    """What a bot ignores prints {"ignored": true, "reason": ...} and exits 0."""
    status, out, _ = run(capsys, "--platform", platform, str(FIXTURES / platform / f"{name}.json"))
    assert status == 0
    assert json.loads(out) == {"ignored": True, "reason": reason}


@pytest.mark.parametrize(
    ("content", "platform", "message"),
    [
        ("{not json", "telegram", "not valid JSON"),
        ("[1, 2]", "telegram", "must be a JSON object"),
        ('{"update_id": 1, "message": {"chat": 5}}', "telegram", "malformed telegram payload"),
        ('{"op": 0, "t": "MESSAGE_CREATE", "d": {"id": "x"}}', "discord", "malformed discord"),
        ("{}", "irc", "--platform must be telegram or discord"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: str, platform: str, message: str
) -> None:
    """Malformed JSON or payloads give one line on stderr and exit status 2."""
    path = tmp_path / "in.json"
    path.write_text(content)
    status, out, err = run(capsys, "--platform", platform, str(path))
    assert (status, out) == (2, "")
    assert err.count("\n") == 1
    assert message in err


def test_missing_file_and_bad_agent(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """An unreadable file or an agent key with ':' is one line and exit 2."""
    status, _, err = run(capsys, "--platform", "telegram", str(tmp_path / "nope.json"))
    assert status == 2
    assert "cannot read" in err
    path = str(FIXTURES / "telegram" / "group.json")
    status, _, err = run(capsys, "--platform", "telegram", "--agent", "a:b", path)
    assert status == 2
    assert "agent key" in err
